"""The OpenAI-compatible agent end to end: the real `openai` client talks over real HTTP to
a local server that answers from a script, on a two-turn task with an event between turns."""

import json

import pytest

from coworkenv.rollout import run_episode
from coworkenv.rollout.agents.openai_agent import PLACEHOLDER, OpenAIAgent, fit_context
from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from tests.rollout.test_runner import ticket_task


def call(name: str, arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


SCRIPT = [
    # turn 1: one endpoint failure (retried), then search and update
    {"status": 500, "error": "overloaded"},
    call("tickets_search_tickets", {"query": "login"}),
    call("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"}),
    {"content": "Ticket #1 is now urgent."},
    # turn 2: a malformed call and an unknown tool, then the right calls, two in parallel
    call("tickets_update_ticket", "{not json"),
    call("tickets_explode", {}),
    {
        "tool_calls": [
            {"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}},
            {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "queue": "Engineering"}},
        ]
    },
    {"content": "It was reopened by the customer; I moved it to Engineering."},
]


async def test_a_scripted_model_solves_a_two_turn_task_through_mcp() -> None:
    with ScriptedLLM(list(SCRIPT), model="scripted-model") as llm:
        agent = OpenAIAgent(
            Endpoint(model="scripted-model", base_url=llm.base_url, api_key="test", backoff=0.01)
        )
        record = await run_episode(ticket_task(), agent)
        requests = llm.requests
    assert (record.status, record.error) == ("completed", None)
    assert record.policy == "openai:scripted-model"
    assert record.verdict is not None and (record.verdict.score, record.verdict.success) == (1.0, True)
    assert record.agent_stats == {"endpoint_retries": 1, "malformed_arguments": 1, "unknown_tool": 1}
    assert len(requests) == 8
    first = requests[0]
    assert first["model"] == "scripted-model"
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert "kimberly" not in first["messages"][0]["content"]
    assert "me@acme.example" in first["messages"][0]["content"]
    assert first["messages"][1]["content"] == "Find the login ticket and set its priority to urgent."
    assert {t["function"]["name"] for t in first["tools"]} >= {
        "tickets_search_tickets",
        "tickets_update_ticket",
    }
    assert first["parallel_tool_calls"] is True
    # what the model was told about its mistakes in turn 2
    errors = [m["content"] for m in requests[6]["messages"] if m["role"] == "tool"][-2:]
    assert errors[0].startswith("Error: the arguments of tickets_update_ticket are not a valid JSON object")
    assert errors[1].startswith("Error: there is no tool named 'tickets_explode'. Available tools: ")
    # the transcript: turn boundaries and the parallel calls answered in order
    assert record.turn_boundaries == [1, 7]
    assert record.messages[7] == {
        "role": "user",
        "content": "Anything new on it? Move it to Engineering if it is open again.",
    }
    parallel = record.messages[12]
    assert [c["function"]["name"] for c in parallel["tool_calls"]] == [
        "tickets_get_ticket",
        "tickets_update_ticket",
    ]
    assert [m["tool_call_id"] for m in record.messages[13:15]] == [c["id"] for c in parallel["tool_calls"]]
    assert json.loads(record.messages[14]["content"])["queue"] == "Engineering"


async def test_an_endpoint_that_keeps_failing_makes_an_error_record() -> None:
    with ScriptedLLM([{"status": 503, "error": "down"}] * 3) as llm:
        agent = OpenAIAgent(
            Endpoint(model="m", base_url=llm.base_url, api_key="test", attempts=3, backoff=0.01)
        )
        record = await run_episode(ticket_task(), agent)
    assert record.status == "error"
    assert record.error is not None
    assert record.error == "the model endpoint failed 3 times; last: HTTP 503: down"
    assert record.agent_stats == {"endpoint_retries": 2}


