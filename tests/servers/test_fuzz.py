"""Random arguments against every tool of the demo workspace.

For each call: no exception other than a ToolError (a bug surfaces as the SDK's
UnexpectedToolError), a failed call leaves the content exactly as it was (no half-applied
write), every call lands in the audit log once, and the database stays sound.
"""

import json
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server.mcpserver.exceptions import ToolError

from coworkenv.servers import build_workspace_server
from coworkenv.servers.render import northwind_workspace
from coworkenv.servers.toolkit import UnexpectedToolError

SNAPSHOT = northwind_workspace(seed=0).snapshot()
SERVER_TOOLS = build_workspace_server(SNAPSHOT.fork())._tool_manager.list_tools()
TOOL_SCHEMAS = {tool.name: tool.parameters for tool in SERVER_TOOLS}
READ_ONLY = {tool.name for tool in SERVER_TOOLS if tool.annotations and tool.annotations.read_only_hint}

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)


def from_schema(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values shaped by a (pydantic-generated) JSON schema; bounds are respected, text is arbitrary."""
    if "$ref" in schema:
        return from_schema(defs[schema["$ref"].split("/")[-1]], defs)
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return st.one_of([from_schema(s, defs) for s in schema[key]])
    kind = schema.get("type")
    if kind == "string":
        fragments = st.sampled_from(
            ["/", "..", "@", "*", "2026-03-02T10:00:00Z", "inbox", "open", "x@y.example"]
        )
        return st.one_of(st.text(max_size=40), fragments, st.lists(fragments, max_size=4).map("".join))
    if kind == "integer":
        low = schema.get("minimum", -(2**40))
        high = schema.get("maximum", 2**40)
        return st.integers(min_value=low, max_value=high)
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(from_schema(schema.get("items", {}), defs), max_size=4)
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {k: from_schema(v, defs) for k, v in properties.items() if k in required},
            optional={k: from_schema(v, defs) for k, v in properties.items() if k not in required},
        )
    return JSON_VALUES


def arguments_for(schema: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Valid-looking arguments from the input schema, and junk with the right keys."""
    keys = list(schema.get("properties", {}))
    junk = st.dictionaries(st.sampled_from(keys) if keys else st.text(max_size=5), JSON_VALUES, max_size=4)
    return st.one_of(from_schema(schema, schema.get("$defs", {})), junk)


@pytest.mark.parametrize("tool", sorted(TOOL_SCHEMAS))
def test_random_arguments_never_crash_or_half_write(tool: str) -> None:
    ws = SNAPSHOT.fork()
    server = build_workspace_server(ws)

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(arguments_for(TOOL_SCHEMAS[tool]))
    def check(arguments: dict[str, Any]) -> None:
        before = None if tool in READ_ONLY else ws.content_hash()
        seq = ws.audit.last_seq()
        try:
            anyio.run(server.call_tool, tool, arguments)
        except UnexpectedToolError as exc:
            raise AssertionError(f"{tool}({json.dumps(arguments)}) crashed: {exc.__cause__!r}") from exc
        except ToolError:
            if before is not None:
                assert ws.content_hash() == before, (
                    f"{tool}({json.dumps(arguments)}) failed but changed state"
                )
        entries = ws.audit.entries(since=seq)
        assert len(entries) == 1 and entries[0].tool == tool.split("_", 1)[1]

    check()
    assert ws.integrity_check() == "ok"
