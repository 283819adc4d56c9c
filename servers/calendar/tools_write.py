"""Calendar tools that change state: create, update and cancel your events, answer invitations.

The agent acts as the workspace's user (`current_user`): it schedules on its own calendar.
"""

from datetime import datetime
from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from coworkenv.state import Workspace, format_time

from ..toolkit import ServiceError, ToolList, workspace_of
from .people import me, normalize_email, request_zone, unique_people
from .schema import Event
from .store import (
    StoredEvent,
    cancel,
    event_model,
    insert_event,
    load_event,
    require_confirmed,
    set_response,
    set_time,
)
from .times import Weekly, check_span, parse_day, parse_when, zone
from .tools_read import EventId, TimeText, ZoneName

TOOLS = ToolList()

Title = Annotated[str, Field(min_length=1, max_length=200, description="Short title everyone sees")]
Invitees = Annotated[
    tuple[str, ...], Field(max_length=50, description="Email addresses to invite (you are the organizer)")
]


def _future(ws: Workspace, value: str, parsed: datetime) -> None:
    now = ws.clock.now()
    if parsed < now:
        raise ServiceError(
            f"start {value!r} is in the past (it is now {format_time(now)}); pick a later time"
        )


def _as_organizer(ws: Workspace, event: StoredEvent, action: str, advice: str) -> None:
    user = me(ws)
    if event.organizer_email != user:
        raise ServiceError(
            f"only the organizer ({event.organizer_email}) can {action} event {event.id}; "
            f"you are {user}. {advice}"
        )


@TOOLS.tool(read_only=False)
async def create_event(
    ctx: Context,
    title: Title,
    start: TimeText,
    end: TimeText,
    attendees: Invitees = (),
    time_zone: ZoneName = None,
    location: Annotated[str, Field(max_length=200)] = "",
    description: Annotated[str, Field(max_length=5000)] = "",
    recurrence: Annotated[
        Literal["none", "weekly"], Field(description="weekly: repeat on the same weekday and local time")
    ] = "none",
    recurrence_count: Annotated[
        int | None, Field(ge=2, le=520, description="Weekly only: number of occurrences in all")
    ] = None,
    recurrence_until: Annotated[
        str | None, Field(description="Weekly only: last date (YYYY-MM-DD) an occurrence may fall on")
    ] = None,
) -> Event:
    """Create an event on your calendar with you as organizer, and invite attendees.

    Attendees (directory email addresses) start with response needs_action. The event is
    stored in `time_zone` (default: yours): times without offset are wall-clock times there,
    and a weekly series keeps that local time. A weekly series without count or end date
    repeats indefinitely. Check people's availability first with find_free_slots or
    check_availability. Returns the new event with its id.
    """
    ws = workspace_of(ctx)
    user = me(ws)
    if not title.strip():
        raise ServiceError("title must not be blank")
    tz = request_zone(ws, time_zone)
    first, last = parse_when(start, tz, "start"), parse_when(end, tz, "end")
    check_span(first, last)
    _future(ws, start, first)
    if recurrence == "none" and (recurrence_count is not None or recurrence_until is not None):
        raise ServiceError("recurrence_count and recurrence_until need recurrence='weekly'")
    rule = None
    if recurrence == "weekly":
        until = parse_day(recurrence_until, "recurrence_until") if recurrence_until is not None else None
        rule = Weekly(recurrence_count, until)
    invited = [e for e in unique_people(ws, list(attendees)) if e != user]
    event_id = insert_event(
        ws,
        calendar_email=user,
        organizer_email=user,
        title=title.strip(),
        start=first,
        end=last,
        tz=tz,
        location=location,
        description=description,
        attendees=[(e, "needs_action") for e in invited],
        rule=rule,
    )
    return event_model(load_event(ws, event_id))


