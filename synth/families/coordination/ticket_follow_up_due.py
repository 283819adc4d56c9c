"""ticket_follow_up_due (`follow_up_reminder`): chasing the user's overdue tickets."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.checks import Check
from coworkenv.state import Workspace, format_time
from coworkenv.task import Task, Turn, WorldCall
from coworkenv.world import Person

from ...builders import (
    date_fact,
    day_text,
    mail_sent,
    max_id,
    operation,
    row_exists,
    states,
    step,
    text_fact,
    ticket_fact,
)
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request
from .world_folders import unique_names

ACTIVE = ["open", "pending", "in_progress"]
CITIES = ["Springfield", "Riverton", "Lakeside", "Hillcrest", "Fairview", "Maple Grove"]


# -- ticket_follow_up_due ------------------------------------------------------------------------


def _customer_queues(ctx: FamilyContext) -> list[Any]:
    """The world's queues customers file into (Support and Billing in the demo company)."""
    queues = ctx.the_world.queues
    return [q for q in queues if q.requested_by == "customers"] or list(queues)


def _ticket(ctx: FamilyContext, requester: Person, assignee: Person, due_in_days: int) -> WorldCall:
    """A ticket on a topic of one of the world's customer queues, due `due_in_days` from today."""
    world = ctx.the_world
    queue = ctx.choice(_customer_queues(ctx))
    topic = ctx.choice(queue.topics)
    fill = {
        "order": f"{world.reference_prefix}-{ctx.rng.randint(10000, 99999)}",
        "invoice": f"INV-{world.start.year}-{ctx.rng.randint(1000, 9999)}",
        "amount": f"{world.currency} {ctx.rng.randint(200, 9000)}",
        "city": ctx.choice(CITIES),
        "date": f"{ctx.rng.randint(1, 27)} February",
        "n": str(ctx.rng.randint(2, 40)),
    }
    due = datetime.combine(ctx.start.date() + timedelta(days=due_in_days), time(17), UTC)
    created = min(due - timedelta(days=ctx.rng.randint(4, 12)), ctx.start - timedelta(days=1))
    params = {
        "title": topic.title.format(**fill),
        "description": topic.body.format(**fill),
        "status": ctx.choice(ACTIVE),
        "priority": ctx.choice(["normal", "normal", "high", "low"]),
        "queue": queue.name,
        "requester": requester.email,
        "assignee": assignee.email,
        "due_at": format_time(due),
        "created_at": format_time(created),
    }
    return operation("tickets", "add_ticket", **params)


def _follow_up_tickets(ctx: FamilyContext, teammate: Person) -> list[WorldCall]:
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


def _teammate(ctx: FamilyContext) -> Person:
    """A colleague of the user's team (else any colleague) whose name nobody else shares."""
    world = ctx.the_world
    return ctx.choice(
        unique_names(world, ctx.people(team=ctx.user.team))
        or unique_names(world, ctx.people())
        or ctx.people()
    )


def _follow_up_request(ctx: FamilyContext, teammate: Person, due_day: date, days: int) -> str:
    """The user's request: chase each overdue ticket, move its due date, mail the numbers."""
    chase = ctx.choice(
        [
            "Post a public comment on every ticket assigned to me whose due date has passed, asking the "
            "requester for an update by the new due date.",
            "Ask the requester of each overdue ticket assigned to me, in a public comment, for news by the "
            "new due date.",
            "Chase every ticket of mine that is past its due date with a public comment asking the "
            "requester where things stand, by the new due date.",
        ]
    )
    move = ctx.choice(
        [
            f"Move the due date of each of those tickets to {day_text(due_day)} ({due_day.isoformat()}).",
            f"Set their due date to {due_day.isoformat()}, {days} days from today.",
            f"Give each of them a new due date of {day_text(due_day)} {due_day.year}.",
        ]
    )
    # The first name alone only where nobody else in the world has it.
    called = teammate.name if not unique_names(ctx.the_world, [teammate]) else first_name(teammate.name)
    tell = ctx.choice(
        [
            f"Mail {teammate.name} the ticket numbers you followed up on.",
            f"Send {teammate.name} a short list of those ticket numbers by mail.",
            f"Let {called} know by mail which ticket numbers you chased.",
        ]
    )
    context = ctx.choice(
        ["Some of my tickets are past their due date.", "I fell behind on a few tickets.", ""]
    )
    short = (
        f"Chase my overdue tickets with a public comment, move them to {due_day.isoformat()} and mail "
        f"{teammate.name} the numbers"
    )
    return request(ctx, Ask(steps=(chase, move, tell), context=context, short=short))


