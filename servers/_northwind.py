"""The demo company, Northwind: its people (`DemoPerson`, `DemoCompany`, drawn by
`demo.build_company`), and the company as a `World` whose queues, documents, meetings and
words come from each service's seed module."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from faker import Faker

from coworkenv.world import World

from .calendar import seed as calendar
from .directory.seed import TEAM_DESCRIPTIONS
from .files import documents
from .files import seed as files
from .mail import northwind_words as mail
from .tickets import seed as tickets


@dataclass(frozen=True)
class DemoPerson:
    email: str
    name: str
    title: str
    team: str | None
    manager_email: str | None
    time_zone: str
    internal: bool
    company: str


@dataclass(frozen=True)
class DemoCompany:
    """The people of the demo company and its contacts, shared by every service's populate."""

    name: str
    domain: str
    teams: tuple[str, ...]
    people: tuple[DemoPerson, ...]
    start: datetime
    seed: int

    @property
    def staff(self) -> list[DemoPerson]:
        return [p for p in self.people if p.internal]

    @property
    def contacts(self) -> list[DemoPerson]:
        return [p for p in self.people if not p.internal]

    @property
    def user(self) -> DemoPerson:
        """The person the agent works for in the demo: the Support Lead."""
        return next(p for p in self.people if p.title == "Support Lead")

    def team_members(self, team: str) -> list[DemoPerson]:
        return [p for p in self.people if p.team == team]

    def faker(self, salt: str) -> Faker:
        """A Faker seeded from the company seed and a salt, so each service's text is stable."""
        fake = Faker("en_US")
        fake.seed_instance(f"{self.seed}:{salt}")
        return fake


HOUSE_RULES = [
    "Line-down tickets are always handled first, before any other queue.",
    "Refunds above EUR 500 go to Finance for approval.",
    "Customer data stays in our systems: never forward it to private accounts or tools.",
    "Every enterprise account has a named support contact.",
    "Handover notes live in the team folder, not in mail.",
]
QUEUE_REQUESTERS: dict[str, tuple[str, list[str]]] = {
    "Support": ("customers", ["Sales"]),
    "Billing": ("customers", ["Sales"]),
    "Engineering": ("colleagues", ["Support", "Sales"]),
    "IT": ("colleagues", []),
}


def _topics(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"title": title, "body": body} for title, body in pairs]


def northwind(company: DemoCompany) -> World:
    """The Northwind world for one demo seed."""
    people = [dict(vars(p)) for p in company.people]
    leads = {team: company.team_members(team)[0].email for team in company.teams}
    organizations = [
        {"name": name, "kind": "customer", "domain": name.lower().split()[0] + ".example"}
        for name in dict.fromkeys(p.company for p in company.contacts)
    ]
    queues: list[dict[str, Any]] = []
    for name, description in tickets.QUEUES.items():
        requested_by, requester_teams = QUEUE_REQUESTERS[name]
        teams = list(tickets.QUEUE_TEAMS[name])
        queues.append(
            {
                "name": name,
                "description": description,
                "owner": leads[teams[0]],
                "teams": teams,
                "tickets": tickets.QUEUE_SIZES[name],
                "requested_by": requested_by,
                "requester_teams": requester_teams,
                "topics": _topics(tickets.TEMPLATES[name]),
                "tags": tickets.TAGS[name],
            }
        )
    vocabulary = {
        "customer_requests": _topics(mail.CUSTOMER_SUBJECTS),
        "customer_answers": mail.CUSTOMER_ANSWERS,
        "user_answers": mail.USER_ANSWERS,
        "internal_requests": _topics(mail.INTERNAL_SUBJECTS),
        "internal_answers": mail.INTERNAL_ANSWERS,
        "meeting_topics": mail.MEETING_TOPICS,
        "newsletters": [{"sender": s, "subject": t} for s, t in mail.NEWSLETTERS],
        "outbound_subjects": mail.OUTBOUND_SUBJECTS,
        "attachment_hints": list(mail.ATTACHMENT_HINTS),
        "closers": mail.CLOSERS,
        "draft_openings": mail.DRAFT_OPENINGS,
        "draft_note": {"title": mail.DRAFT_NOTE[0], "body": mail.DRAFT_NOTE[1]},
        "ticket_replies": tickets.REPLIES,
        "requester_replies": tickets.CUSTOMER_REPLIES,
        "ticket_notes": tickets.NOTES,
        "updates": documents.UPDATES,
        "decisions": documents.DECISIONS,
        "actions": documents.ACTIONS,
        "goals": documents.GOALS,
        "milestones": documents.MILESTONES,
        "metrics": ["revenue_eur", "costs_eur", "new_customers", "churned_customers"],
    }
    return World.model_validate(
        {
            "name": company.name,
            "domain": company.domain,
            "industry": "industrial equipment supplier",
            "profile": "northwind",
            "seed": company.seed,
            "headquarters_time_zone": "Europe/Berlin",
            "start": company.start,
            "currency": "EUR",
            "reference_prefix": "NW",
            "user": company.user.email,
            "teams": [{"name": t, "purpose": TEAM_DESCRIPTIONS[t], "lead": leads[t]} for t in company.teams],
            "people": people,
            "organizations": organizations,
            "products": [
                {"sku": sku, "name": name, "unit": unit, "price": price}
                for sku, name, unit, price in documents.PRODUCTS
            ],
            "queues": queues,
            "documents": files.northwind_documents(company.start.date()),
            "empty_folders": list(files.EMPTY_DIRECTORIES),
            "meetings": [
                {"title": t, "organizer": o, "attendees": a, "minutes": m, "count": c}
                for t, o, a, m, c in calendar.INTERNAL_MEETINGS
            ],
            "customer_calls": [
                {"title": t, "organizer": o, "attendees": a, "contacts": c, "minutes": m}
                for t, o, a, c, m in calendar.CUSTOMER_CALLS
            ],
            "offices": calendar.OFFICES,
            "roles": {
                "finance": "Finance",
                "sales": "Sales",
                "tech": "Engineering",
                "desk": "Support",
                "leadership": "Leadership",
            },
            "vocabulary": vocabulary,
            "house_rules": HOUSE_RULES,
        }
    )
