"""Follow-up families (`follow_up_reminder`): chasing the user's overdue tickets."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from coworkenv.servers.demo import DemoPerson
from coworkenv.state import format_time
from coworkenv.task import Task

from ...family import FamilyContext, family
from ._shared import (
    Json,
    _check,
    _day_text,
    _first,
    _mail_sent,
    _max_id,
    _step,
    _workspace,
)

ACTIVE = ["open", "pending", "in_progress"]


# -- ticket_follow_up_due ------------------------------------------------------------------------

TICKET_TOPICS = [
    ("Order {order} has not arrived", "Tracking for order {order} has not moved since last week."),
    ("Wrong items delivered in order {order}", "The pallet for order {order} holds the wrong parts."),
    ("Refund for returned order {order}", "We returned order {order} and still wait for the refund."),
    ("Invoice for order {order} is missing", "Our accounts team cannot find the invoice for order {order}."),
    ("Damaged boxes in shipment {order}", "Two boxes of shipment {order} arrived crushed."),
    ("Change the delivery address for order {order}", "Please deliver order {order} to our new warehouse."),
]


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
    ws, results = _workspace(ctx, services, ops)
    now = format_time(ctx.start)
    active = ", ".join(f"'{s}'" for s in ACTIVE)
    overdue = ws.rows(
        "tickets_tickets",
        f"assignee = ? AND status IN ({active}) AND due_at < ? ORDER BY id",
        [user.email, now],
    )
    ids = [int(r["id"]) for r in overdue]
    others = [int(r["ticket_id"]) for r in results[ctx.difficulty.items :]]  # distractors
    last_comment = _max_id(ws, "tickets_comments")
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
    # The due date is that day in the user's time zone (17:00 their time, say) or a bare
    # date (00:00 UTC), whichever way the agent reads "due on 5 March".
    tz = ZoneInfo(user.time_zone)
    day_start = datetime.combine(due, time(0), tz)
    lo = min(day_start, datetime.combine(due, time(0), UTC))
    hi = max(day_start + timedelta(days=1), datetime.combine(due, time(0), UTC) + timedelta(days=1))
    new_due = {"ge": format_time(lo), "lt": format_time(hi)}
    ask = "Could you let us know where things stand with this? Thank you."
    for tid in ids:
        comment = {"ticket_id": tid, "author": user.email, "visibility": "public"}
        checks += [
            _check(
                f"asked-{tid}",
                "row_exists",
                f"A new public comment on #{tid}",
                table="tickets_comments",
                where={**comment, "id": {"gt": last_comment}},
            ),
            _check(
                f"due-{tid}",
                "row_exists",
                f"#{tid} is due on {due} (the user's day)",
                table="tickets_tickets",
                where={"id": tid, "due_at": new_due},
            ),
        ]
        solution += [
            _step(
                "tickets_add_comment",
                ticket_id=tid,
                body=f"Hello, {ask[0].lower()}{ask[1:]}",
                visibility="public",
            ),
            _step("tickets_update_ticket", ticket_id=tid, due_at=due.isoformat()),
        ]
    checks.append(
        _mail_sent(
            "summary-mail",
            f"A mail to {teammate.name} names every ticket followed up and no other",
            [teammate.email],
            [{"ticket": i} for i in ids],
            [{"ticket": i} for i in others],
        )
    )
    numbers = ", ".join(f"#{i}" for i in ids)
    summary_body = (
        f"Hi {_first(teammate)},\n\nI followed up on my overdue tickets: {numbers}. Each has a public "
        f"comment asking the requester for an update and is now due on {due.isoformat()}.\n\n{_first(user)}"
    )
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
    )
