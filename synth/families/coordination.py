"""Coordination families: scheduling across time zones, moving a meeting out of a conflict,
chasing overdue tickets, precise document edits, meeting notes from mail and calendar, and
two multi-turn families where the workspace changes between turns (silent and announced).

Scheduling families plan on a fork of the demo workspace with the calendar's own free/busy
code and retry with other days and people until the planted state leaves exactly the
intended answer, so their checks can be strict without being unfair.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.servers.calendar.availability import WorkingHours, free_slots
from coworkenv.servers.calendar.availability import people as calendar_people
from coworkenv.servers.demo import DemoPerson
from coworkenv.state import Workspace, format_time, parse_time
from coworkenv.task import Task

from ..family import FamilyContext, family

Json = dict[str, Any]
WORKDAY = WorkingHours(time(9), time(17), True)
ACTIVE = ["open", "pending", "in_progress"]
ATTEMPTS = 80
PREFIXES = {"Dr.", "Mr.", "Mrs.", "Ms.", "Miss", "Mx."}
SUFFIXES = {"MD", "DDS", "PhD", "DVM", "Jr.", "Sr.", "II", "III", "IV", "V"}
NO_DELETE = [{"id": "no-delete", "type": "no_deletion"}]
CALENDAR = ["calendar", "directory"]


# -- shared helpers ------------------------------------------------------------------------------


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


def _core_name(person: DemoPerson) -> str:
    """The name without titles like Dr. or MD, as people write it."""
    return " ".join(t for t in person.name.split() if t not in PREFIXES | SUFFIXES)


def _first(person: DemoPerson) -> str:
    return _core_name(person).split()[0]


def _names(people: Sequence[DemoPerson]) -> str:
    names = [p.name for p in people]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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


def _field(check_id: str, table: str, where: Json, column: str, value: Any, description: str = "") -> Json:
    return _check(check_id, "field_equals", description, table=table, where=where, column=column, value=value)


def _python(check_id: str, description: str, library: str, params: Json, body: str) -> Json:
    """A `python` check: helper code, the task's constants as JSON, then `check`."""
    code = f"{library}\nP = json.loads({json.dumps(json.dumps(params, sort_keys=True))})\n\n{body}"
    return _check(check_id, "python", description, code=code)


def _step(tool: str, step_id: str | None = None, **arguments: Any) -> Json:
    return {"tool": tool, "arguments": arguments, **({"id": step_id} if step_id else {})}


def _allow(table: str, where: Json | None = None, *kinds: str) -> Json:
    return {"table": table, "where": where or {}, **({"kinds": list(kinds)} if kinds else {})}


def _bounded(check_id: str, *allowed: Json) -> list[Json]:
    return [{"id": check_id, "type": "bounded_diff", "allowed": list(allowed)}]


def _sent_to(email: str, condition: str) -> str:
    """SQL: whether a sent mail matching `condition` (on m) went to `email`."""
    return (
        "SELECT count(*) > 0 FROM mail_messages m JOIN mail_recipients r ON r.message_id = m.id "
        f"WHERE m.folder = 'sent' AND {condition} AND lower(r.address) = '{_q(email)}'"
    )


# -- calendar planning ---------------------------------------------------------------------------


def _meeting_days(ctx: FamilyContext) -> list[date]:
    """Weekdays from tomorrow to the end of next week."""
    days = [ctx.start.date() + timedelta(days=i) for i in range(1, 12)]
    return [d for d in days if d.weekday() < 5]


def _work_interval(day: date, zone: str) -> tuple[datetime, datetime]:
    tz = ZoneInfo(zone)
    start, end = datetime.combine(day, time(9), tz), datetime.combine(day, time(17), tz)
    return start.astimezone(UTC), end.astimezone(UTC)


def _common_window(day: date, user_zone: str, zones: Sequence[str]) -> tuple[datetime, datetime] | None:
    """The UTC interval inside the user's working hours on `day` (their own date) and inside
    everyone else's working hours (on whatever local weekday that is for them)."""
    lo, hi = _work_interval(day, user_zone)
    for zone in zones:
        found = None
        for offset in (-1, 0, 1):
            other = day + timedelta(days=offset)
            start, end = _work_interval(other, zone)
            if other.weekday() < 5 and min(end, hi) > max(start, lo):
                found = (max(start, lo), min(end, hi))
        if found is None:
            return None
        lo, hi = found
    return lo, hi


def _pick_group(
    ctx: FamilyContext, day: date, n: int, min_minutes: int, exclude: Sequence[str] = ()
) -> tuple[list[DemoPerson], tuple[datetime, datetime]] | None:
    """`n` colleagues whose working hours overlap the user's on `day` by at least `min_minutes`."""
    pool = ctx.people(exclude=exclude)
    ctx.rng.shuffle(pool)
    chosen: list[DemoPerson] = []
    for person in pool:
        window = _common_window(day, ctx.user.time_zone, [p.time_zone for p in [*chosen, person]])
        if window is not None and window[1] - window[0] >= timedelta(minutes=min_minutes):
            chosen.append(person)
            if len(chosen) == n:
                return chosen, window
    return None


def _free_starts(
    ws: Workspace,
    emails: list[str],
    window: tuple[datetime, datetime],
    minutes: int,
    step: int = 30,
    ignore: int | None = None,
) -> list[datetime]:
    """Starts (on `step`-minute boundaries) where everyone is free and inside working hours,
    by the calendar service's own free/busy code."""
    group = calendar_people(ws, emails, window[0], window[1], ignore)
    length = timedelta(minutes=minutes)
    slots = free_slots(group, window[0], window[1], length, step, WORKDAY, 50, ZoneInfo("UTC"))
    return [parse_time(s.start) for s in slots]


