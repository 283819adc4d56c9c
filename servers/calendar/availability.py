"""Free/busy: who can make a proposed time, and where a meeting fits for everyone.

Working hours are evaluated in each person's own time zone (from the directory), on
weekdays unless weekends are allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from coworkenv.state import Workspace, format_time

from ..toolkit import ServiceError
from .people import person_zone
from .schema import AttendeeAvailability, Conflict, Slot
from .store import StoredEvent, busy_times
from .times import Occurrence, local_text

MAX_SEARCH_WINDOW = timedelta(days=31)


@dataclass(frozen=True)
class WorkingHours:
    start: time
    end: time
    weekdays_only: bool

    def __post_init__(self) -> None:
        if self.end <= self.start:
            raise ServiceError(
                f"working_hours_end {self.end:%H:%M} must be after working_hours_start {self.start:%H:%M}"
            )

    def contain(self, start: datetime, end: datetime, tz: ZoneInfo) -> bool:
        """Whether [start, end) lies inside one working day in `tz`."""
        local_start, local_end = start.astimezone(tz), end.astimezone(tz)
        if local_start.date() != local_end.date():
            return False
        if self.weekdays_only and local_start.weekday() >= 5:
            return False
        return self.start <= local_start.time() and local_end.time() <= self.end


@dataclass(frozen=True)
class Person:
    email: str
    tz: ZoneInfo
    busy: list[tuple[StoredEvent, Occurrence]]

    def conflicts(self, start: datetime, end: datetime) -> list[tuple[StoredEvent, Occurrence]]:
        return [(e, o) for e, o in self.busy if o.start < end and o.end > start]


def people(
    ws: Workspace, emails: list[str], start: datetime, end: datetime, ignore_event_id: int | None
) -> list[Person]:
    """Each person's time zone and what keeps them busy in [start, end)."""
    return [Person(e, person_zone(ws, e), busy_times(ws, e, start, end, ignore_event_id)) for e in emails]


def availability(person: Person, start: datetime, end: datetime, hours: WorkingHours) -> AttendeeAvailability:
    conflicts = person.conflicts(start, end)
    return AttendeeAvailability(
        email=person.email,
        time_zone=person.tz.key,
        start_local=local_text(start, person.tz),
        end_local=local_text(end, person.tz),
        free=not conflicts,
        within_working_hours=hours.contain(start, end, person.tz),
        conflicts=[
            Conflict(event_id=e.id, title=e.title, start=format_time(o.start), end=format_time(o.end))
            for e, o in conflicts
        ],
    )


def free_slots(
    group: list[Person],
    window_start: datetime,
    window_end: datetime,
    duration: timedelta,
    step_minutes: int,
    hours: WorkingHours,
    limit: int,
    tz: ZoneInfo,
) -> list[Slot]:
    """Up to `limit` slots in the window, on `step_minutes` boundaries (UTC), where everyone is
    free and inside their working hours."""
    step = timedelta(minutes=step_minutes)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    candidate = epoch + -((epoch - window_start) // step) * step
    slots: list[Slot] = []
    while candidate + duration <= window_end and len(slots) < limit:
        end = candidate + duration
        if all(hours.contain(candidate, end, p.tz) and not p.conflicts(candidate, end) for p in group):
            slots.append(
                Slot(
                    start=format_time(candidate),
                    end=format_time(end),
                    start_local=local_text(candidate, tz),
                    end_local=local_text(end, tz),
                )
            )
        candidate += step
    return slots
