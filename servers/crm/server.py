"""The crm MCP server factory."""

from coworkenv.state import Workspace

from ..toolkit import ServiceSpec, ToolSet, WorkspaceServer
from . import tools_read, tools_write
from .schema import SCHEMA
from .world import WORLD

SERVICE = ServiceSpec(
    name="crm",
    schema=SCHEMA,
    tools=ToolSet("crm", read=tools_read.TOOLS, write=tools_write.TOOLS),
    world=WORLD,
    instructions=(
        "crm: the customer relationship records: accounts (outside organizations) with their owner "
        "and renewal date, their contacts, deals with stage, amount and close date, and logged "
        "calls, meetings and notes. Log what happened with log_activity and keep deals current."
    ),
)


def build_server(workspace: Workspace) -> WorkspaceServer:
    """An MCP server exposing the crm tools over `workspace`."""
    return WorkspaceServer(workspace, [SERVICE], name="coworkenv-crm")
