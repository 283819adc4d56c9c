"""The glue every text-sampling adapter uses: Hermes tool calls written and read as a Qwen
chat template renders them, and `TextEpisode`, an episode played from model text one
gym-style step at a time."""

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.integrations.text_episode import Step, TextEpisode
from coworkenv.integrations.tool_text import (
    ParsedText,
    ToolCall,
    parse_tool_calls,
    render_tool_calls,
    render_tools,
    system_with_tools,
)
from coworkenv.rollout import Episode, EpisodeError
from coworkenv.rollout.agents.tool_schemas import bound_result
from tests.rollout.test_runner import ticket_task

TEMPLATES = Path(__file__).parent / "templates"
URGENT = ToolCall("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"})
LOOK = ToolCall("tickets_get_ticket", {"ticket_id": 1})
MOVE = ToolCall("tickets_update_ticket", {"ticket_id": 1, "queue": "Engineering"})
TURN_2 = "Anything new on it? Move it to Engineering if it is open again."


def qwen3(messages: list[dict[str, Any]], **kwargs: Any) -> str:
    """Render with Qwen3's chat template, as transformers does (its `tojson` keeps non-ASCII)."""
    sandbox = pytest.importorskip("jinja2.sandbox", reason="rendering a chat template needs jinja2")
    env = sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = lambda value, indent=None: json.dumps(value, ensure_ascii=False, indent=indent)
    return str(env.from_string((TEMPLATES / "qwen3.jinja").read_text()).render(messages=messages, **kwargs))


def test_the_tools_block_is_what_the_chat_template_renders_for_tools() -> None:
    start = Episode(ticket_task()).reset()
    user = {"role": "user", "content": start.user_message}
    with_tools = qwen3([{"role": "system", "content": start.system_prompt}, user], tools=start.openai_tools)
    written = qwen3(
        [{"role": "system", "content": system_with_tools(start.system_prompt, start.openai_tools)}, user]
    )
    assert written == with_tools
    assert render_tools(start.openai_tools).count('\n{"type": "function"') == len(start.openai_tools) == 8


def test_calls_are_written_as_the_template_renders_an_assistant_message_and_read_back() -> None:
    assistant = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in (LOOK, MOVE)
        ],
    }
    rendered = qwen3([assistant])
    text = render_tool_calls([LOOK, MOVE])
    assert rendered == f"<|im_start|>assistant\n{text}<|im_end|>\n"
    assert parse_tool_calls(text) == ParsedText(content="", calls=[LOOK, MOVE])
    accented = ToolCall("mail_send", {"body": "Merci, Zoë"})
    assert "Zoë" in render_tool_calls([accented]) and parse_tool_calls(
        render_tool_calls([accented])
    ).calls == [accented]


def test_reading_keeps_the_answer_and_drops_reasoning_and_calls_written_while_thinking() -> None:
    text = "<think>Maybe <tool_call>{}</tool_call>?</think>\nLet me look.\n" + render_tool_calls([LOOK])
    assert parse_tool_calls(text) == ParsedText(content="Let me look.", calls=[LOOK])
    # the prompt opened <think> itself: the completion starts inside the reasoning
    assert parse_tool_calls("I should answer.</think>\n\nIt is urgent now.") == ParsedText(
        "It is urgent now.", []
    )
    assert parse_tool_calls("No tools needed.") == ParsedText("No tools needed.", [])


@pytest.mark.parametrize(
    ("body", "call"),
    [
        ('{"name": "tickets_get_ticket", "arguments": "{\\"ticket_id\\": 1}"}', LOOK),
        ('{"name": "tickets_list_queues"}', ToolCall("tickets_list_queues", {})),
        (
            '{"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}',
            ToolCall("", error="the tool call is not valid JSON (Expecting ',' delimiter at character 62)"),
        ),
        ('{"arguments": {}}', ToolCall("", error='a tool call needs a JSON object with a "name" string')),
        (
            '["tickets_get_ticket"]',
            ToolCall("", error='a tool call needs a JSON object with a "name" string'),
        ),
        (
            '{"name": "tickets_get_ticket", "arguments": [1]}',
            ToolCall(
                "tickets_get_ticket", error='the "arguments" of tickets_get_ticket must be a JSON object'
            ),
        ),
        (
            '{"name": "tickets_get_ticket", "arguments": "{1"}',
            ToolCall(
                "tickets_get_ticket",
                error="the arguments of tickets_get_ticket are not valid JSON (Expecting property name enclosed in double quotes)",
            ),
        ),
    ],
)
def test_each_call_block_is_read_or_says_what_is_wrong_with_it(body: str, call: ToolCall) -> None:
    assert parse_tool_calls(f"<tool_call>\n{body}\n</tool_call>").calls == [call]


