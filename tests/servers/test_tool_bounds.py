"""Integer tool arguments are bounded in the schema, so a number SQLite cannot hold is an
invalid argument the model can fix, not a crash inside the tool."""

from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import SERVICE_NAMES, build_workspace_server, create_workspace
from tests.conftest import START

SQLITE_MAX = 2**63 - 1


def _integers(schema: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        found = [(where, schema)] if schema.get("type") == "integer" else []
        for key, value in schema.items():
            found += _integers(value, f"{where}.{key}")
        return found
    if isinstance(schema, list):
        return [hit for i, value in enumerate(schema) for hit in _integers(value, f"{where}[{i}]")]
    return []


def _bounded(schema: dict[str, Any]) -> bool:
    if "enum" in schema:
        return all(-SQLITE_MAX <= value <= SQLITE_MAX for value in schema["enum"])
    return (
        "minimum" in schema
        and "maximum" in schema
        and -SQLITE_MAX <= schema["minimum"] <= schema["maximum"] <= SQLITE_MAX
    )


async def test_every_integer_argument_has_bounds_sqlite_can_hold() -> None:
    server = build_workspace_server(create_workspace(SERVICE_NAMES, clock_start=START))
    with anyio.fail_after(10):
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
    integers = [hit for tool in tools for hit in _integers(tool.input_schema, tool.name)]
    assert len(integers) > 30
    unbounded = [where for where, schema in integers if not _bounded(schema)]
    assert unbounded == []


@pytest.mark.parametrize(
    ("tool", "arguments", "argument"),
    [
        ("directory_search_people", {"offset": 2**63}, "offset"),
        ("calendar_get_event", {"event_id": 2**63}, "event_id"),
        ("calendar_list_events", {"start": "2026-03-02", "end": "2026-03-03", "offset": 2**63}, "offset"),
        ("files_read_file", {"path": "/a.txt", "start_line": 2**63}, "start_line"),
    ],
)
async def test_a_number_too_large_for_sqlite_is_an_invalid_argument_naming_it(
    tool: str, arguments: dict[str, Any], argument: str
) -> None:
    ws = create_workspace(SERVICE_NAMES, clock_start=START)
    with anyio.fail_after(10):
        async with Client(build_workspace_server(ws)) as client:
            result = await client.call_tool(tool, arguments)
    assert result.is_error
    text = result.content[0].text
    assert text.startswith(f"Error executing tool {tool}: invalid arguments. {argument}: ")
    assert "less than or equal to" in text
    [entry] = ws.audit.entries()
    assert (entry.tool, entry.is_error) == (tool.split("_", 1)[1], True)
