"""Calendar part of a world's seed: about 80 events over the weeks around the clock start.

Weekly team meetings and 1:1s as series, an all-hands, customer calls with external
contacts and internal one-offs, with some invitations declined, tentative or unanswered
and a few cancellations. Every event is placed inside its organizer's working hours
(on a weekday, in their own time zone), where possible when every participant is free and
at a sensible local hour. The meetings and calls come from the world.
"""

from __future__ import annotations

import random
from bisect import bisect_left, bisect_right, insort
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from coworkenv.state import Workspace

from .events import load_event
from .schema import Response, Status
from .times import Occurrence, Weekly, occurrence_start, occurrences, to_utc
from .world import AddEvent, AttendeeSpec, CancelEventByOrganizer, add_event, cancel_event_by_organizer

if TYPE_CHECKING:
    from coworkenv.world import Person, World

RESPONSE_WEIGHTS: dict[Response, int] = {"accepted": 70, "needs_action": 12, "tentative": 10, "declined": 8}


@dataclass
class Plan:
    organizer: Person
    title: str
    attendees: list[Person]
    minutes: int
    days: list[date]
    description: str = ""
    rule: Weekly | None = None
    start: datetime | None = None
    responses: dict[str, Response] = field(default_factory=dict)
    status: Status = "confirmed"


class Planner:
    """Places events where their participants are free and awake, deterministically."""

    def __init__(self, world: World, rng: random.Random, first_day: date, weeks: int) -> None:
        self.rng, self.world = rng, world
        begin = datetime.combine(first_day, time(0), tzinfo=UTC)
        self.horizon = (begin, begin + weeks * timedelta(days=7))
        # Per person, the starts and the ends of their busy times, each sorted: a slot
        # [s, e) meets #(starts < e) - #(ends <= s) of them (every end is after its start).
        self.starts: dict[str, list[datetime]] = {p.email: [] for p in world.people}
        self.ends: dict[str, list[datetime]] = {p.email: [] for p in world.people}
        self._seen: dict[tuple[datetime, timedelta, str, Weekly | None], list[Occurrence]] = {}

    def place(self, plan: Plan) -> None:
        tz = ZoneInfo(plan.organizer.time_zone)
        duration = timedelta(minutes=plan.minutes)
        hours = self.world.hours(plan.organizer)
        candidates = []
        for day in plan.days:
            local = datetime.combine(day, hours.start)
            while local + duration <= datetime.combine(day, hours.end):
                candidates.append(to_utc(local, tz))
                local += timedelta(minutes=30)
        self.rng.shuffle(candidates)
        people = [plan.organizer, *plan.attendees]
        # The first candidate with the fewest clashes, then the most people awake: what
        # min() picks. No candidate beats no clash with everyone awake, so the scan can
        # stop at the first that has it.
        best, best_key, ideal = candidates[0], None, (0, -len(people))
        for start in candidates:
            clashes = self._clashes(people, start, duration, plan.rule)
            if best_key is not None and clashes > best_key[0]:
                continue
            key = (clashes, -_awake(people, start))
            if best_key is None or key < best_key:
                best, best_key = start, key
                if key == ideal:
                    break
        plan.start = best
        for occ in self._occurrences(plan.start, duration, tz, plan.rule):
            for person in people:
                insort(self.starts[person.email], occ.start)
                insort(self.ends[person.email], occ.end)

    def _occurrences(
        self, start: datetime, duration: timedelta, tz: ZoneInfo, rule: Weekly | None
    ) -> list[Occurrence]:
        # Plans try the same starts again and again: each series is worked out once.
        key = (start, duration, tz.key, rule)
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = occurrences(start, start + duration, tz, rule, *self.horizon)
        return found

    def _clashes(
        self, people: list[Person], start: datetime, duration: timedelta, rule: Weekly | None
    ) -> int:
        tz = ZoneInfo(people[0].time_zone)
        return sum(
            bisect_left(self.starts[person.email], occ.end) - bisect_right(self.ends[person.email], occ.start)
            for occ in self._occurrences(start, duration, tz, rule)
            for person in people
        )


