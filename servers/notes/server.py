"""The notes MCP server factory."""

from coworkenv.state import Workspace

from ..toolkit import ServiceSpec, ToolSet, WorkspaceServer
from . import tools_read, tools_write
from .schema import SCHEMA
from .world import WORLD

SERVICE = ServiceSpec(
    name="notes",
    schema=SCHEMA,
    tools=ToolSet("notes", read=tools_read.TOOLS, write=tools_write.TOOLS),
    world=WORLD,
    instructions=(
        "notes: the team's pages and knowledge base (how-to and policy articles) and its databases "
        "(project trackers, to-do lists, meeting notes) with typed properties. Answer from the "
        "article that applies and name it; keep trackers current with update_database_row."
    ),
)


def build_server(workspace: Workspace) -> WorkspaceServer:
    """An MCP server exposing the notes tools over `workspace`."""
    return WorkspaceServer(workspace, [SERVICE], name="coworkenv-notes")
