"""The audited, transactional WorkspaceServer, through a real in-memory client."""

from typing import Annotated, Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

from coworkenv.servers import build_workspace_server, create_workspace
from coworkenv.servers.toolkit import (
    ServiceError,
    ServiceSpec,
    ToolError,
    ToolList,
    ToolSet,
    WorkspaceServer,
    WorldOperations,
    workspace_of,
)
from coworkenv.state import ServiceSchema, Workspace
from tests.conftest import START

READ = ToolList()
WRITE = ToolList()
WORLD = WorldOperations("toy")


class Count(BaseModel):
    count: int


class AddParams(BaseModel):
    name: str


@WRITE.tool(read_only=False)
async def add_two(ctx: Context, name: str, fail_after_first: bool = False) -> Count:
    """Insert two rows; optionally fail between them with a domain error."""
    ws = workspace_of(ctx)
    ws.conn.execute("INSERT INTO toy_items (name) VALUES (?)", (name + "-1",))
    if fail_after_first:
        raise ServiceError("second insert refused; call again without fail_after_first")
    ws.conn.execute("INSERT INTO toy_items (name) VALUES (?)", (name + "-2",))
    return Count(count=ws.conn.execute("SELECT COUNT(*) FROM toy_items").fetchone()[0])


@WRITE.tool(read_only=False)
async def crash(ctx: Context) -> Count:
    """Write then hit a bug (not a ServiceError)."""
    workspace_of(ctx).conn.execute("INSERT INTO toy_items (name) VALUES ('crash')")
    raise KeyError("internal detail")


@READ.tool(read_only=True)
async def count(ctx: Context, at_least: Annotated[int, Field(ge=0)] = 0) -> Count:
    """Count the rows."""
    return Count(count=workspace_of(ctx).conn.execute("SELECT COUNT(*) FROM toy_items").fetchone()[0])


@WORLD.operation(AddParams)
def add_item(ws: Workspace, p: AddParams) -> dict[str, Any]:
    """Someone adds an item."""
    if not p.name:
        raise ServiceError("name must not be empty")
    ws.conn.execute("INSERT INTO toy_items (name) VALUES (?)", (p.name,))
    return {"name": p.name}


TOY = ServiceSpec(
    name="toy",
    schema=ServiceSchema("toy", "CREATE TABLE toy_items (id INTEGER PRIMARY KEY, name TEXT);"),
    tools=ToolSet("toy", read=READ, write=WRITE),
    world=WORLD,
    instructions="toy: items.",
)


@pytest.fixture
def ws() -> Workspace:
    return Workspace.create([TOY.schema], clock_start=START)


async def test_a_failed_call_leaves_no_write_and_is_audited(ws: Workspace) -> None:
    server = WorkspaceServer(ws, [TOY], name="toy")
    with anyio.fail_after(5):
        async with Client(server) as client:
            bad = await client.call_tool("add_two", {"name": "a", "fail_after_first": True})
            crashed = await client.call_tool("crash", {})
            good = await client.call_tool("add_two", {"name": "b"})
    assert bad.is_error
    assert bad.content[0].text == (
        "Error executing tool add_two: second insert refused; call again without fail_after_first"
    )
    assert crashed.is_error and crashed.content[0].text == "Error executing tool crash"
    assert good.structured_content == {"count": 2}
    assert [r["name"] for r in ws.rows("toy_items")] == ["b-1", "b-2"]
    entries = ws.audit.entries()
    assert [(e.tool, e.is_error, e.actor, e.service) for e in entries] == [
        ("add_two", True, "agent", "toy"),
        ("crash", True, "agent", "toy"),
        ("add_two", False, "agent", "toy"),
    ]
    assert entries[0].error == bad.content[0].text
    assert entries[1].error == "Error executing tool crash"
    assert entries[2].result == {"count": 2}
    assert entries[2].arguments == {"name": "b"}


async def test_a_domain_error_reads_the_same_from_code_and_names_the_prefixed_tool() -> None:
    ws = Workspace.create([TOY.schema], clock_start=START)
    server = WorkspaceServer(ws, [TOY], name="toy", prefixed=True)
    with pytest.raises(ToolError) as raised:
        await server.call_tool("toy_add_two", {"name": "a", "fail_after_first": True})
    assert type(raised.value) is ToolError
    assert str(raised.value) == (
        "Error executing tool toy_add_two: second insert refused; call again without fail_after_first"
    )
    assert isinstance(raised.value.__cause__, ServiceError)
    assert ws.rows("toy_items") == []
    assert [(e.tool, e.error) for e in ws.audit.entries()] == [("add_two", str(raised.value))]


