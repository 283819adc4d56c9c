"""Near-duplicate detection between tasks.

Two tasks are near-duplicates when their signatures overlap almost entirely: the word
3-grams of their user messages and of what their seed plants (names, numbers, subjects),
their services and capabilities, and the shape of their checks (type, table, column)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import overload

from coworkenv.task import Task

DUPLICATE_THRESHOLD = 0.9


def signature(task: Task) -> frozenset[str]:
    grams: set[str] = set()
    planted = " ".join(str(op.params) for op in task.seed.operations) + str(task.seed.rows)
    for text in (" ".join(t.user for t in task.turns), planted):
        words = re.findall(r"[a-z0-9]+", text.lower())
        grams |= {" ".join(words[i : i + 3]) for i in range(max(1, len(words) - 2))}
    grams |= {f"service:{s}" for s in task.services} | {f"capability:{c}" for c in task.capabilities}
    for check in task.all_checks():
        grams.add(f"check:{check.type}:{getattr(check, 'table', '')}:{getattr(check, 'column', '')}")
    return frozenset(grams)


def similarity(a: Task, b: Task) -> float:
    """Jaccard similarity of the two signatures, in [0, 1]."""
    return _jaccard(signature(a), signature(b))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


class KeptTasks(Sequence[Task]):
    """Kept tasks in order, each with its signature computed once: finding a duplicate among
    n kept tasks costs n set comparisons, not n signatures (a long synthesis run would
    otherwise spend its time re-reading every kept task for each new one)."""

    def __init__(self, tasks: Iterable[Task] = ()) -> None:
        self._tasks: list[Task] = []
        self._signatures: list[frozenset[str]] = []
        for task in tasks:
            self.append(task)

    def append(self, task: Task) -> None:
        self._tasks.append(task)
        self._signatures.append(signature(task))

    def duplicate_of(self, task: Task, threshold: float = DUPLICATE_THRESHOLD) -> Task | None:
        """The first kept task that `task` nearly duplicates, if any."""
        mine = signature(task)
        for other, theirs in zip(self._tasks, self._signatures, strict=True):
            if _jaccard(mine, theirs) >= threshold:
                return other
        return None

    @overload
    def __getitem__(self, index: int) -> Task: ...

    @overload
    def __getitem__(self, index: slice) -> list[Task]: ...

    def __getitem__(self, index: int | slice) -> Task | list[Task]:
        return self._tasks[index]

    def __len__(self) -> int:
        return len(self._tasks)


def find_duplicate(task: Task, kept: Sequence[Task], threshold: float = DUPLICATE_THRESHOLD) -> Task | None:
    """The first kept task that `task` nearly duplicates, if any."""
    index = kept if isinstance(kept, KeptTasks) else KeptTasks(kept)
    return index.duplicate_of(task, threshold)
