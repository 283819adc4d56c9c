"""Every tool's schema is pinned in `tool_schemas.json`, so a schema change is a reviewed diff.

After an intended change, regenerate the file with
`UPDATE_TOOL_SCHEMAS=1 .venv/bin/pytest tests/servers/test_tool_schemas.py` and review the diff.
"""

import json
import os
from pathlib import Path

import anyio
from mcp import Client

from coworkenv.servers import SERVICE_NAMES, build_workspace_server, create_workspace
from tests.conftest import START

SNAPSHOT_FILE = Path(__file__).with_name("tool_schemas.json")


async def current_schemas() -> dict[str, dict]:
    server = build_workspace_server(create_workspace(SERVICE_NAMES, clock_start=START))
    with anyio.fail_after(10):
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
    return {
        tool.name: {
            "description": tool.description,
            "annotations": tool.annotations.model_dump(by_alias=True, exclude_none=True)
            if tool.annotations
            else None,
            "inputSchema": tool.input_schema,
            "outputSchema": tool.output_schema,
        }
        for tool in tools
    }


async def test_tool_schemas_match_the_pinned_snapshot() -> None:
    current = await current_schemas()
    if os.environ.get("UPDATE_TOOL_SCHEMAS"):
        SNAPSHOT_FILE.write_text(json.dumps(current, indent=2, sort_keys=True) + "\n")
    pinned = json.loads(SNAPSHOT_FILE.read_text())
    assert sorted(current) == sorted(pinned), "tools were added or removed"
    for name in current:
        assert current[name] == pinned[name], (
            f"schema of {name} changed; regenerate and review tool_schemas.json"
        )


async def test_every_tool_is_documented_and_annotated() -> None:
    for name, schema in (await current_schemas()).items():
        assert len(schema["description"]) >= 40, f"{name} needs a docstring written for the model"
        assert "readOnlyHint" in schema["annotations"], name
        assert schema["outputSchema"] is not None, f"{name} returns no structured output"
