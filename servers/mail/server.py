"""The mail MCP server factory."""

from coworkenv.state import Workspace

from ..toolkit import ServiceSpec, ToolSet, WorkspaceServer
from . import tools_read, tools_write
from .schema import SCHEMA
from .world import WORLD

SERVICE = ServiceSpec(
    name="mail",
    schema=SCHEMA,
    tools=ToolSet("mail", read=tools_read.TOOLS, write=tools_write.TOOLS),
    world=WORLD,
    instructions=(
        "mail: your mailbox (folders inbox, sent, drafts, archive, trash; free-form labels). "
        "Find mail with search_messages, read it with get_message or get_thread, answer with "
        "reply (it stays in the thread), and send new mail with send_message or via drafts."
    ),
)


def build_server(workspace: Workspace) -> WorkspaceServer:
    """An MCP server exposing the mail tools over `workspace`."""
    return WorkspaceServer(workspace, [SERVICE], name="coworkenv-mail")
