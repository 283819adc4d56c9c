"""Episodes sharded over Ray actors, for batches bigger than one machine.

Each actor reserves one CPU, keeps its own seed cache (seeds and goal footprints are built
once per actor and task) and plays one episode at a time. The driver gives an actor its next
(task, trial) pair only when it hands back a record, so no work waits on an actor that never
started; and it starts no more actors than the cluster has CPUs (saying so when that is
fewer than asked), since an actor beyond them would never be scheduled. It receives each
record as it finishes and is the only writer of `records.jsonl`, so every record is
appended exactly once. Resuming works as for the local backend: the driver decides what is
pending before anything is sent.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

from coworkenv.rollout.agents.policies import Policy
from coworkenv.rollout.agents.user_simulator import UserSimulator
from coworkenv.rollout.episodes.preflight import NotReady
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


def actor_count(workers: int, episodes: int, cpus: float) -> int:
    """How many actors to start: `workers`, but no more than there are episodes or CPUs in
    the cluster (at least one). Warns when the CPUs are what limit it."""
    count = max(1, min(workers, episodes))
    fitting = max(1, int(cpus))
    if count > fitting:
        warnings.warn(
            f"the Ray cluster has {cpus:g} CPU(s): running {fitting} actor(s) at once, not {count} "
            "(each actor takes one CPU)",
            RuntimeWarning,
            stacklevel=2,
        )
        count = fitting
    return count


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
    try:
        import ray
    except ImportError:
        raise NotReady(
            "the Ray backend needs Ray: install the [ray] extra (pip install -e '.[ray]' in a "
            "checkout, or pip install 'ray>=2.60,<3'), or run with --backend local"
        ) from None

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    if not todo:
        return
    count = actor_count(workers, len(todo), ray.cluster_resources().get("CPU", 0.0))
    actor_class: Any = ray.remote(num_cpus=1)(EpisodeWorker)
    actors: list[Any] = [actor_class.remote(make_policy, faults, seed, user_simulator) for _ in range(count)]
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
