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

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.state import format_time
from coworkenv.task import Candidate, Clarification, Task, Turn, WorldCall
from coworkenv.world import Person

from ...builders import (
    date_fact,
    day_text,
    event,
    field_equals,
    given_name,
    mail_event,
    mail_sent,
    max_id,
    next_day,
    number_fact,
    operation,
    row_exists,
    states,
    step,
    text_fact,
    ticket_fact,
)
from ...family import FamilyContext, family
from ..calendar_planning import meeting_days
from .day_texts import customer_queue, fill, plain_topics, reference, references, say

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


def _at(day: date, hour: int, zone: str) -> datetime:
    return datetime.combine(day, time(hour), ZoneInfo(zone))


def _problem(ctx: FamilyContext, ref: str) -> tuple[str, str]:
    """A subject and a request of the customer queue's topics, naming the reference."""
    topic = ctx.choice(plain_topics(customer_queue(ctx).topics))
    title, body = fill(ctx, topic.title, ref), fill(ctx, topic.body, ref)
    if ref not in title:
        title = f"{title} ({ref})"
    return title, body


def _older_tickets(ctx: FamilyContext, customer: Person) -> list[WorldCall]:
    """The customer's older tickets about other references: "the ticket you opened this
    morning" is not one of them, and they stay untouched."""
    ops = []
    queue = customer_queue(ctx).name
    for i in range(ctx.difficulty.distractors):
        title = _problem(ctx, reference(ctx))[0]
        ops.append(
            operation(
                "tickets",
                "add_ticket",
                title=title,
                queue=queue,
                requester=customer.email,
                status=ctx.choice(["open", "in_progress"]),
                created_at=format_time(ctx.start - timedelta(days=2 + 3 * i)),
            )
        )
    return ops


def _resolved_pair(ctx: FamilyContext, customer: Person) -> tuple[list[WorldCall], list[str]]:
    """Two resolved older tickets of the customer, the older one first: "their old ticket that
    is sorted" could be either (the family draws which)."""
    queue = customer_queue(ctx).name
    ops, refs = [], []
    for days in (12, 8):
        ref = reference(ctx)
        ops.append(
            operation(
                "tickets",
                "add_ticket",
                title=_problem(ctx, ref)[0],
                queue=queue,
                requester=customer.email,
                status="resolved",
                created_at=format_time(ctx.start - timedelta(days=days)),
            )
        )
        refs.append(ref)
    return ops, refs


@dataclass(frozen=True)
class _Day:
    """Everything the turns of the day name: who, what, when, and the ids they will have."""

    user: Person
    customer: Person
    colleague: Person
    """Who joins the call, then cannot make the first day."""
    money: Person
    """The colleague of finance added to the call after all."""
    queue: str
    currency: str
    order: str
    new_order: str
    """The reference the customer silently corrects the first one to."""
    amount: int
    """The refund agreed on the phone, told in the first turn and answered in the last."""
    subject: str
    problem: str
    first_day: date
    second_day: date
    hour: int
    title: str
    mail_id: int
    resolved: list[int]
    """The customer's two resolved tickets, the older first."""
    titles: list[str]
    sorted_index: int
    """Which of the two the customer means (drawn)."""
    sorted_ref: str
    ticket: int
    """The ticket the agent opens."""
    call_id: int
    """The call the agent books."""
    last_event: int
    new_ticket: dict[str, Any]
    operations: list[WorldCall]

    @property
    def booked(self) -> datetime:
        return _at(self.first_day, self.hour, self.user.time_zone)

    @property
    def moved(self) -> datetime:
        return _at(self.second_day, self.hour, self.user.time_zone)

    @property
    def new_event(self) -> dict[str, Any]:
        """The call the agent books, as a `where` filter."""
        return {"id": {"gt": self.last_event}, "organizer_email": self.user.email, "status": "confirmed"}