def test_a_two_turn_task_is_played_from_text_step_by_step_and_scored_at_the_end() -> None:
    text_episode = TextEpisode(Episode(ticket_task(), policy="text"))
    prompt = text_episode.reset()
    start = text_episode.episode.reset()  # the same prompt: reset() starts over on a fresh fork
    assert prompt == [
        {"role": "system", "content": system_with_tools(start.system_prompt, start.openai_tools)},
        {"role": "user", "content": start.user_message},
    ]
    prompt = text_episode.reset()

    first = text_episode.step("I will raise it.\n" + render_tool_calls([URGENT]))
    assert (first.reward, first.done, len(first.observation)) == (0.0, False, 1)
    assert first.observation[0]["role"] == "tool" and '"priority":"urgent"' in first.observation[0]["content"]
    observation, reward, done, info = text_episode.step("It is urgent now.")  # unpacked as in gym
    assert Step(observation, reward, done, info) == Step(
        [{"role": "user", "content": TURN_2}], 0.0, False, {}
    )
    both = text_episode.step(render_tool_calls([LOOK, MOVE]))
    assert [m["role"] for m in both.observation] == ["tool", "tool"]
    assert '"status":"open","priority":"urgent"' in both.observation[0]["content"]  # reopened between turns
    last = text_episode.step("Moved to Engineering.")
    assert (last.observation, last.reward, last.done) == ([], 1.0, True)
    assert last.info == {
        "rewards": {"score": 1.0, "success": 1.0, "raw_score": 1.0, "safety": 1.0, "collateral": 0.0},
        "status": "completed",
        "steps": 4,
    }
    with pytest.raises(EpisodeError, match="the episode is over: reset"):
        text_episode.step("Anything else?")
    record = text_episode.episode.record()
    assert (record.policy, record.status, record.turn_boundaries) == ("text", "completed", [1, 5])
    assert [(e.actor, e.tool) for e in record.tool_calls] == [
        ("agent", "update_ticket"),
        ("event", "customer_comment"),
        ("agent", "get_ticket"),
        ("agent", "update_ticket"),
    ]
    assert [m["role"] for m in text_episode.messages].count("assistant") == 4
    text_episode.episode.close()


def test_an_unreadable_call_is_answered_with_an_error_and_runs_nothing() -> None:
    text_episode = TextEpisode(Episode(ticket_task()))
    text_episode.reset()
    step = text_episode.step(
        '<tool_call>\n{"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}\n</tool_call>'
    )
    assert step.observation == [
        {
            "role": "tool",
            "content": "Error: the tool call is not valid JSON (Expecting ',' delimiter at character 62); "
            "nothing was run.",
        }
    ]
    unknown = text_episode.step(render_tool_calls([ToolCall("tickets_delete_everything", {})]))
    assert unknown.done is False and "tickets_delete_everything" in unknown.observation[0]["content"]
    assert [e.tool for e in text_episode.episode.workspace.audit.entries()] == ["tickets_delete_everything"]
    text_episode.episode.close()


def test_max_steps_ends_the_episode_judged_as_it_stands() -> None:
    text_episode = TextEpisode(Episode(ticket_task()), max_steps=2)
    text_episode.reset()
    assert text_episode.step(render_tool_calls([URGENT])).done is False
    end = text_episode.step("It is urgent now.")
    assert (end.observation, end.done) == ([{"role": "user", "content": TURN_2}], True)
    assert end.reward == end.info["rewards"]["score"] == 0.5  # its second turn was never played
    verdict = text_episode.episode.verdict()
    assert verdict is not None and [t.success for t in verdict.turns] == [True, False]
    text_episode.episode.close()
    with pytest.raises(ValueError, match="max_steps must be at least 1, not 0"):
        TextEpisode(Episode(ticket_task()), max_steps=0)


def test_max_result_chars_cuts_each_tool_result_the_model_reads() -> None:
    full_episode = TextEpisode(Episode(ticket_task()))
    full_episode.reset()
    (full,) = full_episode.step(render_tool_calls([LOOK])).observation
    full_episode.episode.close()
    bounded_episode = TextEpisode(Episode(ticket_task()), max_result_chars=40)
    bounded_episode.reset()
    (bounded,) = bounded_episode.step(render_tool_calls([LOOK])).observation
    bounded_episode.episode.close()
    assert len(full["content"]) > 40
    assert bounded == {"role": "tool", "content": bound_result(full["content"], 40)}
    assert bounded["content"].startswith(full["content"][:40] + "\n[result cut: the first 40 of ")
    with pytest.raises(ValueError, match="max_result_chars must be at least 1, not 0"):
        TextEpisode(Episode(ticket_task()), max_result_chars=0)
