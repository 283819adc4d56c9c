"""Calendar world operations: seed events (any organizer and attendees) and what other people
do between turns (an organizer moves or cancels a meeting, an attendee answers)."""

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from coworkenv.state import Workspace, format_time

from ..toolkit import ServiceError, WorldOperations
from .people import normalize_email
from .schema import Response, Status
from .store import (
    cancel,
    insert_event,
    load_event,
    require_confirmed,
    set_response,
    set_time,
)
from .times import Weekly, check_span, to_utc, zone

WORLD = WorldOperations("calendar")


class AttendeeSpec(BaseModel):
    email: str
    response: Response = "needs_action"


class AddEvent(BaseModel):
    organizer_email: str
    title: str = Field(min_length=1)
    start: datetime = Field(description="ISO 8601; without offset it is wall-clock time in time_zone")
    end: datetime
    time_zone: str = "UTC"
    calendar_email: str | None = Field(default=None, description="Default: the organizer's calendar")
    attendees: list[str | AttendeeSpec] = Field(default_factory=list)
    location: str = ""
    description: str = ""
    status: Status = "confirmed"
    recurrence: Literal["none", "weekly"] = "none"
    recurrence_count: int | None = None
    recurrence_until: date | None = None


class MoveEvent(BaseModel):
    event_id: int
    start: datetime
    end: datetime | None = Field(default=None, description="Default: keep the duration")
    time_zone: str | None = Field(default=None, description="Default: the event's time zone")


class CancelEventByOrganizer(BaseModel):
    event_id: int
    occurrence_start: datetime | None = Field(
        default=None, description="Cancel only this occurrence of a series"
    )


class RespondAsAttendee(BaseModel):
    event_id: int
    email: str
    response: Literal["accepted", "declined", "tentative"]


@WORLD.operation(AddEvent)
def add_event(ws: Workspace, p: AddEvent) -> dict[str, Any]:
    """An event appears on a calendar, organized by anyone, with attendees in any response state."""
    tz = zone(p.time_zone)
    start, end = to_utc(p.start, tz, "start"), to_utc(p.end, tz, "end")
    check_span(start, end)
    if p.recurrence == "none" and (p.recurrence_count is not None or p.recurrence_until is not None):
        raise ServiceError("recurrence_count and recurrence_until need recurrence='weekly'")
    attendees: dict[str, str] = {}
    for item in p.attendees:
        spec = AttendeeSpec(email=item) if isinstance(item, str) else item
        email = normalize_email(spec.email)
        if email in attendees:
            raise ServiceError(f"attendee {email} is listed twice")
        attendees[email] = spec.response
    organizer = normalize_email(p.organizer_email)
    event_id = insert_event(
        ws,
        calendar_email=normalize_email(p.calendar_email) if p.calendar_email else organizer,
        organizer_email=organizer,
        title=p.title,
        start=start,
        end=end,
        tz=tz,
        location=p.location,
        description=p.description,
        attendees=list(attendees.items()),
        status=p.status,
        rule=Weekly(p.recurrence_count, p.recurrence_until) if p.recurrence == "weekly" else None,
    )
    return {"id": event_id}


@WORLD.operation(MoveEvent)
def move_event(ws: Workspace, p: MoveEvent) -> dict[str, Any]:
    """The organizer moves a meeting (a whole series moves); attendees' responses reset to needs_action."""
    event = load_event(ws, p.event_id)
    require_confirmed(event)
    tz = zone(p.time_zone) if p.time_zone is not None else event.tz
    start = to_utc(p.start, tz, "start")
    end = to_utc(p.end, tz, "end") if p.end is not None else start + (event.end - event.start)
    check_span(start, end)
    set_time(ws, event, start, end, tz)
    return {"id": event.id, "start": format_time(start), "end": format_time(end)}


@WORLD.operation(CancelEventByOrganizer)
def cancel_event_by_organizer(ws: Workspace, p: CancelEventByOrganizer) -> dict[str, Any]:
    """The organizer cancels a meeting, a whole series, or one occurrence of a series."""
    event = load_event(ws, p.event_id)
    occurrence = to_utc(p.occurrence_start, event.tz, "occurrence_start") if p.occurrence_start else None
    cancel(ws, event, occurrence)
    if occurrence is None:
        return {"id": event.id, "status": "cancelled"}
    return {"id": event.id, "cancelled_occurrence": format_time(occurrence)}


@WORLD.operation(RespondAsAttendee)
def respond_as_attendee(ws: Workspace, p: RespondAsAttendee) -> dict[str, Any]:
    """An attendee (not the agent) accepts, declines or tentatively accepts an invitation."""
    event = load_event(ws, p.event_id)
    email = normalize_email(p.email)
    set_response(ws, event, email, p.response)
    return {"id": event.id, "email": email, "response": p.response}
