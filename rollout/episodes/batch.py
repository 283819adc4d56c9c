"""Many episodes at once: tasks x trials, concurrently, appended to disk as they finish.

Resumable: a rerun with the same output folder skips the (task, policy, trial) triples that
already have a record, except records with status `error` (infrastructure failures, such as
an endpoint that kept failing), which are run again. Each record is one appended line, so an
interrupted run leaves every finished record intact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio

from coworkenv.rollout.agents.policies import Policy
from coworkenv.rollout.agents.user_simulator import UserSimulator
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.records_io import append_record, read_records, repair
from coworkenv.rollout.episodes.runner import run_episode
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.servers.faults import FaultPlan
from coworkenv.task import Task

Progress = Callable[["BatchState", EpisodeRecord], None]


@dataclass
class BatchState:
    """Counts for a progress display."""

    total: int
    skipped: int
    done: int = 0
    successes: int = 0
    errors: int = 0
    records: list[EpisodeRecord] = field(default_factory=list)

    @property
    def all_errors(self) -> bool:
        """True when episodes ran and every one of them ended in an infrastructure error."""
        return self.done > 0 and self.errors == self.done

    @property
    def pass_rate(self) -> float:
        judged = self.done - self.errors
        return self.successes / judged if judged else 0.0


def pending_episodes(
    tasks: list[Task], policy_name: str, trials: int, out_dir: Path
) -> list[tuple[Task, int]]:
    """(task, trial) pairs without a usable record in `out_dir`."""
    ids = [t.id for t in tasks]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"task ids must be unique; repeated: {repeated}")
    done = {
        (r.task_id, r.trial) for r in read_records(out_dir) if r.policy == policy_name and r.status != "error"
    }
    return [(task, trial) for task in tasks for trial in range(trials) if (task.id, trial) not in done]


async def run_batch(
    tasks: list[Task],
    make_policy: Callable[[], Policy],
    *,
    trials: int,
    out_dir: str | Path,
    concurrency: int = 4,
    faults: FaultPlan | None = None,
    seed: int = 0,
    user_simulator: UserSimulator | None = None,
    progress: Progress | None = None,
    backend: Literal["local", "ray"] = "local",
    address: str | None = None,
) -> BatchState:
    """Run every pending (task, trial) episode, at most `concurrency` at a time.

    With `user_simulator`, a conversing policy (the OpenAI agent) on a task with a persona
    gets the simulated user's answers within each turn. With `backend="ray"`, episodes run
    on `concurrency` Ray actors (see `rollout.episodes.ray_backend`), on the cluster at `address`
    or a local Ray instance; records still reach `out_dir` as they finish."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    repair(out)
    policy_name = make_policy().name
    todo = pending_episodes(tasks, policy_name, trials, out)
    state = BatchState(total=len(todo), skipped=len(tasks) * trials - len(todo))
    cache = SeedCache()
    limiter = anyio.CapacityLimiter(max(1, concurrency))

    def finished(record: EpisodeRecord) -> None:
        append_record(out, record)
        state.done += 1
        state.successes += record.success
        state.errors += record.status == "error"
        state.records.append(record)
        if progress is not None:
            progress(state, record)

    if backend == "ray":
        from coworkenv.rollout.episodes.ray_backend import run_on_ray

        await run_on_ray(
            todo,
            make_policy,
            workers=concurrency,
            faults=faults,
            seed=seed,
            user_simulator=user_simulator,
            address=address,
            on_record=finished,
        )
        return state

    async def one(task: Task, trial: int) -> None:
        async with limiter:
            record = await run_episode(
                task,
                make_policy(),
                trial=trial,
                seed=seed,
                cache=cache,
                faults=faults,
                user_simulator=user_simulator,
            )
        finished(record)

    async with anyio.create_task_group() as group:
        for task, trial in todo:
            group.start_soon(one, task, trial)
    return state
