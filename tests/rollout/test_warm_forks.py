"""Episodes start from warm forks: a closed episode's workspace goes back to its seed cache and
the next episode of the task starts from it; every episode of the task reads one shared,
read-only seed. What an episode records does not depend on it: the same play gives the
same record from a warm fork as from a new one."""

import sqlite3

import pytest

from coworkenv import Episode
from coworkenv.rollout import NoopPolicy, OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.episodes.episode import EpisodeError
from coworkenv.rollout.episodes.runner import drive, reference_footprint
from coworkenv.synth.validation.mutants import mutants
from coworkenv.task import Task, load_task
from tests.rollout.test_replay import comparable
from tests.test_examples import EXAMPLES


def example_tasks() -> list[Task]:
    return [load_task(p) for p in sorted(EXAMPLES.glob("*.json"))]


@pytest.mark.parametrize("task", example_tasks(), ids=lambda t: t.id)
async def test_an_episode_from_a_warm_fork_records_what_one_from_a_new_fork_records(task: Task) -> None:
    warm = SeedCache()
    footprint = await reference_footprint(task, warm)
    # The oracle, a no-op agent and the wrong solutions, one after another on the same
    # cache: each starts where the one before it left the workspaces.
    seed = warm.fork(task)
    plays = [(task, OraclePolicy()), (task, NoopPolicy()), (task, OraclePolicy())]
    plays += [(m.task, OraclePolicy()) for m in mutants(task, seed, footprint)[:4]]
    for played, policy in plays:
        record = await run_episode(played, policy, cache=warm, footprint=footprint)
        fresh = await run_episode(played, policy, cache=SeedCache(), footprint=footprint)
        assert comparable(record) == comparable(fresh)
    assert warm.forks(task).waiting == 1  # the last episode's workspace, reused each time


def test_a_closed_episode_gives_its_workspace_back_and_resets_again() -> None:
    task = example_tasks()[0]
    cache = SeedCache()
    episode = Episode(task, cache=cache)
    episode.reset()
    kept, seed = episode.workspace, episode.initial
    conns = {episode.workspace.conn, episode.initial.conn}
    episode.close()
    episode.close()  # twice does nothing
    for read in (lambda: episode.workspace, lambda: episode.initial):
        with pytest.raises(
            EpisodeError, match="the episode is closed: its workspace went back to the seed cache"
        ):
            read()
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        kept.rows("workspace_meta")
    assert seed.content_hash() == cache.initial_hash(task)  # the shared seed stays readable
    assert episode.messages[0]["role"] == "system"  # the transcript stays
    episode.reset()
    assert {episode.workspace.conn, episode.initial.conn} == conns
    assert episode.workspace.content_hash() == cache.initial_hash(task)


def test_a_cache_closes_its_warm_forks_when_asked() -> None:
    task = example_tasks()[0]
    cache = SeedCache()
    live = Episode(task, cache=cache)
    live.reset()
    episode = Episode(task, cache=cache)
    episode.reset()
    conn = episode.workspace.conn
    episode.close()
    assert cache.forks(task).waiting == 1
    cache.close_forks()
    assert cache.forks(task).waiting == 0
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")
    # A live episode keeps the seed it reads; the next one gets a new read-only fork.
    assert live.initial.content_hash() == cache.initial_hash(task)
    later = Episode(task, cache=cache)
    later.reset()
    assert later.initial is not live.initial


def test_a_reset_gives_the_previous_run_back_first() -> None:
    task = example_tasks()[0]
    episode = Episode(task, cache=SeedCache())
    episode.reset()
    previous = episode.workspace
    episode.reset()
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        previous.rows("workspace_meta")
    assert episode.workspace.rows("workspace_meta")


async def test_the_episodes_of_a_task_share_one_read_only_seed() -> None:
    task = example_tasks()[0]
    cache = SeedCache()
    episodes = [Episode(task, cache=cache) for _ in range(3)]
    for episode in episodes:
        await episode.areset()
    assert len({id(e.initial) for e in episodes}) == 1
    assert len({id(e.workspace) for e in episodes}) == 3
    with pytest.raises(sqlite3.OperationalError, match="attempt to write a readonly database"):
        episodes[0].initial.set_meta("note", "written")
    await drive(episodes[0], OraclePolicy())
    assert (await episodes[0].averdict()).score == 1.0
    assert episodes[0].workspace.content_hash() != cache.initial_hash(task)
    assert episodes[1].initial.content_hash() == cache.initial_hash(task)


def test_a_seed_kept_anew_replaces_the_warm_forks_of_the_old_one() -> None:
    task = example_tasks()[0]
    cache = SeedCache()
    episode = Episode(task, cache=cache)
    episode.reset()
    conn = episode.workspace.conn
    episode.close()
    old = cache.forks(task)
    assert old.waiting == 1
    cache.keep(task, cache.snapshot(task).fork().snapshot())  # the same state, another snapshot
    assert old.waiting == 0 and cache.forks(task) is not old
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")
    pool = cache.forks(task)
    cache.keep(task, pool.snapshot)  # the same snapshot again keeps its pool
    assert cache.forks(task) is pool
