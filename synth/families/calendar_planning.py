"""Calendar planning for the families that book and move meetings: the days a meeting may
fall on, each person's working day by one reading of "working hours", when a group is all at
work, colleagues a request can name without ambiguity, seeded titles to avoid, and the
operation that plants an event."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from coworkenv.state import Workspace, format_time
from coworkenv.task import WorldCall
from coworkenv.world import Person

from ..builders import core_name, given_name, operation
from ..family import FamilyContext

ATTEMPTS = 80
Plan = TypeVar("Plan")


def retry(build: Callable[[FamilyContext], Plan | None], ctx: FamilyContext, what: str) -> Plan:
    """The first plan `build` finds (it draws afresh each time), else an error naming `what`."""
    for _ in range(ATTEMPTS):
        plan = build(ctx)
        if plan is not None:
            return plan
    raise RuntimeError(f"{ctx.family} seed {ctx.seed}: found no {what} in {ATTEMPTS} attempts")


DEFAULT_HOURS = (time(9), time(17))
"""The working day the calendar's free/busy tools assume unless told otherwise."""
GENERIC_MEETINGS = ["1:1 follow-up", "Hiring sync", "Planning check-in", "Weekly catch-up"]

Shift = tuple[str, time, time]
"""A person's working day: their time zone, when it starts and when it ends (local)."""


def meeting_days(ctx: FamilyContext) -> list[date]:
    """Weekdays from tomorrow to the end of next week."""
    days = [ctx.start.date() + timedelta(days=i) for i in range(1, 12)]
    return [d for d in days if d.weekday() < 5]


def working_hours(ctx: FamilyContext, person: Person) -> tuple[time, time]:
    """The person's working hours in the world (the demo company's people are its people too)."""
    world = ctx.the_world
    found = next((p for p in world.people if p.email == person.email), None)
    hours = world.hours(found) if found is not None else world.working_hours
    return hours.start, hours.end


READINGS = ("both", "own", "default")


def shifts(ctx: FamilyContext, people: Sequence[Person], reading: str = "both") -> list[Shift]:
    """Each person's working day, by one reading of "working hours": `own` (the person's, from
    the world), `default` (the calendar's 09:00-17:00) or `both` (the part inside both), so a
    time planned with `both` fits whichever reading an agent takes."""
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; use one of {', '.join(READINGS)}")
    shifts = []
    for p in people:
        start, end = working_hours(ctx, p)
        if reading == "default":
            start, end = DEFAULT_HOURS
        elif reading == "both":
            start, end = max(start, DEFAULT_HOURS[0]), min(end, DEFAULT_HOURS[1])
        shifts.append((p.time_zone, start, end))
    return shifts


def work_interval(day: date, shift: Shift) -> tuple[datetime, datetime]:
    zone, start, end = shift
    tz = ZoneInfo(zone)
    return datetime.combine(day, start, tz).astimezone(UTC), datetime.combine(day, end, tz).astimezone(UTC)


def common_window(day: date, mine: Shift, shifts: Sequence[Shift]) -> tuple[datetime, datetime] | None:
    """The UTC interval inside the user's working day on `day` (their own date) and inside
    everyone else's (on whatever local weekday that is for them)."""
    if mine[1] >= mine[2]:
        return None
    lo, hi = work_interval(day, mine)
    for shift in shifts:
        found = None
        for offset in (-1, 0, 1):
            other = day + timedelta(days=offset)
            start, end = work_interval(other, shift)
            if other.weekday() < 5 and min(end, hi) > max(start, lo):
                found = (max(start, lo), min(end, hi))
        if found is None:
            return None
        lo, hi = found
    return lo, hi


def shared_window(
    ctx: FamilyContext, day: date, people: Sequence[Person], reading: str = "both"
) -> tuple[datetime, datetime] | None:
    """When the user and `people` are all at work on `day` (see `shifts` for `reading`)."""
    (mine,) = shifts(ctx, [ctx.user], reading)
    return common_window(day, mine, shifts(ctx, people, reading))


def unambiguous(ctx: FamilyContext, people: Sequence[Person]) -> list[Person]:
    """Those of `people` nobody else in the world shares a name (or a first name) with, so a
    request naming them is never ambiguous."""
    everyone = ctx.the_world.people
    full = [core_name(p) for p in everyone]
    first = [given_name(p) for p in everyone]
    return [p for p in people if full.count(core_name(p)) == 1 and first.count(given_name(p)) == 1]


def pick_group(
    ctx: FamilyContext,
    day: date,
    n: int,
    min_minutes: int,
    exclude: Sequence[str] = (),
    least: int | None = None,
) -> tuple[list[Person], tuple[datetime, datetime]] | None:
    """`n` colleagues whose working hours overlap the user's on `day` by at least `min_minutes`
    (by both readings of working hours, see `shifts`), people in other time zones first; in a
    small or scattered world as many as can meet, if that is at least `least` (default `n`)."""
    pool = unambiguous(ctx, ctx.people(exclude=exclude))
    best: tuple[list[Person], tuple[datetime, datetime]] | None = None
    for _ in range(4):
        ctx.rng.shuffle(pool)
        pool.sort(key=lambda p: p.time_zone == ctx.user.time_zone)
        chosen: list[Person] = []
        window = None
        for person in pool:
            wider = shared_window(ctx, day, [*chosen, person])
            if wider is not None and wider[1] - wider[0] >= timedelta(minutes=min_minutes):
                chosen, window = [*chosen, person], wider
                if len(chosen) == n:
                    return chosen, wider
        enough = window is not None and len(chosen) >= (n if least is None else least)
        if enough and window is not None and (best is None or len(chosen) > len(best[0])):
            best = (chosen, window)
    return best


def titles_near(ws: Workspace, lo: datetime, hi: datetime) -> set[str]:
    """Titles of the seeded events within a day of [lo, hi) and of every weekly series, which a
    request naming a meeting by its title on that day must not share."""
    query = "SELECT title FROM calendar_events WHERE recurrence != 'none' OR (start_utc < ? AND end_utc > ?)"
    rows = ws.conn.execute(query, (format_time(hi + timedelta(days=1)), format_time(lo - timedelta(days=1))))
    return {r[0] for r in rows}


def side_titles(ctx: FamilyContext) -> list[str]:
    """Titles of everyday internal meetings in the world (none with a placeholder)."""
    titles = [m.title for m in ctx.the_world.meetings if "{" not in m.title and m.attendees]
    return sorted(set(titles) | set(GENERIC_MEETINGS))


def event_operation(
    organizer: Person,
    title: str,
    start: datetime,
    end: datetime,
    attendees: Sequence[tuple[str, str]] = (),
    **extra: Any,
) -> WorldCall:
    """The seed operation of a confirmed event `organizer` holds (attendees as (email, response))."""
    return operation(
        "calendar",
        "add_event",
        organizer_email=organizer.email,
        title=title,
        start=format_time(start),
        end=format_time(end),
        time_zone=organizer.time_zone,
        attendees=[{"email": e, "response": r} for e, r in attendees],
        **extra,
    )
