"""Directory tools that change state: none. Agents read the directory; people and teams
change through world operations (`world.py`). servers/README.md shows a write tool."""

from ..toolkit import ToolList

TOOLS = ToolList()
