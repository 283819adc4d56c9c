"""Procedural task families: parameterized generators of complete tasks.

A family is a function `build(ctx) -> Task` registered with `@family(...)`. The context
gives it a seeded random generator, difficulty knobs, its world (by default the demo company,
Northwind, of one of four seeds; `FamilyContext(..., world=...)` puts it in any other), that
world's people, and `plant(...)`, which applies world operations to a fork of the world's seed
workspace and returns their results (the ids the planted rows will have), so checks and
solutions can name them. A family that reads `ctx.world` (queues, topics, teams) instead of
Northwind's names can run on every world; `on_demo` tells a family which case it is in.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from coworkenv.servers import get_service
from coworkenv.servers.render import northwind_snapshot, rendered_snapshot
from coworkenv.state import Workspace
from coworkenv.task import Task
from coworkenv.world import Person, World
from coworkenv.worlds import DEMO, PROFILES, northwind
from coworkenv.worlds import world as profile_world

from .capabilities import capability


class SeedDoesNotFit(Exception):
    """The family's draw does not fit its world's seed (a seed row where the task needs none):
    the generator draws again with another seed instead of keeping a task that would be
    ambiguous."""


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


@dataclass
class FamilyContext:
    """What a family builds a task from."""

    family: str
    seed: int
    difficulty: Difficulty = field(default_factory=Difficulty)
    world: World | None = None
    """The world the task happens in; None: the demo company of demo seed `seed % 4`."""
    prelude: Sequence[dict[str, Any]] = ()
    """World operations planted before the family's own (the seeds of earlier segments of a
    composed day, see `synth.compose`): `plant` and `seeded` apply them first, so the ids a
    family reads are those its operations get after them."""
    postlude: Sequence[dict[str, Any]] = ()
    """World operations planted after the family's own (the seeds of later segments): `seeded`
    applies them too, so a family that predicts the id of a row the agent will create counts
    the rows planted after its own."""

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.family}:{self.seed}")
        self.demo_seed = self.seed % DEMO_SEEDS
        if self.world is None:
            self.world = northwind(self.demo_seed)
        elif self.world.profile == DEMO:
            raise ValueError("the demo company is the default world; pass world=None and pick it by seed")

    @property
    def on_demo(self) -> bool:
        """Whether the task happens in the demo company (whose names older families assume)."""
        return self.the_world.profile == DEMO

    @property
    def the_world(self) -> World:
        """`world`, never None after construction."""
        if self.world is None:
            raise RuntimeError("FamilyContext.world is set in __post_init__")
        return self.world

    @property
    def company(self) -> World:
        """The organization the task happens in: the world itself, by the name families use."""
        return self.the_world

    @property
    def user(self) -> Person:
        """The person the agent works for."""
        return self.the_world.user_person

    @property
    def start(self) -> datetime:
        return self.the_world.start

    def choice(self, items: Sequence[Any]) -> Any:
        return self.rng.choice(list(items))

    def people(
        self, *, internal: bool = True, team: str | None = None, exclude: Sequence[str] = ()
    ) -> list[Person]:
        """People of the world (colleagues or external contacts), never the user."""
        return [
            p
            for p in self.the_world.people
            if p.internal == internal
            and (team is None or p.team == team)
            and p.email not in exclude
            and p.email != self.user.email
        ]

    def person(self, **kwargs: Any) -> Person:
        person: Person = self.choice(self.people(**kwargs))
        return person

    def plant(self, services: Sequence[str], operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Apply world operations to a fork of the demo workspace and return their results,
        exactly as seeding the task will (seeding is deterministic)."""
        return self.seeded(services, operations)[0]

    def seeded(
        self, services: Sequence[str], operations: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], Workspace]:
        """`plant`'s results and the workspace as seeding will leave it, for families that must
        query the seeded state (which seed rows also meet the task's condition, free time)."""
        chosen = tuple(sorted(services))
        snapshot = (
            northwind_snapshot(self.demo_seed, chosen)
            if self.on_demo
            else rendered_snapshot(self.the_world, chosen)
        )
        ws = snapshot.fork()
        for op in self.prelude:  # ids in a service depend on that service's rows only
            if op["service"] in chosen:
                get_service(op["service"]).world.run(ws, op["operation"], op.get("params", {}))
        results = [
            get_service(op["service"]).world.run(ws, op["operation"], op.get("params", {}))
            for op in operations
        ]
        for op in self.postlude:
            if op["service"] in chosen:
                try:
                    get_service(op["service"]).world.run(ws, op["operation"], op.get("params", {}))
                except (KeyError, ValueError):
                    break  # planted after other operations than these (a family's own query): stop here
        return results, ws

    def task(
        self, *, capability_id: str, services: Sequence[str], operations: list[dict[str, Any]], **fields: Any
    ) -> Task:
        """A task in the context's world with the planted operations; `fields` fill the rest
        (title, turns, checks, safety, context...)."""
        data: dict[str, Any] = {
            "id": self._task_id(),
            "capabilities": [capability_id, *fields.pop("extra_capabilities", [])],
            "services": list(services),
            "clock_start": self.start.isoformat(),
            "user_email": self.user.email,
            "seed": {
                "procedural": self._procedural_seed(),
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

    def _task_id(self) -> str:
        """The family and seed; in a world other than the demo company, the world's key too, so
        tasks of one family and seed in different worlds never share an id."""
        if self.on_demo:
            return f"{self.family}-{self.seed}"
        world = self.the_world
        if not _rebuilt_by_profile(world):  # proposed or edited worlds: tell them apart
            return f"{self.family}-{world.profile}-{world.content_hash[:8]}-{self.seed}"
        return f"{self.family}-{world.profile}-{len(world.staff)}-{world.seed}-{self.seed}"

    def _procedural_seed(self) -> dict[str, Any]:
        if self.on_demo:
            return {"name": "demo", "params": {"seed": self.demo_seed}}
        world = self.the_world
        params: dict[str, Any] = {"profile": world.profile, "size": len(world.staff), "seed": world.seed}
        if not _rebuilt_by_profile(world):  # a proposed or edited world: the task carries it
            params["world"] = world.model_dump(mode="json")
        return {"name": "world", "params": params}


def _rebuilt_by_profile(world: World) -> bool:
    """Whether the world's profile, size and seed give this very world (not one edited after)."""
    if world.profile not in PROFILES:
        return False
    return profile_world(world.profile, len(world.staff), world.seed).content_hash == world.content_hash


Kind = Literal["single", "multi", "workday"]
KINDS: tuple[Kind, ...] = get_args(Kind)
"""Kinds of task: `single` (one request), `multi` (a few turns), `workday` (a long multi-turn day)."""


@dataclass(frozen=True)
class Family:
    name: str
    capability: str
    services: tuple[str, ...]
    multi_turn: bool
    build: Callable[[FamilyContext], Task]
    worlds: bool = False
    """Whether the family takes its names from `ctx.world` and so runs on every world (else it
    assumes the demo company's names and synthesis keeps it on the demo company)."""
    kind: Kind = "single"
    """What kind of task it builds: one request, a few turns, or a workday (synthesis's `--mix`)."""


FAMILIES: dict[str, Family] = {}


def family(
    name: str,
    *,
    capability_id: str,
    services: Sequence[str],
    multi_turn: bool = False,
    worlds: bool = False,
    kind: Kind | None = None,
) -> Callable[[Callable[[FamilyContext], Task]], Callable[[FamilyContext], Task]]:
    """Register a family under `name` for a capability of the taxonomy; `worlds=True` when it
    runs on every world (see `Family.worlds`); `kind` defaults to "multi" for a multi-turn
    family, else "single"."""
    capability(capability_id)  # unknown capabilities fail at import time
    chosen: Kind = kind or ("multi" if multi_turn else "single")
    if chosen not in KINDS or (chosen == "single") == multi_turn:
        raise ValueError(
            f"family {name!r}: kind {chosen!r} does not fit multi_turn={multi_turn}; "
            "a single family has one turn, a multi or workday family several"
        )

    def register(build: Callable[[FamilyContext], Task]) -> Callable[[FamilyContext], Task]:
        if name in FAMILIES:
            raise ValueError(f"family {name!r} is registered twice")
        FAMILIES[name] = Family(name, capability_id, tuple(services), multi_turn, build, worlds, chosen)
        return build

    return register


def build_task(
    family_name: str, seed: int, difficulty: Difficulty | None = None, world: World | None = None
) -> Task:
    """One task from one family, in `world` (default: the demo company)."""
    fam = FAMILIES[family_name]
    return fam.build(FamilyContext(fam.name, seed, difficulty or Difficulty(), world))
