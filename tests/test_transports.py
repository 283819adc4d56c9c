"""End to end through the real transports: stdio and streamable HTTP, as a separate process."""

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from coworkenv.servers import apply_world_operation, create_workspace, get_service
from coworkenv.servers.render import northwind_workspace
from tests.conftest import START


@pytest.fixture
def saved_workspace(tmp_path: Path) -> Path:
    ws = create_workspace(["directory"], clock_start=START)
    apply_world_operation(ws, "directory", "add_team", {"name": "Sales"})
    apply_world_operation(
        ws, "directory", "add_person", {"email": "ann@acme.example", "name": "Ann Lee", "team": "Sales"}
    )
    return ws.save(tmp_path / "ws.db")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(saved_workspace: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "coworkenv",
            "serve",
            "--transport",
            "http",
            "--port",
            str(port),
            "--db",
            str(saved_workspace),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError as exc:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(
                    f"server did not start: {proc.stderr.read().decode() if proc.stderr else ''}"
                ) from exc
            time.sleep(0.05)
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_stdio_serves_a_saved_workspace(saved_workspace: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "coworkenv", "serve", "--service", "directory", "--db", str(saved_workspace)],
    )
    with anyio.fail_after(30):
        async with Client(stdio_client(params)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool("search_people", {"query": "ann"})
            missing = await client.call_tool("get_person", {"email": "bob@acme.example"})
    assert tools == ["search_people", "get_person", "list_teams", "list_team"]
    assert [p["email"] for p in result.structured_content["people"]] == ["ann@acme.example"]
    assert missing.is_error
    assert "no person with email 'bob@acme.example'" in missing.content[0].text


async def test_streamable_http_serves_each_service_and_the_combined_server(http_server: str) -> None:
    with anyio.fail_after(30):
        async with Client(f"{http_server}/directory/mcp") as client:
            single = await client.call_tool("list_team", {"team": "Sales"})
        async with Client(f"{http_server}/mcp") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            combined = await client.call_tool("directory_get_person", {"email": "ann@acme.example"})
    assert [m["name"] for m in single.structured_content["members"]] == ["Ann Lee"]
    assert names == [
        "directory_search_people",
        "directory_get_person",
        "directory_list_teams",
        "directory_list_team",
    ]
    assert combined.structured_content["name"] == "Ann Lee"


def test_streamable_http_rejects_a_foreign_host_header(http_server: str) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Host": "evil.example", "Accept": "application/json, text/event-stream"}
    response = httpx2.post(f"{http_server}/mcp", json=request, headers=headers, timeout=10)
    assert response.status_code == 421


def test_serve_refuses_a_file_that_is_not_a_workspace_and_leaves_it_alone(tmp_path: Path) -> None:
    notes = tmp_path / "notes.db"
    notes.write_text("not a database")
    proc = subprocess.run(
        [sys.executable, "-m", "coworkenv", "serve", "--db", str(notes)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"error: {notes} is not a coworkenv workspace (file is not a database)"
    assert notes.read_text() == "not a database"


def test_serve_names_the_valid_services_for_an_unknown_one() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "coworkenv", "serve", "--service", "payroll"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert (
        "'payroll' is not one of 'mail', 'tickets', 'calendar', 'files', 'directory', 'crm', 'notes', "
        "'sheets', 'all'" in proc.stderr
    )


@pytest.fixture
def new_services_workspace(tmp_path: Path) -> Path:
    """A saved Northwind workspace with the crm, notes and sheets services only."""
    return northwind_workspace(0, ("crm", "notes", "sheets")).save(tmp_path / "ws.db")


@pytest.mark.parametrize(
    ("service", "tool", "arguments", "field"),
    [
        ("crm", "search_accounts", {"query": "globex"}, "accounts"),
        ("notes", "search_pages", {"query": "house rules", "kind": "article"}, "pages"),
        ("sheets", "list_spreadsheets", {"query": "price"}, "spreadsheets"),
    ],
)
async def test_stdio_serves_each_new_service(
    new_services_workspace: Path, service: str, tool: str, arguments: dict[str, Any], field: str
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "coworkenv", "serve", "--service", service, "--db", str(new_services_workspace)],
    )
    with anyio.fail_after(30):
        async with Client(stdio_client(params)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool(tool, arguments)
    assert tools == get_service(service).tools.names
    assert not result.is_error
    assert result.structured_content["total"] == 1
    assert len(result.structured_content[field]) == 1


async def test_streamable_http_serves_the_new_services_and_lists_them_combined(
    new_services_workspace: Path,
) -> None:
    port = free_port()
    command = ["-m", "coworkenv", "serve", "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(
        [sys.executable, *command, "--db", str(new_services_workspace)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "server did not start"
                time.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        with anyio.fail_after(30):
            async with Client(f"{base}/sheets/mcp") as client:
                single = await client.call_tool("read_range", {"spreadsheet_id": 1, "range": "Prices!A1:B1"})
            async with Client(f"{base}/mcp") as client:
                names = [t.name for t in (await client.list_tools()).tools]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert single.structured_content["values"] == [["SKU", "Product"]]
    expected = [f"{s}_{n}" for s in ("crm", "notes", "sheets") for n in get_service(s).tools.names]
    assert names == expected
