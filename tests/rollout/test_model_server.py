"""The model server without a model: tool calls read from the chat template's format, and the
answers the real `openai` client and agent receive over HTTP. A generator that returns set
texts stands in for the model here; tests/integrations/test_small_model.py runs the real one."""

import json
from typing import Any

import openai
import pytest

from coworkenv.rollout import run_episode
from coworkenv.rollout.agents.model_server import DEFAULT_MAX_TOKENS, Generated, ModelServer, PromptTooLong
from coworkenv.rollout.agents.openai_agent import OpenAIAgent
from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.small_model import parse_tool_calls, template_messages
from tests.rollout.test_runner import ticket_task


def test_a_well_formed_call_is_read_with_its_arguments_as_json() -> None:
    parsed = parse_tool_calls(
        'Looking.\n<tool_call>\n{"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}}\n</tool_call>'
    )
    assert parsed.content == "Looking."
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("tickets_get_ticket", '{"ticket_id": 1}')]
    assert parsed.unparsed == 0


def test_two_calls_and_an_unclosed_last_one_are_all_read() -> None:
    text = (
        '<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>\n'
        '<tool_call>\n{"name": "b", "arguments": {"x": [1, 2]}}'
    )
    parsed = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("a", "{}"), ("b", '{"x": [1, 2]}')]
    assert parsed.content == ""


def test_a_malformed_call_that_names_its_tool_keeps_its_arguments_as_written() -> None:
    parsed = parse_tool_calls(
        '<tool_call>\n{"name": "tickets_update_ticket", "arguments": {ticket_id: 1}}\n</tool_call>'
    )
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("tickets_update_ticket", "{ticket_id: 1}")]


def test_a_block_without_a_name_stays_in_the_content() -> None:
    parsed = parse_tool_calls("Sure.<tool_call>\nnothing here\n</tool_call>")
    assert parsed.tool_calls == []
    assert parsed.unparsed == 1
    assert parsed.content == "Sure.<tool_call>\nnothing here\n</tool_call>"


def test_arguments_given_as_a_json_string_are_passed_on() -> None:
    parsed = parse_tool_calls('<tool_call>{"name": "a", "arguments": "{\\"x\\": 1}"}</tool_call>')
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("a", '{"x": 1}')]


def test_messages_for_the_template_have_object_arguments_and_no_null_content() -> None:
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "a", "arguments": '{"x": 1}'}},
                {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{broken"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "ok"}]},
    ]
    assert template_messages(messages) == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "a", "arguments": {"x": 1}}},
                {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{broken"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]


class SetTexts:
    """Answers each request with the next text; keeps what it was asked."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.asked: list[dict[str, Any]] = []

    def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> Generated:
        self.asked.append({"messages": messages, "tools": tools, "max_tokens": max_tokens})
        if not self.texts:
            raise PromptTooLong("the prompt has 9000 tokens and the model's context is 8192: send fewer")
        text = self.texts.pop(0)
        return Generated(text, 100, 10, "length" if text.endswith("…") else "stop")


def call(name: str, arguments: str) -> str:
    return f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>'


async def test_the_agent_acts_through_the_servers_parsed_calls_and_records_a_malformed_one() -> None:
    texts = [
        call("tickets_search_tickets", '{"query": "login"}'),
        call("tickets_update_ticket", "{ticket_id: 1}"),  # malformed: the model's mistake
        call("tickets_update_ticket", '{"ticket_id": 1, "priority": "urgent"}'),
        "Ticket 1 is urgent now.",
        "Nothing else to do.",
    ]
    generator = SetTexts(texts)
    with ModelServer(generator, name="set-texts") as server:
        agent = OpenAIAgent(
            Endpoint(model="set-texts", base_url=server.base_url, api_key="local"), max_tokens=64
        )
        record = await run_episode(ticket_task(), agent)
    assert [
        (e.service, e.tool, e.arguments, e.is_error) for e in record.tool_calls if e.actor == "agent"
    ] == [
        ("tickets", "search_tickets", {"query": "login"}, False),
        ("tickets", "update_ticket", {"ticket_id": 1, "priority": "urgent"}, False),
    ]
    assert record.status == "completed"
    assert record.agent_stats["malformed_arguments"] == 1
    assert generator.asked[0]["tools"][0]["type"] == "function"
    assert generator.asked[0]["max_tokens"] == 64
    # the malformed call came back to the model as a tool message naming the mistake
    second = generator.asked[2]["messages"]
    assert "are not a valid JSON object" in second[-1]["content"]


def test_a_prompt_over_the_context_is_refused_with_400_and_model_lists_answer() -> None:
    with ModelServer(SetTexts([]), name="set-texts") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="local", max_retries=0)
        assert [m.id for m in client.models.list()] == ["set-texts"]
        with pytest.raises(openai.BadRequestError) as raised:
            client.chat.completions.create(model="set-texts", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 400
    body = raised.value.body
    assert isinstance(body, dict)
    assert body["code"] == "context_length_exceeded"
    assert body["message"] == "the prompt has 9000 tokens and the model's context is 8192: send fewer"


def test_an_answer_cut_at_its_token_limit_says_so() -> None:
    with ModelServer(SetTexts(["I will now…"]), name="set-texts") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="local", max_retries=0)
        response = client.chat.completions.create(
            model="set-texts", messages=[{"role": "user", "content": "hi"}], max_tokens=5
        )
    assert response.choices[0].finish_reason == "length"
    assert response.choices[0].message.content == "I will now…"
    assert json.loads(response.usage.model_dump_json()) == {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "total_tokens": 110,
        "completion_tokens_details": None,
        "prompt_tokens_details": None,
    }
