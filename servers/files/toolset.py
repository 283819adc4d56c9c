"""The files service's tool set; `tools_read` and `tools_write` register on it."""

from ..toolkit import ToolSet

TOOLS = ToolSet("files")
