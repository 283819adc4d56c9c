"""Multi-turn families where the workspace changes between turns (`state_change_adaptation`):
a customer's mails change what their ticket should say (silently, then announced), and a
colleague moves a meeting the user has mailed people about (announced).

Both run on every world: the customer, their request, its reference and the queue come from
the world's contacts, vocabulary and queues; the meeting, its organizer and its people from
its meetings and teams.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.state import format_time
from coworkenv.task import Task
from coworkenv.world import Person, Queue, Topic

from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request
from ._shared import (
    Json,
    _day_text,
    _event,
    _mail_sent,
    _max_id,
    _meeting_days,
    _named,
    _next_day,
    _pick_group,
    _q,
    _retry,
    _side_titles,
    _sql,
    _states,
    _step,
    _time,
    _titles_near,
    _workspace,
)

# -- reply_after_new_info ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Case:
    """A customer's problem: who, about which reference (and the one they meant), in which queue."""

    customer: Any
    queue: str
    subject: str
    problem: str
    order: str
    new_order: str
    variant: str
    last: int
    mail_id: int


def _customer_queue(ctx: FamilyContext) -> Queue:
    """The queue customers' requests go to, the user's team's first."""
    world = ctx.the_world
    queues = [q for q in world.queues if q.requested_by == "customers"] or list(world.queues)
    desk = world.team("desk")
    return next((q for q in queues if desk in q.teams), queues[0])


def _reference_topics(ctx: FamilyContext, queue: Queue) -> list[Topic]:
    """Requests about one reference (an order, a matter, a claim) in the world's words."""
    topics = [*ctx.the_world.vocabulary.customer_requests, *queue.topics]
    # No other figure in the title: a written figure nobody checks could be anything.
    return [t for t in topics if "{order}" in t.title and not re.search(r"\d|\{(?!order\})", t.title)]


def _values(ctx: FamilyContext, order: str) -> dict[str, str]:
    world = ctx.the_world
    return {
        "order": order,
        "n": str(ctx.rng.randint(100, 999)),
        "invoice": f"INV-{world.start.year}-{ctx.rng.randint(1, 400):04d}",
        "amount": f"{ctx.rng.randint(200, 9000)}.00 {world.currency}",
        "city": ctx.choice(["Springfield", "Riverton", "Lakeside", "Hillcrest"]),
        "date": (world.start - timedelta(days=ctx.rng.randint(1, 6))).strftime("%d %B"),
    }


def _reference(ctx: FamilyContext) -> str:
    return f"{ctx.the_world.reference_prefix}-{ctx.rng.randint(10000, 99999)}"


def _new_ticket(customer: Person, last_ticket: int, condition: str) -> str:
    """SQL: whether a ticket created in the episode for `customer` meets `condition` (on t)."""
    return (
        f"SELECT count(*) > 0 FROM tickets_tickets t WHERE t.id > {last_ticket} "
        f"AND lower(t.requester) = '{_q(customer.email)}' AND {condition}"
    )


FOLLOW_UP = (
    "EXISTS (SELECT 1 FROM tickets_links l JOIN tickets_tickets o ON o.id = l.source_id "
    "WHERE l.kind = 'relates_to' AND l.target_id = t.id AND o.status = 'closed')"
)
"""SQL: ticket t carries on for a closed one, linked as the closed ticket's error says."""


def _count_new_tickets(last_ticket: int, email: str) -> str:
    """SQL: how many tickets were created in the episode for the customer, a follow-up of
    a closed one (the route the tickets service offers to reopen it) counting as that one."""
    return (
        f"SELECT count(*) FROM tickets_tickets t WHERE t.id > {last_ticket} "
        f"AND lower(t.requester) = '{email}' AND NOT {FOLLOW_UP}"
    )


def _customer_mail(customer: Person, mail_id: int, body: str, announced: bool, minutes: int) -> Json:
    params = {"from_addr": customer.email, "in_reply_to": mail_id, "body": body}
    return {
        "service": "mail",
        "operation": "deliver_inbound",
        "announced": announced,
        "advance_minutes": minutes,
        "params": params,
    }


