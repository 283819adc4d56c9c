"""Execution validation of a task: the contract a task must meet before it is kept.

Stages, in order (a failing stage stops the rest):
1. schema: the file parses into a Task (done by the caller; see `coworkenv.task.parse_task`).
2. seed: the seed loads.
3. checks: every check names real tables, columns and tools; SQL compiles; Python parses.
4. noop: a do-nothing agent gets no success.
5. oracle: the reference solution completes with score 1.0 and breaks no safety rule.
6. deterministic: a second oracle run ends in the same state hash.
7. mutants: each write step of the solution dropped in turn fails; for each write step,
   at least one single-argument perturbation fails (every kill is counted).
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, Field

from coworkenv.servers import get_service
from coworkenv.task import SolutionStep, Task, Turn
from coworkenv.verifiers import check_problems

from .policies import NoopPolicy, OraclePolicy
from .record import EpisodeRecord
from .runner import run_episode
from .seeding import SeedCache, SeedError

STAGES = ("seed", "checks", "noop", "oracle", "deterministic", "mutants")


class StageResult(BaseModel):
    name: str
    passed: bool
    detail: str = ""
    seconds: float = 0.0


class MutantResult(BaseModel):
    description: str
    killed: bool
    score: float
    status: str


class ValidationReport(BaseModel):
    """What validation found, stage by stage, in words a person or a generator can act on."""

    task_id: str
    task_hash: str
    stages: list[StageResult] = Field(default_factory=list)
    mutants: list[MutantResult] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.passed for s in self.stages) and len(self.stages) == len(STAGES)

    @property
    def failed_stage(self) -> StageResult | None:
        return next((s for s in self.stages if not s.passed), None)

    @property
    def kill_rate(self) -> float | None:
        if not self.mutants:
            return None
        return sum(m.killed for m in self.mutants) / len(self.mutants)

    def summary(self) -> str:
        failed = self.failed_stage
        if failed is None:
            return "ok"
        return f"{failed.name}: {failed.detail}"


def write_steps(task: Task) -> list[tuple[int, int]]:
    """(turn, step) positions of solution steps whose tool changes state."""
    out = []
    for i, turn in enumerate(task.turns):
        for j, step in enumerate(turn.solution):
            service, _, bare = step.tool.partition("_")
            try:
                read_only = get_service(service).tools.is_read_only(bare)
            except (ValueError, StopIteration):
                read_only = False  # an unknown tool fails the oracle stage anyway
            if not read_only and not step.expect_error:
                out.append((i, j))
    return out


def with_solution(task: Task, turn: int, steps: list[SolutionStep]) -> Task:
    turns = list(task.turns)
    turns[turn] = Turn(**{**turns[turn].model_dump(), "solution": [s.model_dump() for s in steps]})
    return task.model_copy(update={"turns": turns})


def perturb(value: Any) -> Any | None:
    """A nearby but wrong value, or None when the value cannot be perturbed meaningfully."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1
    if isinstance(value, str):
        return value + " (altered)" if value else "altered"
    if isinstance(value, list) and value:
        return value[:-1] if len(value) > 1 else [perturb(value[0])]
    return None


def mutants(task: Task) -> list[tuple[str, tuple[int, int], Task]]:
    """(description, write-step position, mutated task) for every drop and single-argument perturbation."""
    out = []
    for i, j in write_steps(task):
        steps = list(task.turns[i].solution)
        step = steps[j]
        out.append(
            (
                f"drop turns[{i}].solution[{j}] ({step.tool})",
                (i, j),
                with_solution(task, i, steps[:j] + steps[j + 1 :]),
            )
        )
        for name, value in step.arguments.items():
            if isinstance(value, dict):  # a $ref: perturbing it is a different test (the ref's target)
                continue
            new = perturb(value)
            if new is None:
                continue
            changed = step.model_copy(update={"arguments": {**step.arguments, name: new}})
            desc = f"perturb turns[{i}].solution[{j}] ({step.tool}) argument {name!r}"
            out.append((desc, (i, j), with_solution(task, i, [*steps[:j], changed, *steps[j + 1 :]])))
    return out


