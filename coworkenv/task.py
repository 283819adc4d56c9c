"""The task model: what synthesis produces and rollouts consume.

A task is data (frozen pydantic, stored as JSON), identified by a content hash: seed state,
the agent's context, turns (events, a user message, checks, reference-solution steps),
final checks, safety rules and limits. Behaviour lives elsewhere: `coworkenv.verifiers`
evaluates checks, `coworkenv.rollout` runs episodes.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AwareDatetime,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .checks import Check, Guards, SafetyRule, union_tags
from .frozen import FrozenModel

SERVICES = ("mail", "tickets", "calendar", "files", "directory", "crm", "notes", "sheets")
_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")
Service = Literal["mail", "tickets", "calendar", "files", "directory", "crm", "notes", "sheets"]


#: The longest simulated wait before one event: ten years, in minutes.
MAX_ADVANCE_MINUTES = 10 * 366 * 24 * 60


class _Model(FrozenModel):
    pass


def _compact(value: Any) -> str:
    """JSON with sorted keys and no spaces: the text the task's hashes are taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _joined(parts: dict[str, str]) -> str:
    """`_compact` of a dict, from the `_compact` text of each of its values."""
    return "{" + ",".join(f"{json.dumps(key)}:{parts[key]}" for key in sorted(parts)) + "}"


class WorldCall(_Model):
    """One world operation: `servers.<service>.world` operation `operation` with `params`."""

    service: Service
    operation: str
    params: dict[str, Any] = Field(default_factory=dict)


class _DemoParams(_Model):
    seed: int = Field(default=0, ge=0, le=2**32, strict=True)


class _WorldParams(_Model):
    profile: str = Field(min_length=1)
    size: int | None = Field(default=None, ge=8, le=300, strict=True)
    seed: int = Field(default=0, ge=0, le=2**32, strict=True)
    world: dict[str, Any] | None = None
    """The whole world inline, for one no profile rebuilds (a proposed or edited world)."""

    @model_validator(mode="after")
    def _inline_world_matches(self) -> _WorldParams:
        if self.world is None:
            return self
        from .world import World

        built = World.model_validate(self.world)
        if (built.profile, built.seed, len(built.staff)) != (self.profile, self.seed, self.size):
            raise ValueError(
                "profile, size and seed must be the inline world's: "
                f"{built.profile!r}, {len(built.staff)} and {built.seed}"
            )
        return self


