"""Scheduling families (`scheduling_constraints`): booking a meeting across time zones and
moving a meeting out of a conflict.

They run on every world: colleagues from its teams (people in other time zones first), their
working hours from the world, meeting titles from its meetings and vocabulary. They plan on a
fork of the world's workspace with the calendar's own busy times and retry with other days and
people until the planted state leaves exactly the intended answers (the starts of one free
stretch, or the first slot after a call) whether "working hours" is read as each person's own
or as the calendar's default 09:00-17:00, so their checks can be strict without being unfair;
a booking is judged by whether it fits, not by which fitting start.
"""

from __future__ import annotations

import calendar
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.servers.calendar.availability import WorkingHours
from coworkenv.servers.calendar.availability import people as calendar_people
from coworkenv.state import Workspace, format_time
from coworkenv.task import Task
from coworkenv.world import Person

from ...family import FamilyContext, family
from ...phrasing import Ask, request
from ._shared import (
    Json,
    _check,
    _day_text,
    _event,
    _first,
    _guard,
    _max_id,
    _meeting_days,
    _next_day,
    _pick_group,
    _python,
    _retry,
    _shifts,
    _side_titles,
    _sql,
    _step,
    _titles_near,
    _window,
    _workspace,
)

CALENDAR = ["calendar", "directory"]


# -- wording, checks and free slots --------------------------------------------------------------


def _names(people: Sequence[Person | str]) -> str:
    names = [p if isinstance(p, str) else p.name for p in people]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _city(zone: str) -> str:
    return zone.rsplit("/", 1)[-1].replace("_", " ")


def _field(check_id: str, table: str, where: Json, column: str, value: Any, description: str = "") -> Json:
    return _check(check_id, "field_equals", description, table=table, where=where, column=column, value=value)


PROPER = {*calendar.day_name, *calendar.month_name[1:], "Easter", "Christmas"}
"""Capitalised words that start a topic and keep their capital mid-sentence."""


def _topic_phrase(ctx: FamilyContext, topic: str) -> str:
    """A meeting topic as it reads mid-sentence: 'portal outage review', "Friday's storm plan",
    'the Globex renewal'."""
    first = topic.split()[0]
    bare = first.removesuffix("'s")
    if not first[:1].isupper() or bare in PROPER or first.isupper():
        return topic
    if any(o.name.split()[0] == bare for o in ctx.the_world.organizations):
        return f"the {topic}"
    return topic[:1].lower() + topic[1:]


