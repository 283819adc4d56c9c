"""Cross-service handoff families: turn customers' problem mails into tickets with replies, and
book a meeting with an escalated ticket's assignee and note it on the ticket."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.servers.calendar.events import busy_times
from coworkenv.servers.demo import DemoPerson
from coworkenv.state import Workspace, format_time
from coworkenv.task import Task

from ...family import FamilyContext, family
from ._shared import _at, _first, _max_id, _op, _plant, _states

# -- mail_to_ticket ------------------------------------------------------------------------------

ROLE = "You are an AI assistant working in the company's mail, tickets, calendar, files and directory."


def _context(ctx: FamilyContext, *rules: str) -> dict[str, Any]:
    """The default context of `ctx.task` with the task's rules."""
    return {
        "company": ctx.company.name,
        "user_name": ctx.user.name,
        "role": ROLE,
        "rules": list(rules),
    }


#: Problems customers report by mail: (subject, body with {key}, queue, kind of key).
PROBLEMS = [
    ("Charged twice", "our card was charged twice for invoice {key}. Could you refund the duplicate "
     "payment?", "Billing", "invoice"),
    ("Wrong amount on our invoice", "invoice {key} bills 120 units, but we only ordered 100. Please send "
     "a corrected invoice.", "Billing", "invoice"),
    ("Credit note still missing", "we were promised a credit note for invoice {key} two weeks ago and have "
     "not received it.", "Billing", "invoice"),
    ("Problem with our last delivery", "order {key} arrived this morning with three crushed boxes. What "
     "should we do with the damaged goods?", "Support", "order"),
    ("Order not complete", "order {key} is missing two of the twelve pallets we ordered.", "Support",
     "order"),
    ("Where is our order?", "order {key} should have arrived last Thursday, but tracking has not moved "
     "since.", "Support", "order"),
]  # fmt: skip
SMALL_TALK = [
    ("Thanks!", "Thanks again for the quick help last week, everything works fine now."),
    ("Office closed on Friday", "Just so you know, our office is closed this Friday for a company event."),
    ("Meeting confirmed", "Confirming our call next Tuesday at 10:00. Talk soon!"),
    ("New colleague", "Please welcome Sam, who joins our purchasing team next month."),
    ("Holiday schedule", "Our warehouse runs normal hours over the spring holidays."),
    ("Great service", "Just wanted to say your delivery team did a great job yesterday."),
]
FIGURE = re.compile(r"(?<![\w{-])\d+(?![\w}-])")
"""Figures a problem report states besides its order or invoice number (120 units, not 100)."""
HANDOFF_REQUESTS = [
    "Customers mailed me this morning (since 06:00 UTC). For every mail that reports a problem with an "
    "order or an invoice, create a ticket in the right queue with the customer as requester and the "
    "order or invoice number in the title, then reply to the customer with the ticket number. Mails "
    "that report no problem need no ticket.",
    "Please go through the customer mails in my inbox from this morning (after 06:00 UTC): each problem "
    "report becomes a ticket (right queue, customer as requester, the order/invoice number in the title), "
    "and the customer gets a reply quoting the ticket number. Ignore the mails that don't report a problem.",
]


def _reply_checks(mail: dict[str, Any], customer: str, key: str, first_new: int) -> list[dict]:
    """The customer got a reply in their thread, and it refers to the ticket filed for them
    (#61, ticket 61, ticket number 61, ticket no. 61; a bare 61 is not a reference). The
    number is looked up, not fixed, because the tickets may be filed in any order."""
    text = "d.subject || ' ' || d.body"
    for char in ".,:;()!?":
        text = f"replace({text}, '{char}', ' ')"
    text = f"replace(replace({text}, char(10), ' '), char(9), ' ')"
    for _ in range(3):
        text = f"replace({text}, '  ', ' ')"
    forms = ["#", "ticket ", "ticket number ", "ticket no ", "ticket nr ", "ticket-"]
    query = (
        "WITH ticket AS (SELECT min(id) AS n FROM tickets_tickets "
        f"WHERE id >= {first_new} AND lower(requester) = '{customer}'), "
        f"reply AS (SELECT ' ' || lower({text}) || ' ' AS t FROM mail_deliveries d "
        f"JOIN mail_messages m ON m.id = d.message_id WHERE m.thread_id = {mail['thread_id']} "
        f"AND m.in_reply_to IS NOT NULL AND instr(' ' || lower(d.recipients) || ' ', ' {customer} ') > 0) "
        "SELECT count(*) > 0 FROM reply, ticket WHERE ticket.n IS NOT NULL AND ("
        + " OR ".join(f"instr(t, '{f}' || ticket.n || ' ') > 0" for f in forms)
        + ")"
    )
    return [
        {
            "id": f"reply-{key}",
            "type": "mail_sent",
            "to": [customer],
            "thread_of": mail["id"],
            "reply": True,
            "description": f"The customer who reported {key} got a reply in their thread",
        },
        {
            "id": f"reply-{key}-ticket",
            "type": "sql",
            "query": query,
            "expected": 1,
            "description": f"That reply gives the number of the ticket filed about {key}",
        },
    ]