class ProceduralSeed(_Model):
    """A named generator of seed state, e.g. `{"name": "demo", "params": {"seed": 3}}`.

    `demo` takes one parameter, `seed` (a whole number, default 0); `empty` takes none;
    `world` names the task's world: `{"profile": "law_firm", "size": 40, "seed": 3}` (size
    8 to 300, default the profile's; see docs/worlds.md), or carries a world no profile
    rebuilds inline, with its profile, size and seed: `{..., "world": {...}}`.
    """

    name: Literal["demo", "empty", "world"] = "empty"
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("params")
    @classmethod
    def _known_params(cls, params: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        name = info.data.get("name")
        if name == "empty" and params:
            raise ValueError(f"the empty seed takes no parameters; got {sorted(params)}")
        if name in ("demo", "world"):
            model = _DemoParams if name == "demo" else _WorldParams
            unknown = sorted(set(params) - set(model.model_fields))
            if unknown:
                raise ValueError(
                    f"unknown {name} seed parameter {', '.join(map(repr, unknown))}; "
                    f"the {name} seed takes only: {', '.join(model.model_fields)}"
                )
            try:
                model.model_validate(params)
            except ValidationError as exc:
                raise ValueError(
                    "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                ) from None
        return params


class Seed(_Model):
    """The initial state: a procedural base, then raw rows per table, then world operations."""

    procedural: ProceduralSeed = Field(default_factory=ProceduralSeed)
    rows: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    operations: list[WorldCall] = Field(default_factory=list)

    @cached_property
    def compact_json(self) -> str:
        """The seed as compact JSON with sorted keys, as the task's hashes read it, written
        once per seed: the variants of a task that validation plays share their seed."""
        return _compact(self.model_dump(mode="json"))


class Event(WorldCall):
    """A change the agent did not make, applied before a turn. `announced` events are
    mentioned in that turn's user message; silent ones the agent must notice."""

    announced: bool = False
    advance_minutes: float = Field(
        default=0,
        ge=0,
        le=MAX_ADVANCE_MINUTES,
        description="Simulated time that passes before the event (at most ten years)",
    )


class SolutionStep(_Model):
    """One reference-solution tool call, through the same MCP tools the agent sees.

    `tool` is the combined server's name (`mail_search_messages`). An argument value may be
    a reference to an earlier step's result: `{"$ref": "find.messages.0.id"}` (step id,
    then a path of keys and list indexes into its structured result).
    """

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    expect_error: bool = False


class Candidate(_Model):
    """One object an ambiguous request could mean, named as tool calls name it: the argument
    that names the object (`ticket_id`, `event_id`, `message_id`, `path`) and its value."""

    argument: str = Field(min_length=1, description="The tool argument that names the object, e.g. ticket_id")
    value: int | str = Field(description="The object's id (or path) in that argument, e.g. 61")

    def named_by(self, arguments: dict[str, Any]) -> bool:
        """Whether a call with these arguments names the object (also inside a list)."""
        given = arguments.get(self.argument)
        if isinstance(given, list):
            return self.value in given
        return given == self.value and type(given) is type(self.value)


class Clarification(_Model):
    """The turn's request is ambiguous on purpose: an agent should ask before acting on it.

    An agent that ends its turn with a question (a message with a `?` and no tool call) gets
    `answer` as the user's next message, within the same turn. The reference solution runs
    its first `after` steps (reads), asks `question`, then runs the rest. `guess` is what an
    agent that does not ask does instead of the steps after the question: validation plays
    it and it must fail.

    `candidates` lists every object the request could mean, in the order an agent finds them
    (e.g. oldest first), each as the tool argument and value that name it. Exactly one of
    them, the one `answer` names, is named by the steps after the question; which one it is
    must not follow from the task's shape (a generator draws it at random). With
    candidates, the turn also fails when a write names any of them (a successful call of a
    write tool whose arguments give that value) before the user answered: acting first and
    asking after does not pass. Reading them before asking is fine. Validation also plays
    the reference's steps after the question on each other candidate instead of asking
    (`guess_each`, judged without that guard: the checks must tell the candidates apart)
    and the reference's steps all done before asking (`act_before_answer`): each must fail.
    """

    question: str = Field(min_length=1, description="What the reference solution asks (it contains a '?')")
    answer: str = Field(
        min_length=1,
        description="The scripted user's answer to a clarifying question; it names the right object",
    )
    after: int = Field(default=0, ge=0, description="Reference-solution steps run before asking")
    guess: list[SolutionStep] = Field(
        min_length=1, description="The steps of an agent that guesses instead of asking; they must fail"
    )
    candidates: list[Candidate] = Field(
        default_factory=list,
        exclude_if=lambda v: not v,
        description=(
            "Every object the request could mean, in the order an agent finds them; a write "
            "naming one before the user answered fails the turn"
        ),
    )

    @field_validator("question")
    @classmethod
    def _is_a_question(cls, question: str) -> str:
        if "?" not in question:
            raise ValueError(f"a clarifying question contains a '?'; got {question!r}")
        return question

    @field_validator("candidates")
    @classmethod
    def _two_or_more(cls, candidates: list[Candidate]) -> list[Candidate]:
        if len(candidates) == 1:
            raise ValueError("an ambiguous request has two candidates or more; got one")
        keys = [(c.argument, c.value) for c in candidates]
        if len(set(keys)) != len(keys):
            raise ValueError("a candidate is listed twice")
        return candidates


class Turn(_Model):
    """Events, then the user's message, then the agent acts; checks run at the end of the turn.

    A turn with a `clarification` is ambiguous on purpose (see `Clarification`)."""

    user: str = Field(min_length=1)
    events: list[Event] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    solution: list[SolutionStep] = Field(default_factory=list)
    clarification: Clarification | None = None
    changed_mind: bool = Field(
        default=False,
        description="The user revises an earlier request in this turn ('make it Thursday instead')",
    )

    @cached_property
    def canonical_json(self) -> str:
        """The turn as JSON with sorted keys, written once per turn: the variants of a task
        that validation plays share their unchanged turns (see `rollout.turn_prefix_key`)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, default=str)

    @cached_property
    def hashed_json(self) -> str:
        """The turn as the task's content hash reads it: compact JSON with sorted keys,
        without `clarification` and `changed_mind` when unset (turns without the newer
        fields hash as they did before them). Written once per turn, like `canonical_json`."""
        data = self.model_dump(mode="json")
        if data.get("clarification") is None:
            data.pop("clarification", None)
        if not data.get("changed_mind"):
            data.pop("changed_mind", None)
        return _compact(data)


class AgentContext(_Model):
    """What the agent is told up front (it becomes the system prompt)."""

    role: str = "You are an AI assistant working inside a company's workspace tools."
    company: str = ""
    user_name: str = ""
    rules: list[str] = Field(default_factory=list)


class Persona(_Model):
    """The user, for an LLM user simulator: who they are and facts the agent must ask for."""

    description: str = Field(min_length=1)
    facts: dict[str, str] = Field(default_factory=dict)


class Limits(_Model):
    max_tool_calls_per_turn: int = Field(default=30, ge=1, le=500)


class Provenance(_Model):
    generator: str = "hand-written"
    model: str | None = None
    rounds: int = 0
    seed: int | None = None
    family: str | None = None
    paraphrased_by: str | None = None
    """The model that reworded the user messages, if one did (see `synth.paraphrase`)."""


class Task(_Model):
    """A complete, executable task. See `docs/tasks.md` for the format."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.\-]+$")
    title: str = Field(min_length=1)
    capabilities: list[str] = Field(default_factory=list)
    services: list[Service] = Field(min_length=1)
    clock_start: AwareDatetime
    user_email: str = "me@northwind.example"
    seed: Seed = Field(default_factory=Seed)
    context: AgentContext = Field(default_factory=AgentContext)
    turns: list[Turn] = Field(min_length=1)
    checks: list[Check] = Field(default_factory=list, description="Evaluated on the final state")
    safety: list[SafetyRule] = Field(default_factory=list)
    guards: Guards = Field(
        default_factory=Guards, description="Default guards: collateral, outside mail, removals"
    )
    limits: Limits = Field(default_factory=Limits)
    persona: Persona | None = Field(default=None, description="Used only when a user simulator is enabled")
    provenance: Provenance = Field(default_factory=Provenance)

    @field_validator("clock_start", mode="before")
    @classmethod
    def _clock_start_is_a_date_time(cls, value: Any) -> Any:
        # pydantic reads a number (or a text of digits) as seconds since 1970: a task that
        # wrote `clock_start: 12` would silently start in 1970.
        if isinstance(value, bool | int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
            raise ValueError(
                f"must be an ISO 8601 date-time with a UTC offset, e.g. 2026-03-02T09:00:00+00:00; got {value!r}"
            )
        return value

    @field_validator("services")
    @classmethod
    def _no_repeats(cls, services: list[str]) -> list[str]:
        if len(set(services)) != len(services):
            raise ValueError("a service is listed twice")
        return services

    @model_validator(mode="after")
    def _unique_check_ids(self) -> Task:
        ids = [c.id for c in self.all_checks()] + [r.id for r in self.safety]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"check and safety-rule ids must be unique; repeated: {repeated}")
        if not any(True for _ in self.all_checks()):
            raise ValueError("a task needs at least one check (in a turn or in `checks`)")
        return self

    def all_checks(self) -> list[Check]:
        return [c for turn in self.turns for c in turn.checks] + list(self.checks)

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON (compact, sorted keys), provenance excluded; each turn as
        `Turn.hashed_json` writes it. The text is put together from the turns' and the
        seed's own JSON, which the variants validation plays share (the same text as
        dumping the whole task)."""
        data = self.model_dump(mode="json", exclude={"provenance", "turns", "seed"})
        parts = {key: _compact(value) for key, value in data.items()}
        parts["turns"] = "[" + ",".join(turn.hashed_json for turn in self.turns) + "]"
        parts["seed"] = self.seed.compact_json
        text = _joined(parts)
        return hashlib.sha256(text.encode()).hexdigest()

    @cached_property
    def seed_hash(self) -> str:
        """SHA-256 of what the seeded workspace is built from (services, seed, start time,
        user and id): tasks that differ only in turns or checks, like the variants
        validation plays, share one seeded state."""
        parts = {
            key: _compact(value)
            for key, value in {
                "id": self.id,
                "services": list(self.services),
                "clock_start": self.clock_start.isoformat(),
                "user_email": self.user_email,
            }.items()
        }
        parts["seed"] = self.seed.compact_json
        text = _joined(parts)
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def is_multi_turn(self) -> bool:
        return len(self.turns) > 1


_UNION_TAGS = union_tags()


class TaskFileError(ValueError):
    """A task file that is not valid JSON or not a valid task; the message names the JSON path."""


def parse_task(data: str | bytes | dict[str, Any], *, source: str = "<task>") -> Task:
    """Validate a task from JSON text or a dict; errors name the JSON path and what was expected."""
    try:
        if isinstance(data, dict):
            return Task.model_validate(data)
        return Task.model_validate_json(data)
    except ValidationError as exc:
        raise TaskFileError(f"{source}: " + "; ".join(_describe(e) for e in exc.errors())) from None


def load_task(path: str | Path) -> Task:
    """Read and validate one task file."""
    path = Path(path)
    return parse_task(path.read_bytes(), source=str(path))


def example_tasks_dir() -> Path:
    """The folder of the example tasks that come with coworkenv: inside the installed package
    (a wheel), or `tasks/examples` of a source checkout."""
    here = Path(__file__).resolve().parent
    for folder in (here / "examples", here.parent / "tasks" / "examples"):
        if folder.is_dir() and any(folder.glob("*.json")):
            return folder
    raise FileNotFoundError("this installation of coworkenv has no example tasks")


def task_files(paths: list[str | Path]) -> list[Path]:
    """Task files named directly, and every `*.json` below named folders, sorted."""
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted(p.rglob("*.json")) if p.is_dir() else [p])
    return out


def task_json_schema() -> dict[str, Any]:
    """The JSON Schema of the task format (for editors and LLM structured output)."""
    return Task.model_json_schema()


def dump_task(task: Task) -> str:
    return task.model_dump_json(indent=2, exclude_defaults=False) + "\n"


def _describe(error: Any) -> str:
    # pydantic puts the tag of a discriminated union (a check's `type`) into the location;
    # it is not part of the JSON path, so it is left out.
    loc = [p for p in error["loc"] if p not in _UNION_TAGS]
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
    if error["type"] == "json_invalid":
        return f"not valid JSON ({error['msg']})"
    return f"{path}: {error['msg']}"


__all__ = [
    "AgentContext",
    "Candidate",
    "Clarification",
    "Event",
    "Limits",
    "Persona",
    "ProceduralSeed",
    "Provenance",
    "Seed",
    "SolutionStep",
    "Task",
    "TaskFileError",
    "Turn",
    "WorldCall",
    "dump_task",
    "load_task",
    "parse_task",
    "task_files",
    "task_json_schema",
]
