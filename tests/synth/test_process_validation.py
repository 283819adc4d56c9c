"""Validation in worker processes: the report a worker gives, and ending workers."""

import multiprocessing
import os
import signal
from pathlib import Path

import anyio

from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.seeding import seed_snapshot
from coworkenv.synth.validation.processes import ProcessValidators
from coworkenv.synth.validation.validation import ValidationReport, validate_task
from coworkenv.task import load_task

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "tasks" / "examples"


def outcome(report: ValidationReport) -> list[tuple[str, bool, str]]:
    return [(s.name, s.passed, s.detail) for s in report.stages]


async def test_a_worker_reports_what_this_process_reports_with_or_without_the_seed() -> None:
    task = load_task(EXAMPLES / "multi-turn-follow-up.json")
    here = await validate_task(task, cache=SeedCache())
    validators = ProcessValidators(2)
    validators.start()
    try:
        given = ValidationReport.model_validate_json(
            await validators.validate(task.model_dump_json(), seed_snapshot(task))
        )
        built = ValidationReport.model_validate_json(await validators.validate(task.model_dump_json()))
    finally:
        validators.close()
    assert outcome(here)[-1] == ("acceptance", True, "")
    assert outcome(given) == outcome(built) == outcome(here)
    assert [(m.kind, m.description, m.killed) for m in given.mutants] == [
        (m.kind, m.description, m.killed) for m in here.mutants
    ]


def _started_here(before: set[int]) -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.pid not in before]


async def test_workers_are_forks_of_a_server_and_a_cancelled_run_ends_them_at_once() -> None:
    task = load_task(EXAMPLES / "multi-turn-announced-reschedule.json")
    before = {p.pid for p in multiprocessing.active_children() if p.pid is not None}
    validators = ProcessValidators(1)
    try:
        with anyio.move_on_after(0.05) as scope:
            await validators.validate(task.model_dump_json())
        workers = _started_here(before)
        parents = [_parent_of(w.pid) for w in workers if w.pid is not None]
    finally:
        validators.close()
    assert scope.cancelled_caught
    assert len(workers) == len(parents) == 1
    # The worker is a child of the forkserver, which imported the validation code once.
    assert parents[0] != os.getpid()
    assert workers[0].exitcode == -signal.SIGTERM  # ended mid-validation, not after it


def _parent_of(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[1])


def test_a_pool_closed_as_soon_as_it_starts_ends_its_workers_cleanly() -> None:
    before = {p.pid for p in multiprocessing.active_children() if p.pid is not None}
    validators = ProcessValidators(2)
    validators.start()
    validators.close()  # the starter thread submits nothing after this: no error in it
    assert [p for p in _started_here(before) if p.is_alive()] == []
