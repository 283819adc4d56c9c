"""Variants of the reference solution resume at the latest start (of a turn, or after a step
of a turn's solution) they share with it, and their records equal those of a full replay."""

from typing import Any

import pytest

import coworkenv.synth.families.workdays  # noqa: F401  (registers the workday families)
from coworkenv import Episode
from coworkenv.rollout import OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.acceptance import acceptance_variants
from coworkenv.rollout.episode import EpisodeError
from coworkenv.rollout.mutants import mutants
from coworkenv.rollout.record import EpisodeRecord
from coworkenv.rollout.replay import latest_shared, play_reference, play_variant
from coworkenv.rollout.resume import TurnStart
from coworkenv.rollout.runner import reference_footprint
from coworkenv.rollout.variants import replace_step
from coworkenv.servers.faults import FaultPlan
from coworkenv.synth.family import build_task
from coworkenv.task import Task
from tests.rollout.test_runner import ticket_task


def comparable(record: EpisodeRecord) -> dict[str, Any]:
    """A record without what differs between two runs of the same play: wall-clock times."""
    data = record.model_dump(mode="json", exclude={"timings"})
    for call in data["tool_calls"]:
        call.pop("latency_ms")
    return data


@pytest.mark.parametrize(
    "family",
    [
        "tickets",
        "support_day",
        "meeting_day",
        "mail_answer_figure",
        "leak_external_request",
        "tickets_route_by_rule",
        "reschedule_conflict",
        "edit_policy_document",
    ],
)
async def test_every_resumed_variant_records_what_a_full_replay_records(family: str) -> None:
    task = ticket_task() if family == "tickets" else build_task(family, 2)
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    reference, starts = await play_reference(task, cache, footprint)
    # A start at every turn, and after each step a turn's solution plays before its question.
    expected = []
    for i, turn in enumerate(task.turns):
        before_question = len(turn.solution) if turn.clarification is None else turn.clarification.after
        expected += [(i, steps) for steps in range(before_question + 1)]
    assert [(s.episode.turn, s.episode.steps) for s in starts] == expected
    full = await run_episode(task, OraclePolicy(), cache=cache, footprint=footprint)
    assert comparable(reference) == comparable(full)
    seed = cache.fork(task)
    variants = mutants(task, seed, footprint) + acceptance_variants(task, seed, footprint)
    resumed = [(v, latest_shared(v.task, starts)) for v in variants]
    within = [v for v, start in resumed if start is not None and start.episode.steps]
    assert len(within) >= 3
    for variant, start in resumed:
        if start is None:
            continue
        replayed = await run_episode(variant.task, OraclePolicy(), cache=cache, footprint=footprint)
        assert comparable(await play_variant(variant.task, starts, cache, footprint)) == comparable(replayed)
        stopped = await play_variant(variant.task, starts, cache, footprint, until_failed=True)
        assert stopped.success == replayed.success


async def test_a_variant_resumes_at_the_turn_it_changes_and_one_changing_turn_0_starts_over() -> None:
    task = build_task("support_day", 0)
    cache = SeedCache()
    _, starts = await play_reference(task, cache, await reference_footprint(task, cache))
    later = replace_step(task, 3, 0)  # drops turn 3's first step
    start = latest_shared(later, starts)
    assert start is not None and (start.episode.turn, start.episode.steps) == (3, 0)
    assert len(task.turns[0].solution) >= 2
    second = latest_shared(replace_step(task, 0, 1), starts)  # drops turn 0's second step
    assert second is not None and (second.episode.turn, second.episode.steps) == (0, 1)
    assert latest_shared(replace_step(task, 0, 0), starts) is None
    assert latest_shared(task, starts) is starts[-1]


async def test_a_variant_whose_turn_asks_before_a_shared_step_does_not_go_on_from_after_it() -> None:
    task = build_task("support_day", 0)
    cache = SeedCache()
    _, starts = await play_reference(task, cache, await reference_footprint(task, cache))
    clarification = task.turns[3].clarification
    assert clarification is not None and clarification.after == 1
    turns = list(task.turns)
    turns[3] = turns[3].model_copy(update={"clarification": clarification.model_copy(update={"after": 0})})
    asks_first = task.model_copy(update={"turns": turns})
    start = latest_shared(asks_first, starts)
    assert start is not None and (start.episode.turn, start.episode.steps) == (3, 0)


