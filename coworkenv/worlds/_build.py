"""Short constructors for writing profiles: `T` a team, `Q` a queue."""

from __future__ import annotations

from .profile import QueueSpec, TeamSpec


def T(name: str, purpose: str, titles: str) -> TeamSpec:
    """A team; `titles` is "Lead title; member title; member title"."""
    return TeamSpec(name, purpose, tuple(t.strip() for t in titles.split(";")))


def Q(
    name: str,
    description: str,
    teams: str,
    requested_by: str,
    topics: tuple[str, ...],
    tags: str,
    requesters: str = "",
    weight: int = 1,
) -> QueueSpec:
    """A queue; `teams` and `requesters` are comma-separated team names, `tags` space-separated."""
    return QueueSpec(
        name,
        description,
        tuple(t.strip() for t in teams.split(",")),
        requested_by,
        topics,
        tuple(tags.split()),
        tuple(t.strip() for t in requesters.split(",") if t.strip()),
        weight,
    )
