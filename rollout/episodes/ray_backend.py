"""Episodes sharded over Ray actors, for batches bigger than one machine.

Each actor keeps its own seed cache (seeds and goal footprints are built once per actor and
task) and plays one episode at a time; the driver hands out (task, trial) pairs as actors
free up, receives each record as it finishes and is the only writer of `records.jsonl`, so
every record is appended exactly once. Resuming works as for the local backend: the driver
decides what is pending before anything is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

from coworkenv.rollout.agents.policies import Policy
from coworkenv.rollout.agents.user_simulator import UserSimulator
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.runner import run_episode
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.servers.faults import FaultPlan
from coworkenv.task import Task


class EpisodeWorker:
    """The body of one Ray actor: plays episodes with its own seed cache."""

    def __init__(
        self,
        make_policy: Callable[[], Policy],
        faults: FaultPlan | None,
        seed: int,
        user_simulator: UserSimulator | None,
    ) -> None:
        self.make_policy = make_policy
        self.faults = faults
        self.seed = seed
        self.user_simulator = user_simulator
        self.cache = SeedCache()

    def run(self, task: Task, trial: int) -> EpisodeRecord:
        return anyio.run(
            lambda: run_episode(
                task,
                self.make_policy(),
                trial=trial,
                seed=self.seed,
                cache=self.cache,
                faults=self.faults,
                user_simulator=self.user_simulator,
            )
        )


async def run_on_ray(
    todo: list[tuple[Task, int]],
    make_policy: Callable[[], Policy],
    *,
    workers: int,
    faults: FaultPlan | None,
    seed: int,
    user_simulator: UserSimulator | None,
    address: str | None,
    on_record: Callable[[EpisodeRecord], None],
) -> None:
    """Play every (task, trial) pair of `todo` on up to `workers` Ray actors, calling
    `on_record` on the driver once per finished record. Joins the cluster at `address`, or
    the Ray instance this process already started, or starts a local one."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    if not todo:
        return
    actor_class: Any = ray.remote(num_cpus=1)(EpisodeWorker)
    actors: list[Any] = [
        actor_class.remote(make_policy, faults, seed, user_simulator)
        for _ in range(max(1, min(workers, len(todo))))
    ]
    queue = list(reversed(todo))
    running: dict[Any, Any] = {}
    for actor in actors:
        if queue:
            task, trial = queue.pop()
            running[actor.run.remote(task, trial)] = actor
    try:
        while running:
            done, _ = await anyio.to_thread.run_sync(lambda: ray.wait(list(running), num_returns=1))
            ref = done[0]
            actor = running.pop(ref)
            if queue:
                task, trial = queue.pop()
                running[actor.run.remote(task, trial)] = actor
            on_record(ray.get(ref))
    finally:
        for actor in actors:
            ray.kill(actor)
