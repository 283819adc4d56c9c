"""The world model: the organization a task happens in.

A `World` is data, like a task (frozen pydantic, stored as JSON, keyed by a content hash):
the organization, its teams and people, the outside organizations and their contacts, what
it sells, its ticket queues and their topics, its documents and folder layout, its meetings,
the vocabulary of its field and the house rules a task may put in the agent's context.
Every service's seed data is rendered from a world (`coworkenv.servers.render.render_workspace`);
the procedural generator in `coworkenv.worlds` and the demo company both produce one.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, time
from functools import cached_property
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from faker import Faker
from pydantic import (
    AwareDatetime,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .frozen import FrozenModel


class _Model(FrozenModel):
    pass


def known_zone(name: str) -> str:
    """`name` when it is an IANA time zone, else a ValueError saying what to use."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}; use an IANA name such as 'Europe/Berlin'") from None
    return name


class WorkingHours(_Model):
    """Local working hours on weekdays."""

    start: time = time(9)
    end: time = time(17)

    @model_validator(mode="after")
    def _ordered(self) -> WorkingHours:
        if self.start >= self.end:
            raise ValueError(f"working hours must start before they end; got {self.start}-{self.end}")
        return self


class Person(_Model):
    """A colleague (`internal`) or an outside contact (`company` names their organization)."""

    email: str = Field(pattern=r"^[a-z0-9._+-]+@[a-z0-9.-]+\.[a-z]+$")
    name: str = Field(min_length=1)
    title: str
    team: str | None = None
    manager_email: str | None = None
    time_zone: str
    internal: bool = True
    company: str
    working_hours: WorkingHours | None = None
    """None: the organization's working hours."""

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        return known_zone(value)


class Team(_Model):
    name: str = Field(min_length=1)
    purpose: str
    lead: str
    """The lead's email; the lead is a member of the team."""


class Organization(_Model):
    """An outside organization the world deals with."""

    name: str = Field(min_length=1)
    kind: Literal["customer", "vendor", "partner"]
    domain: str


class Product(_Model):
    """Something the organization sells or provides, with its list price."""

    sku: str
    name: str
    unit: str
    price: int = Field(ge=0)


class Topic(_Model):
    """A request template: a subject line and a body. Ticket topics may hold `{order}`,
    `{invoice}`, `{amount}`, `{city}` and `{date}`; mail requests `{order}` and `{n}`."""

    title: str
    body: str


class Queue(_Model):
    """A ticket queue: who works it (`teams`), who owns it, who files into it, and its topics."""

    name: str = Field(min_length=1)
    description: str
    owner: str
    """The email of the colleague accountable for the queue."""
    teams: list[str] = Field(min_length=1)
    tickets: int = Field(ge=1, le=200)
    """How many seed tickets the queue gets."""
    requested_by: Literal["customers", "colleagues"]
    requester_teams: list[str] = Field(default_factory=list)
    """customers: the teams that now and then file for a customer; colleagues: the teams that
    file (empty: anyone)."""
    topics: list[Topic] = Field(min_length=1)
    tags: list[str] = Field(min_length=2)


class Document(_Model):
    """A seed file: its path, its kind (the writer that renders it), the team that owns it,
    a subject the writer uses (a customer, a project, a meeting title) and the day it was
    written (None: some day in the past year)."""

    path: str = Field(pattern=r"^/[^\s].*[^/]$")
    kind: str
    team: str
    subject: str = ""
    day: date | None = None


class Meeting(_Model):
    """A one-off internal meeting template. `organizer` and `attendees` are titles, or "me"
    (the user) and "anyone"; the title may hold `{topic}`, `{name}` and `{company}`."""

    title: str
    organizer: str
    attendees: list[str] = Field(default_factory=list)
    minutes: int = Field(ge=15, le=480)
    count: int = Field(default=1, ge=1, le=10)


class CustomerCall(_Model):
    """A call with an outside organization's contacts (`contacts` are their titles)."""

    title: str
    organizer: str
    attendees: list[str] = Field(default_factory=list)
    contacts: list[str] = Field(min_length=1)
    minutes: int = Field(ge=15, le=480)


