"""Validation of synthesized drafts on Ray actors, for synthesis bigger than one machine.

Validation is the CPU-bound part of synthesis. `RayValidators` keeps a pool of actors, each
with its own seed cache (a world's seed is built once per actor), and validates one draft per
actor at a time; the driver keeps generating, deduplicating and writing records, so every
record is still appended once, by one writer, and a rerun resumes from them as it does
locally. `ray.init` joins the cluster at `address`, the Ray instance this process already
started, or a new local one.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread

from coworkenv.state import Snapshot


class DraftValidator:
    """The body of one Ray actor: validates tasks (as JSON) with its own seed cache."""

    def __init__(self) -> None:
        from coworkenv.rollout.episodes.seeding import SeedCache

        self.cache = SeedCache()

    def validate(self, task_json: str, seed: Snapshot | None = None) -> str:
        from coworkenv.synth.validation.validation import validate_task
        from coworkenv.task import parse_task

        task = parse_task(task_json)
        if seed is not None:
            self.cache.keep(task, seed)
        report = anyio.run(lambda: validate_task(task, cache=self.cache))
        return report.model_dump_json()


class RayValidators:
    """A pool of `workers` validation actors; `await validate(task_json)` runs on a free one."""

    def __init__(self, workers: int, *, address: str | None = None) -> None:
        import ray

        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        actor_class: Any = ray.remote(num_cpus=1)(DraftValidator)
        self._actors: list[Any] = [actor_class.remote() for _ in range(max(1, workers))]
        self._free = list(self._actors)
        self._available = anyio.Semaphore(len(self._actors))

    @property
    def workers(self) -> int:
        return len(self._actors)

    async def validate(self, task_json: str, seed: Snapshot | None = None) -> str:
        """The validation report (JSON) of a task (JSON), from the next free actor; `seed`
        is the task's seeded state when the driver has it (the actor then builds none)."""
        import ray

        async with self._available:
            actor = self._free.pop()
            try:
                ref = actor.validate.remote(task_json, seed)
                result: str = await anyio.to_thread.run_sync(ray.get, ref)
                return result
            finally:
                self._free.append(actor)

    def close(self) -> None:
        import ray

        for actor in self._actors:
            ray.kill(actor)
        self._actors, self._free = [], []