def _awake(people: list[Person], start: datetime) -> int:
    """How many people this start finds between 08:00 and 18:00 on their own clock."""
    return sum(1 for p in people if time(8) <= start.astimezone(ZoneInfo(p.time_zone)).time() < time(18))


#: Above this many colleagues, 1:1s are planned only around the user (with their manager and
#: with up to `MAX_OWN_ONE_ON_ONES` of their reports), so a large world keeps a calendar of
#: the demo's size and cost.
ALL_ONE_ON_ONES_UP_TO = 40
MAX_OWN_ONE_ON_ONES = 8


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Plan about 80 events over the week before, the week of and the week after `world.start`,
    then store them on their organizers' calendars."""
    fake = world.faker("calendar")
    monday = world.start.date() - timedelta(days=world.start.weekday())
    first_day = monday - timedelta(days=7)
    weekdays = [
        first_day + timedelta(days=i) for i in range(21) if (first_day + timedelta(days=i)).weekday() < 5
    ]
    staff = world.staff
    by_title = {p.title: [q for q in staff if q.title == p.title] for p in staff}
    by_email = {p.email: p for p in world.people}
    user = world.user_person
    plans: list[Plan] = []

    # Weekly team meetings, open-ended; leadership meets with every team lead.
    by_team = {t.name: t for t in world.teams}
    leads = [by_email[t.lead] for t in world.teams]
    leadership = world.team("leadership")
    for team in world.team_names:
        lead = by_email[by_team[team].lead]
        members = [p for p in world.team_members(team) if p is not lead]
        if team == leadership:
            members = [*members, *[p for p in leads if p is not lead]]
        plans.append(
            Plan(lead, f"{team} weekly", members, 60 if team == leadership else 45, weekdays[:5],
                 f"Weekly {team} meeting: updates, blockers and priorities.", Weekly())
        )  # fmt: skip
    # Weekly 1:1s of every manager with each report, ending by count, by date or never.
    reports = [p for p in staff if p.manager_email]
    if len(staff) > ALL_ONE_ON_ONES_UP_TO:
        mine = [p for p in reports if p.manager_email == user.email][:MAX_OWN_ONE_ON_ONES]
        reports = [p for p in reports if p is user or p in mine]
    for i, report in enumerate(reports):
        manager = by_email[report.manager_email or ""]
        rule = [Weekly(count=6), Weekly(until=first_day + timedelta(days=55)), Weekly()][i % 3]
        title = f"1:1 {manager.name.split()[0]} / {report.name.split()[0]}"
        plans.append(Plan(manager, title, [report], 30, weekdays[:5], "Weekly check-in.", rule))
    # The monthly all-hands, on the Thursday of the current week.
    ceo = next(p for p in staff if p.manager_email is None)
    plans.append(
        Plan(ceo, f"{world.name} all-hands ({world.start:%B})", [p for p in staff if p is not ceo], 60,
             [monday + timedelta(days=3)], "Company update, Q&A. Questions in advance to the CEO.")
    )  # fmt: skip
    # Customer calls: three per customer company and two more.
    companies = list(dict.fromkeys(p.company for p in world.contacts))
    calls = world.customer_calls
    picks = (
        [(c, t % len(calls)) for c in companies for t in (0, 1, 2 + companies.index(c) % 3)] if calls else []
    )
    picks += (
        [(rng.choice(companies), rng.randrange(len(calls))) for _ in range(2)] if calls and companies else []
    )
    for name, template in picks:
        call = calls[template]
        organizer = rng.choice(by_title.get(call.organizer) or staff)
        contacts = [p for p in world.contacts if p.company == name and p.title in call.contacts]
        internal = []
        for t in call.attendees:
            pool = [p for p in (by_title.get(t) or staff) if p is not organizer]
            if pool:
                internal.append(rng.choice(pool))
        plans.append(
            Plan(organizer, call.title.format(company=name), internal + contacts, call.minutes,
                 rng.sample(weekdays, 3), f"Call with {name}. {fake.sentence(nb_words=10)}")
        )  # fmt: skip
    # Internal one-off meetings.
    for meeting in world.meetings:
        title, organizer_title, attendee_titles = meeting.title, meeting.organizer, meeting.attendees
        minutes = meeting.minutes
        for _ in range(meeting.count):
            organizer = (
                user if organizer_title == "me" else rng.choice(by_title.get(organizer_title) or staff)
            )
            attendees: list[Person] = []
            for t in attendee_titles:
                pool = [p for p in (by_title.get(t) or staff) if p is not organizer and p not in attendees]
                if pool:
                    attendees.append(rng.choice(pool))
            company_name = rng.choice(companies) if companies else world.name
            text = title.format(topic=fake.catch_phrase(), name=fake.name(), company=company_name)
            plans.append(
                Plan(organizer, text, attendees, minutes, rng.sample(weekdays, 2), fake.sentence(nb_words=12))
            )

    planner = Planner(world, rng, first_day, weeks=3)
    names, weights = list(RESPONSE_WEIGHTS), list(RESPONSE_WEIGHTS.values())
    for plan in plans:
        planner.place(plan)
        plan.responses = {p.email: rng.choices(names, weights)[0] for p in plan.attendees}

    # The user has invitations to answer, one declined, one tentative; two one-offs are cancelled.
    upcoming = [p for p in plans if p.rule is None and p.start and p.start > world.start]
    invited = [p for p in upcoming if user in p.attendees]
    answers: list[Response] = ["needs_action", "declined", "tentative", "needs_action"]
    answered = rng.sample(invited, min(len(answers), len(invited)))
    for plan, answer in zip(answered, answers, strict=False):
        plan.responses[user.email] = answer
    rest = [p for p in invited if p not in answered] or [p for p in upcoming if p.organizer is user]
    others = [p for p in upcoming if p.attendees and user is not p.organizer and user not in p.attendees]
    for choices in ([p for p in rest if len(p.attendees) <= 4] or rest, others):
        if choices:
            rng.choice(choices).status = "cancelled"

    ids = [_store(ws, world, plan) for plan in plans]
    # Next week's occurrence of the user's first 1:1 with a report is off.
    one_on_one = next(
        (i for i, p in enumerate(plans) if p.organizer is user and p.rule and len(p.attendees) == 1), None
    )
    if one_on_one is None:
        return
    series = load_event(ws, ids[one_on_one])
    next_week = occurrence_start(series.start, series.tz, 2)
    cancel_event_by_organizer(ws, CancelEventByOrganizer(event_id=series.id, occurrence_start=next_week))


def _store(ws: Workspace, world: World, plan: Plan) -> int:
    if plan.start is None:
        raise RuntimeError(f"{plan.title!r} was never placed")
    zones = {p.time_zone for p in [plan.organizer, *plan.attendees]}
    internal = all(p.internal for p in plan.attendees)
    rule = plan.rule
    params = AddEvent(
        organizer_email=plan.organizer.email,
        title=plan.title,
        start=plan.start,
        end=plan.start + timedelta(minutes=plan.minutes),
        time_zone=plan.organizer.time_zone,
        location=world.offices.get(plan.organizer.time_zone, "Office")
        if internal and len(zones) == 1
        else "Zoom",
        description=plan.description,
        attendees=[AttendeeSpec(email=p.email, response=plan.responses[p.email]) for p in plan.attendees],
        status=plan.status,
        recurrence="weekly" if rule else "none",
        recurrence_count=rule.count if rule else None,
        recurrence_until=rule.until if rule else None,
    )
    return int(add_event(ws, params)["id"])
