"""Directory part of a world's seed: its teams and people."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from coworkenv.state import Workspace

from .world import AddPerson, AddTeam, add_person, add_team

if TYPE_CHECKING:
    from coworkenv.world import World


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Insert every team with its lead, then every person."""
    for team in world.teams:
        add_team(ws, AddTeam(name=team.name, description=team.purpose, lead_email=team.lead))
    for p in world.people:
        add_person(ws, AddPerson(**p.model_dump(exclude={"working_hours"})))
