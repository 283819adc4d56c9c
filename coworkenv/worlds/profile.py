"""An industry profile: what a procedural world of one field is made of.

A profile is data: one JSON file per profile in `coworkenv/worlds/profiles/`, validated by
`Profile` (which uses the `World` model's own parts for topics and documents) and loaded by
`load_profile`. `generate.generate_world` turns a profile, a size and a seed into a `World`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator

from coworkenv.frozen import FrozenModel
from coworkenv.world import Document, Topic, known_zone


class TeamSpec(FrozenModel):
    """A team: its name, what it does, and the titles of its people."""

    name: str = Field(min_length=1)
    purpose: str
    titles: list[str] = Field(min_length=1)
    """The lead's title first, then the members' titles (cycled)."""


class QueueSpec(FrozenModel):
    """A ticket queue: the teams that work it (the first team's lead owns it), who files into
    it, its topics and tags, and its share of the seed tickets (`weight`)."""

    name: str = Field(min_length=1)
    description: str
    teams: list[str] = Field(min_length=1)
    requested_by: Literal["customers", "colleagues"]
    topics: list[Topic] = Field(min_length=1)
    """Subjects and bodies; they may hold `{order}`, `{invoice}`, `{amount}`, `{city}`, `{date}`."""
    tags: list[str] = Field(min_length=2)
    requester_teams: list[str] = Field(default_factory=list)
    weight: int = Field(default=1, ge=1)


class OrganizationSpec(FrozenModel):
    """An outside organization; its mail domain is made from its name."""

    name: str = Field(min_length=1)
    kind: Literal["customer", "vendor", "partner"]


class ProductSpec(FrozenModel):
    """Something the organization sells; its SKU is made from the reference prefix."""

    name: str = Field(min_length=1)
    unit: str
    price: int = Field(ge=0)


class Profile(FrozenModel):
    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    industry: str = Field(min_length=1)
    culture: Literal["formal", "neutral", "casual"] = "neutral"
    """How requests are worded (see `World.culture`)."""
    size: int = 30
    """The default size (colleagues)."""
    hours: tuple[int, int] = (9, 17)
    """Working hours: the hours they start and end."""
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    prefix: str = Field(pattern=r"^[A-Z]{2,4}$")
    names: list[str] = Field(min_length=1)
    """Organization names; seed `n` takes name `n` modulo their count."""
    zones: list[Annotated[str, AfterValidator(known_zone)]] = Field(min_length=1)
    """Where people sit; the first is the headquarters. One zone: everyone is there."""
    leadership: TeamSpec
    teams: list[TeamSpec] = Field(min_length=1)
    user_team: str
    """The agent works for this team's lead."""
    roles: dict[str, str] = Field(default_factory=dict)
    """finance / sales / tech: which team does what (default: the user's team)."""
    queues: list[QueueSpec] = Field(min_length=3)
    organizations: list[OrganizationSpec] = Field(default_factory=list)
    contact_titles: tuple[str, str]
    """The titles of each outside organization's two contacts."""
    products: list[ProductSpec] = Field(default_factory=list)
    customer_requests: list[Topic] = Field(min_length=1)
    """Mail from customers; subjects and bodies may hold `{order}` and `{n}`."""
    internal_requests: list[Topic] = Field(min_length=1)
    meeting_topics: list[str] = Field(min_length=1)
    updates: list[str] = Field(min_length=3)
    decisions: list[str] = Field(min_length=1)
    actions: list[str] = Field(min_length=2)
    goals: list[str] = Field(default_factory=list)
    metrics: list[str] = Field(default_factory=list)
    call_kinds: list[str] = Field(
        default_factory=lambda: ["quarterly review", "status call", "planning session"]
    )
    documents: list[Document] = Field(default_factory=list)
    house_rules: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        errors: list[str] = []
        names = [self.leadership.name, *(t.name for t in self.teams)]
        if len(set(names)) != len(names):
            errors.append("team names must be unique")
        if self.user_team not in names[1:]:
            errors.append(f"user_team {self.user_team!r} is not one of the teams")
        for q in self.queues:
            unknown = sorted((set(q.teams) | set(q.requester_teams)) - set(names))
            if unknown:
                errors.append(f"queue {q.name!r}: unknown teams {unknown}")
        for role, team in self.roles.items():
            if team not in names:
                errors.append(f"role {role!r}: unknown team {team!r}")
        for d in self.documents:
            if d.team not in names:
                errors.append(f"document {d.path}: unknown team {d.team!r}")
        if not 1 <= self.hours[0] < self.hours[1] <= 22:
            errors.append(
                f"hours must start before they end, between 1 and 22; got {self.hours[0]}-{self.hours[1]}"
            )
        if errors:
            raise ValueError("; ".join(errors))
        return self


class ProfileFileError(ValueError):
    """A profile file that is not valid JSON or not a valid profile; the message names the JSON path."""


def load_profile(path: Path) -> Profile:
    """Read and validate one profile file; errors name the file, the JSON path and what was expected."""
    try:
        return Profile.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        lines = [f"{'.'.join(map(str, e['loc'])) or '(profile)'}: {e['msg']}" for e in exc.errors()[:10]]
        raise ProfileFileError(f"{path}: not a valid profile:\n  " + "\n  ".join(lines)) from None


class ProfileFolder(Mapping[str, Profile]):
    """The profiles of a folder of profile files (`KEY.json`), by key, in key order; the
    files are read on first use, not when the folder is named."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @cached_property
    def _profiles(self) -> dict[str, Profile]:
        loaded: dict[str, Profile] = {}
        for path in sorted(self.folder.glob("*.json")):
            profile = load_profile(path)
            if profile.key != path.stem:
                raise ProfileFileError(f"{path}: key {profile.key!r} differs from the file name")
            loaded[profile.key] = profile
        return loaded

    def __getitem__(self, key: str) -> Profile:
        return self._profiles[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._profiles)

    def __len__(self) -> int:
        return len(self._profiles)