async def test_a_client_error_is_not_retried() -> None:
    with ScriptedLLM([{"status": 400, "error": "bad request"}]) as llm:
        agent = OpenAIAgent(Endpoint(model="m", base_url=llm.base_url, api_key="test", backoff=0.01))
        record = await run_episode(ticket_task(), agent)
        assert len(llm.requests) == 1
    assert record.status == "error"
    assert record.error is not None and record.error.startswith("the model endpoint refused the request")


async def test_running_out_of_model_steps_truncates_the_episode() -> None:
    endless = [call("tickets_list_queues", {})] * 10
    with ScriptedLLM(endless) as llm:
        agent = OpenAIAgent(Endpoint(model="m", base_url=llm.base_url, api_key="test"), max_steps_per_turn=3)
        record = await run_episode(ticket_task(), agent)
    assert record.status == "truncated"
    assert record.verdict is not None and record.verdict.success is False


def test_fit_context_shortens_the_oldest_tool_results_first() -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u" * 50},
        {"role": "tool", "tool_call_id": "a", "content": "x" * 400},
        {"role": "tool", "tool_call_id": "b", "content": "y" * 400},
        {"role": "assistant", "content": "ok"},
    ]
    assert fit_context(messages, 10_000, keep_recent=2) is messages
    fitted = fit_context(messages, 700, keep_recent=2)
    assert [m.get("content") for m in fitted] == ["s", "u" * 50, PLACEHOLDER, "y" * 400, "ok"]
    assert messages[2]["content"] == "x" * 400  # the record keeps the full transcript
    squeezed = fit_context(messages, 100, keep_recent=1)
    assert [m.get("content") for m in squeezed] == ["s", "u" * 50, PLACEHOLDER, PLACEHOLDER, "ok"]


@pytest.mark.parametrize("arguments", ["[1, 2]", '"text"'])
async def test_arguments_that_are_json_but_not_an_object_are_malformed(arguments: str) -> None:
    with ScriptedLLM([call("tickets_list_queues", arguments), {"content": "stop"}]) as llm:
        agent = OpenAIAgent(Endpoint(model="m", base_url=llm.base_url, api_key="test"))
        record = await run_episode(ticket_task(turns=[ticket_task().turns[0]]), agent)
    assert record.agent_stats == {"malformed_arguments": 1}
    assert record.messages[3]["content"].startswith(
        "Error: the arguments of tickets_list_queues are not a valid JSON object (the arguments must be a JSON object)"
    )


async def test_a_simulated_user_answers_the_agents_question_within_the_turn() -> None:
    from coworkenv.rollout.agents.user_simulator import SATISFIED, UserSimulator

    task = ticket_task(
        turns=[
            ticket_task().turns[0].model_copy(update={"user": "Please fix the priority of the login ticket."})
        ],
        checks=[],
        persona={"description": "Dana, a support agent", "facts": {"priority": "urgent"}},
    )
    agent_script = [
        {"content": "Which priority should it get?"},
        call("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"}),
        {"content": "Done: it is urgent now."},
    ]
    user_script = [{"content": "Urgent, please."}, {"content": SATISFIED}]
    with ScriptedLLM(agent_script) as agent_llm, ScriptedLLM(user_script) as user_llm:
        agent = OpenAIAgent(Endpoint(model="a", base_url=agent_llm.base_url, api_key="k"))
        simulator = UserSimulator(Endpoint(model="u", base_url=user_llm.base_url, api_key="k"))
        record = await run_episode(task, agent, user_simulator=simulator)
        user_requests = user_llm.requests
    assert record.verdict is not None and record.verdict.success
    assert record.user_replies == [3]
    assert record.messages[3] == {"role": "user", "content": "Urgent, please."}
    first = user_requests[0]["messages"]
    assert "Dana, a support agent" in first[0]["content"] and "- priority: urgent" in first[0]["content"]
    # the simulator sees the conversation from the user's side: roles swapped, no tool traffic
    assert [(m["role"], m["content"]) for m in first[1:]] == [
        ("assistant", "Please fix the priority of the login ticket."),
        ("user", "Which priority should it get?"),
    ]
    assert len(user_requests) == 2
