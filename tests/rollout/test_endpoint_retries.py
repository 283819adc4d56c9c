"""What a real endpoint's failures do, through the real `openai` client against a local server
that answers from a script: which failures are retried and how often, how a rate limit's
`Retry-After` is honoured within the budget, and a tool call the server could not parse is the
model's mistake, not an infrastructure error."""

import time
from typing import Any

import pytest

from coworkenv.rollout import run_episode
from coworkenv.rollout.agents.openai_agent import OpenAIAgent
from coworkenv.rollout.agents.openai_client import Endpoint, EndpointFailed
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from tests.rollout.test_runner import ticket_task

HELLO = [{"role": "user", "content": "hello"}]


def endpoint(llm: ScriptedLLM, **settings: Any) -> Endpoint:
    return Endpoint.model_validate(
        {"model": "m", "base_url": llm.base_url, "api_key": "k", "backoff": 0.0, **settings}
    )


async def ask(script: list[Any], temperature: float, **settings: Any) -> tuple[Any, int, list[float]]:
    """The answer (or the failure), the requests made, and each retry's wait."""
    waits: list[float] = []
    with ScriptedLLM(script) as llm:
        where = endpoint(llm, **settings)
        try:
            answer: Any = await where.chat(
                where.client(),
                messages=HELLO,
                temperature=temperature,
                on_retry=lambda exc, wait: waits.append(wait),
            )
        except EndpointFailed as exc:
            answer = exc
        return answer, len(llm.requests), waits


async def test_a_500_on_a_deterministic_request_is_retried_once() -> None:
    failure, requests, _ = await ask([{"status": 500, "error": "bad tool call"}] * 4, 0.0)
    assert requests == 2
    assert isinstance(failure, EndpointFailed) and (failure.status, failure.attempts) == (500, 2)
    assert str(failure) == (
        "the model endpoint failed 2 times (the same deterministic request, retried once); "
        "last: HTTP 500: bad tool call"
    )


async def test_a_500_on_a_sampled_request_is_retried_up_to_the_attempts() -> None:
    failure, requests, _ = await ask([{"status": 500, "error": "oops"}] * 4, 0.7, attempts=3)
    assert requests == 3
    assert str(failure) == "the model endpoint failed 3 times; last: HTTP 500: oops"


async def test_an_endpoint_that_is_down_is_retried_up_to_the_attempts_then_succeeds() -> None:
    script = [{"status": 503, "error": "down"}, {"status": 502, "error": "gateway"}, {"content": "hi"}]
    answer, requests, waits = await ask(script, 0.0, attempts=3, backoff=0.01)
    assert (answer.choices[0].message.content, requests) == ("hi", 3)
    assert waits == [0.01, 0.02]  # the backoff, doubled


async def test_twelve_rate_limits_are_outlasted_by_the_budget_not_the_attempts() -> None:
    limited = {"status": 429, "error": "slow down", "headers": {"Retry-After": "0"}}
    answer, requests, waits = await ask([limited] * 12 + [{"content": "hi"}], 0.0, attempts=2)
    assert (answer.choices[0].message.content, requests) == ("hi", 13)
    assert waits == [0.05] * 12  # Retry-After: 0, at the shortest wait


async def test_retry_after_is_honoured_and_the_budget_ends_the_wait() -> None:
    limited = {"status": 429, "error": "slow down", "headers": {"Retry-After": "0.3"}}
    answer, requests, waits = await ask([limited, {"content": "hi"}], 0.0, retry_budget=1)
    assert (answer.choices[0].message.content, requests, waits) == ("hi", 2, [0.3])
    failure, requests, waits = await ask([limited] * 5, 0.0, retry_budget=1)
    assert (requests, waits) == (4, [0.3, 0.3, 0.3])
    assert isinstance(failure, EndpointFailed) and failure.status == 429
    assert str(failure) == (
        "the model endpoint kept rate-limiting for 0.9 s of waiting (budget 1 s); last: HTTP 429: slow down"
    )


async def test_a_client_error_is_not_retried() -> None:
    failure, requests, _ = await ask([{"status": 400, "error": "bad request"}] * 2, 0.0)
    assert requests == 1
    assert str(failure) == "the model endpoint refused the request: HTTP 400: bad request"


async def test_a_tool_call_the_server_cannot_parse_is_the_models_malformed_call() -> None:
    unparsable = {"status": 500, "error": "Expecting ',' delimiter: line 1 column 31 (char 30)"}
    script = [
        unparsable,
        unparsable,  # the same deterministic request fails the same way: not retried again
        {
            "tool_calls": [
                {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}}
            ]
        },
        {"content": "Done."},
    ]
    with ScriptedLLM(script) as llm:
        agent = OpenAIAgent(endpoint(llm))
        record = await run_episode(ticket_task(turns=[ticket_task().turns[0]]), agent)
        requests = llm.requests
    assert (record.status, record.error) == ("completed", None)
    assert record.agent_stats == {"endpoint_retries": 1, "malformed_tool_calls": 1}
    assert len(requests) == 4
    note = requests[2]["messages"][-1]
    assert note == {
        "role": "user",
        "content": "Your last answer could not be read: the server failed on it (HTTP 500: Expecting ',' "
        "delimiter: line 1 column 31 (char 30)). If you meant to call a tool, call it again with a valid "
        "JSON object of arguments.",
    }
    assert note not in requests[3]["messages"]  # told once; the record keeps no trace of it
    assert note not in record.messages
    assert record.verdict is not None  # the call that was read reached the workspace
    assert [(c.id, c.passed) for c in record.verdict.checks if c.id == "urgent"] == [("urgent", True)]


async def test_a_model_that_keeps_sending_unparsable_calls_runs_out_of_steps_not_into_an_error() -> None:
    with ScriptedLLM([{"status": 500, "error": "invalid tool call"}] * 10) as llm:
        agent = OpenAIAgent(endpoint(llm), max_steps_per_turn=3)
        record = await run_episode(ticket_task(turns=[ticket_task().turns[0]]), agent)
    assert (record.status, record.error) == ("truncated", None)
    assert record.agent_stats == {"endpoint_retries": 3, "malformed_tool_calls": 3}


def test_an_http_date_in_retry_after_is_read_as_seconds_from_now() -> None:
    from email.utils import formatdate
    from types import SimpleNamespace

    from coworkenv.rollout.agents.openai_client import _retry_after

    def limited(value: str) -> Any:  # what the client's error carries: the answer's headers
        return SimpleNamespace(response=SimpleNamespace(headers={"retry-after": value}))

    assert _retry_after(limited("2.5")) == 2.5
    later = _retry_after(limited(formatdate(time.time() + 60, usegmt=True)))
    assert later is not None and 55 < later <= 60
    assert _retry_after(limited("soon")) is None
    assert _retry_after(SimpleNamespace(response=None)) is None


@pytest.mark.parametrize("temperature", [0.0, 0.7])
async def test_a_down_endpoint_stays_an_infrastructure_error_for_the_agent(temperature: float) -> None:
    with ScriptedLLM([{"status": 503, "error": "down"}] * 2) as llm:
        agent = OpenAIAgent(endpoint(llm, attempts=2), temperature=temperature)
        record = await run_episode(ticket_task(), agent)
    assert record.status == "error"
    assert record.error == "the model endpoint failed 2 times; last: HTTP 503: down"