class Newsletter(_Model):
    sender: str
    subject: str
    """May hold `{n}` (an issue number) and `{catch}` (a catch phrase)."""


class Vocabulary(_Model):
    """The words of the field: what mail, notes and plans talk about."""

    customer_requests: list[Topic] = Field(min_length=1)
    customer_answers: list[str] = Field(min_length=1)
    user_answers: list[str] = Field(min_length=1)
    internal_requests: list[Topic] = Field(min_length=1)
    internal_answers: list[str] = Field(min_length=1)
    meeting_topics: list[str] = Field(min_length=1)
    newsletters: list[Newsletter] = Field(min_length=1)
    outbound_subjects: list[str] = Field(min_length=1)
    attachment_hints: list[str] = Field(default_factory=list)
    closers: list[str] = Field(min_length=1)
    draft_openings: list[str] = Field(min_length=1)
    draft_note: Topic
    ticket_replies: list[str] = Field(min_length=1)
    requester_replies: list[str] = Field(min_length=1)
    ticket_notes: list[str] = Field(min_length=1)
    updates: list[str] = Field(min_length=3)
    decisions: list[str] = Field(min_length=1)
    actions: list[str] = Field(min_length=2)
    goals: list[str] = Field(min_length=1)
    milestones: list[str] = Field(min_length=4)
    metrics: list[str] = Field(default_factory=list)
    """Monthly figures the organization tracks (column names of its figures files)."""


