"""The smallest complete family (escalate an outage ticket): copy it to write a new one.

It shows the contract every family meets: goal checks of what the user asked, no hand-written
list of what may change (the collateral guard derives it from the solution), and a solution
that looks up every id and address before it uses one. Its parts come from `synth.builders`,
which returns the task file's own models (world operations, checks, solution steps)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from coworkenv.task import Task, Turn

from ..builders import field_equals, operation, step
from ..family import FamilyContext, family
from ..phrasing import Ask, request


@dataclass(frozen=True)
class _Scene:
    """Where the escalation happens: the queue the ticket arrives in, the queue it goes to,
    who takes it, what it says and how the user asks."""

    front: str
    target: str
    assignee: Any
    title: str
    description: str
    asks: list[Ask]
    """Ways the user asks for it, one chosen after the workspace is planted."""
    find_assignee: str
    find_ticket: str
    task_title: str


def _demo_scene(ctx: FamilyContext, customer: Any) -> _Scene:
    sre = next(p for p in ctx.company.staff if p.title == "SRE")
    system = ctx.choice(["checkout", "login page", "invoice export", "order API", "mobile app"])
    context = f"{customer.name} says the {system} is down."
    short = f"{customer.name}'s {system} ticket: urgent, Engineering, to the SRE"
    asks = [
        Ask(
            steps=(
                f"Find the {system} ticket from {customer.name}.",
                "Make it urgent.",
                "Move it to the Engineering queue.",
                "Assign it to our SRE.",
            ),
            context=context,
            short=short,
        ),
        Ask(
            steps=(
                f"Escalate the {system} ticket from {customer.name}: urgent, Engineering queue, assigned to the SRE.",
            ),
            context=f"Outage alert: {context}",
            short=short,
        ),
        Ask(
            steps=(
                f"Set the {system} ticket from {customer.name} to urgent and move it to Engineering.",
                "Give it to our SRE.",
            ),
            context=context,
            short=short,
        ),
    ]
    return _Scene(
        "Support",
        "Engineering",
        sre,
        f"{system.capitalize()} is down",
        f"Since this morning our team cannot use the {system}. Please help urgently.",
        asks,
        "SRE",
        system,
        f"Escalate the {system} outage ticket",
    )


def _world_scene(ctx: FamilyContext, customer: Any) -> _Scene:
    """Any world: a customers' queue, another queue that takes escalations, and its owner."""
    world = ctx.the_world
    front = next(q for q in world.queues if q.requested_by == "customers")
    others = [q for q in world.queues if q.name != front.name]
    target = next((q for q in others if q.requested_by == "colleagues"), others[0])
    owner = next(p for p in world.staff if p.email == target.owner)
    topic = ctx.choice(target.topics)
    values = {
        "order": f"{world.reference_prefix}-{ctx.rng.randint(10000, 99999)}",
        "invoice": f"INV-{world.start.year}-{ctx.rng.randint(1, 400):04d}",
        "amount": f"{ctx.rng.randint(200, 9000)}.00 {world.currency}",
        "city": ctx.choice(["Springfield", "Riverton", "Lakeside", "Hillcrest"]),
        "date": (world.start - timedelta(days=ctx.rng.randint(1, 6))).strftime("%d %B"),
    }
    title = topic.title.format(**values)
    context = f"{customer.name} ({customer.company}) has an urgent problem."
    short = f'{customer.name}\'s "{title}" ticket: urgent, {target.name}, to {owner.name}'
    asks = [
        Ask(
            steps=(
                f'Find the ticket {customer.name} opened about "{title}".',
                "Make it urgent.",
                f"Move it to the {target.name} queue.",
                f"Assign it to {owner.name}.",
            ),
            context=context,
            short=short,
        ),
        Ask(
            steps=(
                f'Escalate the ticket from {customer.name} about "{title}": urgent priority, the '
                f"{target.name} queue, assigned to {owner.name}.",
            ),
            context=context,
            short=short,
        ),
        Ask(
            steps=(
                f'Set the ticket {customer.name} filed about "{title}" to urgent and move it to {target.name}.',
                f"Give it to {owner.name}.",
            ),
            context=context,
            short=short,
        ),
    ]
    return _Scene(
        front.name,
        target.name,
        owner,
        title,
        topic.body.format(**values) + " This is urgent for us.",
        asks,
        owner.name,
        title,
        f"Escalate the ticket: {title}",
    )


def _forwarded(ctx: FamilyContext, ask: Ask) -> Ask:
    """The ask as a colleague on the desk team may have passed it on (the forwarded register
    quotes them)."""
    desk = ctx.people(team=ctx.the_world.team("desk")) or ctx.people()
    return replace(ask, forwarded_from=ctx.choice(desk))


@family("tickets_escalate", capability_id="triage_routing", services=["tickets", "directory"], worlds=True)
def tickets_escalate(ctx: FamilyContext) -> Task:
    """A customer reports an urgent problem in a new ticket; the agent makes it urgent, moves
    it to the queue that takes escalations (Engineering in the demo company) and assigns it to
    the right person (the SRE; in other worlds the queue's owner). Distractor tickets from the
    same customer must stay as they are. Runs on every world."""
    customer = ctx.person(internal=False)
    scene = _demo_scene(ctx, customer) if ctx.on_demo else _world_scene(ctx, customer)
    operations = [
        operation(
            "tickets",
            "add_ticket",
            title=scene.title,
            description=scene.description,
            queue=scene.front,
            requester=customer.email,
            status="open",
        )
    ]
    reference = "order" if ctx.on_demo else ctx.the_world.reference_prefix
    for i in range(ctx.difficulty.distractors):
        operations.append(
            operation(
                "tickets",
                "add_ticket",
                title=ctx.choice(["Question about", "Update on", "Small issue with"])
                + f" {reference} {1000 + i}",
                queue=scene.front,
                requester=customer.email,
                status="open",
            )
        )
    results = ctx.plant(["tickets", "directory"], operations)
    ticket = {"id": results[0]["ticket_id"]}
    return ctx.task(
        capability_id="triage_routing",
        services=["tickets", "directory"],
        operations=operations,
        title=scene.task_title,
        turns=[
            Turn(
                user=request(ctx, _forwarded(ctx, ctx.choice(scene.asks))),
                checks=[
                    field_equals("urgent", "", "tickets_tickets", ticket, "priority", "urgent"),
                    field_equals("queue", "", "tickets_tickets", ticket, "queue", scene.target),
                    field_equals("assignee", "", "tickets_tickets", ticket, "assignee", scene.assignee.email),
                ],
                solution=[
                    step("directory_search_people", "sre", query=scene.find_assignee),
                    step("directory_search_people", "customer", query=customer.name),
                    step(
                        "tickets_search_tickets",
                        "found",
                        query=scene.find_ticket,
                        requester={"$ref": "customer.people.0.email"},
                    ),
                    step(
                        "tickets_update_ticket",
                        ticket_id={"$ref": "found.tickets.0.id"},
                        priority="urgent",
                        queue=scene.target,
                        assignee={"$ref": "sre.people.0.email"},
                    ),
                ],
            )
        ],
    )
