"""No template seams in any text a family writes: user messages, clarifying answers, the
texts of events and seed operations, and every string the reference solution sends (mail
bodies, notes, comments, file contents), over seeds, difficulty levels and worlds."""

from collections.abc import Iterator
from typing import Any

import pytest

from coworkenv.synth.family import FAMILIES, Difficulty, build_task
from coworkenv.synth.phrasing import seams
from coworkenv.task import Task
from coworkenv.worlds import PROFILES, world

#: Keys whose values are not prose (ids, paths, addresses, enums, queries).
NOT_PROSE = {"path", "to", "cc", "bcc", "email", "status", "priority", "queue", "label", "folder", "query",
             "time_zone", "start", "end", "requester", "assignee", "id", "name_glob", "mode"}  # fmt: skip


def strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if key not in NOT_PROSE and " " in value.strip():
            yield key, value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k != "$ref":
                yield from strings(v, k)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item, key)


def texts(task: Task) -> Iterator[tuple[str, str]]:
    yield "title", task.title
    for rule in task.context.rules:
        yield "rule", rule
    for op in task.seed.operations:
        for key, text in strings(op.params):
            yield f"seed {op.operation}.{key}", text
    for i, turn in enumerate(task.turns):
        yield f"turn {i} user", turn.user
        if turn.clarification is not None:
            yield f"turn {i} answer", turn.clarification.answer
            yield f"turn {i} question", turn.clarification.question
        for event in turn.events:
            for key, text in strings(event.params):
                yield f"turn {i} event {event.operation}.{key}", text
        for step in turn.solution:
            for key, text in strings(step.arguments):
                yield f"turn {i} {step.tool}.{key}", text


def seams_of(task: Task) -> list[str]:
    return [f"{task.id}: {where}: {found}" for where, text in texts(task) for found in seams(text)]


@pytest.mark.parametrize("family_name", sorted(FAMILIES))
def test_no_seams_on_the_demo_company(family_name: str) -> None:
    found = [
        s for seed in range(8) for s in seams_of(build_task(family_name, seed, Difficulty.level(seed % 3)))
    ]
    assert found == []


@pytest.mark.parametrize("family_name", sorted(n for n, f in FAMILIES.items() if f.worlds))
def test_no_seams_on_worlds(family_name: str) -> None:
    profiles = sorted(PROFILES)
    found = [
        s
        for i, profile in enumerate(profiles)
        for s in seams_of(build_task(family_name, i, Difficulty.level(i % 3), world=world(profile)))
    ]
    assert found == []
