"""MCP tools as OpenAI function-calling schemas (for agents and for exports), in full or in
the compact rendering sized for small models, and the bound on a tool result a model reads.

The compact rendering (`compact_tools`) writes each tool as one line,
`name(arg?: type|enum): first sentence` (`?`: optional; an enum's values joined by `|`), for
the system prompt, and keeps in the `tools` entries only what a server needs to parse a call:
names, types, enums and which arguments are required.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Literal

from mcp_types import Tool

from coworkenv.servers import SERVICE_NAMES, get_service


def openai_tool(tool: Tool) -> dict[str, Any]:
    """One MCP tool as a Chat Completions `tools` entry."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description or "",
            "parameters": tool.input_schema or {"type": "object", "properties": {}},
        },
    }


@lru_cache(maxsize=64)
def _tools_for(services: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    out = []
    for name in SERVICE_NAMES:
        if name in services:
            for tool in get_service(name).tools.mcp_tools(f"{name}_"):
                out.append(
                    {
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": tool.parameters,
                        },
                    }
                )
    return tuple(out)


def tools_for_services(services: Iterable[str]) -> list[dict[str, Any]]:
    """The OpenAI tool schemas an episode with these services exposes (combined-server names),
    the same list the agent was given, so exports need not store it per record."""
    return [dict(t) for t in _tools_for(tuple(sorted(set(services))))]


ToolFormat = Literal["full", "compact"]
"""How tools are shown to a model: full JSON schemas, or the compact rendering."""

#: What precedes the compact tool lines in a system prompt.
COMPACT_HEADING = "Tools (name(argument?: type): what it does; ? marks an optional argument):"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def first_sentence(text: str) -> str:
    """The first sentence of a description, on one line."""
    flat = " ".join(text.split())
    return _SENTENCE_END.split(flat, maxsplit=1)[0] if flat else ""


def _non_null(schema: dict[str, Any]) -> dict[str, Any]:
    branches = [b for b in schema.get("anyOf", []) if b != {"type": "null"}]
    return branches[0] if len(branches) == 1 else schema


def type_text(schema: dict[str, Any]) -> str:
    """An argument's type in a few characters: `string`, `integer[]`, `open|closed`, `a|b`."""
    schema = _non_null(schema)
    if "enum" in schema:
        return "|".join(str(v) for v in schema["enum"])
    if "const" in schema:
        return str(schema["const"])
    if "anyOf" in schema:
        branches = [b for b in schema["anyOf"] if b != {"type": "null"}]
        singles = [b for b in branches if b.get("type") != "array"]
        lists = [b for b in branches if b.get("type") == "array"]
        if len(singles) == 1 and len(lists) == 1 and _non_null(lists[0].get("items", {})) == singles[0]:
            return f"{type_text(singles[0])} (or a list)"  # one value, or several
        return "|".join(type_text(b) for b in branches)
    kind = schema.get("type", "any")
    if kind == "array":
        item = type_text(schema.get("items", {}))
        return f"({item})[]" if "|" in item else f"{item}[]"
    return "|".join(kind) if isinstance(kind, list) else str(kind)


def compact_line(tool: dict[str, Any]) -> str:
    """One Chat Completions tool as `name(arg?: type|enum): first sentence`."""
    function = tool["function"]
    parameters = function.get("parameters") or {}
    required = set(parameters.get("required", []))
    arguments = ", ".join(
        f"{name}{'' if name in required else '?'}: {type_text(schema)}"
        for name, schema in (parameters.get("properties") or {}).items()
    )
    return f"{function['name']}({arguments}): {first_sentence(function.get('description') or '')}"


def _slim(schema: dict[str, Any]) -> dict[str, Any]:
    schema = _non_null(schema)
    out: dict[str, Any] = {k: schema[k] for k in ("type", "enum") if k in schema}
    if "anyOf" in schema:
        out["anyOf"] = [_slim(b) for b in schema["anyOf"]]
    if isinstance(schema.get("items"), dict):
        out["items"] = _slim(schema["items"])
    return out


def slim_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """A parameters schema with names, types, enums and `required` only."""
    out: dict[str, Any] = {
        "type": "object",
        "properties": {k: _slim(v) for k, v in (parameters.get("properties") or {}).items()},
    }
    if parameters.get("required"):
        out["required"] = list(parameters["required"])
    return out


def compact_tools(tools: Iterable[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The compact rendering of Chat Completions tools: the text for the system prompt (a
    heading and one `compact_line` per tool) and the slim `tools` entries (no descriptions,
    `slim_parameters`) that the request or the training row carries."""
    tools = list(tools)
    text = "\n".join([COMPACT_HEADING, *(compact_line(t) for t in tools)])
    entries = [
        {
            "type": "function",
            "function": {
                "name": t["function"]["name"],
                "parameters": slim_parameters(t["function"].get("parameters") or {}),
            },
        }
        for t in tools
    ]
    return text, entries


def bound_result(text: str, max_chars: int) -> str:
    """A tool result as a model reads it: at most `max_chars` characters of it, then (when it
    was longer) a note saying how much was left out and how to ask for the rest."""
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + (
        f"\n[result cut: the first {max_chars} of {len(text)} characters. Ask for less: a smaller "
        "`limit` and an `offset` to page, narrower filters, or one item by its id.]"
    )