def _first_ticket_turn(ctx: FamilyContext, case: _Case) -> Json:
    customer, queue = case.customer, case.queue
    first = first_name(customer.name)
    c = _q(customer.email)
    created = _count_new_tickets(case.last, c)
    steps = ctx.choice(
        [
            (
                f"Turn the new mail from {customer.name} ({customer.company}) into a ticket in the "
                f"{queue} queue.",
                "Make the customer the requester.",
            ),
            (
                f"Open a {queue} ticket for the problem {customer.name} from {customer.company} just "
                "mailed us about.",
                f"Set {first} as the requester.",
            ),
            (
                f"Log the latest mail from {customer.name} of {customer.company} as a ticket in the {queue} "
                "queue, with them as the requester.",
            ),
        ]
    )
    context = ctx.choice(["It came in half an hour ago.", "They sound worried about it.", ""])
    short = f"Ticket in {queue} for {customer.name}'s new mail, them as requester"
    return {
        "user": request(ctx, Ask(steps=steps, context=context, short=short)),
        "checks": [
            _sql(
                "ticket-created",
                f"One new {queue} ticket for the customer",
                created + f" AND queue = '{_q(queue)}'",
            ),
            _states(
                "ticket-names-order",
                f"The new ticket names {case.order}",
                "tickets_tickets",
                {"id": {"gt": case.last}, "requester": customer.email},
                ["title", "description"],
                [{"text": case.order}],
            ),
        ],
        "solution": [
            _step("mail_search_messages", "m", query=customer.name),
            _step("mail_get_message", message_id={"$ref": "m.messages.0.id"}),
            _step(
                "tickets_create_ticket",
                title=case.subject,
                queue=queue,
                description=case.problem,
                requester=customer.email,
            ),
        ],
    }


def _second_turn(ctx: FamilyContext, case: _Case) -> Json:
    """The customer writes again, silently: a corrected reference, or the problem is solved."""
    customer, order, new_order, last = case.customer, case.order, case.new_order, case.last
    first = first_name(customer.name)
    find = [
        _step("mail_search_messages", "new", sender=customer.email, unread=True),
        _step("mail_get_message", message_id={"$ref": "new.messages.0.id"}),
        _step("tickets_search_tickets", "t", requester=customer.email, sort="newest"),
    ]
    ticket = {"$ref": "t.tickets.0.id"}
    if case.variant == "correction":
        body = f"Hello,\n\nsorry, I gave you the wrong reference: it is {new_order}, not {order}.\n\n{first}"
        # The reference is an identifier: found as written, in the ticket or a comment on it.
        mentions = (
            f"(instr(upper(t.title || ' ' || coalesce(t.description, '')), '{new_order}') > 0 OR EXISTS "
        )
        mentions += "(SELECT 1 FROM tickets_comments k WHERE k.ticket_id = t.id AND "
        mentions += f"instr(upper(k.body), '{new_order}') > 0))"
        check = _sql(
            "new-order-recorded",
            f"The ticket now mentions {new_order}",
            _new_ticket(customer, last, mentions),
        )
        note = f"The customer corrected the reference: it is {new_order}, not {order}."
        act = _step("tickets_add_comment", ticket_id=ticket, body=note, visibility="internal")
    else:
        body = f"Hello,\n\ngood news: we sorted out {order} ourselves, so you can close the ticket."
        body += f"\n\n{first}"
        done = _new_ticket(customer, last, "t.status IN ('resolved', 'closed')")
        check = _sql("ticket-resolved", "The customer's new ticket is resolved or closed", done)
        act = _step("tickets_update_ticket", ticket_id=ticket, status="resolved")
    steps = ctx.choice(
        [
            (f"Check whether {first} has written again and update their ticket to match.",),
            (f"Keep {first}'s ticket up to date with anything new they sent.",),
            (f"See if there is news from {first} and make sure their ticket reflects it.",),
        ]
    )
    context = ctx.choice(["They may have replied by now.", "It has been a while since their first mail.", ""])
    return {
        "user": request(
            ctx,
            Ask(steps=steps, context=context, short=f"Anything new from {first}? Keep the ticket current"),
        ),
        "events": [_customer_mail(customer, case.mail_id, body, False, 90)],
        "checks": [check],
        "solution": [*find, act],
    }


