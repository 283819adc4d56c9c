"""An industry profile: what a procedural world of one field is made of.

Lists of texts are compact on purpose: a topic is `"subject | body"`, a document is
`"path | kind | team | subject"`, a product `"name | unit | price"`, an organization
`"name | kind"`. `generate.generate_world` turns a profile, a size and a seed into a `World`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TeamSpec:
    name: str
    purpose: str
    titles: tuple[str, ...]
    """The lead's title first, then the members' titles (cycled)."""


@dataclass(frozen=True)
class QueueSpec:
    name: str
    description: str
    teams: tuple[str, ...]
    """The teams that work it; the first team's lead owns it."""
    requested_by: str
    """"customers" or "colleagues"."""
    topics: tuple[str, ...]
    tags: tuple[str, ...]
    requester_teams: tuple[str, ...] = ()
    weight: int = 1


@dataclass(frozen=True)
class Profile:
    key: str
    industry: str
    names: tuple[str, ...]
    zones: tuple[str, ...]
    """Where people sit; the first is the headquarters. One zone: everyone is there."""
    currency: str
    prefix: str
    leadership: TeamSpec
    teams: tuple[TeamSpec, ...]
    user_team: str
    """The agent works for this team's lead."""
    queues: tuple[QueueSpec, ...]
    organizations: tuple[str, ...]
    contact_titles: tuple[str, str]
    products: tuple[str, ...]
    customer_requests: tuple[str, ...]
    internal_requests: tuple[str, ...]
    meeting_topics: tuple[str, ...]
    updates: tuple[str, ...]
    decisions: tuple[str, ...]
    actions: tuple[str, ...]
    metrics: tuple[str, ...]
    documents: tuple[str, ...]
    house_rules: tuple[str, ...]
    roles: dict[str, str] = field(default_factory=dict)
    """finance / sales / tech: which team does what (default: the user's team)."""
    size: int = 30
    """The default size (colleagues)."""
    hours: tuple[int, int] = (9, 17)
    goals: tuple[str, ...] = ()
    call_kinds: tuple[str, ...] = ("quarterly review", "status call", "planning session")
    culture: str = "neutral"
    """"formal", "neutral" or "casual": how requests are worded (see `World.culture`)."""
