"""The tickets MCP server factory."""

from coworkenv.state import Workspace

from ..toolkit import ServiceSpec, ToolSet, WorkspaceServer
from . import tools_read, tools_write
from .schema import SCHEMA
from .world import WORLD

SERVICE = ServiceSpec(
    name="tickets",
    schema=SCHEMA,
    tools=ToolSet("tickets", read=tools_read.TOOLS, write=tools_write.TOOLS),
    world=WORLD,
    instructions=(
        "tickets: the help desk. Tickets sit in queues (list_queues), have a status that moves "
        "only along allowed steps (get_ticket shows next_statuses; closed is final), a priority, a "
        "requester and an assignee. Find tickets with search_tickets; comments are public (the "
        "requester reads them) or internal (staff only)."
    ),
)


def build_server(workspace: Workspace) -> WorkspaceServer:
    """An MCP server exposing the tickets tools over `workspace`."""
    return WorkspaceServer(workspace, [SERVICE], name="coworkenv-tickets")