def _third_turn(ctx: FamilyContext, case: _Case) -> Json:
    """The customer writes once more, and the user says so: all is sorted now (close the
    ticket), or the solved problem is back (reopen it and tell the customer)."""
    customer, last = case.customer, case.last
    first = first_name(customer.name)
    find = _step("tickets_search_tickets", "t3", requester=customer.email, sort="newest")
    ticket = {"$ref": "t3.tickets.0.id"}
    if case.variant == "correction":
        order = case.new_order
        body = f"Hi again,\n\n{order} is all sorted now and everything is fine. Please close the ticket."
        body += f"\n\n{first}"
        ask = Ask(
            steps=(f"Close {first}'s ticket, since they wrote that everything about {order} is sorted now.",),
            context=ctx.choice([f"{first} wrote again.", "Good news from the customer.", ""]),
            short=f"{first} says {order} is sorted, close their ticket",
        )
        done = _new_ticket(customer, last, "t.status IN ('resolved', 'closed')")
        checks = [_sql("closed-after-delivery", "The ticket is resolved or closed", done)]
        solution = [find, _step("tickets_update_ticket", ticket_id=ticket, status="resolved")]
    else:
        order = case.order
        body = f"Hi again,\n\nI spoke too soon: the problem with {order} is back. Can you look again?"
        body += f"\n\n{first}"
        ask = Ask(
            steps=ctx.choice(
                [
                    (
                        f"Reopen {first}'s ticket about {order}.",
                        "Add a public comment on it to tell them we are looking into it again.",
                    ),
                    (
                        f"Open {first}'s ticket about {order} again.",
                        "Let them know on the ticket, in a public comment, that we are on it again.",
                    ),
                ]
            ),
            context=f"{first} just mailed that the problem with {order} is back.",
            short=f"Reopen {first}'s ticket about {order} and tell them on it we're looking again",
        )
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
            _states(
                "customer-told-what",
                f"That comment says the problem with {order} is being looked into again (names {order})",
                "tickets_comments",
                {
                    "ticket_id": {"gt": last},
                    "visibility": "public",
                    "author": ctx.user.email,
                    "created_at": {"ge": since},
                },
                ["body"],
                [{"text": order}],
            ),
        ]
        reply = f"{greeting(customer)}\n\nsorry to hear the problem with {order} is back. We have reopened "
        reply += "the ticket and are looking into it again."
        solution = [
            find,
            _step("tickets_update_ticket", ticket_id=ticket, status="open"),
            _step("tickets_add_comment", ticket_id=ticket, body=reply, visibility="public"),
        ]
    return {
        "user": request(ctx, ask),
        "events": [_customer_mail(customer, case.mail_id, body, True, 120)],
        "checks": checks,
        "solution": solution,
    }


def _old_tickets(ctx: FamilyContext, customer: Person, queue: str, topics: list[Topic]) -> list[Json]:
    """Older tickets of the same customer about other references: they stay untouched."""
    ops = []
    for i in range(ctx.difficulty.distractors):
        params = {
            "title": ctx.choice(topics).title.format(**_values(ctx, _reference(ctx))),
            "queue": queue,
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
    worlds=True,
)
def reply_after_new_info(ctx: FamilyContext) -> Task:
    """Turn 1: a ticket from a customer's mail. Silently, the customer writes again (a corrected
    reference, or the problem is solved); turn 2 asks for news and the ticket must follow.
    With three turns an announced mail changes things once more. More distractors: older
    tickets of the same customer, which stay untouched. Runs on every world."""
    services = ["mail", "tickets"]
    customer = ctx.choice(_named(ctx, ctx.people(internal=False)) or ctx.people(internal=False))
    queue = _customer_queue(ctx)
    topics = _reference_topics(ctx, queue)
    order, new_order = (
        f"{ctx.the_world.reference_prefix}-{n}" for n in ctx.rng.sample(range(10000, 99999), 2)
    )
    topic = ctx.choice(topics)
    values = _values(ctx, order)
    subject, problem = topic.title.format(**values), topic.body.format(**values)
    summary = (
        problem if not re.search(r"\d", problem.replace(order, "")) else f"The customer writes: {subject}."
    )
    reference = "" if order in problem else f" Our reference is {order}."
    ask = "" if problem.endswith("?") or problem.startswith("Please") else " Could you look into it quickly?"
    body = f"Hello,\n\n{problem}{reference}{ask}\n\nKind regards,\n{customer.name}\n{customer.company}"
    sent = format_time(ctx.start - timedelta(minutes=35))
    mail = {"from_addr": customer.email, "subject": subject, "body": body, "sent_at": sent}
    ops = [{"service": "mail", "operation": "deliver_inbound", "params": mail}]
    ops += _old_tickets(ctx, customer, queue.name, topics)
    ws, results = _workspace(ctx, services, ops)
    case = _Case(
        customer=customer,
        queue=queue.name,
        subject=subject,
        problem=summary,
        order=order,
        new_order=new_order,
        variant=ctx.choice(["correction", "solved"]),
        last=_max_id(ws, "tickets_tickets"),
        mail_id=results[0]["id"],
    )
    turns = [_first_ticket_turn(ctx, case), _second_turn(ctx, case)]
    if ctx.difficulty.turns >= 3:
        turns.append(_third_turn(ctx, case))
    c = _q(customer.email)
    created = _count_new_tickets(case.last, c)
    # When the last turn closes the ticket, resolved and closed are both right.
    closes = (case.variant == "solved") == (len(turns) == 2)
    return ctx.task(
        capability_id="state_change_adaptation",
        services=services,
        operations=ops,
        title=f"Keep {first_name(customer.name)}'s ticket in step with their mails",
        extra_capabilities=["cross_service_handoff"],
        turns=turns,
        checks=[
            _sql("one-ticket", "Exactly one new ticket for the customer in the whole episode", created),
        ],
        guards={"free": ["tickets_tickets.status"]} if closes else {},
    )


