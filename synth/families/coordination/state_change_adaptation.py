"""Multi-turn families where the workspace changes between turns (`state_change_adaptation`):
a customer's mails change what their ticket should say (silently, then announced), and a
colleague moves a meeting the user has mailed people about (announced).
"""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from coworkenv.servers.demo import DemoPerson
from coworkenv.state import format_time
from coworkenv.task import Task

from ...family import FamilyContext, family
from ._shared import (
    SIDE_MEETINGS,
    Json,
    _day_text,
    _event,
    _first,
    _mail_sent,
    _max_id,
    _meeting_days,
    _next_day,
    _pick_group,
    _q,
    _retry,
    _sql,
    _states,
    _step,
    _time,
    _workspace,
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
        # The order number is an identifier: found as written, in the ticket or a comment on it.
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
            _states(
                "ticket-names-order",
                f"The new ticket names order {order}",
                "tickets_tickets",
                {"id": {"gt": last}, "requester": customer.email},
                ["title", "description"],
                [{"text": order}],
            ),
        ],
        "solution": [
            _step("mail_search_messages", "m", query=customer.name),
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
        ],
    )


# -- meeting_moved_announced ---------------------------------------------------------------------

ASKS = [  # (the request's words, the mail's words, the word the mail must contain)
    ("bring the list of their open escalations", "bring the list of your open escalations", "escalations"),
    ("read the draft SLA before the meeting", "read the draft SLA beforehand", "SLA"),
    ("add their topics to the agenda beforehand", "add your topics to the agenda beforehand", "agenda"),
    ("look at the February support metrics first", "look at the February support metrics first", "metrics"),
]
MOVED_MEETINGS = [
    "Support roadmap review",
    "Escalation process review",
    "Q2 staffing sync",
    "Customer health check",
]


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


def _first_mail_turn(ctx: FamilyContext, plan: Json, title: str, people: list[DemoPerson]) -> Json:
    ask, asked, token = ctx.choice(ASKS)
    day, organizer, emails = plan["day"], plan["group"][0], [p.email for p in people]
    checks = [
        _mail_sent(f"asked-{i}", f"A mail to {p.name} asks them to {ask}", [p.email], [{"text": token}])
        for i, p in enumerate(people)
    ]
    note = f"Hi all,\n\nbefore the {title}, could you please {asked}?\n\nThanks,\n{_first(ctx.user)}"
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
    text = f"Hi all,\n\nquick update: the {title} has moved and now starts at {local:%H:%M} {city} time, "
    text += f"the same day.\n\nThanks,\n{_first(user)}"
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
