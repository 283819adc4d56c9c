"""What changed before each turn of a task, so reports show where agents lose the thread.

Kinds: `announced` (an event the turn's message mentions), `silent` (an event the agent must
notice), `changed mind` (the user revises an earlier request: `Turn.changed_mind`),
`clarification` (the request is ambiguous on purpose: `Turn.clarification`). The first turn
and turns without any of these are `none`.
"""

from __future__ import annotations

from coworkenv.task import Task

KINDS = ("announced", "silent", "changed mind", "clarification", "none")


def turn_changes(task: Task) -> list[list[str]]:
    """Per turn, the kinds of change it brings, in `KINDS` order."""
    out: list[list[str]] = []
    for index, turn in enumerate(task.turns):
        kinds: set[str] = set()
        if index > 0:
            for event in turn.events:
                kinds.add("announced" if event.announced else "silent")
        if turn.changed_mind:
            kinds.add("changed mind")
        if turn.clarification is not None:
            kinds.add("clarification")
        out.append([k for k in KINDS if k in kinds] or ["none"])
    return out
