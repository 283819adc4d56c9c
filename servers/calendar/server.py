"""The calendar MCP server factory."""

from coworkenv.state import Workspace

from ..toolkit import ServiceSpec, ToolSet, WorkspaceServer
from . import tools_read, tools_write
from .schema import SCHEMA
from .world import WORLD

SERVICE = ServiceSpec(
    name="calendar",
    schema=SCHEMA,
    tools=ToolSet("calendar", read=tools_read.TOOLS, write=tools_write.TOOLS),
    world=WORLD,
    instructions=(
        "calendar: everyone's calendars. You act as the workspace's user: you can read any "
        "calendar, create events you organize, change or cancel only events you organize, and "
        "answer invitations. Times are ISO 8601; each person works in their own time zone (see the "
        "directory), so use find_free_slots or check_availability before proposing a time."
    ),
)


def build_server(workspace: Workspace) -> WorkspaceServer:
    """An MCP server exposing the calendar tools over `workspace`."""
    return WorkspaceServer(workspace, [SERVICE], name="coworkenv-calendar")
