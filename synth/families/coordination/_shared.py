"""Helpers several coordination families share: planting on the demo workspace and retrying,
how people and days are written, check, fact and solution-step builders, and calendar
planning (meeting days, colleagues whose working hours overlap, events).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.state import Workspace, format_time
from coworkenv.world import Person

from ...family import FamilyContext

Json = dict[str, Any]
ATTEMPTS = 80
PREFIXES = {"Dr.", "Mr.", "Mrs.", "Ms.", "Miss", "Mx."}
SUFFIXES = {"MD", "DDS", "PhD", "DVM", "Jr.", "Sr.", "II", "III", "IV", "V"}


# -- planting, wording and checks ----------------------------------------------------------------


def _workspace(ctx: FamilyContext, services: Sequence[str], operations: list[Json]) -> tuple[Workspace, list]:
    """The demo workspace with `operations` applied, as seeding leaves it, and their results."""
    results, ws = ctx.seeded(services, operations)
    return ws, results


def _max_id(ws: Workspace, table: str) -> int:
    return int(ws.conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0])


def _retry(build: Callable[[FamilyContext], Json | None], ctx: FamilyContext, what: str) -> Json:
    for _ in range(ATTEMPTS):
        plan = build(ctx)
        if plan is not None:
            return plan
    raise RuntimeError(f"{ctx.family} seed {ctx.seed}: found no {what} in {ATTEMPTS} attempts")


def _core_name(person: Person) -> str:
    """The name without titles like Dr. or MD, as people write it."""
    return " ".join(t for t in person.name.split() if t not in PREFIXES | SUFFIXES)


def _first(person: Person) -> str:
    return _core_name(person).split()[0]


def _day_text(day: date) -> str:
    return f"{day:%A} {day.day} {day:%B}"


def _next_day(day: date) -> str:
    return (day + timedelta(days=1)).isoformat()


def _q(value: str) -> str:
    """A value inside single quotes in SQL."""
    return value.replace("'", "''")


def _check(check_id: str, kind: str, description: str = "", **fields: Any) -> Json:
    return {"id": check_id, "type": kind, "description": description, **fields}


def _sql(check_id: str, description: str, query: str, expected: Any = 1) -> Json:
    return _check(check_id, "sql", description, query=query, expected=expected)


def _python(check_id: str, description: str, library: str, params: Json, body: str) -> Json:
    """A `python` check: helper code, the task's constants as JSON, then `check`."""
    code = f"{library}\nP = json.loads({json.dumps(json.dumps(params, sort_keys=True))})\n\n{body}"
    return _check(check_id, "python", description, code=code)


def _step(tool: str, step_id: str | None = None, **arguments: Any) -> Json:
    return {"tool": tool, "arguments": arguments, **({"id": step_id} if step_id else {})}


def _guard(check: Json) -> Json:
    """The check as a guard: it must hold, but passing it earns nothing (it holds on the seed)."""
    return {**check, "role": "guard"}


def _states(
    check_id: str,
    description: str,
    table: str,
    where: Json,
    columns: list[str],
    facts: list[Json],
    absent: Sequence[Json] = (),
) -> Json:
    """A `states` check: some row matching `where` states `facts` (and none of `absent`)."""
    fields: Json = {"table": table, "where": where, "columns": columns, "facts": facts}
    return _check(check_id, "states", description, **fields, **({"absent": list(absent)} if absent else {}))


def _mail_sent(
    check_id: str,
    description: str,
    to: Sequence[str],
    facts: Sequence[Json] = (),
    absent: Sequence[Json] = (),
) -> Json:
    """A `mail_sent` check: the user sent a mail to `to` (to or cc) stating `facts`, by any route."""
    fields: Json = {"to": list(to), "facts": list(facts), **({"absent": list(absent)} if absent else {})}
    return _check(check_id, "mail_sent", description, **fields)


def _person(p: Person) -> Json:
    return {"person": p.email, "name": p.name}


def _time(at: datetime, *zones: str) -> Json:
    """A time fact: `at` as a wall-clock time in a zone the text names or one of `zones`
    (the user's first)."""
    return {"time": format_time(at), "zones": list(dict.fromkeys(zones))}


# -- calendar planning ---------------------------------------------------------------------------

DEFAULT_HOURS = (time(9), time(17))
"""The working day the calendar's free/busy tools assume unless told otherwise."""
GENERIC_MEETINGS = ["1:1 follow-up", "Hiring sync", "Planning check-in", "Weekly catch-up"]

Shift = tuple[str, time, time]
"""A person's working day: their time zone, when it starts and when it ends (local)."""


def _meeting_days(ctx: FamilyContext) -> list[date]:
    """Weekdays from tomorrow to the end of next week."""
    days = [ctx.start.date() + timedelta(days=i) for i in range(1, 12)]
    return [d for d in days if d.weekday() < 5]


def _hours(ctx: FamilyContext, person: Person) -> tuple[time, time]:
    """The person's working hours in the world (the demo company's people are its people too)."""
    world = ctx.the_world
    found = next((p for p in world.people if p.email == person.email), None)
    hours = world.hours(found) if found is not None else world.working_hours
    return hours.start, hours.end


