"""Reading and writing calendar events: the rules tools and world operations share.

Everything here raises `ServiceError` on bad input, with a message for whoever reads it next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.state import Workspace, format_time, parse_time

from ..toolkit import ServiceError
from .schema import Attendee, Event, EventOccurrence, Recurrence
from .times import (
    Occurrence,
    Weekly,
    find_occurrence,
    local_text,
    occurrence_start,
    occurrences,
    zone,
)

RESPONSES = ("needs_action", "accepted", "declined", "tentative")


@dataclass(frozen=True)
class StoredEvent:
    """One row of `calendar_events` with its attendees and cancelled occurrences."""

    id: int
    calendar_email: str
    organizer_email: str
    title: str
    start: datetime
    end: datetime
    tz: ZoneInfo
    location: str
    description: str
    status: str
    rule: Weekly | None
    attendees: dict[str, str]
    cancelled: frozenset[int]
    created_at: str
    updated_at: str

    def keeps_busy(self, email: str) -> bool:
        """Whether this event keeps `email` busy: it must be confirmed, and they must be an attendee
        who has not declined, or else its organizer or calendar owner."""
        if self.status != "confirmed":
            return False
        if email in self.attendees:
            return self.attendees[email] != "declined"
        return email in (self.calendar_email, self.organizer_email)

    def occurrences(
        self, range_start: datetime, range_end: datetime, *, include_cancelled: bool
    ) -> list[Occurrence]:
        found = occurrences(self.start, self.end, self.tz, self.rule, range_start, range_end)
        return [o for o in found if include_cancelled or o.index not in self.cancelled]


def load_event(ws: Workspace, event_id: int) -> StoredEvent:
    """The event with this id, or an error that says where ids come from."""
    rows = ws.rows("calendar_events", "id = ?", [event_id])
    if not rows:
        raise ServiceError(f"no event with id {event_id}; list_events returns valid ids")
    return _stored(ws, rows[0])


def _stored(ws: Workspace, row: dict[str, Any]) -> StoredEvent:
    attendees = ws.conn.execute(
        "SELECT email, response FROM calendar_attendees WHERE event_id = ? ORDER BY email", (row["id"],)
    ).fetchall()
    cancelled = ws.conn.execute(
        "SELECT occurrence_index FROM calendar_cancelled_occurrences WHERE event_id = ?", (row["id"],)
    ).fetchall()
    rule = None
    if row["recurrence"] == "weekly":
        until = date.fromisoformat(row["recurrence_until"]) if row["recurrence_until"] else None
        rule = Weekly(row["recurrence_count"], until)
    return StoredEvent(
        id=row["id"],
        calendar_email=row["calendar_email"],
        organizer_email=row["organizer_email"],
        title=row["title"],
        start=parse_time(row["start_utc"]),
        end=parse_time(row["end_utc"]),
        tz=zone(row["time_zone"]),
        location=row["location"],
        description=row["description"],
        status=row["status"],
        rule=rule,
        attendees=dict(attendees),
        cancelled=frozenset(i for (i,) in cancelled),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def events_involving(
    ws: Workspace, email: str, range_start: datetime, range_end: datetime
) -> list[StoredEvent]:
    """Events on `email`'s calendar (owned, organized or attended) that may overlap the range."""
    rows = ws.rows(
        "calendar_events",
        "(calendar_email = ? OR organizer_email = ? "
        "OR id IN (SELECT event_id FROM calendar_attendees WHERE email = ?)) "
        "AND start_utc < ? AND (recurrence = 'weekly' OR end_utc > ?) ORDER BY id",
        [email, email, email, format_time(range_end), format_time(range_start)],
    )
    return [_stored(ws, row) for row in rows]


def busy_times(
    ws: Workspace, email: str, range_start: datetime, range_end: datetime, ignore_event_id: int | None = None
) -> list[tuple[StoredEvent, Occurrence]]:
    """What keeps `email` busy in the range, in order of start."""
    busy = [
        (event, occ)
        for event in events_involving(ws, email, range_start, range_end)
        if event.id != ignore_event_id and event.keeps_busy(email)
        for occ in event.occurrences(range_start, range_end, include_cancelled=False)
    ]
    return sorted(busy, key=lambda pair: (pair[1].start, pair[0].id))


# -- writing ---------------------------------------------------------------------------------


def check_rule(start: datetime, tz: ZoneInfo, rule: Weekly | None) -> None:
    if rule is None:
        return
    if rule.count is not None and rule.until is not None:
        raise ServiceError("give either recurrence_count or recurrence_until, not both")
    if rule.count is not None and not 1 <= rule.count <= 520:
        raise ServiceError(f"recurrence_count must be between 1 and 520, not {rule.count}")
    if rule.until is not None and rule.until < start.astimezone(tz).date():
        raise ServiceError(
            f"recurrence_until {rule.until.isoformat()} is before the first occurrence on "
            f"{start.astimezone(tz).date().isoformat()}"
        )


