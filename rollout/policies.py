"""Scripted policies for offline use: the oracle (the task's reference solution) and no-op."""

from __future__ import annotations

import random
from typing import Any, Protocol

from coworkenv.servers.faults import INJECTED_PREFIX
from coworkenv.task import SolutionStep, Task

from .session import AgentSession, ToolLimitReached


class Policy(Protocol):
    """Acts for one turn through the session's MCP tools."""

    name: str
    actor: str

    async def run_turn(self, session: AgentSession, task: Task, turn_index: int) -> None: ...


INJECTED_RETRIES = 3


class PolicyError(Exception):
    """The policy could not act (e.g. a reference step failed); the episode is an error."""


class NoopPolicy:
    """Does nothing: the floor every task must not reward."""

    name = "noop"
    actor = "agent"

    async def run_turn(self, session: AgentSession, task: Task, turn_index: int) -> None:
        session.record_assistant("I will not take any action.")


class OraclePolicy:
    """Runs the turn's reference-solution steps through the same MCP tools the agent sees."""

    name = "oracle"
    actor = "oracle"

    def __init__(self) -> None:
        self.results: dict[str, Any] = {}

    async def run_turn(self, session: AgentSession, task: Task, turn_index: int) -> None:
        if turn_index == 0:
            self.results = {}
        for j, step in enumerate(task.turns[turn_index].solution):
            await self.run_step(session, step, f"turns[{turn_index}].solution[{j}]")
        session.record_assistant("Done.")

    async def run_step(self, session: AgentSession, step: SolutionStep, where: str) -> None:
        try:
            arguments = resolve_refs(step.arguments, self.results)
        except (KeyError, IndexError, TypeError) as exc:
            raise PolicyError(f"{where} ({step.tool}): cannot resolve a $ref: {exc}") from exc
        try:
            outcome = await session.call_and_record(step.tool, arguments)
            for _ in range(INJECTED_RETRIES):  # an injected fault is retried, as a careful agent would
                if not (outcome.is_error and INJECTED_PREFIX in outcome.text):
                    break
                outcome = await session.call_and_record(step.tool, arguments)
        except ToolLimitReached as exc:
            raise PolicyError(f"{where} ({step.tool}): {exc}") from exc
        if outcome.is_error and not step.expect_error:
            raise PolicyError(f"{where} ({step.tool}) failed: {outcome.text}")
        if step.expect_error and not outcome.is_error:
            raise PolicyError(f"{where} ({step.tool}) was expected to fail but succeeded")
        if step.id:
            self.results[step.id] = outcome.structured


class NoisyPolicy(OraclePolicy):
    """The reference solution with mistakes: with probability `p` per step, the step is
    dropped (half the time) or one of its arguments is altered (the other half). Seeded by
    (seed, task, trial), so score distributions are reproducible without any model. Its
    failed steps are recorded, not raised: a noisy agent just does worse."""

    actor = "agent"

    def __init__(self, p: float = 0.3, seed: int = 0) -> None:
        super().__init__()
        self.p = p
        self.seed = seed
        self.name = "noisy"

    async def run_turn(self, session: AgentSession, task: Task, turn_index: int) -> None:
        if turn_index == 0:
            self.results = {}
        rng = random.Random(f"{self.seed}:{task.id}:{session.trial}:{turn_index}")
        for j, step in enumerate(task.turns[turn_index].solution):
            roll = rng.random()
            if roll < self.p / 2:
                continue
            if roll < self.p and step.arguments:
                name = rng.choice(sorted(step.arguments))
                altered = _alter(step.arguments[name], rng)
                step = step.model_copy(update={"arguments": {**step.arguments, name: altered}})
            try:
                await self.run_step(session, step, f"turns[{turn_index}].solution[{j}]")
            except PolicyError:
                continue
        session.record_assistant("Done.")


def _alter(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice([-1, 1, 7])
    if isinstance(value, str):
        return value[: len(value) // 2] if len(value) > 1 else value + "x"
    if isinstance(value, list) and value:
        return value[1:]
    return value


def resolve_refs(value: Any, results: dict[str, Any]) -> Any:
    """Replace `{"$ref": "step.path.0.key"}` values with what earlier steps returned."""
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            step, *path = str(value["$ref"]).split(".")
            if step not in results:
                raise KeyError(f"no earlier step with id {step!r}")
            current = results[step]
            for part in path:
                current = current[int(part)] if isinstance(current, list) else current[part]
            return current
        return {k: resolve_refs(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_refs(v, results) for v in value]
    return value


POLICIES = {"oracle": OraclePolicy, "noop": NoopPolicy, "noisy": NoisyPolicy}
