"""Cross-service handoff families: turn customers' problem mails into tickets with replies, and
book a meeting with an escalated ticket's assignee and note it on the ticket. Both run on every
world: the problems are the topics of the queues customers file into."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.servers.calendar.store import busy_times
from coworkenv.state import Workspace, format_time
from coworkenv.task import Task
from coworkenv.world import Queue, WorkingHours

from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request
from ._shared import _at, _customer_queues, _formal, _max_id, _op, _plant, _states, _topic_values

ROLE = "You are an AI assistant working in the company's mail, tickets, calendar, files and directory."


def _context(ctx: FamilyContext, *rules: str) -> dict[str, Any]:
    """The default context of `ctx.task` with the task's rules."""
    return {
        "company": ctx.company.name,
        "user_name": ctx.user.name,
        "role": ROLE,
        "rules": list(rules),
    }


# -- mail_to_ticket ------------------------------------------------------------------------------

SMALL_TALK = [
    ("Thanks!", "Thanks again for the quick help last week, everything works fine now."),
    ("Office closed on Friday", "Just so you know, our office is closed this Friday for a company event."),
    ("Call confirmed", "Confirming our call next Tuesday at 10:00. Talk soon!"),
    ("New colleague", "Please welcome Sam, who joins our team next month and will copy you in now and then."),
    ("Holiday schedule", "Our offices keep normal hours over the spring holidays."),
    ("Great service", "Just wanted to say your team did a great job for us last week."),
]
FIGURE = re.compile(r"(?<![\w{,.-])\d+(?:,\d{3})*(?![\w}-])")
"""Figures a problem report states besides its reference (120 housings, 10,000 rows)."""
KEYED = re.compile(r"\{(order|invoice)\}")


@dataclass(frozen=True)
class _Problem:
    """A customer's problem report: the queue it belongs in, the subject of the mail (it holds
    the reference `key`), what the customer writes and the facts the ticket must keep."""

    queue: str
    subject: str
    key: str
    text: str
    in_title: list[dict[str, Any]]
    """Facts the subject states besides the reference (figures, an amount, a date)."""
    in_text: list[dict[str, Any]]
    """Facts the customer's text states (figures, an amount, a date)."""


def _facts(ctx: FamilyContext, template: str, values: dict[str, str]) -> list[dict[str, Any]]:
    """The figures, amount and date a topic's template states once filled with `values`."""
    facts: list[dict[str, Any]] = [{"number": int(n.replace(",", ""))} for n in FIGURE.findall(template)]
    if "{amount}" in template:
        facts.append({"number": int(values["amount"].split(".")[0])})
    if "{date}" in template:
        day = datetime.strptime(f"{values['date']} {ctx.start.year}", "%d %B %Y").date()
        if day > ctx.start.date():  # a date in December, seen from January
            day = day.replace(year=day.year - 1)
        facts.append({"date": day.isoformat()})
    return facts


def _problems(ctx: FamilyContext, count: int) -> list[_Problem]:
    """`count` topics of the customers' queues: those whose title names a reference and no
    other figure first; a world with fewer topics than reports has some topic reported twice
    (with other references)."""
    topics = [(q, t) for q in _customer_queues(ctx) for t in q.topics]

    def plain_title(title: str) -> bool:
        return not FIGURE.search(title) and "{amount}" not in title and "{date}" not in title

    pools = [
        [(q, t) for q, t in topics if KEYED.search(t.title) and plain_title(t.title)],
        [(q, t) for q, t in topics if KEYED.search(t.title) and not plain_title(t.title)],
        [(q, t) for q, t in topics if not KEYED.search(t.title) and plain_title(t.title)],
        [(q, t) for q, t in topics if not KEYED.search(t.title) and not plain_title(t.title)],
    ]
    picks: list[tuple[Queue, Any]] = []
    for pool in pools:
        picks += ctx.rng.sample(pool, min(count - len(picks), len(pool)))
    picks += [ctx.choice(next(pool for pool in pools if pool)) for _ in range(count - len(picks))]
    out = []
    for queue, topic in picks:
        values = _topic_values(ctx)
        found = KEYED.search(topic.title)
        key = values[found.group(1)] if found else values["order"]
        subject = topic.title.format(**values) + ("" if found else f", reference {key}")
        text = topic.body.format(**values)
        if key not in text:
            text += f" Our reference is {key}."
        in_title, in_text = _facts(ctx, topic.title, values), _facts(ctx, topic.body, values)
        out.append(_Problem(queue.name, subject, key, text, in_title, in_text))
    return out


