"""Clarifications that cannot be guessed: in every family with an ambiguous turn, which
candidate is right is drawn per seed, so a fixed rule that never asks (always the first
candidate, always the last) is right on about half of the seeds, and the verdict fails it on
every seed anyway, because it writes a candidate before the user answered."""

from typing import Any

import pytest

import coworkenv.synth.families.workdays  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.agents.policies import OraclePolicy
from coworkenv.rollout.episodes.runner import reference_footprint, run_episode
from coworkenv.synth.family import build_task
from coworkenv.synth.validation.clarification_mutants import on_candidate, right_candidate
from coworkenv.task import Task

SEEDS = range(12)
CLARIFYING = ("support_day", "meeting_day")
"""Every family that makes a clarification (`grep -rl clarification synth/`)."""

# Over seeds 0..11, where the right candidate stands (0: the first, 1: the last of two).
POSITIONS = {
    "support_day": [1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1],
    "meeting_day": [0, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1],
}


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


class NeverAsks(OraclePolicy):
    """An agent that never asks: on an ambiguous turn it plays `clarification.guess`."""

    async def asks(self, session: Any, task: Task, turn_index: int, progress: Any) -> bool:
        return False


def ruled(task: Task, position: int, *, guarded: bool = True) -> Task:
    """The task whose ambiguous turn's guess is the reference's steps after the question on
    the candidate at `position`: what a rule "always that one" does. Not `guarded`: without
    the candidates, so without the guard against writing before the answer."""
    i, turn = next((i, t) for i, t in enumerate(task.turns) if t.clarification is not None)
    clarification, right = turn.clarification, right_candidate(turn)
    assert clarification is not None and right is not None
    chosen = clarification.candidates[position]
    guess = [on_candidate(s, right, chosen) for s in turn.solution[clarification.after :]]
    update: dict[str, Any] = {"guess": guess}
    if not guarded:
        update["candidates"] = []
    changed = turn.model_copy(update={"clarification": clarification.model_copy(update=update)})
    return task.model_copy(update={"turns": [*task.turns[:i], changed, *task.turns[i + 1 :]]})


@pytest.mark.parametrize("name", CLARIFYING)
def test_the_right_candidate_is_drawn_per_seed_and_named_by_the_answer(name: str) -> None:
    positions = []
    for seed in SEEDS:
        task = build_task(name, seed)
        (turn,) = [t for t in task.turns if t.clarification is not None]
        assert turn.clarification is not None and len(turn.clarification.candidates) == 2
        right = right_candidate(turn)
        assert right is not None
        positions.append(turn.clarification.candidates.index(right))
        # the guess acts on the other candidate
        (other,) = [c for c in turn.clarification.candidates if c != right]
        assert [
            c for c in turn.clarification.candidates if c.named_by(turn.clarification.guess[0].arguments)
        ] == [other]
    assert positions == POSITIONS[name]
    assert (positions.count(0), positions.count(1)) == {"support_day": (5, 7), "meeting_day": (7, 5)}[name]
    assert build_task(name, 3) == build_task(name, 3)


@pytest.mark.parametrize("name", CLARIFYING)
async def test_a_fixed_rule_that_never_asks_is_right_on_about_half_the_seeds_and_always_fails(
    name: str, cache: SeedCache
) -> None:
    wins: dict[tuple[str, bool], int] = {}
    for seed in SEEDS:
        task = build_task(name, seed)
        footprint = await reference_footprint(task, cache)
        for rule, position in (("first", 0), ("last", -1)):
            for guarded in (False, True):
                record = await run_episode(
                    ruled(task, position, guarded=guarded), NeverAsks(), cache=cache, footprint=footprint
                )
                assert record.status == "completed", record.error
                wins[rule, guarded] = wins.get((rule, guarded), 0) + record.success
    right_first = POSITIONS[name].count(0)
    # Without the guard, a rule wins exactly where the draw put the right one: about half.
    assert wins["first", False] == right_first and wins["last", False] == len(SEEDS) - right_first
    assert 0 < wins["first", False] < len(SEEDS) and 0 < wins["last", False] < len(SEEDS)
    # With it (the task as it is), acting before the answer fails even when the rule is right.
    assert wins["first", True] == wins["last", True] == 0
