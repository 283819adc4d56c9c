"""Procedural task families: parameterized generators of complete tasks.

A family is a function `build(ctx) -> Task` registered with `@family(...)`. The context
gives it a seeded random generator, difficulty knobs, the demo company's people, and
`plant(...)`, which applies world operations to a fork of the demo workspace and returns
their results (the ids the planted rows will have), so checks and solutions can name them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from coworkenv.servers import get_service
from coworkenv.servers.demo import DemoCompany, DemoPerson, build_company, build_demo_workspace
from coworkenv.state import Snapshot, Workspace
from coworkenv.task import Task

from .capabilities import capability

DEMO_SEEDS = 4
"""Tasks draw their company from demo seeds 0..3, so people and mail differ between tasks."""


@dataclass(frozen=True)
class Difficulty:
    """Knobs a family reads: how many items to act on, how many distractors, how many turns."""

    items: int = 2
    distractors: int = 2
    turns: int = 2

    @classmethod
    def level(cls, level: int) -> Difficulty:
        """0 easy, 1 medium, 2 hard."""
        return [cls(1, 1, 2), cls(2, 3, 2), cls(4, 6, 3)][max(0, min(2, level))]


@lru_cache(maxsize=16)
def _demo_snapshot(demo_seed: int, services: tuple[str, ...]) -> Snapshot:
    return build_demo_workspace(seed=demo_seed, services=services).snapshot()


@dataclass
class FamilyContext:
    """What a family builds a task from."""

    family: str
    seed: int
    difficulty: Difficulty = field(default_factory=Difficulty)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.family}:{self.seed}")
        self.demo_seed = self.seed % DEMO_SEEDS
        self.company: DemoCompany = build_company(self.demo_seed)

    @property
    def user(self) -> DemoPerson:
        return self.company.user

    @property
    def start(self) -> datetime:
        return self.company.start

    def choice(self, items: Sequence[Any]) -> Any:
        return self.rng.choice(list(items))

    def people(
        self, *, internal: bool = True, team: str | None = None, exclude: Sequence[str] = ()
    ) -> list[DemoPerson]:
        """People of the demo company (colleagues or external contacts), never the user."""
        return [
            p
            for p in self.company.people
            if p.internal == internal
            and (team is None or p.team == team)
            and p.email not in exclude
            and p.email != self.user.email
        ]

    def person(self, **kwargs: Any) -> DemoPerson:
        return self.choice(self.people(**kwargs))

    def plant(self, services: Sequence[str], operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Apply world operations to a fork of the demo workspace and return their results,
        exactly as seeding the task will (seeding is deterministic)."""
        return self.seeded(services, operations)[0]

    def seeded(
        self, services: Sequence[str], operations: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], Workspace]:
        """`plant`'s results and the workspace as seeding will leave it, for families that must
        query the seeded state (which demo rows also meet the task's condition, free time)."""
        ws = _demo_snapshot(self.demo_seed, tuple(sorted(services))).fork()
        results = [
            get_service(op["service"]).world.run(ws, op["operation"], op.get("params", {}))
            for op in operations
        ]
        return results, ws

    def task(
        self, *, capability_id: str, services: Sequence[str], operations: list[dict[str, Any]], **fields: Any
    ) -> Task:
        """A task on the demo company with the planted operations; `fields` fill the rest
        (title, turns, checks, safety, context...)."""
        data: dict[str, Any] = {
            "id": f"{self.family}-{self.seed}",
            "capabilities": [capability_id, *fields.pop("extra_capabilities", [])],
            "services": list(services),
            "clock_start": self.start.isoformat(),
            "user_email": self.user.email,
            "seed": {
                "procedural": {"name": "demo", "params": {"seed": self.demo_seed}},
                "operations": operations,
            },
            "context": {
                "company": self.company.name,
                "user_name": self.user.name,
                "role": "You are an AI assistant working in the company's mail, tickets, calendar, files and directory.",
            },
            "provenance": {"generator": "procedural", "family": self.family, "seed": self.seed},
        }
        data.update(fields)
        return Task.model_validate(data)


@dataclass(frozen=True)
class Family:
    name: str
    capability: str
    services: tuple[str, ...]
    multi_turn: bool
    build: Callable[[FamilyContext], Task]


FAMILIES: dict[str, Family] = {}


def family(
    name: str, *, capability_id: str, services: Sequence[str], multi_turn: bool = False
) -> Callable[[Callable[[FamilyContext], Task]], Callable[[FamilyContext], Task]]:
    """Register a family under `name` for a capability of the taxonomy."""
    capability(capability_id)  # unknown capabilities fail at import time

    def register(build: Callable[[FamilyContext], Task]) -> Callable[[FamilyContext], Task]:
        if name in FAMILIES:
            raise ValueError(f"family {name!r} is registered twice")
        FAMILIES[name] = Family(name, capability_id, tuple(services), multi_turn, build)
        return build

    return register


def build_task(family_name: str, seed: int, difficulty: Difficulty | None = None) -> Task:
    """One task from one family."""
    fam = FAMILIES[family_name]
    return fam.build(FamilyContext(fam.name, seed, difficulty or Difficulty()))
