"""Calendar tools that read: list and read events, check free/busy, find meeting times.

The agent acts as the workspace's user (`current_user`): it reads anyone's calendar.
"""

from datetime import datetime, timedelta
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from mcp.server.mcpserver import Context
from pydantic import Field

from coworkenv.state import Workspace, format_time

from ..toolkit import ServiceError, ToolList, workspace_of
from .availability import MAX_SEARCH_WINDOW, WorkingHours, availability, free_slots, people
from .people import has_calendar, me, normalize_email, request_zone, unique_people
from .schema import Availability, Event, EventList, FreeSlots, PersonZone
from .store import event_model, events_involving, load_event, occurrence_model
from .times import check_span, parse_clock, parse_when

TOOLS = ToolList()

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

MAX_LIST_RANGE = timedelta(days=92)


def parse_range(
    start: str, end: str, tz: ZoneInfo, longest: timedelta, names: tuple[str, str]
) -> tuple[datetime, datetime]:
    """Parse a time range that must run forwards and span at most `longest`."""
    first, last = parse_when(start, tz, names[0]), parse_when(end, tz, names[1])
    if last <= first:
        raise ServiceError(f"{names[1]} {format_time(last)} must be after {names[0]} {format_time(first)}")
    if last - first > longest:
        raise ServiceError(f"the range from {names[0]} to {names[1]} may span at most {longest.days} days")
    return first, last


def group(ws: Workspace, attendees: list[str], include_me: bool) -> list[str]:
    emails = unique_people(ws, ([me(ws)] if include_me else []) + attendees)
    if not emails:
        raise ServiceError("nobody to check: name at least one attendee, or set include_me")
    return emails


def check_ignored(ws: Workspace, event_id: int | None) -> None:
    if event_id is not None:
        load_event(ws, event_id)


