"""Serving a workspace to MCP clients over stdio or streamable HTTP.

Over HTTP every service has its own path (`/mail/mcp`, `/tickets/mcp`, ...) and the
combined server (every service, prefixed tool names) is at `/mcp`. The servers bind
127.0.0.1 unless told otherwise, and the SDK's DNS-rebinding protection answers 421 to
any Host header that is not the bound local address.

Each endpoint holds at most `SessionLimits.max_sessions` open sessions (a client that would
open one more gets HTTP 503 "Too many open sessions"), and a session with no request for
`SessionLimits.idle_timeout` seconds expires (its id then gets 404, and the client opens a
new one). The SDK's own defaults (10,000 sessions, 30 minutes) let one local client hold
gigabytes; ours are sized for a few agents on one machine.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.types import Receive, Scope, Send

from coworkenv.state import Workspace

from . import SERVICE_NAMES, build_server, build_workspace_server
from .toolkit import WorkspaceServer

DEFAULT_HOST = "127.0.0.1"
DEFAULT_MAX_SESSIONS = 100
DEFAULT_SESSION_IDLE_TIMEOUT = 300.0


@dataclass(frozen=True)
class SessionLimits:
    """Bounds on the streamable HTTP sessions of each endpoint."""

    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT

    def __post_init__(self) -> None:
        if self.max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {self.max_sessions}")
        if not self.idle_timeout > 0:
            raise ValueError(f"idle_timeout must be a positive number of seconds, got {self.idle_timeout}")


def build_servers(workspace: Workspace, service: str) -> dict[str, WorkspaceServer]:
    """The servers to host for `service` ("all" or a service name), keyed by URL prefix.

    For "all": one server per enabled service under `/<service>` plus the combined server
    under "" (so at `/mcp`). For one service: that service under `/<service>` and at `/mcp`.
    """
    if service == "all":
        servers = {f"/{n}": build_server(workspace, n) for n in SERVICE_NAMES if n in workspace.services}
        servers[""] = build_workspace_server(workspace)
    else:
        servers = {f"/{service}": build_server(workspace, service)}
        servers[""] = servers[f"/{service}"]
    return servers


def build_http_app(
    workspace: Workspace,
    service: str = "all",
    *,
    host: str = DEFAULT_HOST,
    limits: SessionLimits | None = None,
) -> Starlette:
    """A Starlette app serving the workspace over streamable HTTP (see module doc for paths
    and session limits)."""
    limits = limits or SessionLimits()
    servers = build_servers(workspace, service)
    routes = []
    # One app (and one session manager) per server, even when a server is mounted twice
    # (a single service is at /<service>/mcp and at /mcp).
    apps: dict[int, Starlette] = {}
    unique: list[WorkspaceServer] = []
    for prefix, server in sorted(servers.items(), key=lambda kv: -len(kv[0])):
        if id(server) not in apps:
            apps[id(server)] = _streamable_http_app(server, host, limits)
            unique.append(server)
        routes.append(Mount(prefix or "/", app=apps[id(server)]))

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for server in unique:
                await stack.enter_async_context(server.session_manager.run())
            yield

    return Starlette(routes=routes, lifespan=lifespan)


def _streamable_http_app(server: WorkspaceServer, host: str, limits: SessionLimits) -> Starlette:
    """The SDK's streamable HTTP app for `server`, with our session limits. mcp 2.3 takes
    them as arguments; older releases (2.0, which other libraries pin) have neither, so
    they are set on the app's session manager: its idle timeout is an attribute it reads
    per session, and the cap refuses a new session's opening request as 2.3 does."""
    accepted = inspect.signature(server.streamable_http_app).parameters
    kwargs: dict[str, Any] = {}
    if "max_sessions" in accepted:
        kwargs["max_sessions"] = limits.max_sessions
    if "session_idle_timeout" in accepted:
        kwargs["session_idle_timeout"] = limits.idle_timeout
    app = server.streamable_http_app(streamable_http_path="/mcp", host=host, **kwargs)
    manager: Any = server.session_manager
    if "session_idle_timeout" not in kwargs:
        manager.session_idle_timeout = limits.idle_timeout
    if "max_sessions" not in kwargs:
        _cap_sessions(manager, limits.max_sessions)
    return app


def _cap_sessions(manager: Any, max_sessions: int) -> None:
    """Refuse a new session (HTTP 503 "Too many open sessions", mcp 2.3's answer) while
    `max_sessions` are open. Opening requests are admitted one at a time, so two clients
    cannot both take the last place."""
    handle = manager._handle_stateful_request
    admitting = anyio.Lock()

    async def capped(scope: Scope, receive: Receive, send: Send) -> None:
        if Request(scope).headers.get("mcp-session-id") is not None:
            await handle(scope, receive, send)
            return
        async with admitting:
            if len(manager._server_instances) >= max_sessions:
                body = JSONRPCError(
                    jsonrpc="2.0",
                    id=None,
                    error=ErrorData(code=INTERNAL_ERROR, message="Too many open sessions"),
                )
                response = Response(
                    body.model_dump_json(by_alias=True, exclude_unset=True),
                    status_code=503,
                    media_type="application/json",
                )
                await response(scope, receive, send)
                return
            await handle(scope, receive, send)

    manager.max_sessions = max_sessions
    manager._handle_stateful_request = capped


def http_paths(workspace: Workspace, service: str) -> list[str]:
    """The MCP endpoint paths that `build_http_app` serves, for printing to the user."""
    return [f"{prefix}/mcp" for prefix in sorted(build_servers(workspace, service))]


async def serve_stdio(workspace: Workspace, service: str) -> None:
    """Serve one service, or with "all" the combined server, over stdin/stdout."""
    server = build_workspace_server(workspace) if service == "all" else build_server(workspace, service)
    await server.run_stdio_async()


def serve_http(
    workspace: Workspace,
    service: str,
    *,
    host: str = DEFAULT_HOST,
    port: int = 8000,
    limits: SessionLimits | None = None,
) -> None:
    """Serve over streamable HTTP until interrupted."""
    import uvicorn

    app = build_http_app(workspace, service, host=host, limits=limits)
    uvicorn.run(app, host=host, port=port, log_level="warning")
