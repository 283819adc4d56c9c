"""Scripted policies for offline use: the oracle (the task's reference solution) and no-op."""

from __future__ import annotations

from typing import Any, Protocol

from coworkenv.task import SolutionStep, Task

from .session import AgentSession, ToolLimitReached


class Policy(Protocol):
    """Acts for one turn through the session's MCP tools."""

    name: str
    actor: str

    async def run_turn(self, session: AgentSession, task: Task, turn_index: int) -> None: ...


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
        except ToolLimitReached as exc:
            raise PolicyError(f"{where} ({step.tool}): {exc}") from exc
        if outcome.is_error and not step.expect_error:
            raise PolicyError(f"{where} ({step.tool}) failed: {outcome.text}")
        if step.expect_error and not outcome.is_error:
            raise PolicyError(f"{where} ({step.tool}) was expected to fail but succeeded")
        if step.id:
            self.results[step.id] = outcome.structured


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


POLICIES = {"oracle": OraclePolicy, "noop": NoopPolicy}