async def test_unknown_tools_and_invalid_arguments_are_audited_errors(ws: Workspace) -> None:
    ws.actor = "oracle"
    with anyio.fail_after(5):
        async with Client(WorkspaceServer(ws, [TOY], name="toy")) as client:
            unknown = await client.call_tool("drop_table", {})
            invalid = await client.call_tool("count", {"at_least": -1})
    assert unknown.content[0].text == "Unknown tool 'drop_table'. Available tools: add_two, count, crash"
    assert "at_least" in invalid.content[0].text and "greater than or equal to 0" in invalid.content[0].text
    assert [(e.tool, e.service, e.actor, e.is_error) for e in ws.audit.entries()] == [
        ("drop_table", "unknown", "oracle", True),
        ("count", "toy", "oracle", True),
    ]


async def test_write_calls_move_the_clock_and_reads_do_not(ws: Workspace) -> None:
    with anyio.fail_after(5):
        async with Client(WorkspaceServer(ws, [TOY], name="toy")) as client:
            await client.call_tool("count", {})
            await client.call_tool("add_two", {"name": "x"})
            await client.call_tool("add_two", {"name": "y", "fail_after_first": True})
    assert ws.clock.now_text() == "2026-03-02T09:01:00+00:00"
    assert [e.time for e in ws.audit.entries()] == ["2026-03-02T09:00:00+00:00"] * 2 + [
        "2026-03-02T09:01:00+00:00"
    ]


async def test_a_read_of_an_in_memory_workspace_runs_outside_a_transaction(ws: Workspace) -> None:
    """A read has nothing to roll back and no one writes an in-memory workspace meanwhile, so
    it skips BEGIN and COMMIT; a write, and a read inside the caller's transaction, do not."""
    server = WorkspaceServer(ws, [TOY], name="toy")
    statements: list[str] = []
    ws.conn.set_trace_callback(statements.append)

    def transaction_statements() -> list[str]:
        out = [
            s.split()[0]
            for s in statements
            if s.split()[0] in ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")
        ]
        statements.clear()
        return out

    read = await server.call_on(ws, "count", {})
    assert read.structured_content == {"count": 0} and transaction_statements() == []
    with pytest.raises(ToolError, match="at_least: Input should be greater than or equal to 0"):
        await server.call_on(ws, "count", {"at_least": -1})
    assert transaction_statements() == []
    await server.call_on(ws, "add_two", {"name": "a"})
    assert transaction_statements() == ["BEGIN", "COMMIT"]
    with ws.transaction():
        await server.call_on(ws, "count", {})
    assert transaction_statements() == ["SAVEPOINT"] * 2 + ["RELEASE"] * 2  # the caller's, the call's
    ws.conn.set_trace_callback(None)
    assert [(e.tool, e.is_error) for e in ws.audit.entries()] == [
        ("count", False),
        ("count", True),
        ("add_two", False),
        ("count", False),
    ]


async def test_a_read_of_a_workspace_file_keeps_its_transaction(tmp_path: Any) -> None:
    """Another process may write a file between a read's statements: the read stays one
    transaction, so what it returns is one state."""
    ws = Workspace.create([TOY.schema], clock_start=START, path=tmp_path / "ws.db")
    statements: list[str] = []
    ws.conn.set_trace_callback(statements.append)
    await WorkspaceServer(ws, [TOY], name="toy").call_on(ws, "count", {})
    ws.conn.set_trace_callback(None)
    assert [s.split()[0] for s in statements if s.split()[0] in ("BEGIN", "COMMIT")] == ["BEGIN", "COMMIT"]


async def test_a_call_returns_the_json_its_audit_entry_recorded(ws: Workspace) -> None:
    server = WorkspaceServer(ws, [TOY], name="toy")
    written = await server.call_on_audited(ws, "add_two", {"name": "a"})
    read = await server.call_on_audited(ws, "count", {})
    assert (written.result.structured_content, written.result_json) == ({"count": 2}, '{"count":2}')
    assert (read.result.structured_content, read.result_json) == ({"count": 2}, '{"count":2}')
    assert ws.conn.execute("SELECT tool, time, result FROM audit_log ORDER BY seq").fetchall() == [
        ("add_two", "2026-03-02T09:00:00+00:00", '{"count":2}'),  # the time before the write's minute
        ("count", "2026-03-02T09:01:00+00:00", '{"count":2}'),
    ]