@TOOLS.tool(read_only=False)
async def update_event(
    ctx: Context,
    event_id: EventId,
    title: Annotated[str | None, Field(max_length=200)] = None,
    start: Annotated[
        str | None, Field(description="New start, ISO 8601 (keeps the duration if end is left out)")
    ] = None,
    end: Annotated[str | None, Field(description="New end, ISO 8601")] = None,
    time_zone: Annotated[
        str | None,
        Field(description="New IANA time zone of the event; also how start/end without offset are read"),
    ] = None,
    location: Annotated[str | None, Field(max_length=200)] = None,
    description: Annotated[str | None, Field(max_length=5000)] = None,
    add_attendees: Annotated[list[str] | None, Field(max_length=50, description="Emails to invite")] = None,
    remove_attendees: Annotated[
        list[str] | None, Field(max_length=50, description="Emails to uninvite")
    ] = None,
) -> Event:
    """Change an event you organize: title, time, time zone, location, description, attendees.

    Only the organizer may change an event; as an attendee, answer with respond_to_invite.
    Leave out what should stay; times without offset are read in the event's time zone (or
    the new `time_zone`). Moving an event (start/end) resets every attendee's response
    to needs_action, because they must confirm the new time. For a weekly series, start/end
    set the first occurrence and the whole series moves; to move a single occurrence, cancel
    it with cancel_event(occurrence_start=...) and create a one-off event.
    """
    ws = workspace_of(ctx)
    event = load_event(ws, event_id)
    require_confirmed(event)
    _as_organizer(ws, event, "change", "As an attendee, use respond_to_invite; or ask the organizer by mail.")
    adds = unique_people(ws, add_attendees or [])
    removes = [normalize_email(e) for e in remove_attendees or []]
    if not any(v is not None for v in (title, start, end, time_zone, location, description)) and not (
        adds or removes
    ):
        raise ServiceError(
            "nothing to change: pass at least one of title, start, end, time_zone, location, "
            "description, add_attendees, remove_attendees"
        )
    for email in removes:
        if email in adds:
            raise ServiceError(f"{email} is in both add_attendees and remove_attendees")
        if email not in event.attendees:
            invited = ", ".join(event.attendees) or "nobody"
            raise ServiceError(
                f"{email} is not an attendee of event {event.id}; its attendees are: {invited}"
            )
    if title is not None and not title.strip():
        raise ServiceError("title must not be blank")
    tz = zone(time_zone) if time_zone is not None else event.tz
    first = parse_when(start, tz, "start") if start is not None else event.start
    last = parse_when(end, tz, "end") if end is not None else first + (event.end - event.start)
    check_span(first, last)
    moved = (first, last) != (event.start, event.end)
    if moved and event.rule is None and start is not None:
        _future(ws, start, first)
    if moved or tz.key != event.tz.key:
        set_time(ws, event, first, last, tz, reset_responses=moved)
    texts = {
        "title": title.strip() if title is not None else None,
        "location": location,
        "description": description,
    }
    for column, value in texts.items():
        if value is not None:
            ws.conn.execute(f"UPDATE calendar_events SET {column} = ? WHERE id = ?", (value, event.id))
    ws.conn.executemany(
        "DELETE FROM calendar_attendees WHERE event_id = ? AND email = ?",
        [(event.id, e) for e in removes],
    )
    ws.conn.executemany(
        "INSERT OR IGNORE INTO calendar_attendees (event_id, email) VALUES (?, ?)",
        [(event.id, e) for e in adds if e != event.organizer_email],
    )
    ws.conn.execute("UPDATE calendar_events SET updated_at = ? WHERE id = ?", (ws.clock.now_text(), event.id))
    return event_model(load_event(ws, event.id))


@TOOLS.tool(read_only=False, destructive=True)
async def cancel_event(
    ctx: Context,
    event_id: EventId,
    occurrence_start: Annotated[
        str | None,
        Field(
            description="Cancel only this occurrence of a weekly series (its occurrence_start in list_events)"
        ),
    ] = None,
) -> Event:
    """Cancel an event you organize (status becomes cancelled for every attendee), a whole weekly
    series, or with `occurrence_start` one occurrence of a series. Only the organizer may cancel;
    to drop someone else's meeting from your calendar, decline it with respond_to_invite."""
    ws = workspace_of(ctx)
    event = load_event(ws, event_id)
    require_confirmed(event)
    _as_organizer(ws, event, "cancel", "To leave it, decline it with respond_to_invite.")
    when = (
        parse_when(occurrence_start, event.tz, "occurrence_start") if occurrence_start is not None else None
    )
    cancel(ws, event, when)
    return event_model(load_event(ws, event.id))


@TOOLS.tool(read_only=False, idempotent=True)
async def respond_to_invite(
    ctx: Context,
    event_id: EventId,
    response: Annotated[Literal["accepted", "declined", "tentative"], Field(description="Your answer")],
) -> Event:
    """Answer an invitation you received: accepted, declined or tentative. For a weekly series
    the answer holds for every occurrence. You cannot respond to events you organize."""
    ws = workspace_of(ctx)
    user = me(ws)
    event = load_event(ws, event_id)
    require_confirmed(event)
    if event.organizer_email == user:
        raise ServiceError(
            f"you organize event {event.id}; attendees respond to it. Use update_event or "
            "cancel_event to change it"
        )
    set_response(ws, event, user, response)
    return event_model(load_event(ws, event.id))
