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
#: The largest id or offset a tool accepts: beyond it SQLite cannot hold the number (and
#: JSON clients lose precision), so the schema refuses it before the tool runs. Ids below 1
#: are in range on purpose: the tool answers that no such event exists and where to find one.
MAX_ID = 2**53
MAX_OFFSET = 1_000_000
EventId = Annotated[
    int,
    Field(
        ge=-MAX_ID,
        le=MAX_ID,
        description="The event's id (for an occurrence of a weekly series: its series id)",
    ),
]
IgnoredEventId = Annotated[
    int | None,
    Field(
        ge=-MAX_ID, le=MAX_ID, description="An event not to count as busy, e.g. the meeting you are moving"
    ),
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