# -- meeting_moved_announced ---------------------------------------------------------------------

ASKS = [  # (what the user asks them to do, the same in the mail, a word the mail must contain)
    ("add their topics to the agenda beforehand", "add your topics to the agenda", "agenda"),
    ("send me their updates the day before", "send me your updates the day before", "updates"),
    ("bring their latest numbers", "bring your latest numbers", "numbers"),
    ("read the notes from the last meeting first", "read the notes from the last meeting", "notes"),
]


def _moved_titles(ctx: FamilyContext) -> list[str]:
    """Meetings colleagues run in this world, and its meeting topics as titles."""
    world = ctx.the_world
    titles = {m.title for m in world.meetings if m.organizer != "me" and m.attendees and "{" not in m.title}
    titles |= {t[:1].upper() + t[1:] for t in world.vocabulary.meeting_topics}
    # No figures in the title: the mails repeat it, and a figure in a mail is checked or absent.
    return sorted(t for t in titles - {"Coffee chat"} if not re.search(r"\d", t))


def _moved_plan(ctx: FamilyContext) -> Json | None:
    """A meeting on the hour inside the shared hours, and a new start half an hour off the
    hour (so no old and new time read alike in any zone)."""
    n = max(1, min(ctx.difficulty.items, 3)) + 1
    day = ctx.choice(_meeting_days(ctx)[:4])
    picked = _pick_group(ctx, day, n, 180, least=2)
    if picked is None:
        return None
    group, (lo, hi) = picked
    minutes = ctx.choice([30, 45, 60])
    length = timedelta(minutes=minutes)
    start = ctx.choice([lo + timedelta(hours=h) for h in range(12) if lo + timedelta(hours=h) + length <= hi])
    moves = [start + timedelta(minutes=m) for m in (-150, -90, 90, 150, 210)]
    moves = [m for m in moves if lo <= m and m + length <= hi]
    taken = _titles_near(_workspace(ctx, ["calendar", "mail"], [])[0], lo, hi)
    titles = [t for t in _moved_titles(ctx) if t not in taken]
    if not moves or not titles:
        return None
    return {
        "day": day,
        "group": group,
        "minutes": minutes,
        "start": start,
        "new": ctx.choice(moves),
        "title": ctx.choice(titles),
    }


NAMED_MEETINGS = ("meeting", "sync", "review", "call", "session", "check-in", "catch-up", "retro", "huddle")


def _the_meeting(title: str) -> str:
    """How a mail names the meeting: 'the Dispatch planning meeting', 'the Budget review'."""
    words = title.split()
    if words[0].lower() == "the" and len(words) > 1:
        words = words[1:]
    name = " ".join(words)
    return f"the {name}" if words[-1].lower() in NAMED_MEETINGS else f"the {name} meeting"


def _hello(people: list[Person]) -> str:
    return "Hi both," if len(people) == 2 else "Hi all,"


