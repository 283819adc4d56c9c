"""Tickets part of a world's seed: its queues, their tickets with comments, and links."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from coworkenv.state import Workspace, format_time

from .world import AddLink, AddQueue, AddTicket, SeedComment, add_link, add_queue, add_ticket

if TYPE_CHECKING:
    from faker import Faker

    from coworkenv.world import Person, Queue, World

PRIORITY_WEIGHTS = {"low": 20, "normal": 50, "high": 22, "urgent": 8}


#: Links between seed tickets, by queue position: (source, kind, target). Duplicates point from
#: the newer ticket to the older one and only the third queue blocks the first, so the random
#: picks can never make a loop.
LINKS = [(0, "duplicates", 0), (0, "duplicates", 0), (2, "blocks", 0), (2, "blocks", 0), (1, "relates_to", 0), (2, "relates_to", 2)]  # fmt: skip


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Insert the queues, their tickets (oldest first, ids from 1) and a few links between them."""
    fake = world.faker("tickets")
    for queue in world.queues:
        add_queue(ws, AddQueue(name=queue.name, description=queue.description))
    plan = [queue for queue in world.queues for _ in range(queue.tickets)]
    rng.shuffle(plan)
    ages = sorted((rng.randint(1, 45 * 24) for _ in plan), reverse=True)
    by_queue: dict[str, list[int]] = {q.name: [] for q in world.queues}
    for queue, age_hours in zip(plan, ages, strict=True):
        created = world.start - timedelta(hours=age_hours)
        ticket = _ticket(world, rng, fake, queue, created)
        by_queue[queue.name].append(add_ticket(ws, ticket)["ticket_id"])
    linked: list[set[int]] = []
    names = [q.name for q in world.queues]
    for source_at, kind, target_at in LINKS:
        sources, targets = by_queue[names[source_at]], by_queue[names[target_at]]
        pairs = [(s, t) for s in sources for t in targets if s != t and {s, t} not in linked]
        if not pairs:
            continue
        source, target = rng.choice(pairs)
        linked.append({source, target})
        if kind == "duplicates":
            source, target = max(source, target), min(source, target)
        # Ids follow creation order, so the link is made when the newer ticket arrives.
        created_at = ws.rows("tickets_tickets", "id = ?", [max(source, target)])[0]["created_at"]
        link = {"ticket_id": source, "kind": kind, "other_ticket_id": target, "created_at": created_at}
        add_link(ws, AddLink.model_validate(link))


def _ticket(world: World, rng: random.Random, fake: Faker, queue: Queue, created: datetime) -> AddTicket:
    age = (world.start - created) / timedelta(days=45)
    if age > 0.5:
        status = rng.choices(["resolved", "closed", "pending", "in_progress"], [35, 45, 10, 10])[0]
    else:
        status = rng.choices(["open", "in_progress", "pending", "resolved"], [45, 30, 15, 10])[0]
    requester = _requester(world, rng, queue)
    workers = [p for t in queue.teams for p in world.team_members(t)]
    team = [p for p in workers if p.email != requester.email] or workers
    assignee = None if status == "open" and rng.random() < 0.4 else rng.choice(team).email
    topic = rng.choice(queue.topics)
    values = {
        "order": fake.bothify(f"{world.reference_prefix}-#####"),
        "invoice": fake.bothify(f"INV-{world.start.year}-####"),
        "amount": f"{fake.random_int(40, 9000)}.00 {world.currency}",
        "city": fake.city(),
        "date": (created - timedelta(days=rng.randint(1, 10))).strftime("%d %B"),
    }
    comments = _comments(
        rng, world, requester.email, assignee or rng.choice(team).email, created, world.start
    )
    due = None
    if status in ("open", "pending", "in_progress") and rng.random() < 0.6:
        due = format_time((world.start + timedelta(days=rng.randint(-4, 10))).replace(hour=17))
    return AddTicket.model_validate(
        {
            "title": topic.title.format(**values),
            "description": topic.body.format(**values) + " " + fake.sentence(nb_words=10),
            "status": status,
            "priority": rng.choices(list(PRIORITY_WEIGHTS), list(PRIORITY_WEIGHTS.values()))[0],
            "queue": queue.name,
            "requester": requester.email,
            "assignee": assignee,
            "tags": rng.sample(queue.tags, rng.randint(0, 2)),
            "due_at": due,
            "created_at": format_time(created),
            "updated_at": format_time(created + (world.start - created) * rng.uniform(0.0, 0.9)),
            "comments": comments,
        }
    )


def _requester(world: World, rng: random.Random, queue: Queue) -> Person:
    filers = [p for t in queue.requester_teams for p in world.team_members(t)]
    if queue.requested_by == "customers":
        # Mostly customers; now and then a colleague files it for one.
        return rng.choice(world.contacts if rng.random() < 0.9 or not filers else filers)
    return rng.choice(filers or world.staff)


def _comments(
    rng: random.Random, world: World, requester: str, staff: str, created: datetime, start: datetime
) -> list[SeedComment]:
    """0-4 comments at increasing times between the ticket's creation and the world's start."""
    if rng.random() < 0.3:
        return []
    words = world.vocabulary
    comments, at = [], created
    for i in range(rng.randint(1, 4)):
        at += (start - at) * rng.uniform(0.05, 0.3)
        kind = "reply" if i == 0 else rng.choice(["reply", "customer", "note"])
        author, pool, visibility = {
            "reply": (staff, words.ticket_replies, "public"),
            "customer": (requester, words.requester_replies, "public"),
            "note": (staff, words.ticket_notes, "internal"),
        }[kind]
        comments.append(
            SeedComment.model_validate(
                {
                    "author": author,
                    "body": rng.choice(pool),
                    "visibility": visibility,
                    "created_at": format_time(at),
                }
            )
        )
    return comments
