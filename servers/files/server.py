"""The files MCP server factory."""

from coworkenv.state import Workspace

from ..toolkit import ServiceSpec, ToolSet, WorkspaceServer
from . import tools_read, tools_write
from .schema import SCHEMA
from .world import WORLD

SERVICE = ServiceSpec(
    name="files",
    schema=SCHEMA,
    tools=ToolSet("files", read=tools_read.TOOLS, write=tools_write.TOOLS),
    world=WORLD,
    instructions=(
        "files: the team's shared file tree of text files (policies, reports, meeting notes, "
        "price lists) and documents (PDFs, scans, charts, screenshots: see them with "
        "open_document, or get their text with extract_text). Paths are absolute and "
        "case-sensitive, like /shared/reports/q1.md; start with list_directory('/') or "
        "search_files to find things before reading them."
    ),
)


def build_server(workspace: Workspace) -> WorkspaceServer:
    """An MCP server exposing the files tools over `workspace`."""
    return WorkspaceServer(workspace, [SERVICE], name="coworkenv-files")