@TOOLS.tool(read_only=True)
async def list_events(
    ctx: Context,
    start: Annotated[
        str, Field(description="Range start, ISO 8601 (a date like 2026-03-02 means its midnight)")
    ],
    end: Annotated[str, Field(description="Range end, ISO 8601, at most 92 days after start")],
    calendar_email: Annotated[str | None, Field(description="Whose calendar; default: yours")] = None,
    time_zone: ZoneName = None,
    query: Annotated[
        str, Field(description="Words that must all appear in title, description or location")
    ] = "",
    include_cancelled: Annotated[
        bool, Field(description="Also list cancelled events and occurrences")
    ] = False,
    limit: Annotated[int, Field(ge=1, le=500)] = 100,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> EventList:
    """List the events on a calendar (yours by default) that overlap a time range, earliest first.

    A calendar holds the events its owner organizes or is invited to, including invitations they
    declined (see each attendee's response). Weekly series are expanded: each occurrence in the
    range is listed with its `series_id` and `occurrence_start`. Cancelled events are left out
    unless `include_cancelled`. Times are UTC plus wall-clock time in the event's time zone.
    Use get_event for one event, check_availability or find_free_slots to schedule.
    """
    ws = workspace_of(ctx)
    owner = normalize_email(calendar_email) if calendar_email is not None else me(ws)
    if owner != me(ws) and not has_calendar(ws, owner):
        raise ServiceError(
            f"no calendar for {calendar_email!r}: nobody with that email is in the directory or on any "
            "event; use the directory's search_people to find the right address"
        )
    first, last = parse_range(start, end, request_zone(ws, time_zone), MAX_LIST_RANGE, ("start", "end"))
    words = query.lower().split()
    items = []
    for event in events_involving(ws, owner, first, last):
        text = f"{event.title} {event.description} {event.location}".lower()
        if not all(w in text for w in words):
            continue
        if event.status == "cancelled" and not include_cancelled:
            continue
        for occ in event.occurrences(first, last, include_cancelled=include_cancelled):
            items.append(occurrence_model(event, occ))
    items.sort(key=lambda item: (item.start, item.event_id))
    return EventList(
        calendar_email=owner,
        range_start=format_time(first),
        range_end=format_time(last),
        total=len(items),
        events=items[offset : offset + limit],
    )


@TOOLS.tool(read_only=True)
async def get_event(ctx: Context, event_id: EventId) -> Event:
    """Get one event in full: times, organizer, attendees and their responses, status, and for a
    weekly series its recurrence (count or end date, cancelled occurrences)."""
    return event_model(load_event(workspace_of(ctx), event_id))


@TOOLS.tool(read_only=True)
async def check_availability(
    ctx: Context,
    attendees: Emails,
    start: TimeText,
    end: TimeText,
    time_zone: ZoneName = None,
    include_me: Annotated[bool, Field(description="Check your own calendar too")] = True,
    working_hours_start: ClockText = "09:00",
    working_hours_end: ClockText = "17:00",
    include_weekends: Annotated[bool, Field(description="Count Saturday and Sunday as working days")] = False,
    ignore_event_id: IgnoredEventId = None,
) -> Availability:
    """Check whether people can make one proposed time, before you create or move a meeting.

    For each person: free or busy (with the titles and times of the conflicting events) and
    whether the time lies inside their working hours, evaluated in their own time zone from
    the directory. Busy means a confirmed event they organize or attend and have not declined.
    """
    ws = workspace_of(ctx)
    hours = WorkingHours(
        parse_clock(working_hours_start, "working_hours_start"),
        parse_clock(working_hours_end, "working_hours_end"),
        not include_weekends,
    )
    tz = request_zone(ws, time_zone)
    first, last = parse_when(start, tz, "start"), parse_when(end, tz, "end")
    check_span(first, last)
    emails = group(ws, attendees, include_me)
    check_ignored(ws, ignore_event_id)
    results = [availability(p, first, last, hours) for p in people(ws, emails, first, last, ignore_event_id)]
    return Availability(
        start=format_time(first),
        end=format_time(last),
        everyone_available=all(r.free and r.within_working_hours for r in results),
        attendees=results,
    )


@TOOLS.tool(read_only=True)
async def find_free_slots(
    ctx: Context,
    attendees: Emails,
    duration_minutes: Annotated[int, Field(ge=5, le=480, description="Meeting length in minutes")],
    window_start: Annotated[str, Field(description="Search from this time, ISO 8601")],
    window_end: Annotated[str, Field(description="Search until this time, ISO 8601, at most 31 days later")],
    time_zone: ZoneName = None,
    include_me: Annotated[bool, Field(description="Check your own calendar too")] = True,
    working_hours_start: ClockText = "09:00",
    working_hours_end: ClockText = "17:00",
    granularity_minutes: Annotated[
        Literal[15, 30, 60], Field(description="Candidate starts fall on multiples of this many minutes")
    ] = 30,
    max_slots: Annotated[int, Field(ge=1, le=50)] = 10,
    include_weekends: Annotated[bool, Field(description="Count Saturday and Sunday as working days")] = False,
    ignore_event_id: IgnoredEventId = None,
) -> FreeSlots:
    """Find times in a window when everyone is free and inside their own working hours.

    Working hours (default 09:00-17:00, weekdays) are evaluated in each person's time zone from
    the directory; busy means a confirmed event they organize or attend and have not declined.
    Slots never start before the current time. Returns up to `max_slots` slots, earliest first,
    with local times in `time_zone` (default: yours); an empty list means no time fits, so widen
    the window or the working hours, or shorten the meeting.
    """
    ws = workspace_of(ctx)
    hours = WorkingHours(
        parse_clock(working_hours_start, "working_hours_start"),
        parse_clock(working_hours_end, "working_hours_end"),
        not include_weekends,
    )
    tz = request_zone(ws, time_zone)
    names = ("window_start", "window_end")
    first, last = parse_range(window_start, window_end, tz, MAX_SEARCH_WINDOW, names)
    now = ws.clock.now()
    if last <= now:
        raise ServiceError(
            f"window_end {format_time(last)} is not after the current time {format_time(now)}; "
            "search a future window"
        )
    first = max(first, now)
    emails = group(ws, attendees, include_me)
    check_ignored(ws, ignore_event_id)
    checked = people(ws, emails, first, last, ignore_event_id)
    duration = timedelta(minutes=duration_minutes)
    slots = free_slots(checked, first, last, duration, granularity_minutes, hours, max_slots, tz)
    return FreeSlots(
        duration_minutes=duration_minutes,
        time_zone=tz.key,
        attendees=[PersonZone(email=p.email, time_zone=p.tz.key) for p in checked],
        slots=slots,
    )
