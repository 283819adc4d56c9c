"""Tool calls as model text, in the Hermes format that Qwen-family chat templates emit.

A trainer that samples raw text (verl, SkyRL) gives the model its tools inside the system
message and reads its tool calls back out of what it wrote:

    <tool_call>
    {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}}
    </tool_call>

`render_tools` writes the tools block the way a Hermes/Qwen chat template writes it for
`apply_chat_template(messages, tools=...)`, for trainers whose prompts are rendered without
`tools`; `render_tool_calls` writes calls the way the template renders an assistant
message's `tool_calls` (what a model trained on that template produces);
`parse_tool_calls` reads them back. A `<think>...</think>` block is reasoning, not part of
the answer: calls written inside it are not calls.

    text = render_tool_calls([ToolCall("tickets_get_ticket", {"ticket_id": 1})])
    parsed = parse_tool_calls("Let me look.\\n" + text)
    assert parsed.content == "Let me look." and parsed.calls[0].arguments == {"ticket_id": 1}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ParsedText",
    "ToolCall",
    "parse_tool_calls",
    "render_tool_calls",
    "render_tools",
    "system_with_tools",
]

_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)
_THINKING = re.compile(r"<think>.*?</think>", re.S)
_OPEN_THINKING = re.compile(r"^.*?</think>", re.S)  # a prompt that opened <think> itself

TOOLS_INTRO = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_OUTRO = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    'within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
    '"arguments": <args-json-object>}\n</tool_call>'
)


@dataclass(frozen=True)
class ToolCall:
    """One call the model wrote. `error` says why a `<tool_call>` block could not be read
    (then `name` is what could be read of it, and `arguments` is empty)."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


@dataclass(frozen=True)
class ParsedText:
    """A model's text split into what it says (`content`, without tool calls and reasoning)
    and the calls it makes, in order."""

    content: str
    calls: list[ToolCall]


def render_tools(tools: Iterable[dict[str, Any]]) -> str:
    """The tools block of a Hermes/Qwen system message, for Chat Completions `tools`
    entries (`Start.openai_tools`): each tool as one line of JSON inside `<tools>`."""
    lines = "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools)
    return TOOLS_INTRO + lines + TOOLS_OUTRO


def system_with_tools(system_prompt: str, tools: Iterable[dict[str, Any]]) -> str:
    """The system message a Hermes/Qwen template renders for `system_prompt` and `tools`."""
    return f"{system_prompt}\n\n{render_tools(tools)}"


def render_tool_calls(calls: Iterable[ToolCall]) -> str:
    """Calls as a Hermes/Qwen template renders an assistant message's `tool_calls`."""
    return "\n".join(
        '<tool_call>\n{"name": "'
        + call.name
        + '", "arguments": '
        + json.dumps(call.arguments, ensure_ascii=False)
        + "}\n</tool_call>"
        for call in calls
    )


def parse_tool_calls(text: str) -> ParsedText:
    """Split model text into its answer and its `<tool_call>` blocks. A block that is not a
    JSON object with a string `name` and object `arguments` (a JSON string of one is read
    too) becomes a call with an `error` saying what was wrong, so the model can be told."""
    visible = _THINKING.sub("", text)
    if "</think>" in visible:
        visible = _OPEN_THINKING.sub("", visible, count=1)
    calls = [_read_call(body) for body in _CALL.findall(visible)]
    content = _CALL.sub("", visible).strip()
    return ParsedText(content=content, calls=calls)


def _read_call(body: str) -> ToolCall:
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        return ToolCall(name="", error=f"the tool call is not valid JSON ({exc.msg} at character {exc.pos})")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        return ToolCall(name="", error='a tool call needs a JSON object with a "name" string')
    name, arguments = data["name"], data.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolCall(name=name, error=f"the arguments of {name} are not valid JSON ({exc.msg})")
    if not isinstance(arguments, dict):
        return ToolCall(name=name, error=f'the "arguments" of {name} must be a JSON object')
    return ToolCall(name=name, arguments=arguments)
