"""Several processes serving one workspace file: each call is one write transaction, so no
write is lost, every write is audited exactly once and the clock counts every write."""

import multiprocessing
import sqlite3
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.mcpserver import Context
from pydantic import BaseModel

from coworkenv.servers import create_workspace
from coworkenv.servers.toolkit import (
    BUSY_MESSAGE,
    WRITE_CALL_DURATION_SECONDS,
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


class Count(BaseModel):
    count: int


@WRITE.tool(read_only=False)
async def add(ctx: Context, name: str) -> Count:
    """Insert one row and return how many rows there are."""
    ws = workspace_of(ctx)
    ws.conn.execute("INSERT INTO toy_items (name) VALUES (?)", (name,))
    return Count(count=ws.conn.execute("SELECT COUNT(*) FROM toy_items").fetchone()[0])


@READ.tool(read_only=True)
async def count(ctx: Context) -> Count:
    """Count the rows."""
    return Count(count=workspace_of(ctx).conn.execute("SELECT COUNT(*) FROM toy_items").fetchone()[0])


TOY = ServiceSpec(
    name="toy",
    schema=ServiceSchema("toy", "CREATE TABLE toy_items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"),
    tools=ToolSet("toy", read=READ, write=WRITE),
    world=WorldOperations("toy"),
    instructions="toy: items.",
)
PROCESSES = 3
CALLS = 40
STDIO_CALLS = 20


def _serve_calls(path: str, worker: int, start: Any, results: Any) -> None:
    """One process: open the file, then alternate writes and reads as fast as it can."""

    async def calls() -> tuple[list[str], list[str]]:
        ws = Workspace.open(path)
        server = WorkspaceServer(ws, [TOY], name="toy")
        written, errors = [], []
        for i in range(CALLS):
            name = f"w{worker}-{i}"
            try:
                await server.call_tool("add", {"name": name})
                written.append(name)
                await server.call_tool("count", {})
            except ToolError as exc:
                errors.append(str(exc))
        ws.close()
        return written, errors

    start.wait(timeout=60)
    results.put((worker, *anyio.run(calls)))


@pytest.fixture
def workspace_file(tmp_path: Path) -> Path:
    path = tmp_path / "shared.db"
    Workspace.create([TOY.schema], clock_start=START, path=path).close()
    return path


def test_processes_writing_one_file_lose_no_write_and_audit_each_once(workspace_file: Path) -> None:
    mp = multiprocessing.get_context("spawn")
    start, results = mp.Barrier(PROCESSES), mp.Queue()
    procs = [
        mp.Process(target=_serve_calls, args=(str(workspace_file), w, start, results))
        for w in range(PROCESSES)
    ]
    for p in procs:
        p.start()
    try:
        outcomes = [results.get(timeout=120) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    written = sorted(name for _, names, _ in outcomes for name in names)
    errors = [e for _, _, errs in outcomes for e in errs]
    assert set(errors) <= {
        f"Error executing tool add: {BUSY_MESSAGE}",
        f"Error executing tool count: {BUSY_MESSAGE}",
    }
    assert len(written) + sum(e.endswith("tool add: " + BUSY_MESSAGE) for e in errors) == PROCESSES * CALLS

    ws = Workspace.open(workspace_file)
    assert sorted(r["name"] for r in ws.rows("toy_items")) == written
    entries = ws.audit.entries()
    assert all(not e.is_error for e in entries)
    assert sorted(e.arguments["name"] for e in entries if e.tool == "add") == written
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    assert ws.clock.now() == START + timedelta(seconds=len(written) * WRITE_CALL_DURATION_SECONDS)
    # Each write saw the clock every earlier write left: the audit times step by one write each.
    add_times = [e.time for e in entries if e.tool == "add"]
    assert add_times == [
        (START + timedelta(seconds=i * WRITE_CALL_DURATION_SECONDS)).isoformat() for i in range(len(written))
    ]
    assert ws.integrity_check() == "ok"


async def test_a_call_that_cannot_get_the_write_lock_answers_busy_and_changes_nothing(
    workspace_file: Path,
) -> None:
    ws = Workspace.open(workspace_file)
    server = WorkspaceServer(ws, [TOY], name="toy")
    server.busy_wait_seconds = 0.1
    other = sqlite3.connect(workspace_file, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    with anyio.fail_after(10):
        async with Client(server) as client:
            busy = await client.call_tool("add", {"name": "blocked"})
            other.execute("ROLLBACK")
            done = await client.call_tool("add", {"name": "after"})
    assert busy.is_error
    assert busy.content[0].text == f"Error executing tool add: {BUSY_MESSAGE}"
    assert done.structured_content == {"count": 1}
    assert [r["name"] for r in ws.rows("toy_items")] == ["after"]
    assert [(e.tool, e.arguments, e.is_error) for e in ws.audit.entries()] == [
        ("add", {"name": "after"}, False)
    ]
    assert ws.clock.now() == START + timedelta(seconds=WRITE_CALL_DURATION_SECONDS)


async def test_a_call_whose_commit_waits_too_long_on_a_reader_is_rolled_back(workspace_file: Path) -> None:
    ws = Workspace.open(workspace_file)
    server = WorkspaceServer(ws, [TOY], name="toy")
    server.busy_wait_seconds = 0.1
    reader = sqlite3.connect(workspace_file, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM toy_items").fetchone()  # holds a read lock until it ends
    with anyio.fail_after(10):
        async with Client(server) as client:
            busy = await client.call_tool("add", {"name": "blocked"})
            reader.execute("COMMIT")
    assert busy.is_error
    assert busy.content[0].text == f"Error executing tool add: {BUSY_MESSAGE}"
    assert not ws.conn.in_transaction
    assert ws.rows("toy_items") == []
    assert ws.audit.entries() == []
    assert ws.clock.now() == START


async def test_two_stdio_servers_on_one_file_keep_every_write(tmp_path: Path) -> None:
    path = tmp_path / "mail.db"
    create_workspace(["mail"], clock_start=START, path=str(path)).close()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "coworkenv", "serve", "--service", "mail", "--db", str(path)]
    )
    saved: list[str] = []
    errors: list[str] = []

    async def client_writes(client: Client, who: str) -> None:
        for i in range(STDIO_CALLS):
            subject = f"{who}-{i}"
            result = await client.call_tool("save_draft", {"to": ["ann@acme.example"], "subject": subject})
            if result.is_error:
                errors.append(result.content[0].text)
            else:
                saved.append(subject)

    with anyio.fail_after(60):
        async with (
            Client(stdio_client(params)) as one,
            Client(stdio_client(params)) as two,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(client_writes, one, "one")
            tg.start_soon(client_writes, two, "two")
    assert set(errors) <= {f"Error executing tool save_draft: {BUSY_MESSAGE}"}
    assert len(saved) + len(errors) == 2 * STDIO_CALLS
    ws = Workspace.open(path)
    assert sorted(r["subject"] for r in ws.rows("mail_messages")) == sorted(saved)
    entries = ws.audit.entries()
    assert sorted(e.arguments["subject"] for e in entries) == sorted(saved)
    assert not any(e.is_error for e in entries)
    assert ws.clock.now() == START + timedelta(seconds=len(saved) * WRITE_CALL_DURATION_SECONDS)