def _plan_day(ctx: FamilyContext) -> _Day:
    """The morning's plan: the customer and their mail, the colleagues, the references, the
    refund, the two days of the call, and the customer's older tickets planted."""
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
    first_day, second_day = ctx.rng.sample(meeting_days(ctx)[:6], 2)
    hour = ctx.choice([10, 11, 14, 15])

    body = f"Hello,\n\n{problem} Our reference is {order}. Can you help us sort this out quickly?"
    body += f"\n\nKind regards,\n{customer.name}"
    sent = format_time(ctx.start - timedelta(minutes=40))
    pair, refs = _resolved_pair(ctx, customer)
    # Which of the two is sorted is drawn: no fixed rule (the older, the newer) finds it.
    right = ctx.rng.randrange(len(refs))
    ops = [
        operation(
            "mail", "deliver_inbound", from_addr=customer.email, subject=subject, body=body, sent_at=sent
        ),
        *pair,
        *_older_tickets(ctx, customer),
    ]
    results, ws = ctx.seeded(SERVICES, ops)
    resolved = [int(r["ticket_id"]) for r in results[1:3]]  # the older first
    titles = [
        ws.conn.execute("SELECT title FROM tickets_tickets WHERE id = ?", (i,)).fetchone()[0]
        for i in resolved
    ]
    last_ticket, last_event = max_id(ws, "tickets_tickets"), max_id(ws, "calendar_events")
    return _Day(
        user=user,
        customer=customer,
        colleague=colleague,
        money=money,
        queue=queue,
        currency=currency,
        order=order,
        new_order=new_order,
        amount=amount,
        subject=subject,
        problem=problem,
        first_day=first_day,
        second_day=second_day,
        hour=hour,
        title=f"Call about the {customer.company} request",
        mail_id=results[0]["id"],
        resolved=resolved,
        titles=titles,
        sorted_index=right,
        sorted_ref=refs[right],
        ticket=last_ticket + 1,
        call_id=last_event + 1,
        last_event=last_event,
        new_ticket={"id": {"gt": last_ticket}, "requester": customer.email},
        operations=ops,
    )


def _open_ticket(ctx: FamilyContext, d: _Day) -> Turn:
    """First thing: a ticket from the customer's mail, and a refund to remember for later."""
    customer = d.customer
    return Turn(
        user=say(
            ctx,
            MOMENTS[0],
            f"Open a {d.queue} ticket for the mail {customer.name} from {customer.company} sent us, with them "
            "as the requester.",
            f"Remember for later that I agreed a refund of {d.currency} {d.amount} with them on the phone.",
            context=f"{customer.name} mailed us about {d.order}.",
        ),
        checks=[
            field_equals(
                "ticket-opened",
                f"One new {d.queue} ticket for the customer",
                "tickets_tickets",
                d.new_ticket,
                "queue",
                d.queue,
            ),
            states(
                "ticket-names-order",
                f"The new ticket names order {d.order}",
                "tickets_tickets",
                d.new_ticket,
                ["title", "description"],
                [text_fact(d.order)],
            ),
        ],
        solution=[
            step("mail_search_messages", "m", query=customer.name, folder="inbox"),
            step("mail_get_message", message_id={"$ref": "m.messages.0.id"}),
            step(
                "tickets_create_ticket",
                title=d.subject,
                queue=d.queue,
                description=f"{d.problem} Reference {d.order}.",
                requester=customer.email,
            ),
        ],
    )


def _book_call(ctx: FamilyContext, d: _Day) -> Turn:
    """Mid-morning: the colleague offers a time by mail, and the call is booked then."""
    colleague, coll = d.colleague, given_name(d.colleague)
    offer = f"Hi {given_name(d.user)},\n\nhappy to join a call about the {d.customer.company} request. "
    offer += f"{day_text(d.first_day)} at {d.hour}:00 your time works for me.\n\n{coll}"
    return Turn(
        user=say(
            ctx,
            MOMENTS[1],
            f"Book a one-hour '{d.title}' with {colleague.name} at the time {coll} offered.",
            context=f"{colleague.name} answered about joining a call on that request.",
        ),
        events=[
            mail_event(colleague.email, 90, True, subject=f"Re: {d.customer.company} request", body=offer)
        ],
        checks=[
            field_equals(
                "call-booked",
                "The call starts at the offered time",
                "calendar_events",
                d.new_event,
                "start_utc",
                format_time(d.booked),
            ),
            row_exists(
                "colleague-invited",
                f"{colleague.name} is invited",
                "calendar_attendees",
                {"event_id": {"gt": d.last_event}, "email": colleague.email},
            ),
        ],
        solution=[
            step("mail_search_messages", "o", query=coll, unread=True),
            step("mail_get_message", message_id={"$ref": "o.messages.0.id"}),
            step(
                "calendar_create_event",
                title=d.title,
                start=d.booked.isoformat(),
                end=(d.booked + timedelta(hours=1)).isoformat(),
                attendees=[colleague.email],
            ),
        ],
    )


