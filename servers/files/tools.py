"""Files tools: browse, read, search and change the shared file tree.

The tools live in two modules, `tools_read` (read-only) and `tools_write`; importing
this module registers both on `TOOLS`.
"""

from . import tools_read, tools_write
from .toolset import TOOLS

TOOL_MODULES = (tools_read, tools_write)

__all__ = ["TOOLS", "TOOL_MODULES"]
