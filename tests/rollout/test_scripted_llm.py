"""`ScriptedLLM`, the scripted model for tests: the real `openai` client reads its replies,
streamed or not, tool calls included, and its scripted errors."""

import json

import openai
import pytest
from openai import OpenAI

from coworkenv.rollout.agents.scripted_llm import ScriptedLLM

CALL = {"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}}


def test_a_streamed_reply_carries_the_content_the_tool_calls_and_the_finish_reason() -> None:
    with ScriptedLLM([{"content": "Looking.", "tool_calls": [CALL]}, {"content": "Done."}]) as llm:
        client = OpenAI(base_url=llm.base_url, api_key="x")
        messages = [{"role": "user", "content": "Hi"}]
        stream = client.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
        chunks = list(stream)
        plain = client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(d.content or "" for d in deltas) == "Looking."
    (call,) = [tc for d in deltas for tc in d.tool_calls or []]
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == (
        "call_1_0",
        "tickets_get_ticket",
        {"ticket_id": 1},
    )
    assert [c.choices[0].finish_reason for c in chunks if c.choices] == [None, "tool_calls"]
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 0
    assert (plain.choices[0].message.content, plain.choices[0].finish_reason) == ("Done.", "stop")
    assert [r.get("stream") for r in llm.requests] == [True, None]


def test_a_scripted_error_is_an_http_error_for_a_streamed_request_too() -> None:
    with ScriptedLLM([{"status": 503, "error": "overloaded"}]) as llm:
        client = OpenAI(base_url=llm.base_url, api_key="x", max_retries=0)
        with pytest.raises(openai.InternalServerError, match="overloaded"):
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "Hi"}], stream=True
            )