def _requesters(ws: Workspace, ids: list[int]) -> dict[int, Any]:
    """The requester's name of each ticket, as the directory knows it (None: not there)."""
    names = {}
    for tid in ids:
        (row,) = ws.rows("tickets_tickets", "id = ?", [tid])
        found = ws.rows("directory_people", "email = ?", [row["requester"]])
        names[tid] = found[0]["name"] if found else None
    return names


@family(
    "ticket_follow_up_due",
    capability_id="follow_up_reminder",
    services=["tickets", "mail", "directory"],
    worlds=True,
)
def ticket_follow_up_due(ctx: FamilyContext) -> Task:
    """Chase the user's overdue tickets: a public comment asking the requester for an update
    and a new due date on each (the seed's own overdue tickets of the user count too), then a
    summary mail to a teammate. Tickets are on topics of the world's customer queues. More
    items: more overdue tickets; more distractors: tickets not due yet and a teammate's
    overdue tickets."""
    services = ["tickets", "mail", "directory"]
    user = ctx.user
    teammate = _teammate(ctx)
    ops = _follow_up_tickets(ctx, teammate)
    results, ws = ctx.seeded(services, ops)
    now = format_time(ctx.start)
    active = ", ".join(f"'{s}'" for s in ACTIVE)
    overdue = ws.rows(
        "tickets_tickets",
        f"assignee = ? AND status IN ({active}) AND due_at < ? ORDER BY id",
        [user.email, now],
    )
    ids = [int(r["id"]) for r in overdue]
    others = [int(r["ticket_id"]) for r in results[ctx.difficulty.items :]]  # distractors
    last_comment = max_id(ws, "tickets_comments")
    days = ctx.choice([3, 4, 7])
    due = ctx.start.date() + timedelta(days=days)
    user_text = _follow_up_request(ctx, teammate, due, days)
    checks: list[Check] = []
    solution = [
        step("tickets_search_tickets", assignee=user.email, status=ACTIVE, due_before=now, sort="due"),
    ]
    # The due date is that day in the user's time zone (17:00 their time, say) or a bare
    # date (00:00 UTC), whichever way the agent reads "due on 5 March".
    tz = ZoneInfo(user.time_zone)
    day_start = datetime.combine(due, time(0), tz)
    lo = min(day_start, datetime.combine(due, time(0), UTC))
    hi = max(day_start + timedelta(days=1), datetime.combine(due, time(0), UTC) + timedelta(days=1))
    new_due = {"ge": format_time(lo), "lt": format_time(hi)}
    ask = ctx.choice(
        [
            "could you let us know where things stand with this by {day}? Thank you.",
            "we are following up on this request. Could you send us any news on your side by {day}?",
            "just checking in: could you send us an update on this by {day}?",
        ]
    ).format(day=f"{day_text(due)} {due.year}")
    names = _requesters(ws, ids)
    given_of = {tid: first_name(name) for tid, name in names.items() if name}
    given = set(given_of.values())
    for tid in ids:
        comment = {"ticket_id": tid, "author": user.email, "visibility": "public"}
        checks += [
            states(
                f"asked-{tid}",
                f"A new public comment on #{tid} asks for an update by the new due date, {due}, "
                "and greets no other ticket's requester",
                "tickets_comments",
                {**comment, "id": {"gt": last_comment}},
                ["body"],
                [date_fact(due)],
                # the comment meant for another requester, posted here instead
                absent=[text_fact(n) for n in sorted(given - {first_name(user.name), given_of.get(tid)})],
            ),
            row_exists(
                f"due-{tid}",
                f"#{tid} is due on {due} (the user's day)",
                "tickets_tickets",
                {"id": tid, "due_at": new_due},
            ),
        ]
        hello = f"Hello {first_name(names[tid])}," if names[tid] else "Hello,"
        body = f"{hello}\n\n{ask[:1].upper()}{ask[1:]}\n\n{first_name(user.name)}"
        solution += [
            step("tickets_add_comment", ticket_id=tid, body=body, visibility="public"),
            step("tickets_update_ticket", ticket_id=tid, due_at=due.isoformat()),
        ]
    checks.append(
        mail_sent(
            "summary-mail",
            f"A mail to {teammate.name} names every ticket followed up and no other",
            [teammate.email],
            [ticket_fact(i) for i in ids],
            absent=[ticket_fact(i) for i in others],
        )
    )
    numbers = ", ".join(f"#{i}" for i in ids)
    summary_body = (
        f"{greeting(teammate)}\n\nI followed up on my overdue tickets: {numbers}. Each has a public "
        f"comment asking the requester for an update and is now due on {due.isoformat()}.\n\n"
        f"{first_name(user.name)}"
    )
    solution += [
        step("directory_search_people", query=first_name(teammate.name)),  # as the user names them
        step(
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
        turns=[Turn(user=user_text, checks=checks, solution=solution)],
    )
