"""Hand-written agents for the family tests: a task's reference solution with some turns
replaced, played by the oracle and judged by the task's own goal footprint."""

from typing import Any

from coworkenv.rollout import OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.synth.validation.variants import with_solution
from coworkenv.task import SolutionStep, Task


def replaced(task: Task, turn: int, position: int, **arguments: Any) -> list[dict[str, Any]]:
    """The turn's reference solution with new arguments for one step."""
    steps = [s.model_dump() for s in task.turns[turn].solution]
    steps[position]["arguments"] = {**steps[position]["arguments"], **arguments}
    return steps


async def play(task: Task, cache: SeedCache, **solutions: list[dict[str, Any]]) -> EpisodeRecord:
    """The task played with other solutions (`turn<i>=steps`), judged by the task's own footprint."""
    variant = task
    for turn, steps in solutions.items():
        variant = with_solution(
            variant, int(turn.removeprefix("turn")), [SolutionStep.model_validate(s) for s in steps]
        )
    return await run_episode(
        variant, OraclePolicy(), cache=cache, footprint=await reference_footprint(task, cache)
    )


def step(tool: str, id: str | None = None, **arguments: Any) -> dict[str, Any]:
    """One solution step: a tool call, with an `id` when later steps read its result."""
    return {"tool": tool, "arguments": arguments, **({"id": id} if id else {})}


async def judge(task: Task, steps: list[dict[str, Any]], cache: SeedCache) -> EpisodeRecord:
    """The task's first turn played with `steps` instead of its reference solution (the agent
    to judge); the episode must complete and be judged."""
    record = await play(task, cache, turn0=steps)
    assert record.status == "completed", record.error
    assert record.verdict is not None
    return record


def failed(record: EpisodeRecord) -> set[str]:
    """The ids of the checks that failed in a completed episode."""
    assert record.verdict is not None and record.status == "completed", record.error
    return {c.id for c in record.verdict.checks if not c.passed}
