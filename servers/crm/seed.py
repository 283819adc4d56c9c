"""CRM part of a world's seed: an account for every outside organization (its contacts are the
world's contacts there) and a few prospects, deals for what the world sells, and the calls,
meetings and notes logged on them. One contact is in twice, as people are in any CRM."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from coworkenv.state import Workspace, format_time

from .world import (
    AddAccount,
    AddActivity,
    AddContact,
    AddDeal,
    add_account,
    add_activity,
    add_contact,
    add_deal,
)

if TYPE_CHECKING:
    from faker import Faker

    from coworkenv.world import World

#: How many prospects (organizations the world has not worked with yet) the CRM holds.
PROSPECTS = 5
STAGE_WEIGHTS = {
    "prospecting": 12,
    "qualification": 16,
    "proposal": 18,
    "negotiation": 14,
    "closed_won": 24,
    "closed_lost": 16,
}
SECTORS = ("Manufacturing", "Retail", "Public sector", "Healthcare", "Finance", "Education", "Services")
NEXT_STEPS = (
    "Send the revised proposal",
    "Book a call with their procurement team",
    "Confirm the budget with the decision maker",
    "Share references from similar clients",
    "Agree the contract terms",
    "Schedule a demo for their team",
)
ACTIVITIES = {
    "call": (
        "Call about {product}",
        "Discussed {product}: they want numbers for {qty} {unit}s by the end of the month.",
    ),
    "meeting": ("Meeting with {company}", "Went through our offer for {product}; next step agreed."),
    "email": ("Sent the {product} offer", "Mailed the offer for {qty} {unit}s of {product}."),
    "note": (
        "Account note",
        "{company} prefers invoices by mail; budget decisions in the first week of the quarter.",
    ),
}


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Insert the accounts with their contacts, then their deals, then their activities."""
    fake = world.faker("crm")
    sellers = world.team_members(world.team("sales")) or world.staff
    accounts: list[_Account] = []
    for org in world.organizations:
        owner = rng.choice(sellers).email
        account_id = _account(ws, world, rng, org.name, org.kind, org.domain, owner)
        people = [p for p in world.contacts if p.company == org.name]
        contacts = [_contact(ws, world, fake, account_id, p.name, p.email, p.title) for p in people]
        accounts.append(_Account(account_id, org.name, org.kind, owner, contacts))
    for _ in range(PROSPECTS):
        company = _prospect_name(fake, {a.name for a in accounts})
        domain = "".join(ch for ch in company.lower().split()[0] if ch.isalnum()) + ".example"
        owner = rng.choice(sellers).email
        account_id = _account(ws, world, rng, company, "prospect", domain, owner)
        name = fake.name()
        first, *rest = name.lower().replace("'", "").split()
        address = f"{first}.{rest[-1] if rest else 'x'}@{domain}"
        title = fake.random_element(
            ("Buyer", "Operations Manager", "Head of Procurement", "Managing Director")
        )
        contact = _contact(ws, world, fake, account_id, name, address, title)
        accounts.append(_Account(account_id, company, "prospect", owner, [contact]))
    _duplicate(ws, world, accounts)
    for account in accounts:
        if account.kind == "vendor":
            continue
        for _ in range(rng.randint(1, 3)):
            account.deals.append(_deal(ws, world, rng, account))
    for account in accounts:
        _history(ws, world, rng, account)


@dataclass
class _Account:
    id: int
    name: str
    kind: str
    owner: str
    contacts: list[int]
    deals: list[int] = field(default_factory=list)


def _account(
    ws: Workspace, world: World, rng: random.Random, name: str, kind: str, domain: str, owner: str
) -> int:
    renewal = None
    if kind in ("customer", "partner"):
        renewal = (world.start + timedelta(days=rng.randint(-10, 75))).date().isoformat()
    created = world.start - timedelta(days=rng.randint(120, 900))
    return int(
        add_account(
            ws,
            AddAccount.model_validate(
                {
                    "name": name,
                    "kind": kind,
                    "domain": domain,
                    "industry": rng.choice(SECTORS),
                    "owner": owner,
                    "renewal_date": renewal,
                    "created_at": format_time(created),
                }
            ),
        )["account_id"]
    )


def _contact(
    ws: Workspace, world: World, fake: Faker, account_id: int, name: str, email: str, title: str
) -> int:
    contact = AddContact(
        account_id=account_id,
        name=name,
        email=email,
        title=title,
        phone=fake.numerify("+1 555 01##"),
        created_at=format_time(world.start - timedelta(days=100)),
    )
    return int(add_contact(ws, contact)["contact_id"])


def _prospect_name(fake: Faker, taken: set[str]) -> str:
    while True:
        name = fake.company()
        if name not in taken:
            return name


def _duplicate(ws: Workspace, world: World, accounts: list[_Account]) -> None:
    """The first account with a contact gets that contact a second time, added later by
    someone who had no phone number for them."""
    for account in accounts:
        if account.contacts:
            row = ws.rows("crm_contacts", "id = ?", [account.contacts[0]])[0]
            copy = AddContact(
                account_id=account.id,
                name=row["name"],
                email=row["email"],
                title="",
                phone="",
                created_at=format_time(world.start - timedelta(days=12)),
            )
            account.contacts.append(int(add_contact(ws, copy)["contact_id"]))
            return


def _deal(ws: Workspace, world: World, rng: random.Random, account: _Account) -> int:
    product = rng.choice(world.products)
    qty = rng.randint(2, 40)
    stage = (
        "prospecting"
        if account.kind == "prospect"
        else rng.choices(list(STAGE_WEIGHTS), list(STAGE_WEIGHTS.values()))[0]
    )
    closed = stage in ("closed_won", "closed_lost")
    close = world.start + timedelta(days=rng.randint(-60, -5) if closed else rng.randint(3, 90))
    deal = AddDeal(
        account_id=account.id,
        name=f"{account.name}: {product.name}",
        stage=stage,  # type: ignore[arg-type]
        amount=product.price * qty,
        currency=world.currency,
        close_date=close.date().isoformat(),
        owner=account.owner,
        next_step="" if closed else rng.choice(NEXT_STEPS),
        created_at=format_time(
            close - timedelta(days=rng.randint(30, 120))
            if closed
            else world.start - timedelta(days=rng.randint(10, 80))
        ),
    )
    return int(add_deal(ws, deal)["deal_id"])


def _history(ws: Workspace, world: World, rng: random.Random, account: _Account) -> None:
    times: list[datetime] = sorted(
        world.start - timedelta(hours=rng.randint(6, 60 * 24)) for _ in range(rng.randint(1, 4))
    )
    for at in times:
        kind = rng.choice(list(ACTIVITIES))
        product = rng.choice(world.products)
        subject, body = ACTIVITIES[kind]
        words = {
            "product": product.name,
            "qty": rng.randint(2, 40),
            "unit": product.unit,
            "company": account.name,
        }
        activity = AddActivity(
            kind=kind,  # type: ignore[arg-type]
            subject=subject.format(**words),
            body=body.format(**words),
            account_id=account.id,
            deal_id=rng.choice(account.deals) if account.deals and kind != "note" else None,
            contact_id=rng.choice(account.contacts) if account.contacts and kind != "note" else None,
            author=account.owner,
            occurred_at=format_time(at),
        )
        add_activity(ws, activity)
