"""The directory MCP server factory."""

from coworkenv.state import Workspace

from ..toolkit import ServiceSpec, ToolSet, WorkspaceServer
from . import tools_read, tools_write
from .schema import SCHEMA
from .world import WORLD

SERVICE = ServiceSpec(
    name="directory",
    schema=SCHEMA,
    tools=ToolSet("directory", read=tools_read.TOOLS, write=tools_write.TOOLS),
    world=WORLD,
    instructions=(
        "directory: the company's people and teams (read-only). Look up email addresses, "
        "managers, teams and time zones here before writing to or scheduling with someone."
    ),
)


def build_server(workspace: Workspace) -> WorkspaceServer:
    """An MCP server exposing the directory tools over `workspace`."""
    return WorkspaceServer(workspace, [SERVICE], name="coworkenv-directory")
