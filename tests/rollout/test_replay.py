"""Variants of the reference solution resume at the latest turn start they share with it,
and their records equal those of a full replay."""

from typing import Any

import pytest

import coworkenv.synth.families.workdays  # noqa: F401  (registers the workday families)
from coworkenv import Episode
from coworkenv.rollout import OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.acceptance import acceptance_variants
from coworkenv.rollout.episode import EpisodeError, TurnStart
from coworkenv.rollout.mutants import mutants
from coworkenv.rollout.record import EpisodeRecord
from coworkenv.rollout.replay import latest_shared, play_reference, play_variant
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


@pytest.mark.parametrize("family", ["tickets", "support_day", "meeting_day"])
async def test_every_resumed_variant_records_what_a_full_replay_records(family: str) -> None:
    task = ticket_task() if family == "tickets" else build_task(family, 2)
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    reference, starts = await play_reference(task, cache, footprint)
    assert [s.episode.turn for s in starts] == list(range(len(task.turns)))
    full = await run_episode(task, OraclePolicy(), cache=cache, footprint=footprint)
    assert comparable(reference) == comparable(full)
    seed = cache.fork(task)
    variants = mutants(task, seed, footprint) + acceptance_variants(task, seed, footprint)
    resumed = [v for v in variants if latest_shared(v.task, starts) is not None]
    assert len(resumed) >= 3
    for variant in resumed:
        replayed = await run_episode(variant.task, OraclePolicy(), cache=cache, footprint=footprint)
        assert comparable(await play_variant(variant.task, starts, cache, footprint)) == comparable(replayed)


async def test_a_variant_resumes_at_the_turn_it_changes_and_one_changing_turn_0_starts_over() -> None:
    task = build_task("support_day", 0)
    cache = SeedCache()
    _, starts = await play_reference(task, cache, await reference_footprint(task, cache))
    later = replace_step(task, 3, 0)  # drops turn 3's first step
    start = latest_shared(later, starts)
    assert start is not None and start.episode.turn == 3
    assert latest_shared(replace_step(task, 0, 0), starts) is None
    assert latest_shared(task, starts) is starts[-1]


async def test_a_turn_start_is_refused_on_another_task_with_faults_and_after_a_call() -> None:
    task = ticket_task()
    cache = SeedCache()
    _, starts = await play_reference(task, cache, await reference_footprint(task, cache))
    other = replace_step(task, 0, 0)
    with pytest.raises(
        EpisodeError, match="the turn start was taken on a task that differs from this one before turn 1"
    ):
        await Episode(other, cache=cache).aresume(starts[1].episode)
    with pytest.raises(EpisodeError, match="an episode with faults cannot resume from a turn start"):
        await Episode(task, cache=cache, faults=FaultPlan(seed=1)).aresume(starts[1].episode)
    ep = Episode(task, cache=cache)
    await ep.areset()
    await ep.acall("tickets_get_ticket", {"ticket_id": 1})
    with pytest.raises(EpisodeError, match="a turn start is taken before the turn's first call or reply"):
        ep.turn_start()


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
