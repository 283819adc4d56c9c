"""The five workspace services (mail, tickets, calendar, files, directory) as MCP servers.

Each service is a folder of the same shape (see `servers/README.md`). This module finds
them by name and builds servers and workspaces for any subset.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from coworkenv.state import Workspace

from .toolkit import (
    DEFAULT_USER_EMAIL,
    USER_EMAIL_KEY,
    ServiceError,
    ServiceSpec,
    ToolError,
    WorkspaceServer,
    current_user,
)

SERVICE_NAMES: tuple[str, ...] = ("mail", "tickets", "calendar", "files", "directory")

__all__ = [
    "SERVICE_NAMES",
    "ServiceError",
    "ServiceSpec",
    "ToolError",
    "UnknownServiceError",
    "WorkspaceServer",
    "apply_world_operation",
    "build_server",
    "build_workspace_server",
    "create_workspace",
    "current_user",
    "get_service",
]


class UnknownServiceError(ValueError):
    """A service name that is not one of `SERVICE_NAMES`."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown service {name!r}; valid services are: {', '.join(SERVICE_NAMES)}")


def get_service(name: str) -> ServiceSpec:
    """The `ServiceSpec` of a service, imported on first use."""
    if name not in SERVICE_NAMES:
        raise UnknownServiceError(name)
    module = importlib.import_module(f"{__name__}.{name}")
    spec: ServiceSpec = module.SERVICE
    return spec


def create_workspace(
    services: Iterable[str] = SERVICE_NAMES,
    *,
    clock_start: datetime,
    task_id: str = "",
    user_email: str = DEFAULT_USER_EMAIL,
    path: str | None = None,
) -> Workspace:
    """A new empty workspace with the tables of the named services.

    `user_email` is the person the agent works for: mail is sent from their mailbox,
    events are created on their calendar, files record them as the author.
    """
    ws = Workspace.create(
        [get_service(name).schema for name in services], clock_start=clock_start, task_id=task_id, path=path
    )
    ws.set_meta(USER_EMAIL_KEY, user_email)
    return ws


def build_server(workspace: Workspace, service: str) -> WorkspaceServer:
    """An MCP server for one service over `workspace`; tool names are unprefixed."""
    spec = get_service(service)
    return WorkspaceServer(workspace, [spec], name=f"coworkenv-{service}")


def build_workspace_server(
    workspace: Workspace | None, services: Iterable[str] | None = None
) -> WorkspaceServer:
    """One MCP server for every service of the workspace, tool names prefixed by service
    (`mail_search_messages`), for clients that want a single connection. With no workspace,
    a server for `services` that in-process episodes share (`WorkspaceServer.call_on`)."""
    if services:
        wanted = set(services)
    elif workspace is not None:
        wanted = set(workspace.services)
    else:
        raise ValueError("a server without a workspace needs its services named")
    names = [n for n in SERVICE_NAMES if n in wanted]
    return WorkspaceServer(
        workspace,
        [get_service(n) for n in names],
        name="coworkenv-workspace",
        prefixed=True,
    )


def apply_world_operation(workspace: Workspace, service: str, operation: str, params: dict[str, Any]) -> Any:
    """Apply one world operation (a seed step or a between-turn event), audited as actor "event"."""
    return get_service(service).world.apply(workspace, operation, params)
