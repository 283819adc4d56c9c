"""Tickets part of the demo workspace: four queues and 60 tickets with comments and links."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from coworkenv.state import Workspace, format_time

from .world import AddLink, AddQueue, AddTicket, SeedComment, add_link, add_queue, add_ticket

if TYPE_CHECKING:
    from faker import Faker

    from ..demo import DemoCompany, DemoPerson

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


def populate(ws: Workspace, company: DemoCompany, rng: random.Random) -> None:
    """Insert the queues, 60 tickets (oldest first, ids 1-60) and a few links between them."""
    fake = company.faker("tickets")
    for name, description in QUEUES.items():
        add_queue(ws, AddQueue(name=name, description=description))
    plan = [queue for queue, size in QUEUE_SIZES.items() for _ in range(size)]
    rng.shuffle(plan)
    ages = sorted((rng.randint(1, 45 * 24) for _ in plan), reverse=True)
    by_queue: dict[str, list[int]] = {name: [] for name in QUEUES}
    for queue, age_hours in zip(plan, ages, strict=True):
        created = company.start - timedelta(hours=age_hours)
        ticket = _ticket(company, rng, fake, queue, created)
        by_queue[queue].append(add_ticket(ws, ticket)["ticket_id"])
    linked: list[set[int]] = []
    # Duplicates point from the newer ticket to the older one and only Engineering blocks
    # Support, so the random picks can never make a loop.
    for queue, kind, target_queue in [
        ("Support", "duplicates", "Support"),
        ("Support", "duplicates", "Support"),
        ("Engineering", "blocks", "Support"),
        ("Engineering", "blocks", "Support"),
        ("Billing", "relates_to", "Support"),
        ("Engineering", "relates_to", "Engineering"),
    ]:
        pairs = [
            (s, t) for s in by_queue[queue] for t in by_queue[target_queue] if s != t and {s, t} not in linked
        ]
        source, target = rng.choice(pairs)
        linked.append({source, target})
        if kind == "duplicates":
            source, target = max(source, target), min(source, target)
        # Ids follow creation order, so the link is made when the newer ticket arrives.
        created_at = ws.rows("tickets_tickets", "id = ?", [max(source, target)])[0]["created_at"]
        link = {"ticket_id": source, "kind": kind, "other_ticket_id": target, "created_at": created_at}
        add_link(ws, AddLink.model_validate(link))


def _ticket(
    company: DemoCompany, rng: random.Random, fake: Faker, queue: str, created: datetime
) -> AddTicket:
    age = (company.start - created) / timedelta(days=45)
    if age > 0.5:
        status = rng.choices(["resolved", "closed", "pending", "in_progress"], [35, 45, 10, 10])[0]
    else:
        status = rng.choices(["open", "in_progress", "pending", "resolved"], [45, 30, 15, 10])[0]
    requester = _requester(company, rng, queue)
    team = [p for t in QUEUE_TEAMS[queue] for p in company.team_members(t) if p.email != requester.email]
    assignee = None if status == "open" and rng.random() < 0.4 else rng.choice(team).email
    title, body = rng.choice(TEMPLATES[queue])
    values = {
        "order": fake.bothify("NW-#####"),
        "invoice": fake.bothify("INV-2026-####"),
        "amount": f"{fake.random_int(40, 9000)}.00 EUR",
        "city": fake.city(),
        "date": (created - timedelta(days=rng.randint(1, 10))).strftime("%d %B"),
    }
    comments = _comments(rng, requester.email, assignee or rng.choice(team).email, created, company.start)
    due = None
    if status in ("open", "pending", "in_progress") and rng.random() < 0.6:
        due = format_time((company.start + timedelta(days=rng.randint(-4, 10))).replace(hour=17))
    return AddTicket.model_validate(
        {
            "title": title.format(**values),
            "description": body.format(**values) + " " + fake.sentence(nb_words=10),
            "status": status,
            "priority": rng.choices(list(PRIORITY_WEIGHTS), list(PRIORITY_WEIGHTS.values()))[0],
            "queue": queue,
            "requester": requester.email,
            "assignee": assignee,
            "tags": rng.sample(TAGS[queue], rng.randint(0, 2)),
            "due_at": due,
            "created_at": format_time(created),
            "updated_at": format_time(created + (company.start - created) * rng.uniform(0.0, 0.9)),
            "comments": comments,
        }
    )


def _requester(company: DemoCompany, rng: random.Random, queue: str) -> DemoPerson:
    if queue in ("Support", "Billing"):
        # Mostly customers; now and then an account executive files it for one.
        return rng.choice(company.contacts if rng.random() < 0.9 else company.team_members("Sales"))
    if queue == "Engineering":
        return rng.choice(company.team_members("Support") + company.team_members("Sales"))
    return rng.choice(company.staff)


def _comments(
    rng: random.Random, requester: str, staff: str, created: datetime, start: datetime
) -> list[SeedComment]:
    """0-4 comments at increasing times between the ticket's creation and the demo start."""
    if rng.random() < 0.3:
        return []
    comments, at = [], created
    for i in range(rng.randint(1, 4)):
        at += (start - at) * rng.uniform(0.05, 0.3)
        kind = "reply" if i == 0 else rng.choice(["reply", "customer", "note"])
        author, pool, visibility = {
            "reply": (staff, REPLIES, "public"),
            "customer": (requester, CUSTOMER_REPLIES, "public"),
            "note": (staff, NOTES, "internal"),
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
