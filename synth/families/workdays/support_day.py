"""A support agent's day (`support_day`): seven turns from first thing to the end of the day.

The user opens a ticket from a customer's mail and mentions a refund agreed on the phone;
a colleague offers a time and the user books the call; the customer silently corrects the
reference; the user asks to close the customer's old ticket that is sorted, and two are
resolved (an agent should ask which); the colleague cannot make it and the user moves the
call to another day; the user changes their mind and wants a colleague of finance on the call
too; the customer asks on the ticket for news, and the user has the agent answer with the
refund given that morning and mail a summary naming the ticket and the new day.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from coworkenv.state import format_time
from coworkenv.task import Task
from coworkenv.world import Person

from ...family import FamilyContext, family
from ..coordination._shared import (
    _check,
    _day_text,
    _first,
    _mail_sent,
    _max_id,
    _meeting_days,
    _next_day,
    _states,
    _step,
    _workspace,
)
from ._day import (
    Json,
    changed_mind,
    customer_queue,
    fill,
    mail_event,
    plain_topics,
    reference,
    references,
    say,
)

SERVICES = ["mail", "tickets", "calendar"]
MOMENTS = [
    "First thing this morning.",
    "Mid-morning.",
    "Late morning.",
    "Just before lunch.",
    "Back from lunch.",
    "Mid-afternoon.",
    "Before I log off.",
]


def _field(check_id: str, description: str, table: str, where: Json, column: str, value: object) -> Json:
    return _check(check_id, "field_equals", description, table=table, where=where, column=column, value=value)


def _at(day: date, hour: int, zone: str) -> datetime:
    return datetime.combine(day, time(hour), ZoneInfo(zone))


def _problem(ctx: FamilyContext, ref: str) -> tuple[str, str]:
    """A subject and a request of the customer queue's topics, naming the reference."""
    topic = ctx.choice(plain_topics(customer_queue(ctx).topics))
    title, body = fill(ctx, topic.title, ref), fill(ctx, topic.body, ref)
    if ref not in title:
        title = f"{title} ({ref})"
    return title, body


def _older_tickets(ctx: FamilyContext, customer: Person) -> list[Json]:
    """The customer's older tickets about other references: "the ticket you opened this
    morning" is not one of them, and they stay untouched."""
    ops = []
    queue = customer_queue(ctx).name
    for i in range(ctx.difficulty.distractors):
        title = _problem(ctx, reference(ctx))[0]
        params = {
            "title": title,
            "queue": queue,
            "requester": customer.email,
            "status": ctx.choice(["open", "in_progress"]),
            "created_at": format_time(ctx.start - timedelta(days=2 + 3 * i)),
        }
        ops.append({"service": "tickets", "operation": "add_ticket", "params": params})
    return ops


def _resolved_pair(ctx: FamilyContext, customer: Person) -> tuple[list[Json], list[str]]:
    """Two resolved older tickets of the customer, the older one first: "their old ticket that
    is sorted" could be either (the family draws which)."""
    queue = customer_queue(ctx).name
    ops, refs = [], []
    for days in (12, 8):
        ref = reference(ctx)
        params = {
            "title": _problem(ctx, ref)[0],
            "queue": queue,
            "requester": customer.email,
            "status": "resolved",
            "created_at": format_time(ctx.start - timedelta(days=days)),
        }
        ops.append({"service": "tickets", "operation": "add_ticket", "params": params})
        refs.append(ref)
    return ops, refs