def insert_event(
    ws: Workspace,
    *,
    calendar_email: str,
    organizer_email: str,
    title: str,
    start: datetime,
    end: datetime,
    tz: ZoneInfo,
    location: str = "",
    description: str = "",
    attendees: Sequence[tuple[str, str]] = (),
    status: str = "confirmed",
    rule: Weekly | None = None,
) -> int:
    """Insert a validated event and its attendees; returns the new id."""
    check_rule(start, tz, rule)
    now = ws.clock.now_text()
    cur = ws.conn.execute(
        "INSERT INTO calendar_events (calendar_email, organizer_email, title, start_utc, end_utc, time_zone, "
        "location, description, status, recurrence, recurrence_count, recurrence_until, "
        "created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            calendar_email,
            organizer_email,
            title,
            format_time(start),
            format_time(end),
            tz.key,
            location,
            description,
            status,
            "weekly" if rule else "none",
            rule.count if rule else None,
            rule.until.isoformat() if rule and rule.until else None,
            now,
            now,
        ),
    )
    event_id = int(cur.lastrowid or 0)
    ws.conn.executemany(
        "INSERT INTO calendar_attendees (event_id, email, response) VALUES (?, ?, ?)",
        [(event_id, email, response) for email, response in attendees],
    )
    return event_id


def require_confirmed(event: StoredEvent) -> None:
    if event.status == "cancelled":
        raise ServiceError(f"event {event.id} ({event.title!r}) is cancelled; create a new event instead")


def set_time(
    ws: Workspace,
    event: StoredEvent,
    start: datetime,
    end: datetime,
    tz: ZoneInfo,
    *,
    reset_responses: bool = True,
) -> None:
    """Move an event (a series moves as a whole). After a move attendees must answer again, so
    their responses reset to needs_action."""
    check_rule(start, tz, event.rule)
    ws.conn.execute(
        "UPDATE calendar_events SET start_utc = ?, end_utc = ?, time_zone = ?, updated_at = ? WHERE id = ?",
        (format_time(start), format_time(end), tz.key, ws.clock.now_text(), event.id),
    )
    if reset_responses:
        ws.conn.execute(
            "UPDATE calendar_attendees SET response = 'needs_action' WHERE event_id = ?", (event.id,)
        )


def cancel(ws: Workspace, event: StoredEvent, occurrence: datetime | None) -> None:
    """Cancel a whole event or series, or (with `occurrence`, its UTC start) one occurrence of a series."""
    require_confirmed(event)
    if occurrence is None:
        ws.conn.execute(
            "UPDATE calendar_events SET status = 'cancelled', updated_at = ? WHERE id = ?",
            (ws.clock.now_text(), event.id),
        )
        return
    if event.rule is None:
        raise ServiceError(
            f"event {event.id} is not a weekly series; leave occurrence_start out to cancel the event itself"
        )
    index = find_occurrence(event.start, event.tz, event.rule, occurrence)
    if index is None:
        raise ServiceError(
            f"no occurrence of event {event.id} starts at {format_time(occurrence)}; list_events shows "
            "each occurrence's occurrence_start"
        )
    if index in event.cancelled:
        raise ServiceError(
            f"the occurrence of event {event.id} at {format_time(occurrence)} is already cancelled"
        )
    ws.conn.execute(
        "INSERT INTO calendar_cancelled_occurrences (event_id, occurrence_index) VALUES (?, ?)",
        (event.id, index),
    )
    ws.conn.execute("UPDATE calendar_events SET updated_at = ? WHERE id = ?", (ws.clock.now_text(), event.id))


def set_response(ws: Workspace, event: StoredEvent, email: str, response: str) -> None:
    """Record an attendee's answer to an invitation."""
    require_confirmed(event)
    if response not in RESPONSES[1:]:
        raise ServiceError(f"response must be accepted, declined or tentative, not {response!r}")
    if email not in event.attendees:
        invited = ", ".join(event.attendees) or "nobody"
        raise ServiceError(f"{email} is not invited to event {event.id}; its attendees are: {invited}")
    ws.conn.execute(
        "UPDATE calendar_attendees SET response = ? WHERE event_id = ? AND email = ?",
        (response, event.id, email),
    )


# -- output models ---------------------------------------------------------------------------


def _attendees(event: StoredEvent) -> list[Attendee]:
    return [Attendee(email=e, response=r) for e, r in event.attendees.items()]  # type: ignore[arg-type]


def event_model(event: StoredEvent) -> Event:
    recurrence = None
    if event.rule is not None:
        recurrence = Recurrence(
            count=event.rule.count,
            until=event.rule.until.isoformat() if event.rule.until else None,
            cancelled_occurrences=[
                format_time(occurrence_start(event.start, event.tz, i)) for i in sorted(event.cancelled)
            ],
        )
    return Event(
        id=event.id,
        calendar_email=event.calendar_email,
        organizer_email=event.organizer_email,
        title=event.title,
        start=format_time(event.start),
        end=format_time(event.end),
        time_zone=event.tz.key,
        start_local=local_text(event.start, event.tz),
        end_local=local_text(event.end, event.tz),
        location=event.location,
        description=event.description,
        attendees=_attendees(event),
        status=event.status,  # type: ignore[arg-type]
        recurrence=recurrence,
        created_at=event.created_at,
        updated_at=event.updated_at,
    )


def occurrence_model(event: StoredEvent, occ: Occurrence) -> EventOccurrence:
    series = event.rule is not None
    cancelled = event.status == "cancelled" or occ.index in event.cancelled
    return EventOccurrence(
        event_id=event.id,
        series_id=event.id if series else None,
        occurrence_start=format_time(occ.start) if series else None,
        calendar_email=event.calendar_email,
        organizer_email=event.organizer_email,
        title=event.title,
        start=format_time(occ.start),
        end=format_time(occ.end),
        time_zone=event.tz.key,
        start_local=local_text(occ.start, event.tz),
        end_local=local_text(occ.end, event.tz),
        location=event.location,
        description=event.description,
        attendees=_attendees(event),
        status="cancelled" if cancelled else "confirmed",
    )