async def test_a_turn_start_is_refused_on_another_task_with_faults_and_after_a_call() -> None:
    task = ticket_task()
    cache = SeedCache()
    _, starts = await play_reference(task, cache, await reference_footprint(task, cache))
    other = replace_step(task, 0, 0)
    assert (starts[1].episode.turn, starts[1].episode.steps) == (0, 1)
    with pytest.raises(
        EpisodeError,
        match="the turn start was taken on a task that differs from this one before step 1 of turn 0",
    ):
        await Episode(other, cache=cache).aresume(starts[1].episode)
    turn_1 = next(s for s in starts if s.episode.turn == 1)
    with pytest.raises(
        EpisodeError, match="the turn start was taken on a task that differs from this one before turn 1"
    ):
        await Episode(other, cache=cache).aresume(turn_1.episode)
    with pytest.raises(EpisodeError, match="an episode with faults cannot resume from a turn start"):
        await Episode(task, cache=cache, faults=FaultPlan(seed=1)).aresume(turn_1.episode)
    ep = Episode(task, cache=cache)
    await ep.areset()
    with pytest.raises(
        EpisodeError, match="a step start is taken after a tool call of the turn, before any reply"
    ):
        ep.step_start(1)
    await ep.acall("tickets_get_ticket", {"ticket_id": 1})
    with pytest.raises(EpisodeError, match="a turn start is taken before the turn's first call or reply"):
        ep.turn_start()
    assert ep.step_start(1).calls == 1


def at_turn_1(task: Task, cache: SeedCache) -> tuple[Episode, TurnStart]:
    """An episode of the ticket task that played turn 0 (the ticket made urgent), and its turn 1 start."""
    first = Episode(task, cache=cache)
    first.reset()
    first.call("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"})
    first.reply("Done.")
    first.next_turn()
    return first, first.turn_start()


def test_a_trainer_branches_a_late_turn_from_its_start_with_the_sync_api() -> None:
    task = ticket_task()
    cache = SeedCache()
    _first, start = at_turn_1(task, cache)
    branches = []
    for queue in ("Engineering", "Support"):
        branch = Episode(task, cache=cache)
        branch.resume(start)
        assert branch.messages == start.messages and branch.turn == 1
        branch.call("tickets_update_ticket", {"ticket_id": 1, "queue": queue})
        branch.reply("Done.")
        branch.next_turn()
        verdict = branch.verdict()
        assert verdict is not None
        branches.append((verdict.success, [c.passed for c in verdict.checks if c.turn == 0]))
    assert branches == [(True, [True]), (False, [True])]


async def test_a_mutant_stops_after_the_turn_whose_checks_it_fails_and_stays_killed() -> None:
    task = build_task("support_day", 0)
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    _, starts = await play_reference(task, cache, footprint)
    assert task.turns[1].solution[2].tool == "calendar_create_event"
    wrong = replace_step(task, 1, 2)  # the call is never booked
    full = await play_variant(wrong, starts, cache, footprint)
    # Played on, the reference's later steps break on the missing event (turn 4 moves it).
    assert (full.status, full.verdict) == ("error", None)
    assert full.error is not None and full.error.startswith(
        "turns[4].solution[1] (calendar_update_event) failed"
    )
    stopped = await play_variant(wrong, starts, cache, footprint, until_failed=True)
    assert stopped.verdict is not None
    assert (stopped.status, stopped.success) == ("completed", False)
    assert [t.success for t in stopped.verdict.turns] == [True, False, False, False, False, False, False]
    failed = {c.id for c in stopped.verdict.turns[1].checks if not c.passed}
    assert "call-booked" in failed
    assert len(stopped.timings.turns) == 3  # turns 0 and 1 played, turn 2 begun and judged as it stood


def test_a_resume_takes_a_warm_fork_to_the_turn_start_and_without_one_forks_its_snapshot() -> None:
    task = ticket_task()
    cache = SeedCache()
    first, start = at_turn_1(task, cache)
    assert start.changes is not None
    reached = start.workspace.fork().content_hash()
    cold = Episode(task, cache=cache)
    cold.resume(start)  # no fork waits in the seed's pool: the turn start's snapshot is forked
    assert cache.forks(task).waiting == 0
    warm_conn = first.workspace.conn
    first.close()  # its connection waits in the pool, put back to the seed
    warm = Episode(task, cache=cache)
    warm.resume(start)
    assert warm.workspace.conn is warm_conn
    assert warm.workspace.content_hash() == cold.workspace.content_hash() == reached
    assert warm.workspace.audit.entries() == cold.workspace.audit.entries()
    assert warm.workspace.clock.now() == cold.workspace.clock.now()