class World(_Model):
    """An organization with its people, teams, outside contacts, topics and house rules."""

    name: str = Field(min_length=1)
    domain: str = Field(pattern=r"^[a-z0-9.-]+\.[a-z]+$")
    industry: str
    profile: str
    """The profile that generated it (`northwind` for the demo company)."""
    seed: int = Field(ge=0)
    """Seeds the text and the random choices of the rendered seed data."""
    headquarters_time_zone: str
    working_hours: WorkingHours = Field(default_factory=WorkingHours)
    start: AwareDatetime
    """The moment the seed data is rendered up to: the workspace clock starts here."""
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    reference_prefix: str = Field(pattern=r"^[A-Z]{2,4}$")
    """Prefix of order and case references (`NW-12345`)."""
    user: str
    """The email of the person the agent works for."""
    teams: list[Team] = Field(min_length=1)
    people: list[Person] = Field(min_length=2)
    organizations: list[Organization] = Field(default_factory=list)
    products: list[Product] = Field(default_factory=list)
    queues: list[Queue] = Field(min_length=3)
    documents: list[Document] = Field(min_length=1)
    empty_folders: list[str] = Field(default_factory=list)
    meetings: list[Meeting] = Field(default_factory=list)
    customer_calls: list[CustomerCall] = Field(default_factory=list)
    offices: dict[str, str] = Field(default_factory=dict)
    """Meeting room by time zone, for meetings whose people all sit in one zone."""
    roles: dict[str, str] = Field(default_factory=dict)
    """Which team does what: `finance`, `sales`, `tech`, `desk` (the user's) and `leadership`."""
    vocabulary: Vocabulary
    house_rules: list[str] = Field(default_factory=list)
    culture: Literal["formal", "neutral", "casual"] = "neutral"
    """How people write to each other: requests in a formal world are polite and complete, in
    a casual one short and chatty (`coworkenv.synth.phrasing` picks registers by it)."""

    @field_validator("headquarters_time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        return known_zone(value)

    @model_validator(mode="after")
    def _consistent(self) -> World:
        errors: list[str] = []
        emails = [p.email for p in self.people]
        repeated = sorted({e for e in emails if emails.count(e) > 1})
        if repeated:
            errors.append(f"emails must be unique; repeated: {', '.join(repeated)}")
        by_email = {p.email: p for p in self.people}
        team_names = [t.name for t in self.teams]
        if len(set(team_names)) != len(team_names):
            errors.append("team names must be unique")
        orgs = {o.name for o in self.organizations} | {self.name}
        for p in self.people:
            if p.internal and p.team not in team_names:
                errors.append(f"{p.email}: team {p.team!r} is not one of the teams")
            if not p.internal and p.company not in orgs:
                errors.append(f"{p.email}: organization {p.company!r} is not one of the organizations")
            if p.manager_email is not None:
                manager = by_email.get(p.manager_email)
                if manager is None or not manager.internal:
                    errors.append(f"{p.email}: manager {p.manager_email!r} is not a colleague")
                elif p.manager_email == p.email:
                    errors.append(f"{p.email}: nobody manages themselves")
        for t in self.teams:
            members = [p for p in self.people if p.team == t.name]
            if not members:
                errors.append(f"team {t.name!r} has no people")
            elif t.lead not in {p.email for p in members}:
                errors.append(f"team {t.name!r}: lead {t.lead!r} is not a member")
        for q in self.queues:
            owner = by_email.get(q.owner)
            if owner is None or not owner.internal:
                errors.append(f"queue {q.name!r}: owner {q.owner!r} is not a colleague")
            unknown = sorted((set(q.teams) | set(q.requester_teams)) - set(team_names))
            if unknown:
                errors.append(f"queue {q.name!r}: unknown teams {unknown}")
        if len({q.name for q in self.queues}) != len(self.queues):
            errors.append("queue names must be unique")
        if any(q.requested_by == "customers" for q in self.queues) and not self.contacts:
            errors.append("queues filed by customers need outside contacts")
        user = by_email.get(self.user)
        if user is None or not user.internal:
            errors.append(f"user {self.user!r} is not a colleague")
        for role, team in self.roles.items():
            if team not in team_names:
                errors.append(f"role {role!r}: unknown team {team!r}")
        for d in self.documents:
            if d.team not in team_names:
                errors.append(f"document {d.path}: unknown team {d.team!r}")
        paths = [d.path for d in self.documents]
        if len(set(paths)) != len(paths):
            errors.append("document paths must be unique")
        for zone in self.offices:
            try:
                known_zone(zone)
            except ValueError as exc:
                errors.append(f"offices: {exc}")
        if errors:
            raise ValueError("; ".join(errors))
        return self

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON (sorted keys)."""
        data = self.model_dump(mode="json")
        return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    @property
    def key(self) -> str:
        """A short name for caches and logs: the profile, the size and the seed."""
        return f"{self.profile}:{len(self.staff)}:{self.seed}"

    @property
    def team_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.teams)

    @cached_property
    def staff(self) -> list[Person]:
        return [p for p in self.people if p.internal]

    @cached_property
    def contacts(self) -> list[Person]:
        return [p for p in self.people if not p.internal]

    @cached_property
    def user_person(self) -> Person:
        """The person the agent works for."""
        return next(p for p in self.people if p.email == self.user)

    def team_members(self, team: str | None) -> list[Person]:
        return [p for p in self.people if p.team == team]

    def team(self, role: str) -> str:
        """The team with `role` (see `roles`), else the user's team."""
        return self.roles.get(role) or self.user_person.team or self.teams[0].name

    def hours(self, person: Person) -> WorkingHours:
        return person.working_hours or self.working_hours

    def faker(self, salt: str) -> Faker:
        """A Faker seeded from the world seed and a salt, so each service's text is stable."""
        fake = Faker("en_US")
        fake.seed_instance(f"{self.seed}:{salt}")
        return fake


class WorldFileError(ValueError):
    """A world file that is not valid JSON or not a valid world; the message names the JSON path."""


def parse_world(data: str | bytes, *, source: str = "<world>") -> World:
    """Validate a world from JSON text; errors name the JSON path and what was expected."""
    try:
        return World.model_validate_json(data)
    except ValidationError as exc:
        lines = [f"{'.'.join(map(str, e['loc'])) or '(world)'}: {e['msg']}" for e in exc.errors()[:10]]
        raise WorldFileError(f"{source}: not a valid world:\n  " + "\n  ".join(lines)) from None


def load_world(path: Path) -> World:
    return parse_world(path.read_bytes(), source=str(path))


def save_world(world: World, path: Path) -> None:
    path.write_text(world.model_dump_json(indent=2) + "\n")