async def test_concurrent_calls_are_serialized(ws: Workspace) -> None:
    server = WorkspaceServer(ws, [TOY], name="toy")
    results: list[int] = []

    async def worker(i: int) -> None:
        result = await server.call_tool("add_two", {"name": f"w{i}"})
        results.append(result.structured_content["count"])

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            for i in range(10):
                tg.start_soon(worker, i)
    assert sorted(results) == list(range(2, 21, 2))
    assert ws.integrity_check() == "ok"


def test_a_server_refuses_a_workspace_without_the_services_tables() -> None:
    other = Workspace.create([ServiceSchema("x", "CREATE TABLE x_t (a);")], clock_start=START)
    with pytest.raises(ValueError, match=r"the workspace has no tables for \['toy'\]"):
        WorkspaceServer(other, [TOY], name="toy")


def test_world_operations_run_atomically_and_are_audited_as_events(ws: Workspace) -> None:
    assert WORLD.apply(ws, "add_item", {"name": "n1"}) == {"name": "n1"}
    with pytest.raises(ValueError, match="name must not be empty"):
        WORLD.apply(ws, "add_item", {"name": ""})
    with pytest.raises(ValueError, match="name"):
        WORLD.apply(ws, "add_item", {})
    with pytest.raises(KeyError, match="toy has no world operation 'explode'"):
        WORLD.apply(ws, "explode", {})
    assert [r["name"] for r in ws.rows("toy_items")] == ["n1"]
    assert [(e.actor, e.tool, e.is_error) for e in ws.audit.entries()] == [
        ("event", "add_item", False),
        ("event", "add_item", True),
        ("event", "add_item", True),
    ]


def test_tools_need_a_docstring() -> None:
    tools = ToolList()
    with pytest.raises(ValueError, match="needs a docstring"):

        @tools.tool(read_only=True)
        async def nothing(ctx: Context) -> Count:
            return Count(count=0)


def test_a_tool_set_keeps_read_and_write_tools_apart_and_names_unique() -> None:
    assert ToolSet("toy", read=READ, write=WRITE).names == ["count", "add_two", "crash"]
    with pytest.raises(ValueError, match="toy tool add_two changes state: it belongs with the write tools"):
        ToolSet("toy", read=WRITE, write=ToolList())
    with pytest.raises(ValueError, match="toy tool count is read-only: it belongs with the read tools"):
        ToolSet("toy", read=ToolList(), write=READ)
    twice = ToolList()
    twice.tool(read_only=True)(count)
    twice.tool(read_only=True)(count)
    with pytest.raises(ValueError, match="toy has two tools named count"):
        ToolSet("toy", read=twice, write=ToolList())


async def test_combined_server_prefixes_tool_names_by_service() -> None:
    ws = create_workspace(["directory"], clock_start=START)
    server = build_workspace_server(ws)
    with anyio.fail_after(5):
        async with Client(server) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("directory_list_teams", {})
    assert names == [
        "directory_search_people",
        "directory_get_person",
        "directory_list_teams",
        "directory_list_team",
    ]
    assert result.structured_content == {"teams": []}
    assert [(e.service, e.tool) for e in ws.audit.entries()] == [("directory", "list_teams")]


REQUESTS = ToolList()


@REQUESTS.tool(read_only=True)
async def in_request(ctx: Context) -> Count:
    """1 when the call came in an MCP request (its context has the request), 0 otherwise."""
    try:
        request = ctx.request_context
    except ValueError:
        return Count(count=0)
    return Count(count=int(request is not None))


async def test_a_call_from_code_has_no_request_and_a_request_keeps_its_own(ws: Workspace) -> None:
    # Calls made from code share one context without a request; a call that came in an MCP
    # request still gets that request's context.
    server = WorkspaceServer(
        ws,
        [ServiceSpec("toy", TOY.schema, ToolSet("toy", read=REQUESTS, write=ToolList()), WORLD, "toy")],
        name="toy",
    )
    direct = [await server.call_tool("in_request", {}) for _ in range(2)]
    on = await server.call_on(ws, "in_request", {})
    with anyio.fail_after(5):
        async with Client(server) as client:
            requested = await client.call_tool("in_request", {})
    assert [r.structured_content for r in [*direct, on]] == [{"count": 0}] * 3
    assert requested.structured_content == {"count": 1}
