"""Scripted policies for offline use: the oracle (the task's reference solution) and no-op."""

from __future__ import annotations

import contextlib
import random
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from coworkenv.rollout.episodes.session import AgentSession, ToolLimitReached
from coworkenv.servers.faults import INJECTED_PREFIX
from coworkenv.task import SolutionStep, Task


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


@dataclass
class _Progress:
    """Where a scripted policy is in one episode: the results of steps with an id, the turn
    in play, how many of its steps ran, whether it asked, and the turn's random stream."""

    results: dict[str, Any] = field(default_factory=dict)
    turn: int = -1
    done: int = 0
    asked: bool = False
    rng: random.Random | None = None


class OraclePolicy:
    """Runs the turn's reference-solution steps through the same MCP tools the agent sees. On
    an ambiguous turn it runs the steps before the question, asks the turn's clarifying
    question and ends its message there; called again on the same turn (the user answered),
    it runs the rest."""

    name = "oracle"
    actor = "oracle"

    def __init__(self) -> None:
        self._progress: weakref.WeakKeyDictionary[AgentSession, _Progress] = weakref.WeakKeyDictionary()
        self._last: _Progress | None = None
        #: Called as `on_step(turn_index, steps)` after each step of the turn's solution played
        #: before its question (if any): validation keeps the episode as it stands there.
        self.on_step: Callable[[int, int], None] | None = None

    @property
    def results(self) -> dict[str, Any]:
        """The results of the last episode's steps with an id (for inspection)."""
        return self._last.results if self._last is not None else {}

    def progress(self, session: AgentSession, turn_index: int) -> _Progress:
        """The policy's progress in the session's episode, moved to `turn_index` if it is new."""
        progress = self._progress.get(session)
        if progress is None:
            progress = self._progress[session] = _Progress()
        if progress.turn != turn_index:
            progress.turn, progress.done, progress.asked, progress.rng = turn_index, 0, False, None
        self._last = progress
        return progress

    async def run_turn(self, session: AgentSession, task: Task, turn_index: int) -> None:
        progress = self.progress(session, turn_index)
        turn = task.turns[turn_index]
        clarification = turn.clarification
        stop = len(turn.solution)
        if clarification is not None and not progress.asked:
            stop = min(clarification.after, stop)
        while progress.done < stop:
            j = progress.done
            progress.done += 1
            await self.play_step(
                session, task, turn.solution[j], f"turns[{turn_index}].solution[{j}]", progress
            )
            if self.on_step is not None and not progress.asked:
                self.on_step(turn_index, progress.done)
        if clarification is not None and not progress.asked:
            progress.asked = True
            if await self.asks(session, task, turn_index, progress):
                session.record_assistant(clarification.question)
                return
            # not asking: the guess replaces the steps after the question
            for k, step in enumerate(clarification.guess):
                await self.play_step(
                    session, task, step, f"turns[{turn_index}].clarification.guess[{k}]", progress
                )
            progress.done = len(turn.solution)
        session.record_assistant("Done.")

    async def asks(self, session: AgentSession, task: Task, turn_index: int, progress: _Progress) -> bool:
        """Whether the policy asks the turn's clarifying question (the oracle always does)."""
        return True

    async def play_step(
        self, session: AgentSession, task: Task, step: SolutionStep, where: str, progress: _Progress
    ) -> None:
        """Play one step (the oracle plays it as written)."""
        await self.run_step(session, step, where, progress.results)

    async def run_step(
        self, session: AgentSession, step: SolutionStep, where: str, results: dict[str, Any] | None = None
    ) -> None:
        results = self.results if results is None else results
        try:
            arguments = resolve_refs(step.arguments, results)
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
            results[step.id] = outcome.structured


class NoisyPolicy(OraclePolicy):
    """The reference solution with mistakes: with probability `p` per step, the step is
    dropped (half the time) or one of its arguments is altered (the other half); on an
    ambiguous turn, with probability `p / 2` it guesses instead of asking. With `drift`, it
    loses the thread as a long task goes on, like a model whose context fills up: in turn t
    the probability is `p + drift * t` (at most 0.9). Seeded by (seed, task, trial, turn), so
    score distributions are reproducible without any model. Its failed steps are recorded,
    not raised: a noisy agent just does worse."""

    actor = "agent"

    def __init__(self, p: float = 0.3, seed: int = 0, *, drift: float = 0.0) -> None:
        super().__init__()
        if not 0 <= p <= 1 or drift < 0:
            raise ValueError(f"p must be within 0..1 and drift at least 0; got p={p}, drift={drift}")
        self.p = p
        self.drift = drift
        self.seed = seed
        self.name = "noisy"

    def _p(self, progress: _Progress) -> float:
        return min(0.9, self.p + self.drift * max(0, progress.turn)) if self.drift else self.p

    def _rng(self, session: AgentSession, task: Task, progress: _Progress) -> random.Random:
        if progress.rng is None:
            progress.rng = random.Random(f"{self.seed}:{task.id}:{session.trial}:{progress.turn}")
        return progress.rng

    async def asks(self, session: AgentSession, task: Task, turn_index: int, progress: _Progress) -> bool:
        return self._rng(session, task, progress).random() >= self._p(progress) / 2

    async def play_step(
        self, session: AgentSession, task: Task, step: SolutionStep, where: str, progress: _Progress
    ) -> None:
        rng = self._rng(session, task, progress)
        p = self._p(progress)
        roll = rng.random()
        if roll < p / 2:
            return
        if roll < p and step.arguments:
            name = rng.choice(sorted(step.arguments))
            altered = _alter(step.arguments[name], rng)
            step = step.model_copy(update={"arguments": {**step.arguments, name: altered}})
        with contextlib.suppress(PolicyError):  # a noisy agent's failed step is just a miss
            await self.run_step(session, step, where, progress.results)


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