def _reply_checks(mail: dict[str, Any], customer: str, key: str, first_new: int) -> list[dict]:
    """The customer got a reply in their thread, and it refers to the ticket filed for them
    in any form a ticket is referred to (#61, ticket 61, ticket ID 61; a bare 61 is not a
    reference). The ticket is looked up when the check is judged (`ticket_where`), because
    the tickets may be filed in any order."""
    reply = {"to": [customer], "thread_of": mail["id"], "reply": True}
    filed = {"id": {"ge": first_new}, "requester": customer}
    return [
        {
            "id": f"reply-{key}",
            "type": "mail_sent",
            **reply,
            "description": f"The customer who reported {key} got a reply in their thread",
        },
        {
            "id": f"reply-{key}-ticket",
            "type": "mail_sent",
            **reply,
            "facts": [{"ticket_where": filed}],
            "description": f"That reply gives the number of the ticket filed about {key}",
        },
    ]


def _problem_checks(problem: _Problem, customer: str, first_new: int) -> list[dict]:
    new, key, queue = {"ge": first_new}, problem.key, problem.queue
    checks = [
        _states(
            f"ticket-{key}-requester",
            "tickets_tickets",
            {"id": new, "requester": customer},
            ["title"],
            [{"text": key}, *problem.in_title],
            f"A new ticket with {key} in its title has the customer as requester",
        ),
        _states(
            f"ticket-{key}-queue",
            "tickets_tickets",
            {"id": new, "queue": queue},
            ["title"],
            [{"text": key}],
            f"The ticket about {key} is in {queue}",
        ),
    ]
    if problem.in_text:
        checks.append(
            _states(
                f"ticket-{key}-details",
                "tickets_tickets",
                {"id": new, "requester": customer},
                ["description"],
                problem.in_text,
                f"The description of the ticket about {key} keeps what the customer wrote "
                f"({', '.join(str(next(iter(f.values()))) for f in problem.in_text)})",
            )
        )
    return checks


REPLIES = [
    "Thank you for letting us know. I have logged this as ticket #{number}; please quote that number in "
    "any follow-up.",
    "Thanks for your message. We are looking into it under ticket #{number}, and I will come back to you "
    "as soon as I know more.",
    "Sorry for the trouble. Your request is now ticket #{number} with our team; mention that number if you "
    "write again about it.",
]


def _ticket_and_reply(
    ctx: FamilyContext, message_id: int, customer: Any, problem: _Problem, number: int
) -> list[dict[str, Any]]:
    """Read the mail, file the ticket (it gets id `number`), reply with its number."""
    formal = _formal(ctx)
    reply = (
        f"{greeting(customer, formal=formal)}\n\n{ctx.choice(REPLIES).format(number=number)}\n\n"
        f"{'Kind regards' if formal else 'Best regards'},\n{ctx.user.name}"
    )
    ticket = {
        "title": problem.subject,
        "queue": problem.queue,
        "requester": customer.email,
        "description": f"{customer.name} ({customer.company}) wrote: {problem.text}",
    }
    return [
        {"tool": "mail_get_message", "arguments": {"message_id": message_id}},
        {"tool": "tickets_create_ticket", "arguments": ticket},
        {"tool": "mail_reply", "arguments": {"message_id": message_id, "body": reply}},
    ]