def _note_correction(ctx: FamilyContext, d: _Day) -> Turn:
    """Late morning: the customer has silently corrected the reference; it goes on the ticket."""
    customer, cust = d.customer, given_name(d.customer)
    correction = (
        f"Hello,\n\nsorry, I gave you the wrong reference: it is {d.new_order}, not {d.order}.\n\n{cust}"
    )
    return Turn(
        user=say(
            ctx,
            MOMENTS[2],
            "Keep the ticket you opened this morning up to date with an internal note.",
            context=f"{cust} may have written again.",
            short="Update this morning's ticket with an internal note if anything changed.",
        ),
        events=[mail_event(customer.email, 60, False, in_reply_to=d.mail_id, body=correction)],
        checks=[
            states(
                "correction-noted",
                f"A note on the ticket gives the corrected reference {d.new_order}",
                "tickets_comments",
                {"ticket_id": d.ticket, "visibility": "internal"},
                ["body"],
                [text_fact(d.new_order)],
            ),
        ],
        solution=[
            step("mail_search_messages", "c", sender=customer.email, unread=True),
            step("mail_get_message", message_id={"$ref": "c.messages.0.id"}),
            step("tickets_search_tickets", "t", requester=customer.email, sort="newest"),
            step(
                "tickets_add_comment",
                ticket_id={"$ref": "t.tickets.0.id"},
                visibility="internal",
                body=f"The customer corrected the reference: it is {d.new_order}, not {d.order}.",
            ),
        ],
    )


def _close_sorted_ticket(ctx: FamilyContext, d: _Day) -> Turn:
    """Just before lunch: "close their old ticket that is sorted" when two are resolved (an
    agent should ask which)."""
    cust, resolved, titles = given_name(d.customer), d.resolved, d.titles
    sorted_id, other_id = resolved[d.sorted_index], resolved[1 - d.sorted_index]
    question = (
        f"{cust} has two resolved tickets: #{resolved[0]} ({titles[0]}) and #{resolved[1]} ({titles[1]}). "
        "Which one is sorted and should be closed?"
    )
    return Turn(
        user=say(
            ctx, MOMENTS[3], f"Close {cust}'s old ticket that is sorted now: they told me so on the phone."
        ),
        clarification=Clarification(
            question=question,
            answer=f"The one about {d.sorted_ref}. Leave the other one as it is.",
            after=1,
            # An agent that does not ask closes one of the two: here the wrong one.
            guess=[step("tickets_update_ticket", ticket_id=other_id, status="closed")],
            candidates=[Candidate(argument="ticket_id", value=i) for i in resolved],
        ),
        checks=[
            field_equals(
                "old-ticket-closed",
                f"The resolved ticket about {d.sorted_ref} is closed",
                "tickets_tickets",
                {"id": sorted_id},
                "status",
                "closed",
            ),
        ],
        solution=[
            step("tickets_search_tickets", requester=d.customer.email, status="resolved"),
            step("tickets_update_ticket", ticket_id=sorted_id, status="closed"),
        ],
    )


def _move_call(ctx: FamilyContext, d: _Day) -> Turn:
    """Back from lunch: the colleague cannot make the first day; the call moves to another."""
    coll = given_name(d.colleague)
    change = f"Hi {given_name(d.user)},\n\nsorry, {day_text(d.first_day)} no longer works for me.\n\n{coll}"
    return Turn(
        user=say(
            ctx,
            MOMENTS[4],
            f"Move the call you booked to {day_text(d.second_day)}, same time, as {coll} can't make "
            f"{d.first_day:%A} after all.",
            context=f"{coll} mailed about the call.",
        ),
        events=[mail_event(d.colleague.email, 120, True, subject=f"Re: {d.title}", body=change)],
        checks=[
            field_equals(
                "call-moved",
                "The call starts on the new day at the same time",
                "calendar_events",
                d.new_event,
                "start_utc",
                format_time(d.moved),
            ),
        ],
        solution=[
            step(
                "calendar_list_events",
                start=d.first_day.isoformat(),
                end=next_day(d.first_day),
                query=d.title,
                time_zone=d.user.time_zone,
            ),
            step("calendar_update_event", event_id=d.call_id, start=d.moved.isoformat()),
        ],
        changed_mind=True,
    )


