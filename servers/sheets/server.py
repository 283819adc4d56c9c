"""The sheets MCP server factory."""

from coworkenv.state import Workspace

from ..toolkit import ServiceSpec, ToolSet, WorkspaceServer
from . import tools_read, tools_write
from .schema import SCHEMA
from .world import WORLD

SERVICE = ServiceSpec(
    name="sheets",
    schema=SCHEMA,
    tools=ToolSet("sheets", read=tools_read.TOOLS, write=tools_write.TOOLS),
    world=WORLD,
    instructions=(
        "sheets: spreadsheets (ledgers, budgets, price lists, rotas) with named sheets and cells "
        "in A1 notation. Find a spreadsheet with list_spreadsheets, read before you write, and keep "
        "formulas working: totals recompute after every write."
    ),
)


def build_server(workspace: Workspace) -> WorkspaceServer:
    """An MCP server exposing the sheets tools over `workspace`."""
    return WorkspaceServer(workspace, [SERVICE], name="coworkenv-sheets")