def _handoff_ask(ctx: FamilyContext) -> Ask:
    """The request: tickets for the problem reports of the last three hours, replies in the
    threads with the ticket numbers, nothing for the other mails."""
    steps = ctx.choice(
        [
            (
                "Go through the customer mails that reached my inbox in the last three hours.",
                "For each one that reports a problem, file a ticket in the right queue with the customer as "
                "requester and the reference number they quote in the title.",
                "Reply to each of those customers in their thread with the ticket number.",
                "Leave the mails that report no problem without a ticket.",
            ),
            (
                "Turn every customer mail of the last three hours that reports a problem into a ticket in "
                "the right queue, with the customer as requester and their reference number in the title.",
                "Answer each of them in the mail thread with the number of their ticket.",
                "Skip the mails that are not about a problem.",
            ),
            (
                "File a ticket for each problem customers reported by mail in the last three hours, in the "
                "queue it belongs to, with the customer as requester and the reference they give in the "
                "title.",
                "Reply in each customer's thread with their ticket number.",
            ),
        ]
    )
    context = ctx.choice(
        [
            "Several customers wrote in this morning and nobody has answered them yet.",
            "I am in meetings all morning and the customer mails are piling up.",
            "",
        ]
    )
    return Ask(
        steps=steps,
        context=context,
        short="Ticket every customer problem mail of the last three hours (right queue, customer as "
        "requester, their reference in the title) and reply in each thread with the ticket number",
    )


@family("mail_to_ticket", capability_id="cross_service_handoff", services=["mail", "tickets"], worlds=True)
def mail_to_ticket(ctx: FamilyContext) -> Task:
    """Customers report problems by mail; each report becomes a ticket (the queue of its topic,
    customer as requester, their reference in the title) and the customer gets a reply with the
    ticket number. Distractors are customer mails that report no problem. Runs on every world."""
    services = ["mail", "tickets"]
    customers = ctx.rng.sample(ctx.people(internal=False), ctx.difficulty.items)
    problems = _problems(ctx, ctx.difficulty.items)
    user_first = first_name(ctx.user.name)
    mails = [
        (c, p.subject, f"Hello {user_first},\n\n{p.text}\n\nKind regards,\n{c.name}, {c.company}")
        for c, p in zip(customers, problems, strict=True)
    ]
    for subject, body in ctx.rng.sample(SMALL_TALK, min(ctx.difficulty.distractors, len(SMALL_TALK))):
        c = ctx.person(internal=False)
        mails.append((c, subject, f"Hi {user_first},\n\n{body}\n\nBest,\n{c.name}"))
    minutes = ctx.rng.sample(range(5, 175), len(mails))
    operations = [
        _op("mail", "deliver_inbound", from_addr=c.email, subject=subject, body=body, sent_at=_at(ctx, minutes=-m))
        for (c, subject, body), m in zip(mails, minutes, strict=True)
    ]  # fmt: skip
    results, ws = _plant(ctx, services, operations)
    first_new = _max_id(ws, "tickets_tickets") + 1
    checks: list[dict[str, Any]] = []
    solution: list[dict[str, Any]] = [
        {
            "tool": "mail_search_messages",
            "arguments": {"folder": "inbox", "after": _at(ctx, hours=-3), "limit": 50},
            "id": "new",
        },
        {"tool": "tickets_list_queues", "arguments": {}},  # the queues' names, before filing in one
    ]
    for i, (customer, problem) in enumerate(zip(customers, problems, strict=True)):
        checks += _problem_checks(problem, customer.email, first_new)
        checks += _reply_checks(results[i], customer.email, problem.key, first_new)
        solution += _ticket_and_reply(ctx, results[i]["id"], customer, problem, first_new + i)
    return ctx.task(
        capability_id="cross_service_handoff",
        services=services,
        operations=operations,
        title="Turn customers' problem mails into tickets and reply with the ticket numbers",
        context=_context(
            ctx,
            "File every ticket in the queue whose description fits the problem (each queue says what it takes).",
        ),
        turns=[{"user": request(ctx, _handoff_ask(ctx)), "checks": checks, "solution": solution}],
    )


# -- ticket_to_meeting ---------------------------------------------------------------------------

BUSY_TITLES = ["Vendor call", "Design review", "Team sync", "Interview", "Training session", "Planning"]

Span = tuple[datetime, datetime]


def _workday(day: date, tz: ZoneInfo, hours: WorkingHours) -> Span | None:
    if day.weekday() >= 5:
        return None
    start = datetime.combine(day, hours.start, tzinfo=tz).astimezone(UTC)
    return start, datetime.combine(day, hours.end, tzinfo=tz).astimezone(UTC)