def _free_starts(
    ctx: FamilyContext,
    ws: Workspace,
    people: Sequence[Person],
    window: tuple[datetime, datetime],
    minutes: int,
    step: int = 30,
    ignore: int | None = None,
    reading: str = "both",
) -> list[datetime]:
    """Starts (on `step`-minute boundaries, UTC) in `window` where everyone is free, by the
    calendar service's own busy times, and inside their working hours by `reading`."""
    hours = [
        (WorkingHours(start, end, True), ZoneInfo(zone)) if start < end else None
        for zone, start, end in _shifts(ctx, people, reading)
    ]
    if None in hours:
        return []
    group = calendar_people(ws, [p.email for p in people], window[0], window[1], ignore)
    length, stride = timedelta(minutes=minutes), timedelta(minutes=step)
    epoch = datetime(1970, 1, 1, tzinfo=window[0].tzinfo)
    at = epoch + -((epoch - window[0]) // stride) * stride
    starts = []
    while at + length <= window[1]:
        fits = all(
            h is not None and h[0].contain(at, at + length, h[1]) and not p.conflicts(at, at + length)
            for h, p in zip(hours, group, strict=True)
        )
        if fits:
            starts.append(at)
        at += stride
    return starts


def _user_day(ctx: FamilyContext, day: date) -> tuple[datetime, datetime]:
    """The user's whole local day `day`, in UTC."""
    tz = ZoneInfo(ctx.user.time_zone)
    start = datetime(day.year, day.month, day.day, tzinfo=tz)
    return start.astimezone(ZoneInfo("UTC")), (start + timedelta(days=1)).astimezone(ZoneInfo("UTC"))


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


def _blocks(ctx: FamilyContext, people: list[Person], start: datetime, end: datetime) -> list[Json]:
    """Busy events that together cover [start, end), each on one person's calendar."""
    ops = []
    at = start
    while at < end:
        length = min(timedelta(minutes=ctx.choice([30, 45, 60, 90])), end - at)
        ops.append(_event(ctx.choice(people), ctx.choice(BUSY_TITLES), at, at + length))
        at += length
    return ops


def _harmless(ctx: FamilyContext, group: list[Person], start: datetime, end: datetime, count: int) -> list:
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


def in_hours(start, end, zone, hours):
    tz = ZoneInfo(zone)
    a, b = start.astimezone(tz), end.astimezone(tz)
    first, last = (time.fromisoformat(h) for h in hours)
    return a.date() == b.date() and a.weekday() < 5 and first <= a.time() and b.time() <= last
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
        if not in_hours(start, end, zone, P["hours"][email]):
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
    picked = _pick_group(ctx, day, n, 60, least=1)
    if picked is None:
        return None
    group, window = picked
    everyone = [ctx.user, *group]
    span = (window[1] - window[0]) / timedelta(minutes=1)
    minutes = ctx.choice([m for m in (30, 45, 60) if m + 30 <= span])
    starts = _free_starts(ctx, _workspace(ctx, CALENDAR, [])[0], everyone, window, minutes)
    if not starts:
        return None
    target = ctx.choice(starts)
    slack = timedelta(minutes=ctx.choice([0, 0, 30]))  # sometimes several starts fit
    gap_end = target + timedelta(minutes=minutes) + slack
    if gap_end > window[1]:
        return None
    # Busy from the first to the last moment anyone could count as working time together.
    readings = [w for w in (_window(ctx, day, group, "own"), _window(ctx, day, group, "default")) if w]
    lo, hi = min(w[0] for w in readings), max(w[1] for w in readings)
    ops = _blocks(ctx, everyone, lo, target) + _blocks(ctx, everyone, gap_end, hi)
    ops += _harmless(ctx, everyone, target, gap_end, min(ctx.difficulty.distractors, 6))
    ws, _ = _workspace(ctx, CALENDAR, ops)
    fitting = [target + timedelta(minutes=m) for m in range(0, int(slack / timedelta(minutes=1)) + 1, 15)]
    whole_day = _user_day(ctx, day)
    for reading in ("own", "default"):
        if _free_starts(ctx, ws, everyone, whole_day, minutes, 15, reading=reading) != fitting:
            return None
    return {
        "day": day,
        "group": group,
        "minutes": minutes,
        "ops": ops,
        "last_event": _max_id(ws, "calendar_events"),
    }


def _schedule_request(ctx: FamilyContext, group: list[Person], minutes: int, day: date, topic: str) -> str:
    names, when = _names(group), _day_text(day)
    steps = ctx.choice(
        [
            (
                f"Set up a {minutes}-minute meeting with {names} on {when} to discuss {topic}.",
                "Find a time during everyone's working hours when all of us are free, me included.",
            ),
            (
                f"Book {minutes} minutes with {names} on {when} about {topic}.",
                "Pick a slot inside everyone's working day that clashes with nothing on anyone's calendar "
                "(mine included).",
                "Send them the invite.",
            ),
            (
                f"Find {minutes} minutes on {when} for {_names([*group, 'me'])} to go over {topic}.",
                "Make sure it falls within everyone's working hours and that nobody (me included) has "
                "anything else on then.",
                "Put it in the calendar with them invited.",
            ),
        ]
    )
    away = [p for p in group if p.time_zone != ctx.user.time_zone]
    if away:
        context = ctx.choice(
            [
                f"{_first(away[0])} works from {_city(away[0].time_zone)}, so mind the time difference.",
                "We are spread over a few time zones, so this needs a bit of care.",
                "Our calendars are packed that day.",
            ]
        )
    else:
        context = ctx.choice(["Our calendars are packed that day.", "It is a busy day for all of us.", ""])
    short = f"Grab {minutes} min with {names} on {when} about {topic} when we're all free and at work"
    return request(ctx, Ask(steps=steps, context=context, short=short))


@family("schedule_across_zones", capability_id="scheduling_constraints", services=CALENDAR, worlds=True)
def schedule_across_zones(ctx: FamilyContext) -> Task:
    """Book a meeting with 1-3 colleagues (in other time zones where the world has them) on a
    given day; busy events leave one free stretch inside everyone's working hours (exactly the
    meeting's length, or half an hour more, so several starts fit). More items: more
    attendees; more distractors: cancelled, declined and other people's events inside the
    free slot. Runs on every world."""
    plan = _retry(_schedule_plan, ctx, "day with one shared free slot")
    day, group, minutes, last_event = plan["day"], plan["group"], plan["minutes"], plan["last_event"]
    user = ctx.user
    # A figure in the new event's title would be unchecked text; the world has topics without.
    topics = [t for t in ctx.the_world.vocabulary.meeting_topics if not any(c.isdigit() for c in t)]
    topic = ctx.choice(topics or ["the plan for next month"])
    text = _schedule_request(ctx, group, minutes, day, _topic_phrase(ctx, topic))
    attendees = [p.email for p in group]
    everyone = [user, *group]
    params = {
        "user": user.email,
        "attendees": attendees,
        "minutes": minutes,
        "day": day.isoformat(),
        "zones": {p.email: p.time_zone for p in everyone},
        "hours": {
            p.email: [f"{start:%H:%M}", f"{end:%H:%M}"]
            for p, (_, start, end) in zip(everyone, _shifts(ctx, everyone, "own"), strict=True)
        },
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
        title=f"Book a {minutes}-minute meeting with {_names(group)} on {_day_text(day)}",
        turns=[{"user": text, "checks": checks, "solution": solution}],
        # Any start in the free stretch is right (the check judges the fit); the length is not free.
        guards={"free": ["calendar_events.start_utc", "calendar_events.end_utc"]},
    )


# -- reschedule_conflict -------------------------------------------------------------------------

GENERIC_CALLS = ["{company}: escalation call", "{company}: quarterly review", "{company}: renewal talks"]


def _own_titles(ctx: FamilyContext) -> list[str]:
    """Meetings the user runs in this world (no placeholders), or everyday ones."""
    titles = [m.title for m in ctx.the_world.meetings if m.organizer == "me" and m.attendees]
    return sorted({t for t in titles if "{" not in t}) or _side_titles(ctx)


def _side_meetings(
    ctx: FamilyContext, group: list[Person], day: date, keep: tuple[datetime, datetime]
) -> list[Json]:
    """The user's other meetings with some of the same people, on the day and the next
    weekday, at times free for them and outside `keep` (the meeting, the call and the slot
    after it): they must stay where they are."""
    placed: list[Json] = []
    days = [d for d in _meeting_days(ctx) if d >= day][:2]
    titles = _side_titles(ctx)
    for i in range(ctx.difficulty.distractors):
        when = days[i % len(days)]
        people = ctx.rng.sample(group, ctx.rng.randint(1, len(group)))
        window = _window(ctx, when, people)
        if window is None:
            continue
        ws, _ = _workspace(ctx, CALENDAR, placed)
        starts = _free_starts(ctx, ws, [ctx.user, *people], window, 30)
        starts = [t for t in starts if t + timedelta(minutes=30) <= keep[0] or t >= keep[1]]
        if starts:
            at = ctx.choice(starts)
            invited = [(p.email, "accepted") for p in people]
            placed.append(_event(ctx.user, ctx.choice(titles), at, at + timedelta(minutes=30), invited))
    return placed


def _call(
    ctx: FamilyContext, exclude: Sequence[str], taken: set[str]
) -> tuple[str, Person, list[Person]] | None:
    """An important call with an outside organization (its title, host and guests), titled
    unlike anything else on the calendar around the day."""
    contact = ctx.person(internal=False)
    titles = [c.title for c in ctx.the_world.customer_calls] + GENERIC_CALLS
    free = [t.format(company=contact.company) for t in titles]
    free = [t for t in free if t not in taken]
    if not free:
        return None
    return ctx.choice(free), ctx.person(exclude=exclude), [contact]


def _reschedule_plan(ctx: FamilyContext) -> Json | None:
    n = max(1, min(ctx.difficulty.items, 3))
    day = ctx.choice(_meeting_days(ctx))
    picked = _pick_group(ctx, day, n, 240, least=1)
    if picked is None:
        return None
    group, window = picked
    everyone = [ctx.user, *group]
    minutes = ctx.choice([30, 45, 60])
    emails = [p.email for p in everyone]
    starts = _free_starts(ctx, _workspace(ctx, CALENDAR, [])[0], everyone, window, minutes)
    half_hour, three_hours = timedelta(minutes=30), timedelta(minutes=180)
    pairs = [(s, g) for s in starts for g in starts if half_hour <= g - s <= three_hours]
    if not pairs:
        return None
    start, new_start = ctx.choice(pairs)
    side = _side_meetings(ctx, group, day, (start, new_start + timedelta(minutes=minutes)))
    taken = _titles_near(_workspace(ctx, CALENDAR, [])[0], *_user_day(ctx, day))
    titles = [t for t in _own_titles(ctx) if t not in taken]
    found = _call(ctx, emails, taken)
    if not titles or found is None:
        return None
    title, (call, host, guests) = ctx.choice(titles), found
    responses = [(p.email, ctx.choice(["accepted", "accepted", "tentative"])) for p in group]
    end = start + timedelta(minutes=minutes)
    meeting = _event(
        ctx.user, title, start, end, responses, description=f"Regular {title[:1].lower()}{title[1:]}."
    )
    invited = [(ctx.user.email, "accepted")] + [(g.email, "accepted") for g in guests]
    clash = _event(host, call, start, new_start, invited)
    ops = [*side, meeting, clash]
    ws, results = _workspace(ctx, CALENDAR, ops)
    meeting_id = results[len(side)]["id"]
    rest = (start, _user_day(ctx, day)[1])
    for reading in ("own", "default"):
        after = _free_starts(ctx, ws, everyone, rest, minutes, 15, meeting_id, reading)
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


def _reschedule_request(ctx: FamilyContext, plan: Json) -> str:
    title, call, host, when = plan["title"], plan["call"], plan["host"], _day_text(plan["day"])
    steps = ctx.choice(
        [
            (
                f"Move my '{title}' on {when} to the first time after '{call}' ends, the same day, when "
                "everyone invited is free and within their working hours.",
                "Keep the same people and the same length.",
            ),
            (
                f"Shift '{title}' ({when}) to the earliest slot after '{call}' that day where all the "
                "attendees are free and at work.",
                "Leave the invitees and the duration as they are.",
            ),
            (
                f"Push my '{title}' on {when} back to the first free time after '{call}', the same day, "
                "that suits everyone invited during their working hours.",
                "Keep who is invited and how long it is.",
            ),
        ]
    )
    context = ctx.choice(
        [
            f"{host.name} just put '{call}' on my calendar, and it clashes with my '{title}'.",
            f"'{call}' now overlaps my '{title}'.",
            f"{_first(host)} booked '{call}' right on top of my '{title}'.",
        ]
    )
    short = f"Move my '{title}' on {when} to the first slot after '{call}' that day that suits everyone"
    return request(ctx, Ask(steps=steps, context=context, short=short))


@family("reschedule_conflict", capability_id="scheduling_constraints", services=CALENDAR, worlds=True)
def reschedule_conflict(ctx: FamilyContext) -> Task:
    """A meeting the user organizes now clashes with an important call; move it to the first
    time after the call, the same day, that suits every attendee. More items: more attendees;
    more distractors: the user's other meetings with them, which must not move. Runs on every
    world."""
    plan = _retry(_reschedule_plan, ctx, "meeting with a later free slot")
    day, minutes, title, call = plan["day"], plan["minutes"], plan["title"], plan["call"]
    meeting_id, new_start = plan["meeting_id"], plan["new_start"]
    text = _reschedule_request(ctx, plan)
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
        _guard(_field("still-confirmed", "calendar_events", me, "status", "confirmed")),
        _guard(_sql("same-invitees", "The invitees are unchanged", invitees, ",".join(emails))),
    ]
    checks += [
        _guard(_field(f"other-meeting-{i}-stays", "calendar_events", {"id": event_id}, "start_utc", start))
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
        turns=[{"user": text, "checks": checks, "solution": solution}],
    )
