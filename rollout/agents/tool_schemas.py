"""MCP tools as OpenAI function-calling schemas (for agents and for exports)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

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
