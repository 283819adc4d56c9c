"""Calendar tables (events, their attendees, cancelled occurrences of weekly series) and
the models the calendar tools return."""

from typing import Any, Literal

from pydantic import BaseModel, Field

from coworkenv.state import ServiceSchema, TableRules, parse_time


def duration_minutes(event: dict[str, Any]) -> float:
    """How long an event (each occurrence of a series) lasts, in minutes."""
    return (parse_time(event["end_utc"]) - parse_time(event["start_utc"])).total_seconds() / 60


SCHEMA = ServiceSchema(
    name="calendar",
    sql="""
CREATE TABLE calendar_events (
    id INTEGER PRIMARY KEY,
    calendar_email TEXT NOT NULL,
    organizer_email TEXT NOT NULL,
    title TEXT NOT NULL,
    start_utc TEXT NOT NULL,
    end_utc TEXT NOT NULL,
    time_zone TEXT NOT NULL DEFAULT 'UTC',
    location TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'confirmed' CHECK (status IN ('confirmed', 'cancelled')),
    recurrence TEXT NOT NULL DEFAULT 'none' CHECK (recurrence IN ('none', 'weekly')),
    recurrence_count INTEGER,
    recurrence_until TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX calendar_events_calendar ON calendar_events(calendar_email);
CREATE INDEX calendar_events_organizer ON calendar_events(organizer_email);
CREATE INDEX calendar_events_start ON calendar_events(start_utc);
CREATE TABLE calendar_attendees (
    event_id INTEGER NOT NULL REFERENCES calendar_events(id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    response TEXT NOT NULL DEFAULT 'needs_action'
        CHECK (response IN ('needs_action', 'accepted', 'declined', 'tentative')),
    PRIMARY KEY (event_id, email)
);
CREATE INDEX calendar_attendees_email ON calendar_attendees(email);
CREATE TABLE calendar_cancelled_occurrences (
    event_id INTEGER NOT NULL REFERENCES calendar_events(id) ON DELETE CASCADE,
    occurrence_index INTEGER NOT NULL,
    PRIMARY KEY (event_id, occurrence_index)
);
""",
    changes={
        "calendar_events": TableRules(
            bookkeeping=("updated_at",),
            destructive={"status": ("cancelled",)},
            free=("created_at", "time_zone"),
            free_text=("title", "location", "description"),
            derived={"duration_minutes": duration_minutes},
        ),
        "calendar_attendees": TableRules(match=("event_id", "email"), parent=("event_id", "calendar_events")),
        "calendar_cancelled_occurrences": TableRules(
            match=("event_id", "occurrence_index"), parent=("event_id", "calendar_events")
        ),
    },
)

Response = Literal["needs_action", "accepted", "declined", "tentative"]
Status = Literal["confirmed", "cancelled"]


class Attendee(BaseModel):
    """An invited person and their answer."""

    email: str
    response: Response


class Recurrence(BaseModel):
    """How a weekly series repeats: same weekday and wall-clock time in the event's time zone."""

    frequency: Literal["weekly"] = "weekly"
    count: int | None = Field(
        description="Number of occurrences in all; null when the series ends by date or never"
    )
    until: str | None = Field(
        description="Last date (YYYY-MM-DD, event's time zone) an occurrence may fall on"
    )
    cancelled_occurrences: list[str] = Field(
        description="UTC starts of single occurrences that were cancelled"
    )


class Event(BaseModel):
    """A calendar event. Times are given in UTC and as wall-clock time in the event's time zone."""

    id: int
    calendar_email: str = Field(description="Whose calendar the event lives on")
    organizer_email: str
    title: str
    start: str = Field(description="Start, UTC, ISO 8601 (the first occurrence for a weekly series)")
    end: str = Field(description="End, UTC, ISO 8601")
    time_zone: str = Field(description="The event's IANA time zone")
    start_local: str = Field(description="Start as wall-clock time in the event's time zone, with offset")
    end_local: str
    location: str
    description: str
    attendees: list[Attendee] = Field(description="Invitees other than the organizer, with their responses")
    status: Status
    recurrence: Recurrence | None = Field(description="Null for a one-off event")
    created_at: str
    updated_at: str


class EventOccurrence(BaseModel):
    """One event on a calendar in a time range: a one-off event, or one occurrence of a weekly series."""

    event_id: int = Field(description="The event's id (for an occurrence: the id of its series)")
    series_id: int | None = Field(
        description="The weekly series this occurrence belongs to; null for a one-off"
    )
    occurrence_start: str | None = Field(
        description="UTC start of this occurrence (pass it to cancel_event to cancel just this one)"
    )
    calendar_email: str
    organizer_email: str
    title: str
    start: str = Field(description="UTC, ISO 8601")
    end: str = Field(description="UTC, ISO 8601")
    time_zone: str
    start_local: str
    end_local: str
    location: str
    description: str
    attendees: list[Attendee]
    status: Status


class EventList(BaseModel):
    """Events on one person's calendar that overlap a time range, in order of start.
    `total` counts every match, not just this page."""

    calendar_email: str
    range_start: str
    range_end: str
    total: int
    events: list[EventOccurrence]


class Conflict(BaseModel):
    """An event (or occurrence) that keeps someone busy."""

    event_id: int
    title: str
    start: str
    end: str


class AttendeeAvailability(BaseModel):
    """Whether one person can make a proposed time."""

    email: str
    time_zone: str
    start_local: str = Field(description="The proposed start in this person's time zone")
    end_local: str
    free: bool = Field(
        description="No confirmed event they organize or attend (and did not decline) overlaps"
    )
    within_working_hours: bool = Field(
        description="The whole time is inside their working hours on a weekday"
    )
    conflicts: list[Conflict]


class Availability(BaseModel):
    """Free/busy and working hours of each person for one proposed time."""

    start: str
    end: str
    everyone_available: bool = Field(description="Every person is free and within working hours")
    attendees: list[AttendeeAvailability]


class PersonZone(BaseModel):
    email: str
    time_zone: str


class Slot(BaseModel):
    """A time when everyone is free and within their working hours."""

    start: str = Field(description="UTC, ISO 8601")
    end: str
    start_local: str = Field(description="In the time zone of the search (time_zone)")
    end_local: str


class FreeSlots(BaseModel):
    """Candidate meeting times, earliest first."""

    duration_minutes: int
    time_zone: str = Field(description="The time zone of start_local/end_local")
    attendees: list[PersonZone] = Field(description="Everyone whose calendar and working hours were checked")
    slots: list[Slot]
