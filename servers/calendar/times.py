"""Time handling for the calendar: parsing the model's ISO 8601 input in a time zone,
rendering local times, and expanding weekly series into occurrences.

Events are stored in UTC with the IANA name of their time zone; a weekly series repeats
at the same wall-clock time in that zone, so it keeps its local hour across a daylight
saving change.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..toolkit import ServiceError

WEEK = timedelta(days=7)
FIRST_YEAR, LAST_YEAR = 1970, 2099
#: The longest one event (or one occurrence of a series) may last.
MAX_EVENT_DURATION = timedelta(hours=24)
TIME_EXAMPLE = "e.g. 2026-03-02T14:30:00+01:00, or 2026-03-02T14:30 together with time_zone"
_CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def zone(name: str) -> ZoneInfo:
    """The time zone with this IANA name, or a `ServiceError` that says what a valid name looks like."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ServiceError(
            f"unknown time zone {name!r}; use an IANA name such as Europe/Berlin, America/New_York or UTC"
        ) from None


def parse_when(text: str, tz: ZoneInfo, field: str = "time") -> datetime:
    """Parse the model's ISO 8601 time; a time without offset is wall-clock time in `tz`.

    Returns an aware UTC datetime (seconds precision). A wall-clock time that does not
    exist in `tz` (skipped by a daylight saving change) is an error, not a silent shift.
    """
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ServiceError(f"{field} {text!r} is not an ISO 8601 time; {TIME_EXAMPLE}") from None
    return to_utc(value, tz, field)


def to_utc(value: datetime, tz: ZoneInfo, field: str = "time") -> datetime:
    """An aware UTC datetime from an aware one, or from a naive one read as wall-clock time in `tz`."""
    value = value.replace(microsecond=0)
    if not FIRST_YEAR <= value.year <= LAST_YEAR:
        # Far-off years would overflow datetime arithmetic (offsets, weekly steps).
        raise ServiceError(
            f"{field} {value.isoformat()} is out of range; use a year from {FIRST_YEAR} to {LAST_YEAR}"
        )
    if value.tzinfo is not None:
        return value.astimezone(UTC)
    aware = value.replace(tzinfo=tz)
    if aware.astimezone(UTC).astimezone(tz).replace(tzinfo=None) != value:
        raise ServiceError(
            f"{field} {value.isoformat()} does not exist in {tz.key} (the clocks skip it for daylight "
            "saving time); pick another time"
        )
    return aware.astimezone(UTC)


def parse_day(text: str, field: str = "date") -> date:
    """Parse a calendar date written YYYY-MM-DD."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ServiceError(f"{field} {text!r} is not a date; use YYYY-MM-DD, e.g. 2026-03-31") from None


def parse_clock(text: str, field: str) -> time:
    """Parse a wall-clock time of day written HH:MM (24-hour)."""
    match = _CLOCK.match(text.strip())
    if match is None:
        raise ServiceError(f"{field} {text!r} is not a time of day; use HH:MM (24-hour), e.g. 09:00")
    return time(int(match[1]), int(match[2]))


def local_text(value: datetime, tz: ZoneInfo) -> str:
    """ISO 8601 text of `value` as wall-clock time in `tz`, with its offset."""
    return value.astimezone(tz).isoformat()


def check_span(start: datetime, end: datetime) -> None:
    """An event must end after it starts and last at most `MAX_EVENT_DURATION`."""
    if end <= start:
        raise ServiceError(f"end {end.isoformat()} must be after start {start.isoformat()}")
    if end - start > MAX_EVENT_DURATION:
        raise ServiceError("an event lasts at most 24 hours; split longer stretches into several events")


@dataclass(frozen=True)
class Weekly:
    """A weekly rule: `count` occurrences in all, or every week up to `until` (a local date,
    inclusive), or forever when both are None."""

    count: int | None = None
    until: date | None = None


@dataclass(frozen=True)
class Occurrence:
    index: int
    start: datetime
    end: datetime


def occurrence_start(start: datetime, tz: ZoneInfo, index: int) -> datetime:
    """The UTC start of occurrence `index` (0 is the first) of a weekly series anchored at `start`."""
    wall = start.astimezone(tz).replace(tzinfo=None) + index * WEEK
    return wall.replace(tzinfo=tz).astimezone(UTC)


def occurrences(
    start: datetime,
    end: datetime,
    tz: ZoneInfo,
    rule: Weekly | None,
    range_start: datetime,
    range_end: datetime,
) -> list[Occurrence]:
    """The occurrences of an event (a one-off, or a weekly series when `rule` is set) that
    overlap [range_start, range_end)."""
    duration = end - start
    if rule is None:
        return [Occurrence(0, start, end)] if start < range_end and end > range_start else []
    # Daylight saving moves a wall-clock anchor by at most a few hours: widen by one week each side.
    first = max(0, math.floor((range_start - duration - start) / WEEK) - 1)
    last = math.ceil((range_end - start) / WEEK) + 1
    if rule.count is not None:
        last = min(last, rule.count - 1)
    found = []
    for index in range(first, last + 1):
        begin = occurrence_start(start, tz, index)
        if rule.until is not None and begin.astimezone(tz).date() > rule.until:
            break
        if begin < range_end and begin + duration > range_start:
            found.append(Occurrence(index, begin, begin + duration))
    return found


def find_occurrence(start: datetime, tz: ZoneInfo, rule: Weekly, wanted: datetime) -> int | None:
    """The index of the occurrence of a series that starts exactly at `wanted`, if there is one."""
    hits = occurrences(start, start + timedelta(seconds=1), tz, rule, wanted, wanted + timedelta(seconds=1))
    return next((o.index for o in hits if o.start == wanted), None)
