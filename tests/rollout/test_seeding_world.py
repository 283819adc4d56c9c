"""A task names its world in its procedural seed; seeding renders that world once and forks it."""

import json

import pytest

from coworkenv.rollout.episodes.seeding import SeedCache, SeedError, seed_workspace
from coworkenv.task import TaskFileError, parse_task
from coworkenv.worlds import world
from tests.rollout.test_runner import ticket_task


def world_task(params: dict) -> dict:
    data = json.loads(ticket_task().model_dump_json())
    data["seed"] = {"procedural": {"name": "world", "params": params}}
    return data


def test_a_world_seed_renders_that_worlds_people_queues_and_files() -> None:
    task = parse_task(world_task({"profile": "city_council", "size": 20, "seed": 1}))
    ws = seed_workspace(task)
    council = world("city_council", 20, 1)
    services = set(task.services)
    if "directory" in services:
        assert {r["email"] for r in ws.rows("directory_people")} == {p.email for p in council.people}
    if "tickets" in services:
        assert {r["name"] for r in ws.rows("tickets_queues")} == {"311 requests", "Permits", "Records"}
    assert ws.meta("task_id") == task.id and ws.meta("user_email") == task.user_email


def test_the_same_world_seed_gives_the_same_state_and_a_fork_per_episode() -> None:
    task = parse_task(world_task({"profile": "logistics", "size": 30}))
    cache = SeedCache()
    first, second = cache.fork(task), cache.fork(task)
    assert first is not second and first.content_hash() == second.content_hash()
    assert seed_workspace(task).content_hash() == first.content_hash()


def test_an_unknown_profile_is_a_seed_error_naming_it() -> None:
    task = parse_task(world_task({"profile": "moon_base"}))
    with pytest.raises(SeedError, match=r"seed\.procedural: no world profile 'moon_base'"):
        seed_workspace(task)


def test_world_seed_parameters_are_checked_when_the_task_is_read() -> None:
    with pytest.raises(
        TaskFileError,
        match="unknown world seed parameter 'colour'; the world seed takes only: profile, size, seed",
    ):
        parse_task(world_task({"profile": "law_firm", "colour": "red"}), source="task.json")
    with pytest.raises(TaskFileError, match="size: Input should be less than or equal to 300"):
        parse_task(world_task({"profile": "law_firm", "size": 301}), source="task.json")


def test_variants_that_differ_in_turns_share_one_seeded_snapshot_and_a_new_seed_does_not() -> None:
    from coworkenv.synth.validation.variants import with_solution

    cache = SeedCache()
    task = ticket_task()
    variant = with_solution(task, 0, [])
    assert variant.content_hash != task.content_hash
    assert variant.seed_hash == task.seed_hash
    assert cache.snapshot(variant) is cache.snapshot(task)
    for changed in (
        ticket_task(user_email="you@acme.example"),
        ticket_task(clock_start="2026-03-03T09:00:00Z"),
        ticket_task(id="t-other"),
    ):
        assert changed.seed_hash != task.seed_hash
        assert cache.snapshot(changed) is not cache.snapshot(task)
    seed = json.loads(ticket_task().model_dump_json())
    seed["seed"]["operations"][0]["params"]["name"] = "Help desk"
    assert parse_task(seed).seed_hash != task.seed_hash


def test_a_seed_built_elsewhere_is_kept_and_forked_not_built_again() -> None:
    task = ticket_task()
    built = SeedCache().snapshot(task)
    worker = SeedCache()
    worker.keep(task, built)
    assert worker.snapshot(task) is built
    assert worker.fork(task).content_hash() == SeedCache().fork(task).content_hash()


def test_a_seed_cache_keeps_the_most_recently_used_seeds(monkeypatch: pytest.MonkeyPatch) -> None:
    from coworkenv.rollout.episodes import seeding

    monkeypatch.setattr(seeding, "SEEDS_KEPT", 2)
    cache = SeedCache()
    a, b, c = (ticket_task(id=f"t-{n}") for n in "abc")
    first_a, first_b = cache.snapshot(a), cache.snapshot(b)
    assert cache.snapshot(a) is first_a  # used again: now the most recent
    first_c = cache.snapshot(c)  # drops b, the least recently used
    assert cache.snapshot(a) is first_a and cache.snapshot(c) is first_c
    assert cache.snapshot(b) is not first_b  # built again
