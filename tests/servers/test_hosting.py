"""HTTP session limits of `coworkenv serve`: a client beyond --max-sessions is refused with
503, and a session idle for --session-timeout expires, which frees its place."""

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from coworkenv.servers import apply_world_operation, create_workspace
from coworkenv.servers.hosting import SessionLimits, build_http_app
from tests.conftest import START

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(db: Path, *options: str) -> Iterator[str]:
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
            str(db),
            *list(options),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
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
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def workspace_file(tmp_path: Path) -> Path:
    ws = create_workspace(["directory"], clock_start=START)
    apply_world_operation(ws, "directory", "add_team", {"name": "Sales"})
    return ws.save(tmp_path / "ws.db")


@pytest.fixture
def one_session_server(workspace_file: Path) -> Iterator[str]:
    yield from serve(workspace_file, "--max-sessions", "1", "--session-timeout", "1")


def open_session(url: str) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers=HEADERS, timeout=10)


def test_a_client_beyond_the_cap_is_refused_and_an_idle_session_expires(one_session_server: str) -> None:
    url = f"{one_session_server}/mcp"
    first = open_session(url)
    assert first.status_code == 200
    session = first.headers["mcp-session-id"]
    refused = open_session(url)
    assert refused.status_code == 503
    assert refused.json()["error"]["message"] == "Too many open sessions"
    # the first session has no request in flight: after --session-timeout it expires, and
    # its place is free again (bounded: the timeout is 1 s, the deadline 30 s)
    deadline = time.monotonic() + 30
    while (second := open_session(url)).status_code == 503:
        assert time.monotonic() < deadline, "the idle session never expired"
        time.sleep(0.1)
    assert second.status_code == 200
    expired = httpx2.post(url, json=LIST_TOOLS, headers={**HEADERS, "mcp-session-id": session}, timeout=10)
    assert expired.status_code == 404


def test_the_limits_are_per_endpoint(one_session_server: str) -> None:
    assert open_session(f"{one_session_server}/mcp").status_code == 200
    assert open_session(f"{one_session_server}/directory/mcp").status_code == 200
    assert open_session(f"{one_session_server}/directory/mcp").status_code == 503


def test_a_single_service_answers_at_both_of_its_paths(workspace_file: Path) -> None:
    for base in serve(workspace_file, "--service", "directory"):
        assert open_session(f"{base}/directory/mcp").status_code == 200
        assert open_session(f"{base}/mcp").status_code == 200


def test_the_defaults_are_100_sessions_and_5_minutes() -> None:
    ws = create_workspace(["directory"], clock_start=START)
    app = build_http_app(ws, "directory")
    managers = {id(m): m for m in (r.app.routes[0].endpoint.session_manager for r in app.routes)}  # type: ignore[attr-defined]
    assert [(m.max_sessions, m.session_idle_timeout) for m in managers.values()] == [(100, 300.0)]
    with pytest.raises(ValueError, match="max_sessions must be at least 1"):
        SessionLimits(max_sessions=0)
