"""tickets_bulk_close_resolved (bulk_conditional_update): close every resolved ticket in a
queue that has gone untouched for longer than a stated age."""

from __future__ import annotations

from coworkenv.checks import Check
from coworkenv.state import Workspace
from coworkenv.task import Task, Turn, WorldCall

from ...builders import field_equals, guard, operation, start_shifted, step
from ...family import FamilyContext, family
from ...phrasing import Ask, request
from .world_texts import ticket_values

# -- tickets_bulk_close_resolved -----------------------------------------------------------------

CLOSE_TITLES = {
    "Support": ["Order {order} has not arrived", "Wrong items delivered in order {order}",
                "Damaged goods in shipment {order}", "Delivery address change for order {order}"],
    "Billing": ["Invoice {invoice} charged twice", "Refund for returned order {order}",
                "Wrong VAT on invoice {invoice}", "Copy of invoice {invoice} requested"],
    "Engineering": ["Order export API times out", "Tracking numbers missing from mails ({order})",
                    "Portal shows a blank page after login", "Invoice PDF shows the wrong currency"],
    "IT": ["Printer on the second floor jammed", "Replace a broken monitor",
           "Laptop battery drains fast", "Access to the finance share"],
}  # fmt: skip


def _close_ask(ctx: FamilyContext, queue: str, days: int) -> Ask:
    """Close the queue's resolved tickets older than `days`; keep the recent ones and the other queues."""
    steps = ctx.choice(
        [
            (
                f"Close every resolved ticket in the {queue} queue whose last update is more than {days} days "
                "old.",
                f"Leave the resolved tickets updated within the last {days} days as they are.",
                "Leave other queues alone.",
            ),
            (
                f"Close all tickets in {queue} that are resolved and have not been touched for over {days} "
                "days.",
                f"Do not close the recently updated ones or anything outside {queue}.",
            ),
            (
                f"Go through the resolved tickets in {queue} and close each one not updated in the past {days} "
                "days.",
                "Change nothing else.",
            ),
        ]
    )
    context = ctx.choice(
        [
            f"The {queue} queue is cluttered with finished tickets.",
            f"Time for some housekeeping in {queue}.",
            "",
        ]
    )
    return Ask(
        steps=steps,
        context=context,
        short=f"Close the resolved {queue} tickets untouched for over {days} days, nothing else",
    )


def _titles(ctx: FamilyContext) -> dict[str, list[str]]:
    """Ticket titles by queue: the demo's, or the topics of the world's queues."""
    if ctx.on_demo:
        return CLOSE_TITLES
    return {q.name: [t.title for t in q.topics] for q in ctx.the_world.queues}


def _filed_by_colleagues(ctx: FamilyContext, queue: str) -> bool:
    if ctx.on_demo:
        return queue == "IT"
    return next(q for q in ctx.the_world.queues if q.name == queue).requested_by == "colleagues"


def _close_target(ctx: FamilyContext, ws: Workspace) -> tuple[str, int]:
    """A queue and an age in days with few seed tickets past the cutoff and none near it."""
    combos = [(q, d) for q in _titles(ctx) for d in (7, 10, 14)]
    ctx.rng.shuffle(combos)

    def demo(q: str, lo: float, hi: float) -> int:
        return ws.conn.execute(
            "SELECT count(*) FROM tickets_tickets WHERE queue = ? AND status = 'resolved' "
            "AND updated_at >= ? AND updated_at < ?",
            (q, start_shifted(ctx, days=lo), start_shifted(ctx, days=hi)),
        ).fetchone()[0]

    clean = [(q, d) for q, d in combos if demo(q, -d - 1.5, -d + 1.5) == 0]
    few = [(q, d) for q, d in clean if demo(q, -400, -d) <= 2]
    return (few or clean)[0]


def _close_ticket(ctx: FamilyContext, queue: str, status: str, updated_days_ago: float) -> WorldCall:
    values = ticket_values(ctx)
    return operation(
        "tickets",
        "add_ticket",
        title=ctx.choice(_titles(ctx)[queue]).format(**values),
        queue=queue,
        requester=ctx.person(internal=_filed_by_colleagues(ctx, queue)).email,
        assignee=ctx.person(internal=True).email,
        status=status,
        created_at=start_shifted(ctx, days=-updated_days_ago - ctx.rng.uniform(1, 8)),
        updated_at=start_shifted(ctx, days=-updated_days_ago),
    )


@family(
    "tickets_bulk_close_resolved", capability_id="bulk_conditional_update", services=["tickets"], worlds=True
)
def tickets_bulk_close_resolved(ctx: FamilyContext) -> Task:
    """Close every resolved ticket in one queue whose last update is older than N days (by the
    workspace clock). Distractors: recently updated resolved tickets in that queue, old resolved
    tickets in other queues, and old tickets there that are not resolved. Runs on every world."""
    services = ["tickets"]
    _, demo_ws = ctx.seeded(services, [])
    queue, days = _close_target(ctx, demo_ws)
    others = [q for q in _titles(ctx) if q != queue]
    operations = [
        _close_ticket(ctx, queue, "resolved", days + ctx.rng.uniform(1.5, 20))
        for _ in range(ctx.difficulty.items)
    ]
    for i in range(ctx.difficulty.distractors):
        kind = i % 3
        if kind == 0:
            operations.append(_close_ticket(ctx, queue, "resolved", ctx.rng.uniform(0.5, days - 1.5)))
        elif kind == 1:
            operations.append(
                _close_ticket(ctx, ctx.choice(others), "resolved", days + ctx.rng.uniform(2, 20))
            )
        else:
            status = ctx.choice(["pending", "in_progress"])
            operations.append(_close_ticket(ctx, queue, status, days + ctx.rng.uniform(2, 20)))
    results, ws = ctx.seeded(services, operations)
    cutoff = start_shifted(ctx, days=-days)
    due = [
        r[0]
        for r in ws.conn.execute(
            "SELECT id FROM tickets_tickets WHERE queue = ? AND status = 'resolved' AND updated_at < ? "
            "ORDER BY updated_at",
            (queue, cutoff),
        )
    ]
    kept = [(r["ticket_id"], op.params["status"]) for r, op in zip(results, operations, strict=True)]
    kept = [(tid, status) for tid, status in kept if tid not in due]
    checks: list[Check] = [
        field_equals(f"closed-{tid}", f"#{tid} is closed", "tickets_tickets", {"id": tid}, "status", "closed")
        for tid in due
    ]
    checks += [
        guard(
            field_equals(
                f"kept-{tid}", f"#{tid} stays {status}", "tickets_tickets", {"id": tid}, "status", status
            )
        )
        for tid, status in kept
    ]
    solution = [
        step("tickets_search_tickets", "resolved", queue=queue, status="resolved", sort="oldest", limit=100)
    ]
    solution += [step("tickets_update_ticket", ticket_id=t, status="closed") for t in due]
    return ctx.task(
        capability_id="bulk_conditional_update",
        services=services,
        operations=operations,
        title=f"Close resolved {queue} tickets untouched for more than {days} days",
        turns=[Turn(user=request(ctx, _close_ask(ctx, queue, days)), checks=checks, solution=solution)],
    )
