"""Near-duplicate detection between tasks.

Two tasks are near-duplicates when their signatures overlap almost entirely: the word
3-grams of their user messages and of what their seed plants (names, numbers, subjects),
their services and capabilities, and the shape of their checks (type, table, column)."""

from __future__ import annotations

import re

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
    sa, sb = signature(a), signature(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def find_duplicate(task: Task, kept: list[Task], threshold: float = DUPLICATE_THRESHOLD) -> Task | None:
    """The first kept task that `task` nearly duplicates, if any."""
    mine = signature(task)
    for other in kept:
        theirs = signature(other)
        if len(mine & theirs) / len(mine | theirs) >= threshold:
            return other
    return None