@family(
    "support_day",
    capability_id="state_change_adaptation",
    services=SERVICES,
    multi_turn=True,
    worlds=True,
    kind="workday",
)
def support_day(ctx: FamilyContext) -> Task:
    """Seven turns over one day: a ticket from a customer's mail, a call booked on a colleague's
    offer, a silent correction noted on the ticket, an ambiguous request to close "their old
    ticket" when two are resolved (ask which), the call moved when the colleague changes the
    plan, a finance colleague added to it when the user changes their mind, and an answer on
    the ticket with the refund from the first turn plus a summary mail. More distractors: older
    open tickets of the same customer, which stay untouched."""
    user, customer = ctx.user, ctx.person(internal=False)
    colleague = ctx.person(internal=True)
    world = ctx.the_world
    finance = [
        p
        for p in ctx.people(team=world.team("finance"), exclude=[colleague.email])
        if p.email != colleague.email
    ] or ctx.people(exclude=[colleague.email])
    money = ctx.choice(finance)
    queue, currency = customer_queue(ctx).name, world.currency
    order, new_order = references(ctx, 2)
    amount = ctx.choice([180, 240, 315, 420, 560, 675])
    subject, problem = _problem(ctx, order)
    first_day, second_day = ctx.rng.sample(_meeting_days(ctx)[:6], 2)
    hour = ctx.choice([10, 11, 14, 15])
    booked, moved = _at(first_day, hour, user.time_zone), _at(second_day, hour, user.time_zone)
    title = f"Call about the {customer.company} request"

    body = f"Hello,\n\n{problem} Our reference is {order}. Can you help us sort this out quickly?"
    body += f"\n\nKind regards,\n{customer.name}"
    sent = format_time(ctx.start - timedelta(minutes=40))
    mail = {"from_addr": customer.email, "subject": subject, "body": body, "sent_at": sent}
    pair, refs = _resolved_pair(ctx, customer)
    # Which of the two is sorted is drawn: no fixed rule (the older, the newer) finds it.
    right = ctx.rng.randrange(len(refs))
    sorted_ref = refs[right]
    ops = [
        {"service": "mail", "operation": "deliver_inbound", "params": mail},
        *pair,
        *_older_tickets(ctx, customer),
    ]
    ws, results = _workspace(ctx, SERVICES, ops)
    mail_id = results[0]["id"]
    resolved = [int(r["ticket_id"]) for r in results[1:3]]  # the older first
    sorted_id, other_id = resolved[right], resolved[1 - right]
    titles = [
        ws.conn.execute("SELECT title FROM tickets_tickets WHERE id = ?", (i,)).fetchone()[0]
        for i in resolved
    ]
    last_ticket, last_event = _max_id(ws, "tickets_tickets"), _max_id(ws, "calendar_events")
    ticket, call_id = last_ticket + 1, last_event + 1
    new_ticket = {"id": {"gt": last_ticket}, "requester": customer.email}
    new_event = {"id": {"gt": last_event}, "organizer_email": user.email, "status": "confirmed"}
    cust, coll = _first(customer), _first(colleague)

    turn1 = {
        "user": say(
            ctx,
            MOMENTS[0],
            f"Open a {queue} ticket for the mail {customer.name} from {customer.company} sent us, with them "
            "as the requester.",
            f"Remember for later that I agreed a refund of {currency} {amount} with them on the phone.",
            context=f"{customer.name} mailed us about {order}.",
        ),
        "checks": [
            _field(
                "ticket-opened",
                f"One new {queue} ticket for the customer",
                "tickets_tickets",
                new_ticket,
                "queue",
                queue,
            ),
            _states(
                "ticket-names-order",
                f"The new ticket names order {order}",
                "tickets_tickets",
                new_ticket,
                ["title", "description"],
                [{"text": order}],
            ),
        ],
        "solution": [
            _step("mail_search_messages", "m", query=customer.name, folder="inbox"),
            _step("mail_get_message", message_id={"$ref": "m.messages.0.id"}),
            _step(
                "tickets_create_ticket",
                title=subject,
                queue=queue,
                description=f"{problem} Reference {order}.",
                requester=customer.email,
            ),
        ],
    }
    offer = f"Hi {_first(user)},\n\nhappy to join a call about the {customer.company} request. "
    offer += f"{_day_text(first_day)} at {hour}:00 your time works for me.\n\n{coll}"
    turn2 = {
        "user": say(
            ctx,
            MOMENTS[1],
            f"Book a one-hour '{title}' with {colleague.name} at the time {coll} offered.",
            context=f"{colleague.name} answered about joining a call on that request.",
        ),
        "events": [
            mail_event(colleague.email, 90, True, subject=f"Re: {customer.company} request", body=offer)
        ],
        "checks": [
            _field(
                "call-booked",
                "The call starts at the offered time",
                "calendar_events",
                new_event,
                "start_utc",
                format_time(booked),
            ),
            _check(
                "colleague-invited",
                "row_exists",
                f"{colleague.name} is invited",
                table="calendar_attendees",
                where={"event_id": {"gt": last_event}, "email": colleague.email},
            ),
        ],
        "solution": [
            _step("mail_search_messages", "o", query=coll, unread=True),
            _step("mail_get_message", message_id={"$ref": "o.messages.0.id"}),
            _step(
                "calendar_create_event",
                title=title,
                start=booked.isoformat(),
                end=(booked + timedelta(hours=1)).isoformat(),
                attendees=[colleague.email],
            ),
        ],
    }
    correction = f"Hello,\n\nsorry, I gave you the wrong reference: it is {new_order}, not {order}.\n\n{cust}"
    turn3 = {
        "user": say(
            ctx,
            MOMENTS[2],
            "Keep the ticket you opened this morning up to date with an internal note.",
            context=f"{cust} may have written again.",
            short="Update this morning's ticket with an internal note if anything changed.",
        ),
        "events": [mail_event(customer.email, 60, False, in_reply_to=mail_id, body=correction)],
        "checks": [
            _states(
                "correction-noted",
                f"A note on the ticket gives the corrected reference {new_order}",
                "tickets_comments",
                {"ticket_id": ticket, "visibility": "internal"},
                ["body"],
                [{"text": new_order}],
            ),
        ],
        "solution": [
            _step("mail_search_messages", "c", sender=customer.email, unread=True),
            _step("mail_get_message", message_id={"$ref": "c.messages.0.id"}),
            _step("tickets_search_tickets", "t", requester=customer.email, sort="newest"),
            _step(
                "tickets_add_comment",
                ticket_id={"$ref": "t.tickets.0.id"},
                visibility="internal",
                body=f"The customer corrected the reference: it is {new_order}, not {order}.",
            ),
        ],
    }
    question = (
        f"{cust} has two resolved tickets: #{resolved[0]} ({titles[0]}) and #{resolved[1]} ({titles[1]}). "
        "Which one is sorted and should be closed?"
    )
    turn_close = {
        "user": say(
            ctx,
            MOMENTS[3],
            f"Close {cust}'s old ticket that is sorted now: they told me so on the phone.",
        ),
        "clarification": {
            "question": question,
            "answer": f"The one about {sorted_ref}. Leave the other one as it is.",
            "after": 1,
            # An agent that does not ask closes one of the two: here the wrong one.
            "guess": [_step("tickets_update_ticket", ticket_id=other_id, status="closed")],
            "candidates": [{"argument": "ticket_id", "value": i} for i in resolved],
        },
        "checks": [
            _field(
                "old-ticket-closed",
                f"The resolved ticket about {sorted_ref} is closed",
                "tickets_tickets",
                {"id": sorted_id},
                "status",
                "closed",
            ),
        ],
        "solution": [
            _step("tickets_search_tickets", requester=customer.email, status="resolved"),
            _step("tickets_update_ticket", ticket_id=sorted_id, status="closed"),
        ],
    }
    change = f"Hi {_first(user)},\n\nsorry, {_day_text(first_day)} no longer works for me.\n\n{coll}"
    turn_move = {
        "user": say(
            ctx,
            MOMENTS[4],
            f"Move the call you booked to {_day_text(second_day)}, same time, as {coll} can't make "
            f"{first_day:%A} after all.",
            context=f"{coll} mailed about the call.",
        ),
        "events": [mail_event(colleague.email, 120, True, subject=f"Re: {title}", body=change)],
        "checks": [
            _field(
                "call-moved",
                "The call starts on the new day at the same time",
                "calendar_events",
                new_event,
                "start_utc",
                format_time(moved),
            ),
        ],
        "solution": [
            _step(
                "calendar_list_events",
                start=first_day.isoformat(),
                end=_next_day(first_day),
                query=title,
                time_zone=user.time_zone,
            ),
            _step("calendar_update_event", event_id=call_id, start=moved.isoformat()),
        ],
    }
    turn_finance = {
        "user": say(
            ctx,
            MOMENTS[5],
            f"Add {money.name} ({money.email}) to the call you booked after all.",
            context="I want finance on the call as well.",
        ),
        "checks": [
            _check(
                "finance-invited",
                "row_exists",
                f"{money.name} is invited to the call",
                table="calendar_attendees",
                where={"event_id": {"gt": last_event}, "email": money.email},
            ),
        ],
        "solution": [
            _step(
                "calendar_list_events",
                start=second_day.isoformat(),
                end=_next_day(second_day),
                query=title,
                time_zone=user.time_zone,
            ),
            _step(
                "calendar_update_event",
                event_id=call_id,
                add_attendees=[money.email],
            ),
        ],
    }
    nudge = {"ticket_id": ticket, "body": "Any news on this? We would like to know where we stand."}
    summary = f"Hi {coll},\n\nsummary for {customer.company}: ticket #{ticket} is open ({new_order}), "
    summary += f"and our call is now on {_day_text(second_day)}.\n\n{_first(user)}"
    turn_news = {
        "user": say(
            ctx,
            MOMENTS[6],
            f"Answer {cust} on the ticket with the refund I told you about this morning.",
            f"Mail {coll} a short summary with the ticket number and the day of our call, and copy "
            f"{_first(money)}.",
            context=f"{cust} asked on the ticket for news.",
        ),
        "events": [
            {
                "service": "tickets",
                "operation": "customer_comment",
                "announced": True,
                "advance_minutes": 120,
                "params": nudge,
            }
        ],
        "checks": [
            _states(
                "refund-answered",
                f"A public answer on the ticket gives the refund of {currency} {amount}",
                "tickets_comments",
                {"ticket_id": ticket, "visibility": "public", "author": user.email},
                ["body"],
                [{"number": amount}],
            ),
            _mail_sent(
                "summary-mailed",
                f"{colleague.name} and {money.name} get the ticket number and the new day",
                [colleague.email, money.email],
                [{"ticket": ticket}, {"date": second_day.isoformat()}],
                absent=[{"date": first_day.isoformat()}],
            ),
        ],
        "solution": [
            _step("tickets_list_comments", ticket_id=ticket),
            _step(
                "tickets_add_comment",
                ticket_id=ticket,
                visibility="public",
                body=f"Hello {cust}, we are refunding {currency} {amount} for this; you will see it shortly.",
            ),
            _step(
                "mail_send_message",
                to=[colleague.email],
                cc=[money.email],
                subject=f"{customer.company}: summary",
                body=summary,
            ),
        ],
    }
    return ctx.task(
        capability_id="state_change_adaptation",
        services=SERVICES,
        operations=ops,
        title=f"A day with {cust}'s request: ticket, call, correction, old ticket, new day, finance, refund",
        extra_capabilities=["cross_service_handoff", "scheduling_constraints"],
        turns=[
            turn1,
            turn2,
            turn3,
            turn_close,
            changed_mind(turn_move),
            changed_mind(turn_finance),
            turn_news,
        ],
    )