def _first_mail_turn(ctx: FamilyContext, plan: Json, title: str, people: list[Person]) -> Json:
    ask, asked, token = ctx.choice(ASKS)
    day, organizer, emails = plan["day"], plan["group"][0], [p.email for p in people]
    when = _day_text(day)
    checks = [
        _mail_sent(f"asked-{i}", f"A mail to {p.name} asks them to {ask}", [p.email], [{"text": token}])
        for i, p in enumerate(people)
    ]
    note = f"{_hello(people)}\n\nahead of {_the_meeting(title)} on {day:%A}, could you please {asked}?\n\n"
    note += f"Thanks,\n{first_name(ctx.user.name)}"
    steps = ctx.choice(
        [
            (f"Email everyone on '{title}' ({when}), {organizer.name} included, and ask them to {ask}.",),
            (
                f"Send a note to all the people invited to '{title}' on {when}, the organizer "
                f"{organizer.name} too.",
                f"Ask them to {ask}.",
            ),
            (
                f"Write to everyone invited to '{title}' on {when}, {organizer.name} included, asking them to {ask}.",
            ),
        ]
    )
    context = ctx.choice(["I want that meeting to be short.", "We ran out of time last round.", ""])
    short = f"Mail everyone on '{title}' ({when}), {organizer.name} too: ask them to {ask}"
    return {
        "user": request(ctx, Ask(steps=steps, context=context, short=short)),
        "checks": checks,
        "solution": [
            _step(
                "calendar_list_events",
                "ev",
                start=day.isoformat(),
                end=_next_day(day),
                time_zone=ctx.user.time_zone,
                query=title,
            ),
            _step("calendar_get_event", event_id={"$ref": "ev.events.0.event_id"}),
            _step("mail_send_message", to=emails, subject=title, body=note),
        ],
    }


def _update_turn(ctx: FamilyContext, plan: Json, title: str, people: list[Person], event_id: int) -> Json:
    user, organizer, new = ctx.user, plan["group"][0], plan["new"]
    emails = [p.email for p in people]
    # The new time in the user's zone or the recipient's, or any zone the mail names with it.
    checks = [
        _mail_sent(
            f"updated-{i}",
            f"A mail to {p.name} gives the new start time",
            [p.email],
            [_time(new, user.time_zone, p.time_zone)],
        )
        for i, p in enumerate(people)
    ]
    local = new.astimezone(ZoneInfo(user.time_zone))
    city = user.time_zone.rsplit("/", 1)[-1].replace("_", " ")
    text = f"{_hello(people)}\n\nquick update: {_the_meeting(title)} has moved and now starts at "
    text += f"{local:%H:%M} {city} time, the same day.\n\nThanks,\n{first_name(user.name)}"
    move = {"event_id": event_id, "start": format_time(new)}
    steps = ctx.choice(
        [
            (f"Tell everyone I wrote to about '{title}' its new time.",),
            (f"Send the people I mailed about '{title}' a short update with the new time.",),
            (f"Let the same people know when '{title}' starts now.",),
        ]
    )
    context = ctx.choice(
        [
            f"{organizer.name} just moved '{title}' to a different time.",
            f"Heads-up: {first_name(organizer.name)} moved '{title}'.",
            f"'{title}' was moved by {first_name(organizer.name)}.",
        ]
    )
    return {
        "user": request(
            ctx,
            Ask(steps=steps, context=context, short=f"'{title}' moved, tell the same people the new time"),
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
    worlds=True,
)
def meeting_moved_announced(ctx: FamilyContext) -> Task:
    """Turn 1: mail everyone on a colleague's meeting. Then the organizer moves it (announced);
    turn 2: send the same people the new time. More items: more people on the invite; more
    distractors: the user's other meetings with the organizer on other days, which stay. Runs
    on every world."""
    plan = _retry(_moved_plan, ctx, "meeting to move")
    user, (organizer, *others) = ctx.user, plan["group"]
    day, start, title = plan["day"], plan["start"], plan["title"]
    invited = [(user.email, "accepted")] + [(p.email, ctx.choice(["accepted", "tentative"])) for p in others]
    end = start + timedelta(minutes=plan["minutes"])
    ops = [_event(organizer, title, start, end, invited, description=f"{title}.")]
    other_days = [d for d in _meeting_days(ctx) if d != day]
    titles = [t for t in _side_titles(ctx) if t != title]
    for i in range(ctx.difficulty.distractors):
        at = start + (other_days[i % len(other_days)] - day) + timedelta(hours=i // len(other_days))
        side = ctx.choice(titles)
        ops.append(_event(user, side, at, at + timedelta(minutes=30), [(organizer.email, "accepted")]))
    event_id = ctx.plant(["calendar", "mail"], ops)[0]["id"]
    people = [organizer, *others]
    return ctx.task(
        capability_id="state_change_adaptation",
        services=["calendar", "mail"],
        operations=ops,
        title=f"Tell everyone on '{title}' about its new time",
        extra_capabilities=["follow_up_reminder"],
        turns=[
            _first_mail_turn(ctx, plan, title, people),
            _update_turn(ctx, plan, title, people, event_id),
        ],
    )