def _shared_hours(day: date, user_tz: ZoneInfo, other_tz: ZoneInfo, hours: WorkingHours) -> list[Span]:
    """The parts of the user's working day `day` that also lie in the other's working hours."""
    mine = _workday(day, user_tz, hours)
    spans = []
    for offset in (-1, 0, 1):
        theirs = _workday(day + timedelta(days=offset), other_tz, hours)
        if mine and theirs and max(mine[0], theirs[0]) < min(mine[1], theirs[1]):
            spans.append((max(mine[0], theirs[0]), min(mine[1], theirs[1])))
    return spans


def _subtract(spans: list[Span], busy: list[Span]) -> list[Span]:
    out = []
    for start, end in spans:
        current = start
        for b_start, b_end in sorted(busy):
            if b_end <= current or b_start >= end:
                continue
            if b_start > current:
                out.append((current, b_start))
            current = max(current, b_end)
        if current < end:
            out.append((current, end))
    return out


def _free(ws: Workspace, emails: list[str], spans: list[Span]) -> list[Span]:
    """The spans minus every confirmed event that keeps one of `emails` busy."""
    if not spans:
        return []
    busy = [(occ.start, occ.end) for e in emails for _, occ in busy_times(ws, e, spans[0][0], spans[-1][1])]
    return _subtract(spans, busy)


def _meeting_slot(ctx: FamilyContext, ws: Workspace, minutes: int) -> tuple[date, Any, list[Span]]:
    """A day this week and a colleague who shares at least three working hours with the user
    and has a free slot of `minutes` with them in the seeded calendars; the desk and tech teams'
    people first, as escalations go to them."""
    hours = ctx.the_world.working_hours
    user_tz = ZoneInfo(ctx.user.time_zone)
    days = [ctx.start.date() + timedelta(days=n) for n in range(1, 5)]
    staff = ctx.rng.sample(ctx.people(), len(ctx.people()))
    escalation_teams = (ctx.the_world.team("desk"), ctx.the_world.team("tech"))
    staff.sort(key=lambda p: p.team not in escalation_teams)
    for person in staff:
        for day in ctx.rng.sample(days, len(days)):
            spans = _shared_hours(day, user_tz, ZoneInfo(person.time_zone), hours)
            if sum((e - s for s, e in spans), timedelta()) < timedelta(hours=3):
                continue
            free = _free(ws, [ctx.user.email, person.email], spans)
            if any(e - s >= timedelta(minutes=minutes + 60) for s, e in free):
                return day, person, free
    raise ValueError("no colleague shares a free working slot with the user this week")


def _busy_blocks(
    ctx: FamilyContext, free: list[Span], minutes: int, owners: list[str], organizers: list[Any]
) -> list[dict[str, Any]]:
    """Meetings that take up some of the free time but leave a slot of `minutes`."""
    for _ in range(30):
        blocks = []
        for owner in owners:
            start, end = ctx.choice(free)
            steps = int((end - start) / timedelta(minutes=30))
            at = start + timedelta(minutes=30 * ctx.rng.randrange(max(steps, 1)))
            blocks.append((at, min(end, at + timedelta(minutes=ctx.choice([30, 60]))), owner))
        if any(
            e - s >= timedelta(minutes=minutes) for s, e in _subtract(free, [(s, e) for s, e, _ in blocks])
        ):
            return [
                _op(
                    "calendar",
                    "add_event",
                    organizer_email=ctx.choice(organizers).email,
                    title=ctx.choice(BUSY_TITLES),
                    start=s.isoformat(),
                    end=e.isoformat(),
                    attendees=[{"email": owner, "response": "accepted"}],
                )
                for s, e, owner in blocks
            ]
        owners = owners[:-1]
    return []


def _escalation_queue(ctx: FamilyContext) -> Queue:
    """The customers' queue whose topics the escalated tickets are about: the first with a
    topic per ticket, else the one with the most topics."""
    queues = _customer_queues(ctx)
    wanted = 1 + ctx.difficulty.distractors
    return next((q for q in queues if len(q.topics) >= wanted), max(queues, key=lambda q: len(q.topics)))