def _event(
    organizer: DemoPerson,
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


BUSY_TITLES = [
    "Focus time",
    "Customer call prep",
    "Interview",
    "Vendor call",
    "Team sync",
    "Training session",
    "Quarterly review prep",
    "Hiring debrief",
    "Planning block",
]
MEETING_TOPICS = [
    "go over the escalation process",
    "plan the Q2 support rota",
    "review the new SLA targets",
    "agree on the knowledge base structure",
    "discuss the customer survey results",
    "prepare the Globex renewal",
]


def _blocks(ctx: FamilyContext, people: list[DemoPerson], start: datetime, end: datetime) -> list[Json]:
    """Busy events that together cover [start, end), each on one person's calendar."""
    ops = []
    at = start
    while at < end:
        length = min(timedelta(minutes=ctx.choice([30, 45, 60, 90])), end - at)
        ops.append(_event(ctx.choice(people), ctx.choice(BUSY_TITLES), at, at + length))
        at += length
    return ops


def _harmless(
    ctx: FamilyContext, group: list[DemoPerson], start: datetime, end: datetime, count: int
) -> list:
    """Events in the free gap that keep nobody of the group busy: cancelled ones, declined
    invitations, and other people's meetings."""
    others = ctx.people(exclude=[p.email for p in group])
    ops = []
    for i in range(count):
        member, other = ctx.choice(group), ctx.choice(others)
        title = ctx.choice(BUSY_TITLES)
        if i % 3 == 0:
            ops.append(_event(member, title, start, end, status="cancelled"))
        elif i % 3 == 1:
            ops.append(_event(other, title, start, end, [(member.email, "declined")]))
        else:
            third = ctx.choice([p for p in others if p is not other])
            ops.append(_event(other, title, start, end, [(third.email, "accepted")]))
    return ops


CALENDAR_LIB = '''import json
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo


def utc(text):
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def rows(conn, query, args=()):
    cur = conn.execute(query, args)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def occurrences(conn, event, lo, hi):
    """UTC (start, end) of the event's occurrences overlapping [lo, hi); a weekly series repeats
    at the same wall-clock time in the event's zone, minus its cancelled occurrences."""
    start, end = utc(event["start_utc"]), utc(event["end_utc"])
    if event["recurrence"] != "weekly":
        return [(start, end)] if start < hi and end > lo else []
    tz = ZoneInfo(event["time_zone"])
    wall = start.astimezone(tz).replace(tzinfo=None)
    cancelled = {r[0] for r in conn.execute(
        "SELECT occurrence_index FROM calendar_cancelled_occurrences WHERE event_id = ?", (event["id"],))}
    until = date.fromisoformat(event["recurrence_until"]) if event["recurrence_until"] else None
    last = (hi - start).days // 7 + 2
    if event["recurrence_count"] is not None:
        last = min(last, event["recurrence_count"] - 1)
    found = []
    for i in range(max(0, (lo - start).days // 7 - 2), last + 1):
        local = wall + timedelta(weeks=i)
        if until is not None and local.date() > until:
            break
        begin = local.replace(tzinfo=tz).astimezone(timezone.utc)
        if i not in cancelled and begin < hi and begin + (end - start) > lo:
            found.append((begin, begin + (end - start)))
    return found


def busy(conn, email, lo, hi, skip=()):
    """(event id, start, end) of what keeps `email` busy in [lo, hi): confirmed events they are
    invited to and did not decline, or organize or own without being invited."""
    events = rows(conn,
        "SELECT * FROM calendar_events WHERE status = 'confirmed' AND start_utc < ? AND ("
        "lower(calendar_email) = ? OR lower(organizer_email) = ? OR id IN "
        "(SELECT event_id FROM calendar_attendees WHERE lower(email) = ?))",
        (hi.isoformat(), email, email, email))
    out = []
    for ev in events:
        if ev["id"] in skip:
            continue
        invited = {e.lower(): r for e, r in conn.execute(
            "SELECT email, response FROM calendar_attendees WHERE event_id = ?", (ev["id"],))}
        if email in invited:
            if invited[email] == "declined":
                continue
        elif email not in (ev["calendar_email"].lower(), ev["organizer_email"].lower()):
            continue
        out += [(ev["id"], s, e) for s, e in occurrences(conn, ev, lo, hi)]
    return out


def in_hours(start, end, zone):
    tz = ZoneInfo(zone)
    a, b = start.astimezone(tz), end.astimezone(tz)
    return a.date() == b.date() and a.weekday() < 5 and time(9) <= a.time() and b.time() <= time(17)
'''

SCHEDULE_CHECK = """def check(initial, final, audit):
    last = initial.execute("SELECT coalesce(max(id), 0) FROM calendar_events").fetchone()[0]
    new = rows(final, "SELECT * FROM calendar_events WHERE id > ? AND status = 'confirmed' "
               "AND lower(organizer_email) = ?", (last, P["user"]))
    if len(new) != 1:
        return False, f"expected one new confirmed meeting organized by the user, found {len(new)}"
    ev = new[0]
    if ev["recurrence"] != "none":
        return False, "the meeting should be a single event, not a series"
    start, end = utc(ev["start_utc"]), utc(ev["end_utc"])
    if end - start != timedelta(minutes=P["minutes"]):
        return False, f"the meeting lasts {end - start}, not {P['minutes']} minutes"
    if start.astimezone(ZoneInfo(P["zones"][P["user"]])).date().isoformat() != P["day"]:
        return False, f"the meeting starts {ev['start_utc']}, not on {P['day']} (user's time)"
    invited = sorted(r[0].lower() for r in final.execute(
        "SELECT email FROM calendar_attendees WHERE event_id = ?", (ev["id"],)))
    if invited != sorted(P["attendees"]):
        return False, f"invited {invited}, expected {sorted(P['attendees'])}"
    for email, zone in sorted(P["zones"].items()):
        if not in_hours(start, end, zone):
            return False, f"{ev['start_utc']} is outside the working hours of {email} ({zone})"
        clashes = sorted({i for i, _, _ in busy(final, email, start, end, skip={ev["id"]})})
        if clashes:
            return False, f"{email} is busy then (events {clashes})"
    return True, f"event {ev['id']} at {ev['start_utc']} fits every calendar and working day"
"""


# -- schedule_across_zones -----------------------------------------------------------------------


def _schedule_plan(ctx: FamilyContext) -> Json | None:
    n = max(1, min(ctx.difficulty.items, 3))
    day = ctx.choice(_meeting_days(ctx))
    picked = _pick_group(ctx, day, n, 60)
    if picked is None:
        return None
    group, window = picked
    span = (window[1] - window[0]) / timedelta(minutes=1)
    minutes = ctx.choice([m for m in (30, 45, 60) if m + 30 <= span])
    emails = [ctx.user.email] + [p.email for p in group]
    starts = _free_starts(_workspace(ctx, CALENDAR, [])[0], emails, window, minutes)
    if not starts:
        return None
    target = ctx.choice(starts)
    gap_end = target + timedelta(minutes=minutes)
    everyone = [ctx.user, *group]
    ops = _blocks(ctx, everyone, window[0], target) + _blocks(ctx, everyone, gap_end, window[1])
    ops += _harmless(ctx, everyone, target, gap_end, min(ctx.difficulty.distractors, 6))
    ws, _ = _workspace(ctx, CALENDAR, ops)
    if _free_starts(ws, emails, window, minutes, step=15) != [target]:
        return None
    return {
        "day": day,
        "group": group,
        "minutes": minutes,
        "ops": ops,
        "last_event": _max_id(ws, "calendar_events"),
    }


@family("schedule_across_zones", capability_id="scheduling_constraints", services=CALENDAR)
def schedule_across_zones(ctx: FamilyContext) -> Task:
    """Book a meeting with 1-3 colleagues in other time zones on a given day; busy events leave
    exactly one slot inside everyone's 09:00-17:00. More items: more attendees; more
    distractors: cancelled, declined and other people's events inside the free slot."""
    plan = _retry(_schedule_plan, ctx, "day with one shared free slot")
    day, group, minutes, last_event = plan["day"], plan["group"], plan["minutes"], plan["last_event"]
    user = ctx.user
    topic = ctx.choice(MEETING_TOPICS)
    names, when = _names(group), _day_text(day)
    request = ctx.choice(
        [
            f"Please set up a {minutes}-minute meeting with {names} on {when} to {topic}. Everyone works "
            "09:00-17:00 in their own time zone, and it must not clash with anything on anyone's calendar, "
            "mine included.",
            f"Can you book {minutes} minutes with {names} on {when}? We need to {topic}. Find a time inside "
            "everyone's local working hours (09:00-17:00) when all of us are free, and send the invite.",
            f"I need a {minutes}-minute call with {names} on {when} to {topic}. Pick a slot that works for "
            "all of us (free, and within 09:00-17:00 local time for each person) and put it in the calendar.",
        ]
    )
    attendees = [p.email for p in group]
    params = {
        "user": user.email,
        "attendees": attendees,
        "minutes": minutes,
        "day": day.isoformat(),
        "zones": {p.email: p.time_zone for p in [user, *group]},
    }
    fits = "One new confirmed meeting with exactly the attendees, of the right length, on the day, inside "
    fits += "everyone's working hours and overlapping nobody's busy time"
    checks = [_python("meeting-fits", fits, CALENDAR_LIB, params, SCHEDULE_CHECK)]
    checks += [
        _check(
            f"invited-{i}",
            "row_exists",
            f"{p.name} is invited to a new event",
            table="calendar_attendees",
            where={"event_id": {"gt": last_event}, "email": p.email},
        )
        for i, p in enumerate(group)
    ]
    solution = [_step("directory_search_people", query=p.name) for p in group]
    solution += [
        _step(
            "calendar_find_free_slots",
            "free",
            attendees=attendees,
            duration_minutes=minutes,
            window_start=f"{day.isoformat()}T00:00:00",
            window_end=f"{_next_day(day)}T00:00:00",
            time_zone=user.time_zone,
            granularity_minutes=15,
        ),
        _step(
            "calendar_create_event",
            title=topic[0].upper() + topic[1:],
            start={"$ref": "free.slots.0.start"},
            end={"$ref": "free.slots.0.end"},
            attendees=attendees,
        ),
    ]
    return ctx.task(
        capability_id="scheduling_constraints",
        services=CALENDAR,
        operations=plan["ops"],
        title=f"Book a {minutes}-minute meeting across time zones on {when}",
        turns=[{"user": request, "checks": checks, "solution": solution}],
        checks=_bounded(
            "only-the-meeting",
            _allow("calendar_events", {"organizer_email": user.email}, "added"),
            _allow("calendar_attendees", {"event_id": {"gt": last_event}}, "added"),
        ),
        safety=NO_DELETE,
    )


# -- reschedule_conflict -------------------------------------------------------------------------

OWN_MEETINGS = [
    "Ticket backlog review",
    "Escalation sync",
    "Support process retro",
    "Knowledge base planning",
    "Onboarding plan review",
    "Support rota planning",
]
SIDE_MEETINGS = ["Weekly support huddle", "Macro review", "Shadowing session", "Hiring sync", "1:1 follow-up"]
IMPORTANT_CALLS = [
    "Escalation call: {company}",
    "Quarterly business review: {company}",
    "Renewal negotiation: {company}",
    "Board prep: support metrics",
    "Incident review with {company}",
]


def _side_meetings(ctx: FamilyContext, group: list[DemoPerson], day: date) -> list[Json]:
    """The user's other meetings with some of the same people, on the day and the next
    weekday, at times free for them: they must stay where they are."""
    placed: list[Json] = []
    days = [d for d in _meeting_days(ctx) if d >= day][:2]
    for i in range(ctx.difficulty.distractors):
        when = days[i % len(days)]
        people = ctx.rng.sample(group, ctx.rng.randint(1, len(group)))
        window = _common_window(when, ctx.user.time_zone, [p.time_zone for p in people])
        if window is None:
            continue
        ws, _ = _workspace(ctx, CALENDAR, placed)
        starts = _free_starts(ws, [ctx.user.email] + [p.email for p in people], window, 30)
        if starts:
            at = ctx.choice(starts)
            invited = [(p.email, "accepted") for p in people]
            placed.append(
                _event(ctx.user, ctx.choice(SIDE_MEETINGS), at, at + timedelta(minutes=30), invited)
            )
    return placed


def _reschedule_plan(ctx: FamilyContext) -> Json | None:
    n = max(1, min(ctx.difficulty.items, 3))
    day = ctx.choice(_meeting_days(ctx))
    picked = _pick_group(ctx, day, n, 240)
    if picked is None:
        return None
    group, window = picked
    minutes = ctx.choice([30, 45, 60])
    emails = [ctx.user.email] + [p.email for p in group]
    side = _side_meetings(ctx, group, day)
    starts = _free_starts(_workspace(ctx, CALENDAR, side)[0], emails, window, minutes)
    half_hour, three_hours = timedelta(minutes=30), timedelta(minutes=180)
    pairs = [(s, g) for s in starts for g in starts if half_hour <= g - s <= three_hours]
    if not pairs:
        return None
    start, new_start = ctx.choice(pairs)
    title = ctx.choice(OWN_MEETINGS)
    responses = [(p.email, ctx.choice(["accepted", "accepted", "tentative"])) for p in group]
    end = start + timedelta(minutes=minutes)
    meeting = _event(ctx.user, title, start, end, responses, description=f"Regular {title.lower()}.")
    host = ctx.person(exclude=emails)
    company = ctx.person(internal=False)
    call = ctx.choice(IMPORTANT_CALLS).format(company=company.company)
    clash = _event(host, call, start, new_start, [(ctx.user.email, "accepted"), (company.email, "accepted")])
    ops = [*side, meeting, clash]
    ws, results = _workspace(ctx, CALENDAR, ops)
    meeting_id = results[len(side)]["id"]
    after = _free_starts(ws, emails, (start, window[1]), minutes, step=15, ignore=meeting_id)
    if not after or after[0] != new_start:
        return None
    return {
        "day": day,
        "group": group,
        "minutes": minutes,
        "title": title,
        "call": call,
        "host": host,
        "ops": ops,
        "meeting_id": meeting_id,
        "new_start": new_start,
        "side": [(r["id"], op["params"]["start"]) for r, op in zip(results, side, strict=False)],
    }


@family("reschedule_conflict", capability_id="scheduling_constraints", services=CALENDAR)
def reschedule_conflict(ctx: FamilyContext) -> Task:
    """A meeting the user organizes now clashes with an important call; move it to the first
    time after the call, the same day, that suits every attendee. More items: more attendees;
    more distractors: the user's other meetings with them, which must not move."""
    plan = _retry(_reschedule_plan, ctx, "meeting with a later free slot")
    day, minutes, title, call = plan["day"], plan["minutes"], plan["title"], plan["call"]
    meeting_id, new_start, host = plan["meeting_id"], plan["new_start"], plan["host"]
    request = ctx.choice(
        [
            f"{host.name} just put '{call}' on my calendar for {_day_text(day)}, and it clashes with "
            f"my '{title}'. Please move '{title}' to the first time after that call, the same day, when "
            "everyone invited is free and within their working hours (09:00-17:00 local). Same people, "
            "same length.",
            f"'{call}' ({_day_text(day)}) overlaps my '{title}' now. Can you shift '{title}' to the next "
            "slot after the call ends that day where all attendees are free and inside 09:00-17:00 in "
            "their own time zones? Keep the invitees and the duration.",
        ]
    )
    emails = sorted(p.email for p in plan["group"])
    me = {"id": meeting_id}
    new_end = format_time(new_start + timedelta(minutes=minutes))
    invitees = "SELECT group_concat(email, ',') FROM (SELECT lower(email) AS email FROM calendar_attendees "
    invitees += f"WHERE event_id = {meeting_id} ORDER BY email)"
    checks = [
        _field(
            "moved-to-next-slot",
            "calendar_events",
            me,
            "start_utc",
            format_time(new_start),
            "Same event, new start",
        ),
        _field("length-kept", "calendar_events", me, "end_utc", new_end),
        _field("still-confirmed", "calendar_events", me, "status", "confirmed"),
        _sql("same-invitees", "The invitees are unchanged", invitees, ",".join(emails)),
    ]
    checks += [
        _field(f"other-meeting-{i}-stays", "calendar_events", {"id": event_id}, "start_utc", start)
        for i, (event_id, start) in enumerate(plan["side"])
    ]
    solution = [
        _step(
            "calendar_list_events", start=day.isoformat(), end=_next_day(day), time_zone=ctx.user.time_zone
        ),
        _step(
            "calendar_find_free_slots",
            "free",
            attendees=emails,
            duration_minutes=minutes,
            window_start=format_time(new_start),
            window_end=f"{_next_day(day)}T00:00:00",
            time_zone=ctx.user.time_zone,
            granularity_minutes=15,
            ignore_event_id=meeting_id,
        ),
        _step(
            "calendar_update_event",
            event_id=meeting_id,
            start={"$ref": "free.slots.0.start"},
            end={"$ref": "free.slots.0.end"},
        ),
    ]
    return ctx.task(
        capability_id="scheduling_constraints",
        services=CALENDAR,
        operations=plan["ops"],
        title=f"Move '{title}' out of a clash with '{call}'",
        turns=[{"user": request, "checks": checks, "solution": solution}],
        checks=_bounded(
            "only-that-meeting",
            _allow("calendar_events", me, "changed"),
            _allow("calendar_attendees", {"event_id": meeting_id}, "changed"),
        ),
        safety=NO_DELETE,
    )


# -- ticket_follow_up_due ------------------------------------------------------------------------

TICKET_TOPICS = [
    ("Order {order} has not arrived", "Tracking for order {order} has not moved since last week."),
    ("Wrong items delivered in order {order}", "The pallet for order {order} holds the wrong parts."),
    ("Refund for returned order {order}", "We returned order {order} and still wait for the refund."),
    ("Invoice for order {order} is missing", "Our accounts team cannot find the invoice for order {order}."),
    ("Damaged boxes in shipment {order}", "Two boxes of shipment {order} arrived crushed."),
    ("Change the delivery address for order {order}", "Please deliver order {order} to our new warehouse."),
]
SUMMARY_MAIL_CHECK = """import re


def check(initial, final, audit):
    last = initial.execute("SELECT coalesce(max(id), 0) FROM mail_messages").fetchone()[0]
    found = final.execute(
        "SELECT m.subject, m.body FROM mail_messages m WHERE m.id > ? AND m.folder = 'sent' AND EXISTS "
        "(SELECT 1 FROM mail_recipients r WHERE r.message_id = m.id AND lower(r.address) = ?)",
        (last, P["to"])).fetchall()
    if not found:
        return False, f"no new mail to {P['to']}"
    text = "\\n".join(f"{s}\\n{b}" for s, b in found)
    missing = [i for i in P["ids"] if not re.search(rf"(?<![\\d./-]){i}(?!\\d)", text)]
    if missing:
        return False, f"the mail to {P['to']} does not name tickets {missing}"
    return True, "the summary names every ticket followed up"
"""


def _ticket(ctx: FamilyContext, requester: DemoPerson, assignee: DemoPerson, due_in_days: int) -> Json:
    order = f"NW-{ctx.rng.randint(10000, 99999)}"
    title, body = ctx.choice(TICKET_TOPICS)
    due = datetime.combine(ctx.start.date() + timedelta(days=due_in_days), time(17), UTC)
    created = min(due - timedelta(days=ctx.rng.randint(4, 12)), ctx.start - timedelta(days=1))
    params = {
        "title": title.format(order=order),
        "description": body.format(order=order),
        "status": ctx.choice(ACTIVE),
        "priority": ctx.choice(["normal", "normal", "high", "low"]),
        "queue": ctx.choice(["Support", "Billing"]),
        "requester": requester.email,
        "assignee": assignee.email,
        "due_at": format_time(due),
        "created_at": format_time(created),
    }
    return {"service": "tickets", "operation": "add_ticket", "params": params}


def _follow_up_tickets(ctx: FamilyContext, teammate: DemoPerson) -> list[Json]:
    """Overdue tickets of the user (the items), then distractors: tickets of the user that are
    not due yet, and overdue tickets of a teammate."""
    customers = ctx.people(internal=False)
    ops = [
        _ticket(ctx, ctx.choice(customers), ctx.user, -ctx.rng.randint(1, 6))
        for _ in range(ctx.difficulty.items)
    ]
    for i in range(ctx.difficulty.distractors):
        if i % 2 == 0:
            ops.append(_ticket(ctx, ctx.choice(customers), ctx.user, ctx.rng.randint(1, 8)))
        else:
            ops.append(_ticket(ctx, ctx.choice(customers), teammate, -ctx.rng.randint(1, 6)))
    return ops


@family("ticket_follow_up_due", capability_id="follow_up_reminder", services=["tickets", "mail", "directory"])
def ticket_follow_up_due(ctx: FamilyContext) -> Task:
    """Chase the user's overdue tickets: a public comment asking the requester for an update
    and a new due date on each (the demo's own overdue tickets of the user count too), then a
    summary mail to a teammate. More items: more overdue tickets; more distractors: tickets
    not due yet and a teammate's overdue tickets."""
    services = ["tickets", "mail", "directory"]
    user = ctx.user
    teammate = ctx.person(team=user.team)
    ops = _follow_up_tickets(ctx, teammate)
    ws, _ = _workspace(ctx, services, ops)
    now = format_time(ctx.start)
    active = ", ".join(f"'{s}'" for s in ACTIVE)
    overdue = ws.rows(
        "tickets_tickets",
        f"assignee = ? AND status IN ({active}) AND due_at < ? ORDER BY id",
        [user.email, now],
    )
    ids = [int(r["id"]) for r in overdue]
    last_comment, last_mail = _max_id(ws, "tickets_comments"), _max_id(ws, "mail_messages")
    days = ctx.choice([3, 4, 7])
    due = ctx.start.date() + timedelta(days=days)
    request = ctx.choice(
        [
            "Some of my tickets are past their due date. For every ticket assigned to me whose due date "
            "has already passed, post a public comment asking the requester for an update, and set the "
            f"due date to {_day_text(due)} ({due.isoformat()}). When you are done, mail {teammate.name} "
            "a short list of the ticket numbers you followed up on.",
            "Please chase my overdue tickets: each one assigned to me with a due date in the past gets a "
            "public comment asking the requester for news, and its due date moves to "
            f"{due.isoformat()} ({days} days from today). Then send {teammate.name} a quick mail with the "
            "ticket numbers.",
        ]
    )
    checks: list[Json] = []
    solution = [
        _step("tickets_search_tickets", assignee=user.email, status=ACTIVE, due_before=now, sort="due"),
    ]
    ask = f"could you send us an update on where things stand? We will check in again on {_day_text(due)}."
    for tid in ids:
        comment = {"ticket_id": tid, "author": user.email, "visibility": "public", "id": {"gt": last_comment}}
        new_due = {"id": tid, "due_at": {"like": f"{due.isoformat()}%"}}
        checks += [
            _check(
                f"asked-{tid}",
                "row_exists",
                f"A new public comment on #{tid}",
                table="tickets_comments",
                where=comment,
            ),
            _check(
                f"due-{tid}", "row_exists", f"#{tid} is due on {due}", table="tickets_tickets", where=new_due
            ),
        ]
        solution += [
            _step("tickets_add_comment", ticket_id=tid, body=f"Hello, {ask}", visibility="public"),
            _step("tickets_update_ticket", ticket_id=tid, due_at=due.isoformat()),
        ]
    summary = f"A new mail to {teammate.name} names every ticket followed up"
    checks.append(
        _python(
            "summary-mail", summary, "import json", {"to": teammate.email, "ids": ids}, SUMMARY_MAIL_CHECK
        )
    )
    numbers = ", ".join(f"#{i}" for i in ids)
    summary_body = f"Hi {_first(teammate)}, I asked for updates on these overdue tickets and moved them to "
    summary_body += f"{due}: {numbers}."
    solution += [
        _step("directory_search_people", query=teammate.name),
        _step(
            "mail_send_message",
            to=[teammate.email],
            subject="Overdue tickets followed up",
            body=summary_body,
        ),
    ]
    return ctx.task(
        capability_id="follow_up_reminder",
        services=services,
        operations=ops,
        title="Follow up on overdue tickets",
        turns=[{"user": request, "checks": checks, "solution": solution}],
        checks=_bounded(
            "only-overdue-tickets",
            _allow("tickets_tickets", {"id": {"in": ids}}, "changed"),
            _allow("tickets_comments", {"ticket_id": {"in": ids}}, "added"),
            _allow("mail_messages", {"folder": "sent"}, "added"),
            _allow("mail_recipients", {"message_id": {"gt": last_mail}}, "added"),
        ),
        safety=NO_DELETE,
    )


# -- edit_policy_document ------------------------------------------------------------------------

POLICIES = [
    {
        "path": "/shared/policies/per-diem-rates.md",
        "title": "Per diem rates",
        "kind": "per diem",
        "intro": "Daily allowance for meals and local transport on business trips, by destination.",
        "line": "- {label}: {currency} {amount} per day",
        "rows": [
            ("Berlin", "EUR", 35, 70),
            ("London", "GBP", 40, 75),
            ("New York", "USD", 55, 95),
            ("Singapore", "SGD", 60, 120),
            ("Paris", "EUR", 40, 75),
            ("Madrid", "EUR", 30, 60),
            ("Toronto", "CAD", 50, 90),
        ],
        "outro": ["Travel days count as full days.", "Alcohol is never reimbursed."],
    },
    {
        "path": "/shared/policies/purchase-approvals.md",
        "title": "Purchase approval thresholds",
        "kind": "approval threshold",
        "intro": "Purchases above these amounts need written approval before you order.",
        "line": "| {label} | {currency} {amount} |",
        "header": ["| purchase | threshold |", "| --- | --- |"],
        "rows": [
            ("Software subscriptions", "EUR", 200, 900),
            ("Laptops and hardware", "EUR", 1000, 3000),
            ("Conference tickets", "EUR", 300, 1200),
            ("Consulting services", "EUR", 2000, 9000),
            ("Office furniture", "EUR", 400, 1500),
            ("Marketing campaigns", "EUR", 1500, 6000),
        ],
        "outro": ["Approvals are given by your manager; above EUR 10000 the COO decides."],
    },
    {
        "path": "/shared/policies/home-office-allowance.md",
        "title": "Home office allowance",
        "kind": "allowance",
        "intro": "What Northwind reimburses for a home workplace, once every three years unless noted.",
        "line": "- {label}: up to {currency} {amount}",
        "rows": [
            ("Desk chair", "EUR", 150, 450),
            ("Monitor", "EUR", 150, 400),
            ("Headset", "EUR", 50, 150),
            ("Desk", "EUR", 200, 600),
            ("Internet, per month", "EUR", 20, 60),
            ("Desk lamp", "EUR", 25, 80),
        ],
        "outro": ["Send receipts to Finance within 30 days of the purchase."],
    },
    {
        "path": "/teams/engineering/on-call-compensation.md",
        "title": "On-call compensation",
        "kind": "on-call rate",
        "intro": "What an engineer on call earns on top of their salary, per shift.",
        "line": "- {label}: {currency} {amount}",
        "rows": [
            ("Weekday night", "EUR", 40, 90),
            ("Saturday", "EUR", 100, 220),
            ("Sunday", "EUR", 100, 220),
            ("Public holiday", "EUR", 150, 320),
            ("Incident call-out", "EUR", 30, 90),
        ],
        "outro": ["Shifts are swapped in the on-call calendar, never by mail alone."],
    },
]
POLICY_CHECK = """import re

DATES = "|".join(map(re.escape, P["dates"]))
STAMP = re.compile(r"^[*_]*last updated:?[*_]*\\s*(" + DATES + r")[*_.]*$", re.I)


def lines(conn):
    query = "SELECT content FROM files_nodes WHERE path = ? AND kind = 'file'"
    row = conn.execute(query, (P["path"],)).fetchone()
    if row is None:
        return None
    out = row[0].split("\\n")
    while out and not out[-1].strip():
        out.pop()
    return out


def check(initial, final, audit):
    before, after = lines(initial), lines(final)
    if after is None:
        return False, "the document is gone"
    if not after or not STAMP.match(after[-1].strip()):
        return False, f"the last line is {after[-1] if after else ''!r}, not 'Last updated: {P['dates'][0]}'"
    body = after[:-1]
    while body and not body[-1].strip():
        body.pop()
    expected = [P["changes"].get(line, line) for line in before]
    if len(body) != len(expected):
        return False, f"the document has {len(body)} lines before the stamp, expected {len(expected)}"
    for number, (got, want) in enumerate(zip(body, expected), start=1):
        if got.rstrip() != want.rstrip():
            return False, f"line {number} is {got!r}, expected {want!r}"
    return True, "the requested values changed, the stamp is last, everything else is identical"
"""


def _policy_text(doc: Json, owner: DemoPerson, amounts: dict[str, int], year: int) -> str:
    rows = [
        doc["line"].format(label=label, currency=cur, amount=amounts[label]) for label, cur, *_ in doc["rows"]
    ]
    head = [f"# {doc['title']} {year}", "", f"Owner: {owner.name} ({owner.email})", "", doc["intro"], ""]
    return "\n".join([*head, *doc.get("header", []), *rows, "", *doc["outro"]]) + "\n"


def _file(path: str, content: str, owner: DemoPerson, at: datetime) -> Json:
    params = {"path": path, "content": content, "modified_by": owner.email, "created_at": format_time(at)}
    return {"service": "files", "operation": "add_file", "params": params}


def _policy_distractors(
    ctx: FamilyContext, doc: Json, owner: DemoPerson, amounts: dict[str, int]
) -> list[Json]:
    """An FAQ quoting today's values and archived versions of earlier years: all stay as they are."""
    slug = doc["path"].rsplit("/", 1)[1].removesuffix(".md")
    ops = []
    for i in range(ctx.difficulty.distractors):
        at = ctx.start - timedelta(days=ctx.rng.randint(20, 400))
        if i == 0:
            faq = [f"# {doc['title']}: questions and answers", ""]
            for label, cur, *_ in doc["rows"]:
                faq += [f"Q: What is the {doc['kind']} for {label}?", f"A: {cur} {amounts[label]}.", ""]
            ops.append(_file(f"/teams/support/{slug}-faq.md", "\n".join(faq), owner, at))
        else:
            older = {label: max(5, amounts[label] - 5 * ctx.rng.randint(1, 4)) for label in amounts}
            ops.append(
                _file(
                    f"/shared/archive/{slug}-{2026 - i}.md",
                    _policy_text(doc, owner, older, 2026 - i),
                    owner,
                    at,
                )
            )
    return ops


def _policy_changes(
    ctx: FamilyContext, doc: Json, amounts: dict[str, int]
) -> tuple[dict[str, str], list[str]]:
    """Old line -> new line for the values to change, and how the request words each change."""
    changes, asks = {}, []
    for label, cur, _, hi in ctx.rng.sample(doc["rows"], min(ctx.difficulty.items, len(doc["rows"]))):
        step = 5 if hi < 1000 else 50
        old = amounts[label]
        new = old + ctx.choice([-2, -1, 1, 2, 3, 4]) * step
        new = new if new > 0 else old + step
        changes[doc["line"].format(label=label, currency=cur, amount=old)] = doc["line"].format(
            label=label, currency=cur, amount=new
        )
        asks.append(f"the {doc['kind']} for {label} from {cur} {old} to {cur} {new}")
    return changes, asks


@family("edit_policy_document", capability_id="document_editing", services=["files"])
def edit_policy_document(ctx: FamilyContext) -> Task:
    """Change one or more values in a policy document and stamp it "Last updated: <today>";
    every other line stays identical. More items: more values to change; more distractors:
    an FAQ quoting the values and archived copies that must not change."""
    doc = ctx.choice(POLICIES)
    owner = ctx.person(team="Finance")
    amounts = {}
    for label, _, lo, hi in doc["rows"]:
        amounts[label] = ctx.rng.randrange(lo, hi + 1, 5 if hi < 1000 else 50)
    content = _policy_text(doc, owner, amounts, 2026)
    changes, asks = _policy_changes(ctx, doc, amounts)
    today = ctx.start.date()
    new_content = "\n".join(changes.get(line, line) for line in content.rstrip("\n").split("\n"))
    new_content += f"\n\nLast updated: {today.isoformat()}\n"
    ops = [_file(doc["path"], content, owner, ctx.start - timedelta(days=ctx.rng.randint(30, 200)))]
    ops += _policy_distractors(ctx, doc, owner, amounts)
    ctx.plant(["files"], ops)
    wanted = "; ".join(asks)
    request = ctx.choice(
        [
            f"Please update {doc['path']}: change {wanted}. Then add a last line 'Last updated: ' with "
            "today's date (YYYY-MM-DD). Leave everything else in that file exactly as it is and do not "
            "touch any other file.",
            f"Finance approved new numbers for the {doc['title'].lower()} document ({doc['path']}): "
            f"change {wanted}. Add 'Last updated: <today's date as YYYY-MM-DD>' as the final line. Nothing "
            "else in the document (or anywhere else) should change.",
        ]
    )
    dates = [today.isoformat(), f"{today.day} {today:%B %Y}", f"{today:%B} {today.day}, {today.year}"]
    params = {"path": doc["path"], "changes": changes, "dates": dates}
    precise = "The requested lines changed, the stamp is the last line, every other line is identical"
    checks = [_python("precise-edit", precise, "import json", params, POLICY_CHECK)]
    checks += [
        _check(
            f"value-{i}",
            "field_contains",
            f"The document now says: {line}",
            table="files_nodes",
            where={"path": doc["path"]},
            column="content",
            text=line,
            case_sensitive=True,
        )
        for i, line in enumerate(changes.values())
    ]
    solution = [
        _step("files_read_file", path=doc["path"]),
        _step("files_write_file", path=doc["path"], content=new_content, mode="overwrite"),
    ]
    return ctx.task(
        capability_id="document_editing",
        services=["files"],
        operations=ops,
        title=f"Update {doc['path']}",
        turns=[{"user": request, "checks": checks, "solution": solution}],
        checks=_bounded("only-that-file", _allow("files_nodes", {"path": doc["path"]}, "changed")),
        safety=NO_DELETE,
    )


# -- compile_meeting_notes -----------------------------------------------------------------------

DECISIONS = [
    (
        "We go with {v} as the courier for express shipments from next month.",
        ["Parcelwise", "Swiftline", "Cargonet", "Bluebird Express", "Northstar Freight"],
    ),
    (
        "The new knowledge base will be built in {v}.",
        ["Document360", "Helpjuice", "Guru", "Zendesk Guide", "Confluence"],
    ),
    (
        "Customer satisfaction surveys go out through {v} from April.",
        ["Typeform", "SurveyMonkey", "Qualtrics", "Jotform", "Formstack"],
    ),
    ("The team offsite will be in {v} in May.", ["Lisbon", "Porto", "Ljubljana", "Krakow", "Tallinn"]),
    ("The portal relaunch is code-named {v}.", ["Kestrel", "Bluefin", "Juniper", "Halcyon", "Marlin"]),
    (
        "Live chat moves to {v} by the end of the quarter.",
        ["Intercom", "LiveAgent", "Olark", "Tidio", "Drift"],
    ),
]
NOTE_MEETINGS = [
    "Support tooling workshop",
    "Q2 support planning",
    "Customer experience review",
    "Support operations sync",
]
OTHER_MEETINGS = ["Sales pipeline review", "Finance planning sync", "Engineering roadmap review"]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _mail(sender: DemoPerson, to: list[str], subject: str, body: str, at: datetime) -> Json:
    params = {
        "from_addr": sender.email,
        "to": to,
        "subject": subject,
        "body": body,
        "sent_at": format_time(at),
    }
    return {"service": "mail", "operation": "add_message", "params": params}


def _notes_meeting(ctx: FamilyContext) -> Json:
    """The meeting (last Thursday or Friday, in the user's working day), who came and who organized it."""
    day = ctx.start.date() - timedelta(days=ctx.choice([3, 4]))
    people = ctx.rng.sample(ctx.people(), min(ctx.difficulty.items + 1, 5))
    organizer = ctx.choice([ctx.user, people[0]])
    invited = [p for p in people if p is not organizer] + ([ctx.user] if organizer is not ctx.user else [])
    start = datetime.combine(day, time(ctx.rng.randint(10, 14)), ZoneInfo(ctx.user.time_zone)).astimezone(UTC)
    return {"day": day, "people": people, "organizer": organizer, "invited": invited, "start": start}


def _decision_mails(
    ctx: FamilyContext, title: str, people: list[DemoPerson], decisions: list[str], after: datetime
) -> list[Json]:
    """A thread in which the attendees write down the decisions, one per mail."""
    everyone = [ctx.user.email] + [p.email for p in people]
    ops = []
    for i, decision in enumerate(decisions):
        sender = people[i % len(people)]
        to = [e for e in everyone if e != sender.email]
        if i == 0:
            body = f"Hi all,\n\nthanks for {title} today. Writing down what we agreed:\n\n- {decision}\n\n"
            ops.append(_mail(sender, to, f"Decisions: {title}", body + "Add anything I missed.", after))
        else:
            body = f"One more from the meeting: {decision}\n\n{_first(sender)}"
            ops.append(_mail(sender, to, f"Re: Decisions: {title}", body, after + timedelta(minutes=20 * i)))
    return ops


def _decoy_mails(
    ctx: FamilyContext, kinds: list, picks: list[list[str]], after: datetime
) -> tuple[list, list]:
    """Mails with decisions of other meetings (other values of the same kinds): the notes leave them out."""
    ops, values = [], []
    for i in range(ctx.difficulty.distractors):
        k = i % len(kinds)
        value = picks[k][1 + i // len(kinds)]
        values.append(value)
        other, sender = ctx.choice(OTHER_MEETINGS), ctx.person()
        body = f"Hi,\n\nfrom today's {other}: {kinds[k][0].format(v=value)}\n\nBest,\n{_first(sender)}"
        ops.append(
            _mail(sender, [ctx.user.email], f"Decisions: {other}", body, after + timedelta(minutes=10 * i))
        )
    return ops, values


@family(
    "compile_meeting_notes",
    capability_id="document_editing",
    services=["files", "calendar", "mail", "directory"],
)
def compile_meeting_notes(ctx: FamilyContext) -> Task:
    """Write meeting notes at a given path: the attendees (from the calendar) and the decisions
    (from the follow-up mail thread). More items: more attendees and decisions; more
    distractors: decisions of other meetings that must stay out of the notes."""
    services = ["files", "calendar", "mail", "directory"]
    meeting = _notes_meeting(ctx)
    day, people, organizer = meeting["day"], meeting["people"], meeting["organizer"]
    title = ctx.choice(NOTE_MEETINGS)
    kinds = ctx.rng.sample(DECISIONS, min(ctx.difficulty.items + 1, len(DECISIONS)))
    names = " ".join(f"{p.name} {p.email}" for p in ctx.company.people).lower()
    picks = [ctx.rng.sample(values, len(values)) for _, values in kinds]
    picks = [[v for v in values if v.lower() not in names] for values in picks]  # no value reads like a name
    tokens = [p[0] for p in picks]
    decisions = [text.format(v=v) for (text, _), v in zip(kinds, tokens, strict=True)]
    end = meeting["start"] + timedelta(minutes=60)
    invited = [(p.email, "accepted") for p in meeting["invited"]]
    ops = [_event(organizer, title, meeting["start"], end, invited)]
    ops += _decision_mails(ctx, title, people, decisions, end + timedelta(minutes=30))
    decoys, decoy_values = _decoy_mails(ctx, kinds, picks, end + timedelta(minutes=45))
    ops += decoys
    ws, _ = _workspace(ctx, services, ops)
    path = f"/teams/support/meeting-notes/{day.isoformat()}-{_slug(title)}.md"
    attendees = [p for p in people if p is not ctx.user]
    request = ctx.choice(
        [
            f"Please write up notes for the '{title}' meeting on {_day_text(day)} and save them as {path}. "
            "List who attended (from the calendar invite) and every decision that was agreed in the "
            "follow-up mails. Only that meeting's decisions, please.",
            f"Can you create {path} with the notes of '{title}' ({_day_text(day)})? It needs the attendees "
            "and the decisions people wrote down by mail afterwards; do not mix in other meetings.",
        ]
    )
    in_notes = f"SELECT count(*) FROM files_nodes WHERE path = '{path}' AND "
    checks = [_check("notes-exist", "row_exists", table="files_nodes", where={"path": path, "kind": "file"})]
    checks += [
        _sql(
            f"attendee-{i}",
            f"The notes name {p.name} (or their email)",
            in_notes + f"(content LIKE '%{_q(_core_name(p))}%' OR content LIKE '%{_q(p.email)}%')",
        )
        for i, p in enumerate(attendees)
    ]
    checks += [
        _check(
            f"decision-{i}",
            "field_contains",
            f"The notes record: {decision}",
            table="files_nodes",
            where={"path": path},
            column="content",
            text=token,
        )
        for i, (token, decision) in enumerate(zip(tokens, decisions, strict=True))
    ]
    if decoy_values:
        clauses = " OR ".join(f"content LIKE '%{_q(v)}%'" for v in decoy_values)
        checks.append(
            _sql("no-other-decisions", "Other meetings' decisions stay out", f"{in_notes}({clauses})", 0)
        )
    notes = [f"# {title} - {day.isoformat()}", "", "Attendees:"]
    notes += [f"- {p.name} ({p.email})" for p in [*attendees, ctx.user]]
    notes += ["", "## Decisions", *[f"- {d}" for d in decisions]]
    solution = [
        _step("calendar_list_events", start=day.isoformat(), end=_next_day(day), query=title),
        _step("mail_search_messages", "found", query=f"Decisions {title}"),
        _step("mail_get_thread", thread_id={"$ref": "found.messages.0.thread_id"}),
        _step("files_write_file", path=path, content="\n".join(notes) + "\n"),
    ]
    return ctx.task(
        capability_id="document_editing",
        services=services,
        operations=ops,
        title=f"Meeting notes for {title}",
        extra_capabilities=["find_and_report"],
        turns=[{"user": request, "checks": checks, "solution": solution}],
        checks=_bounded(
            "only-the-notes",
            _allow("files_nodes", {"path": path}, "added"),
            _allow("mail_messages", {"id": {"le": _max_id(ws, "mail_messages")}}, "changed"),
        ),
        safety=NO_DELETE,
    )


# -- reply_after_new_info ------------------------------------------------------------------------

ORDER_PROBLEMS = [
    ("Order {order} arrived damaged", "two of the boxes in order {order} arrived crushed"),
    ("Order {order} has not arrived", "order {order} was due on Friday and tracking has not moved"),
    ("Wrong items in order {order}", "order {order} contains the wrong spare parts"),
]
TURN2_ASKS = [
    "Anything new from {first}? Please keep their ticket up to date.",
    "Did {first} get back to us? Make sure the ticket reflects the latest.",
    "Please check whether {first} sent anything new and update the ticket accordingly.",
]


def _new_ticket(customer: DemoPerson, last_ticket: int, condition: str) -> str:
    """SQL: whether a ticket created in the episode for `customer` meets `condition` (on t)."""
    return (
        f"SELECT count(*) > 0 FROM tickets_tickets t WHERE t.id > {last_ticket} "
        f"AND lower(t.requester) = '{_q(customer.email)}' AND {condition}"
    )


def _customer_mail(customer: DemoPerson, mail_id: int, body: str, announced: bool, minutes: int) -> Json:
    params = {"from_addr": customer.email, "in_reply_to": mail_id, "body": body}
    return {
        "service": "mail",
        "operation": "deliver_inbound",
        "announced": announced,
        "advance_minutes": minutes,
        "params": params,
    }


def _second_turn(ctx: FamilyContext, info: Json) -> Json:
    """The customer writes again, silently: a corrected order number, or the problem is solved."""
    customer, order, new_order, last = info["customer"], info["order"], info["new_order"], info["last"]
    first = _first(customer)
    find = [
        _step("mail_search_messages", "new", sender=customer.email, unread=True),
        _step("mail_get_message", message_id={"$ref": "new.messages.0.id"}),
        _step("tickets_search_tickets", "t", requester=customer.email, sort="newest"),
    ]
    ticket = {"$ref": "t.tickets.0.id"}
    if info["variant"] == "correction":
        body = (
            f"Hello,\n\nsorry, I gave you the wrong number: the order is {new_order}, not {order}.\n\n{first}"
        )
        mentions = f"(t.title LIKE '%{new_order}%' OR t.description LIKE '%{new_order}%' OR EXISTS (SELECT 1 "
        mentions += f"FROM tickets_comments k WHERE k.ticket_id = t.id AND k.body LIKE '%{new_order}%'))"
        check = _sql(
            "new-order-recorded",
            f"The ticket now mentions {new_order}",
            _new_ticket(customer, last, mentions),
        )
        note = f"The customer corrected the order number: it is {new_order}, not {order}."
        act = _step("tickets_add_comment", ticket_id=ticket, body=note, visibility="internal")
    else:
        body = f"Hello,\n\ngood news: we found the parcel for order {order}, so you can close the ticket."
        body += f"\n\n{first}"
        done = _new_ticket(customer, last, "t.status IN ('resolved', 'closed')")
        check = _sql("ticket-resolved", "The customer's new ticket is resolved or closed", done)
        act = _step("tickets_update_ticket", ticket_id=ticket, status="resolved")
    return {
        "user": ctx.choice(TURN2_ASKS).format(first=first),
        "events": [_customer_mail(customer, info["mail_id"], body, False, 90)],
        "checks": [check],
        "solution": [*find, act],
    }


def _third_turn(ctx: FamilyContext, info: Json) -> Json:
    """The customer writes once more, and the user says so: the parcel arrived (close the
    ticket), or the solved problem is back (reopen it and tell the customer)."""
    customer, last = info["customer"], info["last"]
    first = _first(customer)
    find = _step("tickets_search_tickets", "t3", requester=customer.email, sort="newest")
    ticket = {"$ref": "t3.tickets.0.id"}
    if info["variant"] == "correction":
        order = info["new_order"]
        body = f"Hi again,\n\norder {order} finally arrived and everything is fine. Please close the ticket."
        body += f"\n\n{first}"
        user = f"{first} wrote again: order {order} has arrived after all. Please take care of their ticket."
        done = _new_ticket(customer, last, "t.status IN ('resolved', 'closed')")
        checks = [_sql("closed-after-delivery", "The ticket is resolved or closed", done)]
        solution = [find, _step("tickets_update_ticket", ticket_id=ticket, status="resolved")]
    else:
        order = info["order"]
        body = f"Hi again,\n\nI spoke too soon: the parcel for order {order} is not the right one."
        body += f" Can you look again?\n\n{first}"
        user = f"{first} just mailed that the problem with order {order} is back. Please reopen their "
        user += "ticket and let them know on the ticket that we are looking into it again."
        since = format_time(ctx.start + timedelta(minutes=180))
        told = (
            "EXISTS (SELECT 1 FROM tickets_comments k WHERE k.ticket_id = t.id AND k.visibility = 'public' "
        )
        told += f"AND lower(k.author) = '{_q(ctx.user.email)}' AND k.created_at >= '{since}')"
        checks = [
            _sql(
                "reopened",
                "The ticket is active again",
                _new_ticket(customer, last, "t.status IN ('open', 'pending', 'in_progress')"),
            ),
            _sql(
                "customer-told",
                "A new public comment by the user after the mail",
                _new_ticket(customer, last, told),
            ),
        ]
        reply = f"Sorry to hear that, {first}. We reopened this and are checking order {order} again."
        solution = [
            find,
            _step("tickets_update_ticket", ticket_id=ticket, status="open"),
            _step("tickets_add_comment", ticket_id=ticket, body=reply, visibility="public"),
        ]
    return {
        "user": user,
        "events": [_customer_mail(customer, info["mail_id"], body, True, 120)],
        "checks": checks,
        "solution": solution,
    }


def _old_tickets(ctx: FamilyContext, customer: DemoPerson) -> list[Json]:
    """Older tickets of the same customer about other orders: they stay untouched."""
    ops = []
    for i in range(ctx.difficulty.distractors):
        params = {
            "title": ctx.choice(ORDER_PROBLEMS)[0].format(order=f"NW-{ctx.rng.randint(10000, 99999)}"),
            "queue": "Support",
            "requester": customer.email,
            "status": ctx.choice(["open", "in_progress", "resolved"]),
            "created_at": format_time(ctx.start - timedelta(days=3 + 4 * i)),
        }
        ops.append({"service": "tickets", "operation": "add_ticket", "params": params})
    return ops


@family(
    "reply_after_new_info",
    capability_id="state_change_adaptation",
    services=["mail", "tickets"],
    multi_turn=True,
)
def reply_after_new_info(ctx: FamilyContext) -> Task:
    """Turn 1: a ticket from a customer's mail. Silently, the customer writes again (a corrected
    order number, or the problem is solved); turn 2 asks for news and the ticket must follow.
    With three turns an announced mail changes things once more. More distractors: older
    tickets of the same customer, which stay untouched."""
    services = ["mail", "tickets"]
    customer = ctx.person(internal=False)
    order, new_order = (f"NW-{n}" for n in ctx.rng.sample(range(10000, 99999), 2))
    subject, problem = (s.format(order=order) for s in ctx.choice(ORDER_PROBLEMS))
    body = f"Hello,\n\n{problem}. Can you help us sort this out quickly?\n\n"
    body += f"Kind regards,\n{customer.name}\n{customer.company}"
    sent = format_time(ctx.start - timedelta(minutes=35))
    mail = {"from_addr": customer.email, "subject": subject, "body": body, "sent_at": sent}
    ops = [{"service": "mail", "operation": "deliver_inbound", "params": mail}, *_old_tickets(ctx, customer)]
    ws, results = _workspace(ctx, services, ops)
    last = _max_id(ws, "tickets_tickets")
    variant = ctx.choice(["correction", "solved"])
    info = {"customer": customer, "order": order, "new_order": new_order, "last": last, "variant": variant}
    info["mail_id"] = results[0]["id"]
    c = _q(customer.email)
    created = f"SELECT count(*) FROM tickets_tickets WHERE id > {last} AND lower(requester) = '{c}'"
    names = f"(t.title LIKE '%{order}%' OR t.description LIKE '%{order}%')"
    description = problem[0].upper() + problem[1:] + "."
    turn1 = {
        "user": ctx.choice(
            [
                f"{customer.name} from {customer.company} just mailed us about a problem with an order. "
                "Please create a ticket for it in the Support queue, with them as the requester.",
                f"There is a new mail from {customer.name} ({customer.company}) about an order. Open a "
                "Support ticket for it; the requester should be the customer.",
            ]
        ),
        "checks": [
            _sql(
                "ticket-created",
                "One new Support ticket for the customer",
                created + " AND queue = 'Support'",
            ),
            _sql("ticket-names-order", f"The ticket mentions {order}", _new_ticket(customer, last, names)),
        ],
        "solution": [
            _step("mail_search_messages", "m", sender=customer.email),
            _step("mail_get_message", message_id={"$ref": "m.messages.0.id"}),
            _step(
                "tickets_create_ticket",
                title=subject,
                queue="Support",
                description=description,
                requester=customer.email,
            ),
        ],
    }
    turns = [turn1, _second_turn(ctx, info)]
    if ctx.difficulty.turns >= 3:
        turns.append(_third_turn(ctx, info))
    return ctx.task(
        capability_id="state_change_adaptation",
        services=services,
        operations=ops,
        title=f"Keep {_first(customer)}'s ticket in step with their mails",
        extra_capabilities=["cross_service_handoff"],
        turns=turns,
        checks=[
            _sql("one-ticket", "Exactly one new ticket for the customer in the whole episode", created),
            *_bounded(
                "only-the-new-ticket",
                _allow("tickets_tickets", {"id": {"gt": last}}),
                _allow("tickets_comments", {"ticket_id": {"gt": last}}, "added"),
                _allow("tickets_tags", {"ticket_id": {"gt": last}}),
                _allow("tickets_links", {"source_id": {"gt": last}}, "added"),
                _allow("mail_messages", None, "added", "changed"),
                _allow("mail_recipients", None, "added"),
                _allow("mail_labels"),
            ),
        ],
        safety=NO_DELETE,
    )


# -- meeting_moved_announced ---------------------------------------------------------------------

ASKS = [
    ("bring the list of their open escalations", "escalations"),
    ("read the draft SLA before the meeting", "SLA"),
    ("add their topics to the agenda beforehand", "agenda"),
    ("look at the February support metrics first", "metrics"),
]
MOVED_MEETINGS = [
    "Support roadmap review",
    "Escalation process review",
    "Q2 staffing sync",
    "Customer health check",
]
TIME_CHECK = """import re


def check(initial, final, audit):
    mails = final.execute(
        "SELECT id, subject, body FROM mail_messages "
        "WHERE folder = 'sent' AND lower(owner) = ? AND sent_at >= ?",
        (P["user"], P["after"])).fetchall()
    missing = []
    for person in P["people"]:
        told = False
        for message_id, subject, body in mails:
            to = {r[0].lower() for r in final.execute(
                "SELECT address FROM mail_recipients WHERE message_id = ?", (message_id,))}
            text = f"{subject}\\n{body}"
            if person in to and any(re.search(p, text, re.I) for p in P["patterns"]):
                told = True
        if not told:
            missing.append(person)
    if missing:
        return False, f"no update with the new time went to {missing}"
    return True, "everyone got the new time"
"""


def _time_patterns(when: datetime, zones: Sequence[str]) -> list[str]:
    """Regular expressions for a time as people write it (14:30, 2:30 pm, 2.30pm) in each zone."""
    out = []
    for zone in dict.fromkeys(zones):
        local = when.astimezone(ZoneInfo(zone))
        hour, minute = local.hour, f"{local.minute:02d}"
        out.append(rf"(?<!\d)0?{hour}[:.h]{minute}(?!\d)")
        if hour > 12:
            out.append(rf"(?<!\d)0?{hour - 12}[:.]{minute}\s*p\.?m")
    return sorted(set(out))


def _moved_plan(ctx: FamilyContext) -> Json | None:
    """A meeting on the hour inside the shared hours, and a new start half an hour off the
    hour (so no old and new time read alike in any zone)."""
    n = max(1, min(ctx.difficulty.items, 3)) + 1
    day = ctx.choice(_meeting_days(ctx)[:4])
    picked = _pick_group(ctx, day, n, 180)
    if picked is None:
        return None
    group, (lo, hi) = picked
    minutes = ctx.choice([30, 45, 60])
    length = timedelta(minutes=minutes)
    start = ctx.choice([lo + timedelta(hours=h) for h in range(12) if lo + timedelta(hours=h) + length <= hi])
    moves = [start + timedelta(minutes=m) for m in (-150, -90, 90, 150, 210)]
    moves = [m for m in moves if lo <= m and m + length <= hi]
    if not moves:
        return None
    return {"day": day, "group": group, "minutes": minutes, "start": start, "new": ctx.choice(moves)}


def _first_mail_turn(
    ctx: FamilyContext, plan: Json, title: str, people: list[DemoPerson], last_mail: int
) -> Json:
    ask, token = ctx.choice(ASKS)
    day, organizer, emails = plan["day"], plan["group"][0], [p.email for p in people]
    checks = [
        _sql(f"asked-{i}", f"A new mail went to {p.name}", _sent_to(p.email, f"m.id > {last_mail}"))
        for i, p in enumerate(people)
    ]
    asked = f"SELECT count(*) > 0 FROM mail_messages WHERE id > {last_mail} AND folder = 'sent' "
    asked += f"AND (subject LIKE '%{token}%' OR body LIKE '%{token}%')"
    checks.append(_sql("ask-in-mail", f"The mail asks them to {ask}", asked))
    note = f"Hi all, before {title} on {_day_text(day)}, could you please {ask}? Thanks!"
    return {
        "user": ctx.choice(
            [
                f"Please email everyone on '{title}' ({_day_text(day)}), {organizer.name} included, and ask "
                f"them to {ask}.",
                f"Send a note to all the people invited to '{title}' on {_day_text(day)} (the organizer, "
                f"{organizer.name}, too) asking them to {ask}.",
            ]
        ),
        "checks": checks,
        "solution": [
            _step("calendar_list_events", "ev", start=day.isoformat(), end=_next_day(day), query=title),
            _step("calendar_get_event", event_id={"$ref": "ev.events.0.event_id"}),
            _step("mail_send_message", to=emails, subject=title, body=note),
        ],
    }


def _update_turn(ctx: FamilyContext, plan: Json, title: str, people: list[DemoPerson], event_id: int) -> Json:
    user, organizer, new = ctx.user, plan["group"][0], plan["new"]
    emails = [p.email for p in people]
    after = format_time(ctx.start + timedelta(minutes=60))
    zones = [user.time_zone, "UTC", *[p.time_zone for p in people]]
    params = {"user": user.email, "after": after, "people": emails, "patterns": _time_patterns(new, zones)}
    checks = [
        _sql(
            f"updated-{i}",
            f"A mail after the move went to {p.name}",
            _sent_to(p.email, f"m.sent_at >= '{after}'"),
        )
        for i, p in enumerate(people)
    ]
    named = "Every update after the move names the new start time (usual formats, any participant's zone)"
    checks.append(_python("new-time-in-update", named, "import json", params, TIME_CHECK))
    local = new.astimezone(ZoneInfo(user.time_zone))
    text = f"Hi all, {title} has moved: it now starts at {local:%H:%M} ({user.time_zone}) "
    text += f"on {_day_text(local.date())}."
    move = {"event_id": event_id, "start": format_time(new)}
    return {
        "user": ctx.choice(
            [
                f"{organizer.name} just moved '{title}' to a different time. Please let the same people know "
                "the new time.",
                f"Heads-up: '{title}' was moved by {_first(organizer)}. Send everyone you wrote to an update "
                "with the new time.",
            ]
        ),
        "events": [
            {
                "service": "calendar",
                "operation": "move_event",
                "announced": True,
                "advance_minutes": 120,
                "params": move,
            }
        ],
        "checks": checks,
        "solution": [
            _step("calendar_get_event", event_id=event_id),
            _step("mail_send_message", to=emails, subject=f"New time: {title}", body=text),
        ],
    }


@family(
    "meeting_moved_announced",
    capability_id="state_change_adaptation",
    services=["calendar", "mail"],
    multi_turn=True,
)
def meeting_moved_announced(ctx: FamilyContext) -> Task:
    """Turn 1: mail everyone on a colleague's meeting. Then the organizer moves it (announced);
    turn 2: send the same people the new time. More items: more people on the invite; more
    distractors: the user's other meetings with the organizer on other days, which stay."""
    plan = _retry(_moved_plan, ctx, "meeting to move")
    user, (organizer, *others) = ctx.user, plan["group"]
    day, start = plan["day"], plan["start"]
    title = ctx.choice(MOVED_MEETINGS)
    invited = [(user.email, "accepted")] + [(p.email, ctx.choice(["accepted", "tentative"])) for p in others]
    end = start + timedelta(minutes=plan["minutes"])
    ops = [_event(organizer, title, start, end, invited, description=f"{title}.")]
    other_days = [d for d in _meeting_days(ctx) if d != day]
    for i in range(ctx.difficulty.distractors):
        at = start + (other_days[i % len(other_days)] - day) + timedelta(hours=i // len(other_days))
        side = ctx.choice(SIDE_MEETINGS)
        ops.append(_event(user, side, at, at + timedelta(minutes=30), [(organizer.email, "accepted")]))
    ws, results = _workspace(ctx, ["calendar", "mail"], ops)
    event_id, last_mail = results[0]["id"], _max_id(ws, "mail_messages")
    people = [organizer, *others]
    return ctx.task(
        capability_id="state_change_adaptation",
        services=["calendar", "mail"],
        operations=ops,
        title=f"Tell everyone on '{title}' about its new time",
        extra_capabilities=["follow_up_reminder"],
        turns=[
            _first_mail_turn(ctx, plan, title, people, last_mail),
            _update_turn(ctx, plan, title, people, event_id),
        ],
        checks=_bounded(
            "only-mail",
            _allow("mail_messages", {"folder": "sent"}, "added"),
            _allow("mail_recipients", {"message_id": {"gt": last_mail}}, "added"),
            _allow("calendar_events", {"id": event_id}, "changed"),
            _allow("calendar_attendees", {"event_id": event_id}, "changed"),
        ),
        safety=[
            *NO_DELETE,
            {"id": "internal-only", "type": "no_external_mail", "internal_domains": [ctx.company.domain]},
        ],
    )
