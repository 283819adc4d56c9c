"""Directory part of the demo workspace: the company's teams and people."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from coworkenv.state import Workspace

from .world import AddPerson, AddTeam, add_person, add_team

if TYPE_CHECKING:
    from ..demo import DemoCompany

TEAM_DESCRIPTIONS = {
    "Leadership": "Company direction, hiring and budgets.",
    "Engineering": "Builds and runs the Northwind platform.",
    "Sales": "New business and account management.",
    "Support": "Customer support queue and escalations.",
    "Finance": "Invoices, payroll, purchasing and the office.",
}


def populate(ws: Workspace, company: DemoCompany, rng: random.Random) -> None:
    """Insert every team (its first member leads it) and every person."""
    for team in company.teams:
        members = company.team_members(team)
        add_team(
            ws, AddTeam(name=team, description=TEAM_DESCRIPTIONS.get(team, ""), lead_email=members[0].email)
        )
    for p in company.people:
        add_person(ws, AddPerson(**vars(p)))
