"""What the CRM families read from a world's seeded CRM: its accounts and their contacts and
deals, the colleagues who own accounts, and names for the accounts and deals they plant."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coworkenv.state import Workspace
from coworkenv.world import Person

from ...family import FamilyContext

OPEN_STAGES = ("prospecting", "qualification", "proposal", "negotiation")
"""The stages a deal can still move out of."""

DEAL_TAGS = ("pilot", "expansion", "second site", "framework agreement", "rollout", "extension")
"""What tells two deals of one account for the same product apart ("Globex: S10 pilot")."""

NAME_STEMS = (
    "Alder", "Bluestone", "Cedarline", "Harborview", "Meridian", "Northgate", "Oakridge",
    "Pinecrest", "Riverside", "Silverline", "Summitway", "Westbrook", "Ironbridge", "Lakemont",
)  # fmt: skip
NAME_SUFFIXES = ("Group", "Partners", "Holdings", "Industries", "Trust", "Associates")
SIMILAR_SUFFIXES = ("Group", "Services", "International", "Holdings", "Partners")


@dataclass(frozen=True)
class SeedContact:
    id: int
    account_id: int
    name: str
    email: str


def accounts(ws: Workspace, where: str = "1", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """The CRM's accounts matching `where`, by id."""
    return ws.rows("crm_accounts", f"{where} ORDER BY id", list(params))


def clear_contacts(ws: Workspace, account_id: int) -> list[SeedContact]:
    """The account's active contacts whose name and address no other contact shares (the seed
    holds one person twice), so a request naming one is never ambiguous."""
    everyone = ws.rows("crm_contacts", "status = 'active'")
    names = [r["name"].lower() for r in everyone]
    emails = [r["email"] for r in everyone]
    return [
        SeedContact(r["id"], r["account_id"], r["name"], r["email"])
        for r in everyone
        if r["account_id"] == account_id
        and names.count(r["name"].lower()) == 1
        and emails.count(r["email"]) == 1
    ]


def sellers(ctx: FamilyContext, exclude: tuple[str, ...] = ()) -> list[Person]:
    """Colleagues who own accounts and deals: the sales team's, else everyone's; never the user."""
    world = ctx.the_world
    team = [p for p in world.team_members(world.team("sales")) if p.email != ctx.user.email]
    pool = team if len(team) >= 3 else ctx.people(internal=True)
    return [p for p in pool if p.email not in exclude]


def taken_names(ws: Workspace) -> set[str]:
    return {r[0].lower() for r in ws.conn.execute("SELECT name FROM crm_accounts")}


def fresh_account_names(ctx: FamilyContext, ws: Workspace, n: int) -> list[str]:
    """`n` account names no account has, sharing no word with each other or a seed account."""
    taken = taken_names(ws)
    words = {w for name in taken for w in name.split()}
    stems = [s for s in NAME_STEMS if s.lower() not in words]
    ctx.rng.shuffle(stems)
    if len(stems) < n:
        raise ValueError(f"only {len(stems)} fresh account names for {n} accounts")
    return [f"{stem} {ctx.choice(NAME_SUFFIXES)}" for stem in stems[:n]]


def similar_name(ctx: FamilyContext, ws: Workspace, name: str) -> str:
    """A name a hurried reader takes for `name` ("Globex" -> "Globex Services")."""
    taken = taken_names(ws)
    last = name.split()[-1]
    options = [f"{name} {s}" for s in SIMILAR_SUFFIXES if s != last and f"{name} {s}".lower() not in taken]
    return str(ctx.choice(options))


def deal_names(ws: Workspace, account_id: int) -> set[str]:
    return {
        r[0].lower()
        for r in ws.conn.execute("SELECT name FROM crm_deals WHERE account_id = ?", (account_id,))
    }


def domain_of(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum()) + ".example"


def possessive(name: str) -> str:
    """'Globex' -> "Globex's", 'Struktur Engineers' -> "Struktur Engineers'"."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"