def _escalated_tickets(ctx: FamilyContext, customer: Any, assignee: Any) -> list[dict]:
    """The escalated ticket (first) and the customer's other tickets, on other topics."""
    queue = _escalation_queue(ctx)
    topics = ctx.rng.sample(queue.topics, min(len(queue.topics), 1 + ctx.difficulty.distractors))
    ops = []
    for i, topic in enumerate(topics):
        values = _topic_values(ctx)
        params: dict[str, Any] = {
            "title": topic.title.format(**values),
            "description": topic.body.format(**values),
            "queue": queue.name,
            "requester": customer.email,
            "created_at": _at(ctx, days=-ctx.rng.uniform(0.5, 4)),
        }
        if i == 0:
            params |= {
                "status": "in_progress",
                "priority": "urgent",
                "assignee": assignee.email,
                "tags": ["escalated"],
            }
        else:
            others = ctx.people(exclude=[assignee.email])
            params |= {"status": ctx.choice(["open", "in_progress"]), "assignee": ctx.choice(others).email}
        ops.append(_op("tickets", "add_ticket", **params))
    return ops


def _in_window_sql(free: list[Span], minutes: int) -> str:
    fits = [
        f"(e.start_utc >= '{format_time(s)}' AND e.end_utc <= '{format_time(e)}')"
        for s, e in free
        if e - s >= timedelta(minutes=minutes)
    ]
    return "(" + " OR ".join(fits) + ")"


def _meeting_checks(
    ctx: FamilyContext,
    assignee: Any,
    ticket_id: int,
    first_event: int,
    minutes: int,
    free: list[Span],
    day: date,
) -> list[dict[str, Any]]:
    meeting = (
        "SELECT count(*) > 0 FROM calendar_events e JOIN calendar_attendees a ON a.event_id = e.id "
        f"WHERE e.id >= {first_event} AND e.organizer_email = '{ctx.user.email}' AND e.status = 'confirmed' "
        f"AND a.email = '{assignee.email}'"
    )
    fits = (
        f"{meeting} AND e.recurrence = 'none' "
        f"AND round((julianday(e.end_utc) - julianday(e.start_utc)) * 1440) = {minutes} "
        f"AND {_in_window_sql(free, minutes)}"
    )
    return [
        {
            "id": "meeting-with-assignee",
            "type": "sql",
            "query": meeting,
            "expected": 1,
            "description": f"A new meeting I organize invites the assignee, {assignee.name}",
        },
        {
            "id": "meeting-fits",
            "type": "sql",
            "query": fits,
            "expected": 1,
            "description": f"It lasts {minutes} minutes, on the day asked, when both are free and working",
        },
        _states(
            "internal-note",
            "tickets_comments",
            {"ticket_id": ticket_id, "visibility": "internal"},
            ["body"],
            [{"date": day.isoformat()}],
            f"An internal note on #{ticket_id} says the meeting is booked for {day:%A} {day.day} {day:%B}",
        ),
    ]


def _meeting_solution(
    ctx: FamilyContext,
    ticket: dict[str, Any],
    ticket_id: int,
    assignee: Any,
    customer: Any,
    minutes: int,
    day: date,
) -> list[dict[str, Any]]:
    hours = ctx.the_world.working_hours
    window = [f"{day.isoformat()}T00:00:00", f"{(day + timedelta(days=1)).isoformat()}T00:00:00"]
    slots = {
        "attendees": [{"$ref": "ticket.assignee"}],
        "duration_minutes": minutes,
        "window_start": window[0],
        "window_end": window[1],
        "granularity_minutes": 15,
        "working_hours_start": f"{hours.start:%H:%M}",
        "working_hours_end": f"{hours.end:%H:%M}",
    }
    event = {
        "title": f"Escalation review: {customer.company}",
        "start": {"$ref": "slots.slots.0.start"},
        "end": {"$ref": "slots.slots.0.end"},
        "attendees": [assignee.email],
        "description": f"Go through the escalated ticket from {customer.name} and agree on next steps.",
    }
    note = (
        f"Meeting booked with {assignee.name} on {day:%A} {day.day} {day:%B} to go through this "
        "escalation; the invitation is in both calendars."
    )
    return [
        {
            "tool": "tickets_search_tickets",
            "arguments": {"query": ticket["title"], "tag": "escalated"},
            "id": "t",
        },
        {
            "tool": "tickets_get_ticket",
            "arguments": {"ticket_id": {"$ref": "t.tickets.0.id"}},
            "id": "ticket",
        },
        {"tool": "directory_get_person", "arguments": {"email": {"$ref": "ticket.assignee"}}},
        {"tool": "calendar_find_free_slots", "arguments": slots, "id": "slots"},
        {"tool": "calendar_create_event", "arguments": event},
        {
            "tool": "tickets_add_comment",
            "arguments": {"ticket_id": ticket_id, "visibility": "internal", "body": note},
        },
    ]