def _add_finance(ctx: FamilyContext, d: _Day) -> Turn:
    """Mid-afternoon: the user changes their mind and wants finance on the call too."""
    money = d.money
    return Turn(
        user=say(
            ctx,
            MOMENTS[5],
            f"Add {money.name} ({money.email}) to the call you booked after all.",
            context="I want finance on the call as well.",
        ),
        checks=[
            row_exists(
                "finance-invited",
                f"{money.name} is invited to the call",
                "calendar_attendees",
                {"event_id": {"gt": d.last_event}, "email": money.email},
            ),
        ],
        solution=[
            step(
                "calendar_list_events",
                start=d.second_day.isoformat(),
                end=next_day(d.second_day),
                query=d.title,
                time_zone=d.user.time_zone,
            ),
            step("calendar_update_event", event_id=d.call_id, add_attendees=[money.email]),
        ],
        changed_mind=True,
    )


def _answer_refund(ctx: FamilyContext, d: _Day) -> Turn:
    """Before logging off: the customer asks on the ticket for news; the answer gives the
    refund from the first turn, and a summary mail names the ticket and the new day."""
    colleague, money, cust, coll = d.colleague, d.money, given_name(d.customer), given_name(d.colleague)
    summary = f"Hi {coll},\n\nsummary for {d.customer.company}: ticket #{d.ticket} is open ({d.new_order}), "
    summary += f"and our call is now on {day_text(d.second_day)}.\n\n{given_name(d.user)}"
    nudge = "Any news on this? We would like to know where we stand."
    return Turn(
        user=say(
            ctx,
            MOMENTS[6],
            f"Answer {cust} on the ticket with the refund I told you about this morning.",
            f"Mail {coll} a short summary with the ticket number and the day of our call, and copy "
            f"{given_name(money)}.",
            context=f"{cust} asked on the ticket for news.",
        ),
        events=[
            event("tickets", "customer_comment", minutes=120, announced=True, ticket_id=d.ticket, body=nudge)
        ],
        checks=[
            states(
                "refund-answered",
                f"A public answer on the ticket gives the refund of {d.currency} {d.amount}",
                "tickets_comments",
                {"ticket_id": d.ticket, "visibility": "public", "author": d.user.email},
                ["body"],
                [number_fact(d.amount)],
            ),
            mail_sent(
                "summary-mailed",
                f"{colleague.name} and {money.name} get the ticket number and the new day",
                [colleague.email, money.email],
                [ticket_fact(d.ticket), date_fact(d.second_day)],
                absent=[date_fact(d.first_day)],
            ),
        ],
        solution=[
            step("tickets_list_comments", ticket_id=d.ticket),
            step(
                "tickets_add_comment",
                ticket_id=d.ticket,
                visibility="public",
                body=f"Hello {cust}, we are refunding {d.currency} {d.amount} for this; you will see it shortly.",
            ),
            step(
                "mail_send_message",
                to=[colleague.email],
                cc=[money.email],
                subject=f"{d.customer.company}: summary",
                body=summary,
            ),
        ],
    )


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
    d = _plan_day(ctx)
    turns = [
        _open_ticket(ctx, d),
        _book_call(ctx, d),
        _note_correction(ctx, d),
        _close_sorted_ticket(ctx, d),
        _move_call(ctx, d),
        _add_finance(ctx, d),
        _answer_refund(ctx, d),
    ]
    return ctx.task(
        capability_id="state_change_adaptation",
        services=SERVICES,
        operations=d.operations,
        title=f"A day with {given_name(d.customer)}'s request: ticket, call, correction, old ticket, new day, "
        "finance, refund",
        extra_capabilities=["cross_service_handoff", "scheduling_constraints"],
        turns=turns,
    )
