"""Calendar tools: the agent acts as the workspace's user (`current_user`), reads anyone's
calendar, schedules on its own calendar and answers invitations.

The tools live in `tools_read.py` and `tools_write.py`, which register on `TOOLS` when
imported; this module imports both so that `TOOLS` is always complete.
"""

from typing import Annotated

from pydantic import Field

from ..toolkit import ToolSet

TOOLS = ToolSet("calendar")

TimeText = Annotated[
    str,
    Field(
        description="ISO 8601 time, e.g. 2026-03-02T14:30:00+01:00; without an offset it is wall-clock "
        "time in time_zone"
    ),
]
ZoneName = Annotated[
    str | None,
    Field(description="IANA time zone (e.g. Europe/Berlin) for times given without offset; default: yours"),
]
EventId = Annotated[
    int, Field(description="The event's id (for an occurrence of a weekly series: its series id)")
]
Emails = Annotated[
    list[str],
    Field(
        max_length=50,
        description="Email addresses of the people to check (you are added unless include_me is false)",
    ),
]
ClockText = Annotated[str, Field(description="Time of day HH:MM (24-hour) in each person's own time zone")]

# Importing registers the tools on TOOLS; it must come after TOOLS exists.
from . import tools_read, tools_write  # noqa: E402

__all__ = ["TOOLS", "ClockText", "Emails", "EventId", "TimeText", "ZoneName", "tools_read", "tools_write"]