def _meeting_ask(ctx: FamilyContext, customer: Any, title: str, minutes: int, day: date) -> Ask:
    when = f"{day:%A}, {day.day} {day:%B}"
    about = f'{customer.name} ({customer.company}) has an escalated ticket, "{title}".'
    ref = f'the escalated ticket "{title}" from {customer.name}'  # in the steps: some registers drop context
    steps = ctx.choice(
        [
            (
                f"Book a {minutes}-minute meeting on {when} with the colleague {ref} is assigned to, at a "
                "time when we are both free and within both our working hours.",
                "Add an internal note on the ticket saying when the meeting is.",
            ),
            (
                f"Find out who {ref} is assigned to and set up a {minutes}-minute meeting with them and me "
                f"on {when}, when neither of us has anything else on and both of us are at work.",
                "Once it is booked, leave an internal note on the ticket with the meeting's date.",
            ),
            (
                f"Put a {minutes}-minute meeting between me and the assignee of {ref} in our calendars for "
                f"{when}, inside both our working hours and clear of our other meetings.",
                "Note the meeting date on the ticket as an internal comment.",
            ),
        ]
    )
    context = ctx.choice(
        [about, f"{about} I want to talk it through with whoever has it.", f"{about} It needs a proper look."]
    )
    return Ask(
        steps=steps,
        context=context,
        short=f'Book {minutes} min on {when} with the assignee of the escalated "{title}" ticket from '
        f"{customer.name} (both free, both in working hours) and note it on the ticket",
    )


@family(
    "ticket_to_meeting",
    capability_id="cross_service_handoff",
    services=["tickets", "calendar", "directory"],
    worlds=True,
)
def ticket_to_meeting(ctx: FamilyContext) -> Task:
    """An escalated ticket needs a meeting between the user and its assignee on a given day,
    free for both and within both people's working hours; then an internal note on the ticket.
    Items: meetings planted that day to work around; distractors: other tickets of the customer.
    Runs on every world (its working hours are a house rule of the task)."""
    services = ["tickets", "calendar", "directory"]
    minutes = ctx.choice([30, 45, 60])
    customer = ctx.person(internal=False)
    _, seed_ws = _plant(ctx, services, [])
    day, assignee, free = _meeting_slot(ctx, seed_ws, minutes)
    tickets = _escalated_tickets(ctx, customer, assignee)
    owners = [[assignee.email, ctx.user.email][i % 2] for i in range(ctx.difficulty.items)]
    organizers = ctx.people(exclude=[assignee.email])
    operations = tickets + _busy_blocks(ctx, free, minutes, owners, organizers)
    results, ws = _plant(ctx, services, operations)
    ticket_id = results[0]["ticket_id"]
    hours = ctx.the_world.working_hours
    shared = _shared_hours(day, ZoneInfo(ctx.user.time_zone), ZoneInfo(assignee.time_zone), hours)
    free = _free(ws, [ctx.user.email, assignee.email], shared)
    first_event = _max_id(ws, "calendar_events") + 1
    ticket = tickets[0]["params"]
    rule = f"Working hours are {hours.start:%H:%M} to {hours.end:%H:%M} on weekdays, in each person's own time zone."
    return ctx.task(
        capability_id="cross_service_handoff",
        extra_capabilities=["scheduling_constraints"],
        services=services,
        operations=operations,
        title="Book a meeting with an escalated ticket's assignee and note it on the ticket",
        context=_context(ctx, rule),
        turns=[
            {
                "user": request(ctx, _meeting_ask(ctx, customer, ticket["title"], minutes, day)),
                "checks": _meeting_checks(ctx, assignee, ticket_id, first_event, minutes, free, day),
                "solution": _meeting_solution(ctx, ticket, ticket_id, assignee, customer, minutes, day),
            }
        ],
    )