async def validate_task(
    task: Task, *, cache: SeedCache | None = None, run_mutants: bool = True
) -> ValidationReport:
    """Run every stage until one fails; see the module docstring."""
    cache = cache or SeedCache()
    report = ValidationReport(task_id=task.id, task_hash=task.content_hash)

    def stage(name: str, passed: bool, detail: str, started: float) -> bool:
        report.stages.append(
            StageResult(name=name, passed=passed, detail=detail, seconds=time.perf_counter() - started)
        )
        return passed

    t = time.perf_counter()
    try:
        ws = cache.fork(task)
    except SeedError as exc:
        stage("seed", False, str(exc), t)
        return report
    stage("seed", True, "", t)

    t = time.perf_counter()
    tools = {name for s in task.services for name in get_service(s).tools.names}
    problems = check_problems(task, ws, tools)
    if not stage("checks", not problems, "; ".join(problems), t):
        return report

    t = time.perf_counter()
    noop = await run_episode(task, NoopPolicy(), cache=cache)
    if not stage("noop", _noop_ok(noop), _noop_detail(noop), t):
        return report

    t = time.perf_counter()
    first = await run_episode(task, OraclePolicy(), cache=cache)
    if not stage("oracle", _oracle_ok(first), _oracle_detail(first), t):
        return report

    t = time.perf_counter()
    second = await run_episode(task, OraclePolicy(), cache=cache)
    same = second.final_hash == first.final_hash and second.status == "completed"
    if not stage(
        "deterministic",
        same,
        "" if same else f"state hashes differ: {first.final_hash} vs {second.final_hash}",
        t,
    ):
        return report

    t = time.perf_counter()
    if not run_mutants:
        stage("mutants", True, "skipped", t)
        return report
    survivors: list[str] = []
    killed_at: dict[tuple[int, int], bool] = {}
    for description, position, mutant in mutants(task):
        record = await run_episode(mutant, OraclePolicy(), cache=cache)
        killed = not record.success
        report.mutants.append(
            MutantResult(description=description, killed=killed, score=record.score, status=record.status)
        )
        if description.startswith("drop"):
            if not killed:
                survivors.append(description)
        else:  # only alterations count here: a dropped step must fail on its own anyway
            killed_at[position] = killed_at.get(position, False) or killed
    unkilled = [f"turns[{i}].solution[{j}]" for (i, j), k in killed_at.items() if not k]
    detail = []
    if survivors:
        detail.append(
            "the checks still pass when a write step is dropped: "
            + "; ".join(survivors)
            + " (add a check that needs that write, or remove the step from the solution)"
        )
    if unkilled:
        detail.append(
            "no perturbed argument of these write steps makes any check fail: "
            + ", ".join(unkilled)
            + " (check the values the step writes)"
        )
    stage("mutants", not detail, "; ".join(detail), t)
    return report


def _noop_ok(record: EpisodeRecord) -> bool:
    return record.status == "completed" and not record.success


def _noop_detail(record: EpisodeRecord) -> str:
    if record.status != "completed":
        return f"the no-op episode did not complete: {record.error}"
    if record.success:
        return "a do-nothing agent passes every check: add checks that need the task's writes"
    return ""


def _oracle_ok(record: EpisodeRecord) -> bool:
    return (
        record.status == "completed"
        and record.verdict is not None
        and record.verdict.score == 1.0
        and record.success
    )


def _oracle_detail(record: EpisodeRecord) -> str:
    if record.status != "completed":
        return f"the reference solution did not complete: {record.error}"
    assert record.verdict is not None
    failed = [f"{c.id} ({c.error or c.message})" for c in record.verdict.checks if not c.passed]
    parts = []
    if record.event_errors:
        parts.append("events could not apply after the reference solution: " + "; ".join(record.event_errors))
    if failed:
        parts.append("the reference solution fails checks: " + "; ".join(failed))
    if record.verdict.safety_violations:
        parts.append(
            "the reference solution breaks safety rules: "
            + "; ".join(f"{v.rule_id} ({v.message})" for v in record.verdict.safety_violations)
        )
    return "; ".join(parts)
