"""Tickets part of a world's seed: its queues, their tickets with comments, and links.

The constants below are the Northwind queues and words (`servers._northwind` puts them in
its world); the renderer reads only the world.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from coworkenv.state import Workspace, format_time

from .world import AddLink, AddQueue, AddTicket, SeedComment, add_link, add_queue, add_ticket

if TYPE_CHECKING:
    from faker import Faker

    from coworkenv.world import Person, Queue, World

QUEUES = {
    "Support": "Customer questions, orders, deliveries and account problems.",
    "Billing": "Invoices, payments, refunds and credit notes.",
    "Engineering": "Bugs, outages and integration problems escalated by Support.",
    "IT": "Laptops, accounts and office equipment for Northwind staff.",
}
#: How many of the 60 tickets each queue gets.
QUEUE_SIZES = {"Support": 24, "Billing": 14, "Engineering": 12, "IT": 10}
#: The teams whose members work each queue.
QUEUE_TEAMS = {
    "Support": ("Support",),
    "Billing": ("Finance",),
    "Engineering": ("Engineering",),
    "IT": ("Finance", "Engineering"),
}

TEMPLATES = {
    "Support": [
        (
            "Order {order} has not arrived",
            "We ordered on {date} and tracking has not moved for a week. Can you check?",
        ),
        ("Wrong items delivered in order {order}", "The pallet delivered to {city} holds the wrong parts."),
        ("Cannot log in to the customer portal", "Password reset mails never arrive for our team in {city}."),
        ("Change the delivery address for order {order}", "Please deliver to our new warehouse in {city}."),
        (
            "Damaged goods in shipment {order}",
            "Three boxes arrived crushed. Photos attached to the mail thread.",
        ),
        ("Question about the bulk discount", "Does the volume discount apply to orders split across sites?"),
        ("Add a user to our portal account", "Please give our new buyer in {city} access to the portal."),
        ("Delivery to {city} is late again", "This is the third late delivery this quarter."),
    ],
    "Billing": [
        ("Invoice {invoice} charged twice", "Our card was charged twice for invoice {invoice} ({amount})."),
        (
            "Refund for returned order {order}",
            "We returned order {order} on {date} and still wait for {amount}.",
        ),
        ("Wrong VAT on invoice {invoice}", "Invoice {invoice} uses the wrong VAT rate for {city}."),
        (
            "Request a copy of invoice {invoice}",
            "Our accounts team lost invoice {invoice}; please send a copy.",
        ),
        ("Update billing contact", "Please send invoices to our new accounts payable address from now on."),
        ("Payment terms for next quarter", "Can we move from 30 to 45 days payment terms?"),
    ],
    "Engineering": [
        ("Portal shows a blank page after login", "Customers in {city} see an empty dashboard since {date}."),
        ("Order export API times out", "Exports with more than 500 lines fail after 30 seconds."),
        (
            "Tracking numbers missing from shipping mails",
            "Shipping confirmations since {date} have no tracking link.",
        ),
        ("Password reset mails not sent", "The reset mail queue has been stuck since {date}."),
        ("Invoice PDF renders the wrong currency", "Invoices for {city} show USD instead of EUR."),
        ("Search in the portal ignores SKUs", "Searching for an exact SKU returns nothing."),
    ],
    "IT": [
        ("New laptop for a new hire", "A new colleague starts on {date} and needs a laptop and accounts."),
        ("VPN drops every few minutes", "Working from {city}, the VPN disconnects constantly."),
        ("Printer on the second floor is jammed", "Paper jam again, the third time this week."),
        ("Access to the finance share", "I need read access to the finance share for the audit."),
        ("Replace a broken monitor", "My second monitor flickers and then goes dark."),
    ],
}
TAGS = {
    "Support": ["delivery", "portal", "vip", "damaged", "address"],
    "Billing": ["refund", "invoice", "vat", "payment"],
    "Engineering": ["bug", "outage", "api", "regression"],
    "IT": ["hardware", "access", "onboarding", "network"],
}
REPLIES = [
    "Thanks for reporting this. We are looking into it and will get back to you today.",
    "Could you send us the order confirmation and a photo of the delivery note?",
    "We have passed this on to the right team and will update you by tomorrow.",
    "This should be fixed now. Please let us know if it happens again.",
]
CUSTOMER_REPLIES = [
    "Any news on this? It is getting urgent on our side.",
    "Thanks, the information is attached to my earlier mail.",
    "That worked, thank you!",
    "Still the same problem this morning.",
]
NOTES = [
    "Checked the logs: the same error shows for two other customers.",
    "Escalating to Engineering if the carrier does not answer by Friday.",
    "Customer is on the premium plan; keep the reply time short.",
    "Waiting for Finance to confirm the amount before replying.",
]
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
