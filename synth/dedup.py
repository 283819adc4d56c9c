"""Near-duplicate detection between tasks.

Two tasks are near-duplicates when their signatures overlap almost entirely: the word
3-grams of their user messages and of what their seed plants (names, numbers, subjects),
their services and capabilities, and the shape of their checks (type, table, column)."""

from __future__ import annotations

import math
import re
import zlib
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


class SimilarSets:
    """Sets in order, indexed to find the first one whose Jaccard similarity with a new set
    reaches `threshold` without comparing it with every one (prefix filtering: with the
    items of every set in one fixed order, two sets that similar share an item among the
    first `len - floor(threshold * len) + 1` of each, so only the sets that share one of
    the new set's first items are compared, and only those whose size is within a factor
    `threshold` of its size). The same answer as comparing with each in turn."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self.sets: list[frozenset[str]] = []
        self._starting: dict[str, list[int]] = {}  # an item -> the sets whose prefix holds it

    def _prefix(self, items: frozenset[str]) -> list[str]:
        ordered = sorted(items, key=lambda item: (zlib.crc32(item.encode()), item))
        # floor, not ceil: a prefix an item longer than it must be misses no pair.
        return ordered[: len(ordered) - math.floor(self.threshold * len(ordered)) + 1]

    def add(self, items: frozenset[str]) -> None:
        for item in self._prefix(items):
            self._starting.setdefault(item, []).append(len(self.sets))
        self.sets.append(items)

    def first_similar(self, items: frozenset[str]) -> int | None:
        """The index of the first set at least `threshold` similar to `items`, if any."""
        if not items or self.threshold <= 0:  # an empty set is like only another empty one
            candidates: Iterable[int] = range(len(self.sets))
        else:
            candidates = sorted({i for item in self._prefix(items) for i in self._starting.get(item, ())})
        low, high = (
            self.threshold * len(items),
            len(items) / self.threshold if self.threshold > 0 else math.inf,
        )
        for i in candidates:
            # Sizes first: a set that similar is within a factor `threshold` of this one's size.
            if (
                low - 1e-9 <= len(self.sets[i]) <= high + 1e-9
                and _jaccard(items, self.sets[i]) >= self.threshold
            ):
                return i
        return None

    def __len__(self) -> int:
        return len(self.sets)


class KeptTasks(Sequence[Task]):
    """Kept tasks in order, each with its signature computed once and indexed
    (`SimilarSets`): finding a duplicate among n kept tasks compares the new one with the
    few that could be one, not with every one (a long synthesis run would otherwise spend
    its time comparing each new task with all it kept)."""

    def __init__(self, tasks: Iterable[Task] = ()) -> None:
        self._tasks: list[Task] = []
        self._signatures = SimilarSets(DUPLICATE_THRESHOLD)
        for task in tasks:
            self.append(task)

    def append(self, task: Task) -> None:
        self._tasks.append(task)
        self._signatures.add(signature(task))

    def duplicate_of(self, task: Task, threshold: float = DUPLICATE_THRESHOLD) -> Task | None:
        """The first kept task that `task` nearly duplicates, if any."""
        index = self._signatures
        if threshold != index.threshold:  # indexed again for this threshold
            index = SimilarSets(threshold)
            for items in self._signatures.sets:
                index.add(items)
        found = index.first_similar(signature(task))
        return None if found is None else self._tasks[found]

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