def _problem_checks(key: str, queue: str, customer: str, figures: list[int], first_new: int) -> list[dict]:
    new = {"ge": first_new}
    checks = [
        _states(
            f"ticket-{key}-requester",
            "tickets_tickets",
            {"id": new, "requester": customer},
            ["title"],
            [{"text": key}],
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
    if figures:
        checks.append(
            _states(
                f"ticket-{key}-details",
                "tickets_tickets",
                {"id": new, "requester": customer},
                ["title", "description"],
                [{"text": key}, *({"number": n} for n in figures)],
                f"The ticket about {key} records the customer's figures ({', '.join(map(str, figures))})",
            )
        )
    return checks


def _ticket_and_reply(
    ctx: FamilyContext, message_id: int, customer: DemoPerson, title: str, queue: str, body: str, number: int
) -> list[dict[str, Any]]:
    """Read the mail, file the ticket (it gets id `number`), reply with its number."""
    reply = (
        f"Hello {_first(customer)},\n\nThank you for letting us know. I have logged this as "
        f"ticket #{number}; please quote that number in any follow-up.\n\nBest regards,\n{ctx.user.name}"
    )
    ticket = {
        "title": title,
        "queue": queue,
        "requester": customer.email,
        "description": f"{customer.name} ({customer.company}) wrote: {body.split(chr(10) * 2)[1]}",
    }
    return [
        {"tool": "mail_get_message", "arguments": {"message_id": message_id}},
        {"tool": "tickets_create_ticket", "arguments": ticket},
        {"tool": "mail_reply", "arguments": {"message_id": message_id, "body": reply}},
    ]


@family("mail_to_ticket", capability_id="cross_service_handoff", services=["mail", "tickets"])
def mail_to_ticket(ctx: FamilyContext) -> Task:
    """Customers report problems by mail; each report becomes a ticket (right queue, customer as
    requester, order or invoice number in the title) and the customer gets a reply with the
    ticket number. Distractors are customer mails that report no problem."""
    services = ["mail", "tickets"]
    customers = ctx.rng.sample(ctx.people(internal=False), ctx.difficulty.items)
    problems = ctx.rng.sample(PROBLEMS, ctx.difficulty.items)
    keys = [
        f"INV-2026-{ctx.rng.randint(1000, 9999)}"
        if kind == "invoice"
        else f"NW-{ctx.rng.randint(10000, 99999)}"
        for *_, kind in problems
    ]
    mails = [
        (
            c,
            subject,
            f"Hello {_first(ctx.user)},\n\n{body.format(key=k)}\n\nKind regards,\n{c.name}, {c.company}",
        )
        for c, (subject, body, _, _), k in zip(customers, problems, keys, strict=True)
    ]
    for subject, body in ctx.rng.sample(SMALL_TALK, min(ctx.difficulty.distractors, len(SMALL_TALK))):
        c = ctx.person(internal=False)
        mails.append((c, subject, f"Hi {_first(ctx.user)},\n\n{body}\n\nBest,\n{c.name}"))
    minutes = ctx.rng.sample(range(5, 175), len(mails))
    operations = [
        _op(
            "mail",
            "deliver_inbound",
            from_addr=c.email,
            subject=subject,
            body=body,
            sent_at=_at(ctx, minutes=-m),
        )
        for (c, subject, body), m in zip(mails, minutes, strict=True)
    ]
    results, ws = _plant(ctx, services, operations)
    first_new = _max_id(ws, "tickets_tickets") + 1
    checks: list[dict[str, Any]] = []
    solution: list[dict[str, Any]] = [
        {
            "tool": "mail_search_messages",
            "arguments": {"folder": "inbox", "after": _at(ctx, hours=-3), "limit": 50},
            "id": "new",
        }
    ]
    for i, (customer, (_, _, queue, _), key) in enumerate(zip(customers, problems, keys, strict=True)):
        mail = results[i]
        figures = [int(n) for n in FIGURE.findall(problems[i][1])]
        checks += _problem_checks(key, queue, customer.email, figures, first_new)
        checks += _reply_checks(mail, customer.email, key, first_new)
        title = f"{problems[i][0]}: {key}"
        solution += _ticket_and_reply(ctx, mail["id"], customer, title, queue, mails[i][2], first_new + i)
    return ctx.task(
        capability_id="cross_service_handoff",
        services=services,
        operations=operations,
        title="Turn customers' problem mails into tickets and reply with the ticket numbers",
        context=_context(
            ctx, "File every ticket in the queue whose description matches the request (list_queues)."
        ),
        turns=[{"user": ctx.choice(HANDOFF_REQUESTS), "checks": checks, "solution": solution}],
    )


# -- ticket_to_meeting ---------------------------------------------------------------------------

#: Escalation topics: (ticket title, description, a word that finds it).
ESCALATIONS = [
    ("Checkout rejects orders over 500 lines", "Large orders fail at checkout since Friday.", "checkout"),
    (
        "Price list import skips half the rows",
        "Our weekly price list import drops every second row.",
        "price list import",
    ),
    (
        "Shipping labels print blank",
        "The label printer gets empty shipping labels since Monday.",
        "shipping labels",
    ),
    ("Invoice export to SAP fails every night", "The nightly SAP export stops with an error.", "SAP export"),
    (
        "Warehouse scanners reject consignments",
        "Handheld scanners reject every consignment label.",
        "scanners",
    ),
    (
        "Order API returns timeouts",
        "Since the last release the order API times out at peak hours.",
        "order API",
    ),
    (
        "Delivery notes print with the wrong address",
        "Delivery notes show the old depot address.",
        "delivery notes",
    ),
]
BUSY_TITLES = ["Vendor call", "Design review", "Team sync", "Interview", "Training session", "Planning"]
MEETING_REQUESTS = [
    "{customer} from {company} has an escalated ticket about {topic}. Please book a {minutes}-minute "
    "meeting on {day} with the colleague the ticket is assigned to, at a time when we are both free and "
    "inside both our working hours (09:00-17:00, each in our own time zone). Then add an internal note on "
    "the ticket saying when the meeting is booked for.",
    "The {topic} ticket from {customer} ({company}) was escalated. Set up a {minutes}-minute meeting between "
    "me and its assignee on {day}: no clashes with either calendar, and within 09:00-17:00 for both of us "
    "in our own time zones. Once it's booked, leave an internal note on the ticket with the meeting's date.",
]

Span = tuple[datetime, datetime]


def _workday(day: date, tz: ZoneInfo) -> Span | None:
    if day.weekday() >= 5:
        return None
    start = datetime.combine(day, time(9), tzinfo=tz).astimezone(UTC)
    return start, datetime.combine(day, time(17), tzinfo=tz).astimezone(UTC)


def _shared_hours(day: date, user_tz: ZoneInfo, other_tz: ZoneInfo) -> list[Span]:
    """The parts of the user's working day `day` that also lie in the other's working hours."""
    mine = _workday(day, user_tz)
    spans = []
    for offset in (-1, 0, 1):
        theirs = _workday(day + timedelta(days=offset), other_tz)
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


def _meeting_slot(ctx: FamilyContext, ws: Workspace, minutes: int) -> tuple[date, DemoPerson, list[Span]]:
    """A day this week and a colleague who shares at least three working hours with the user
    and has a free slot of `minutes` with them in the demo calendars."""
    user_tz = ZoneInfo(ctx.user.time_zone)
    days = [ctx.start.date() + timedelta(days=n) for n in range(1, 5)]
    staff = ctx.rng.sample(ctx.people(), len(ctx.people()))
    staff.sort(key=lambda p: p.team not in ("Support", "Engineering"))
    for person in staff:
        for day in ctx.rng.sample(days, len(days)):
            spans = _shared_hours(day, user_tz, ZoneInfo(person.time_zone))
            if sum((e - s for s, e in spans), timedelta()) < timedelta(hours=3):
                continue
            free = _free(ws, [ctx.user.email, person.email], spans)
            if any(e - s >= timedelta(minutes=minutes + 60) for s, e in free):
                return day, person, free
    raise ValueError("no colleague shares a free working slot with the user this week")


def _busy_blocks(
    ctx: FamilyContext, free: list[Span], minutes: int, owners: list[str], organizers: list[DemoPerson]
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


def _escalated_tickets(ctx: FamilyContext, customer: DemoPerson, assignee: DemoPerson) -> list[dict]:
    topics = ctx.rng.sample(ESCALATIONS, min(len(ESCALATIONS), 1 + ctx.difficulty.distractors))
    ops = []
    for i, (title, description, _) in enumerate(topics):
        params: dict[str, Any] = {
            "title": title,
            "description": description,
            "queue": "Engineering",
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
    assignee: DemoPerson,
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
    ticket: dict[str, Any],
    ticket_id: int,
    assignee: DemoPerson,
    customer: DemoPerson,
    minutes: int,
    day: date,
) -> list[dict[str, Any]]:
    word = next(t[2] for t in ESCALATIONS if t[0] == ticket["title"])
    window = [f"{day.isoformat()}T00:00:00", f"{(day + timedelta(days=1)).isoformat()}T00:00:00"]
    slots = {
        "attendees": [{"$ref": "ticket.assignee"}],
        "duration_minutes": minutes,
        "window_start": window[0],
        "window_end": window[1],
        "granularity_minutes": 15,
    }
    event = {
        "title": f"Escalation: {word} ({customer.company})",
        "start": {"$ref": "slots.slots.0.start"},
        "end": {"$ref": "slots.slots.0.end"},
        "attendees": [assignee.email],
        "description": f"Go through the escalated {word} ticket from {customer.name} and agree next steps.",
    }
    note = (
        f"Meeting booked with {assignee.name} on {day:%A} {day.day} {day:%B} to go through this "
        "escalation; the invitation is in both calendars."
    )
    return [
        {
            "tool": "tickets_search_tickets",
            "arguments": {"query": word, "tag": "escalated"},
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


@family(
    "ticket_to_meeting", capability_id="cross_service_handoff", services=["tickets", "calendar", "directory"]
)
def ticket_to_meeting(ctx: FamilyContext) -> Task:
    """An escalated ticket needs a meeting between the user and its assignee on a given day,
    free for both and within both people's working hours; then an internal note on the ticket.
    Items: meetings planted that day to work around; distractors: other tickets of the customer."""
    services = ["tickets", "calendar", "directory"]
    minutes = ctx.choice([30, 45, 60])
    customer = ctx.person(internal=False)
    _, demo_ws = _plant(ctx, services, [])
    day, assignee, free = _meeting_slot(ctx, demo_ws, minutes)
    tickets = _escalated_tickets(ctx, customer, assignee)
    owners = [[assignee.email, ctx.user.email][i % 2] for i in range(ctx.difficulty.items)]
    organizers = ctx.people(exclude=[assignee.email])
    operations = tickets + _busy_blocks(ctx, free, minutes, owners, organizers)
    results, ws = _plant(ctx, services, operations)
    ticket_id = results[0]["ticket_id"]
    shared = _shared_hours(day, ZoneInfo(ctx.user.time_zone), ZoneInfo(assignee.time_zone))
    free = _free(ws, [ctx.user.email, assignee.email], shared)
    first_event = _max_id(ws, "calendar_events") + 1
    topic = next(t[2] for t in ESCALATIONS if t[0] == tickets[0]["params"]["title"])
    request = ctx.choice(MEETING_REQUESTS).format(
        customer=customer.name,
        company=customer.company,
        topic=topic,
        minutes=minutes,
        day=f"{day:%A}, {day.day} {day:%B}",
    )
    return ctx.task(
        capability_id="cross_service_handoff",
        extra_capabilities=["scheduling_constraints"],
        services=services,
        operations=operations,
        title="Book a meeting with an escalated ticket's assignee and note it on the ticket",
        turns=[
            {
                "user": request,
                "checks": _meeting_checks(ctx, assignee, ticket_id, first_event, minutes, free, day),
                "solution": _meeting_solution(
                    tickets[0]["params"], ticket_id, assignee, customer, minutes, day
                ),
            }
        ],
    )
