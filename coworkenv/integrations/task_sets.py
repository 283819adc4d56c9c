"""The tasks a trainer's worker process plays, loaded once per process.

Trainers make one environment or agent loop object per trajectory (verl instantiates its
agent loop for each, SkyRL makes an environment for each); what must outlive them is kept
here, once per set of task paths: the tasks, one `SeedCache` (so a task's seed and goal
footprint are built once, and closed episodes leave warm forks for the next) and a trial
counter per task, so each episode of a task gets its own trial number in its record.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.task import Task, load_task, task_files

__all__ = ["TaskSet", "task_set"]


@dataclass
class TaskSet:
    """Tasks by id, the seed cache their episodes share and their trial counters."""

    tasks: dict[str, Task]
    cache: SeedCache = field(default_factory=SeedCache)
    _trials: dict[str, itertools.count[int]] = field(default_factory=dict)

    def task(self, task_id: object) -> Task:
        """The task with this id; an unknown id is an error listing the known ones."""
        if not isinstance(task_id, str) or task_id not in self.tasks:
            known = ", ".join(sorted(self.tasks))
            raise KeyError(f"no task {task_id!r} in this task set; its tasks: {known}")
        return self.tasks[task_id]

    def next_trial(self, task_id: str) -> int:
        """The next trial number of the task in this process (0, 1, ...)."""
        return next(self._trials.setdefault(task_id, itertools.count()))


def task_set(paths: str | Path | Iterable[str | Path]) -> TaskSet:
    """The task set of these task files and folders, loaded on the first call in a process
    and shared by every later call with the same paths."""
    if isinstance(paths, str | Path):
        paths = [paths]
    return _load(tuple(str(p) for p in paths))


@functools.cache
def _load(paths: tuple[str, ...]) -> TaskSet:
    if not paths:
        raise ValueError("no tasks given: name task files or folders of them")
    files = task_files(list(paths))
    if not files:
        raise ValueError(f"no task files (*.json) in {', '.join(paths)}")
    tasks = [load_task(p) for p in files]
    ids = [t.id for t in tasks]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"task ids must be unique; repeated: {repeated}")
    return TaskSet({t.id: t for t in tasks})