READINGS = ("both", "own", "default")


def _shifts(ctx: FamilyContext, people: Sequence[Person], reading: str = "both") -> list[Shift]:
    """Each person's working day, by one reading of "working hours": `own` (the person's, from
    the world), `default` (the calendar's 09:00-17:00) or `both` (the part inside both), so a
    time planned with `both` fits whichever reading an agent takes."""
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r}; use one of {', '.join(READINGS)}")
    shifts = []
    for p in people:
        start, end = _hours(ctx, p)
        if reading == "default":
            start, end = DEFAULT_HOURS
        elif reading == "both":
            start, end = max(start, DEFAULT_HOURS[0]), min(end, DEFAULT_HOURS[1])
        shifts.append((p.time_zone, start, end))
    return shifts


def _work_interval(day: date, shift: Shift) -> tuple[datetime, datetime]:
    zone, start, end = shift
    tz = ZoneInfo(zone)
    return datetime.combine(day, start, tz).astimezone(UTC), datetime.combine(day, end, tz).astimezone(UTC)


def _common_window(day: date, mine: Shift, shifts: Sequence[Shift]) -> tuple[datetime, datetime] | None:
    """The UTC interval inside the user's working day on `day` (their own date) and inside
    everyone else's (on whatever local weekday that is for them)."""
    if mine[1] >= mine[2]:
        return None
    lo, hi = _work_interval(day, mine)
    for shift in shifts:
        found = None
        for offset in (-1, 0, 1):
            other = day + timedelta(days=offset)
            start, end = _work_interval(other, shift)
            if other.weekday() < 5 and min(end, hi) > max(start, lo):
                found = (max(start, lo), min(end, hi))
        if found is None:
            return None
        lo, hi = found
    return lo, hi


def _window(
    ctx: FamilyContext, day: date, people: Sequence[Person], reading: str = "both"
) -> tuple[datetime, datetime] | None:
    """When the user and `people` are all at work on `day` (see `_shifts` for `reading`)."""
    (mine,) = _shifts(ctx, [ctx.user], reading)
    return _common_window(day, mine, _shifts(ctx, people, reading))


def _named(ctx: FamilyContext, people: Sequence[Person]) -> list[Person]:
    """Those of `people` nobody else in the world shares a name (or a first name) with, so a
    request naming them is never ambiguous."""
    everyone = ctx.the_world.people
    full = [_core_name(p) for p in everyone]
    first = [_first(p) for p in everyone]
    return [p for p in people if full.count(_core_name(p)) == 1 and first.count(_first(p)) == 1]


def _pick_group(
    ctx: FamilyContext,
    day: date,
    n: int,
    min_minutes: int,
    exclude: Sequence[str] = (),
    least: int | None = None,
) -> tuple[list[Person], tuple[datetime, datetime]] | None:
    """`n` colleagues whose working hours overlap the user's on `day` by at least `min_minutes`
    (by both readings of working hours, see `_shifts`), people in other time zones first; in a
    small or scattered world as many as can meet, if that is at least `least` (default `n`)."""
    pool = _named(ctx, ctx.people(exclude=exclude))
    best: tuple[list[Person], tuple[datetime, datetime]] | None = None
    for _ in range(4):
        ctx.rng.shuffle(pool)
        pool.sort(key=lambda p: p.time_zone == ctx.user.time_zone)
        chosen: list[Person] = []
        window = None
        for person in pool:
            wider = _window(ctx, day, [*chosen, person])
            if wider is not None and wider[1] - wider[0] >= timedelta(minutes=min_minutes):
                chosen, window = [*chosen, person], wider
                if len(chosen) == n:
                    return chosen, wider
        enough = window is not None and len(chosen) >= (n if least is None else least)
        if enough and window is not None and (best is None or len(chosen) > len(best[0])):
            best = (chosen, window)
    return best


def _titles_near(ws: Workspace, lo: datetime, hi: datetime) -> set[str]:
    """Titles of the seeded events within a day of [lo, hi) and of every weekly series, which a
    request naming a meeting by its title on that day must not share."""
    query = "SELECT title FROM calendar_events WHERE recurrence != 'none' OR (start_utc < ? AND end_utc > ?)"
    rows = ws.conn.execute(query, (format_time(hi + timedelta(days=1)), format_time(lo - timedelta(days=1))))
    return {r[0] for r in rows}


def _side_titles(ctx: FamilyContext) -> list[str]:
    """Titles of everyday internal meetings in the world (none with a placeholder)."""
    titles = [m.title for m in ctx.the_world.meetings if "{" not in m.title and m.attendees]
    return sorted(set(titles) | set(GENERIC_MEETINGS))


def _event(
    organizer: Person,
    title: str,
    start: datetime,
    end: datetime,
    attendees: Sequence[tuple[str, str]] = (),
    **extra: Any,
) -> Json:
    params = {
        "organizer_email": organizer.email,
        "title": title,
        "start": format_time(start),
        "end": format_time(end),
        "time_zone": organizer.time_zone,
        "attendees": [{"email": e, "response": r} for e, r in attendees],
        **extra,
    }
    return {"service": "calendar", "operation": "add_event", "params": params}
