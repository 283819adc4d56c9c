"""Episode set-up against a bare fork, and 1,000 concurrent live episodes in one process:
memory per episode (each reset, holding its workspace and its session; the seed the verifier
reads is one fork they share) and oracle throughput at concurrency 1,000 as a ratio of the
same episodes played one at a time. Episode i plays example task i mod 18, so the mix covers
every example's seed (0.07 to 0.48 MB snapshots) and 1 to 3 turns."""

import gc
import multiprocessing
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import anyio

from benchmarks.bench_memory import rss_mb
from benchmarks.timing import median_us, median_us_async
from coworkenv.rollout import Episode, OraclePolicy, SeedCache
from coworkenv.rollout.episodes.runner import drive, reference_footprint
from coworkenv.state import Snapshot
from coworkenv.task import Task, load_task, task_files

EXAMPLES = Path(__file__).resolve().parent.parent / "tasks" / "examples"
LIVE = 1000
SERIAL = 170
MB_TARGET = 1.0
THROUGHPUT_TARGET = 0.8
SETUP_TARGET = 3.0


async def play(task: Task, cache: SeedCache, *, close: bool = True) -> None:
    """One oracle episode, reset to verdict, then closed (its workspace goes back to the
    cache) unless `close` is false (then it is dropped, as before warm forks)."""
    policy = OraclePolicy()
    episode = Episode(task, cache=cache, policy=policy.name, actor=policy.actor)
    await drive(episode, policy)
    verdict = await episode.averdict()
    assert verdict is not None and verdict.score == 1.0, "the oracle must solve the benchmark task"
    if close:
        episode.close()


def live_memory_mb() -> float:
    """`memory_per_episode` in a new process: memory that earlier benchmarks freed stays
    with this process's allocator and would hide the growth."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_live_memory_in_new_process).result()


def _live_memory_in_new_process() -> float:
    async def measure() -> float:
        tasks = [load_task(p) for p in task_files([EXAMPLES])]
        cache = SeedCache()
        for task in tasks:
            await reference_footprint(task, cache)
            await play(task, cache)
        return await memory_per_episode(tasks, cache)

    return anyio.run(measure)


async def memory_per_episode(tasks: list[Task], cache: SeedCache) -> float:
    """RSS growth per live episode, in MB, with LIVE episodes reset at once."""
    gc.collect()
    before = rss_mb()
    episodes = [Episode(tasks[i % len(tasks)], cache=cache) for i in range(LIVE)]
    for episode in episodes:
        await episode.areset()
    gc.collect()
    used = rss_mb() - before
    assert all(not e.done for e in episodes)
    del episodes
    gc.collect()
    return used / LIVE


async def episodes_per_second(tasks: list[Task], cache: SeedCache, concurrency: int, count: int) -> float:
    """Oracle episodes per second, `concurrency` of them live at once."""
    limiter = anyio.CapacityLimiter(concurrency)

    async def one(task: Task) -> None:
        async with limiter:
            await play(task, cache)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for i in range(count):
            group.start_soon(one, tasks[i % len(tasks)])
    return count / (time.perf_counter() - started)


async def warm_reset_us(task: Task, cache: SeedCache, repeat: int = 100) -> float:
    """Median reset of an episode whose previous run was closed: its workspace comes from
    the warm forks that run gave back (the close, which reverts them, is timed apart)."""
    episode = Episode(task, cache=cache)
    samples = []
    for i in range(repeat + 5):
        started = time.perf_counter_ns()
        await episode.areset()
        if i >= 5:
            samples.append(time.perf_counter_ns() - started)
        episode.close()
    return statistics.median(samples) / 1000


async def oracle_episode_us(task: Task, cache: SeedCache, *, close: bool, repeat: int = 30) -> float:
    """Median oracle episode, reset to verdict and (with `close`) the close that gives its
    workspaces back; without it they are dropped and every episode makes new forks."""
    return await median_us_async(lambda: play(task, cache, close=close), repeat=repeat, warmup=3)


async def setup_ratios(tasks: list[Task], cache: SeedCache) -> None:
    """Episode set-up (reset: a fork for the agent, one for the verifier, the shared
    server's tools, the prompt, turn 0's events), per example task, against a bare fork of
    the same seed (deserializing the snapshot): from warm forks (what an episode after a
    closed one gets), and from new forks, against the bare fork and against a fork that
    has answered its first query (SQLite reads the schema, change-tracking triggers
    included, on a new connection's first statement; any use of a new fork pays it). Then
    a whole oracle episode with its close, from warm forks against new ones: the revert at
    close is what warm forks cost."""
    warm, new, usable, whole = [], [], [], []
    for task in tasks:
        snapshot = cache.snapshot(task)

        async def new_reset(task: Task = task) -> None:
            await Episode(task, cache=cache).areset()  # never closed: new forks each time

        def first_query(snapshot: Snapshot = snapshot) -> None:
            ws = snapshot.fork()
            ws.clock.now_text()
            ws.close()

        bare = median_us(lambda snapshot=snapshot: snapshot.fork().close(), repeat=100, warmup=5)
        warm.append(await warm_reset_us(task, cache) / bare)
        ours = await median_us_async(new_reset, repeat=100, warmup=5)
        new.append(ours / bare)
        usable.append(ours / median_us(first_query, repeat=100, warmup=5))
        whole.append(
            await oracle_episode_us(task, cache, close=True)
            / await oracle_episode_us(task, cache, close=False)
        )
    ratio = statistics.median(warm)
    print(
        f"episode set-up ({len(tasks)} examples, median ratio): {ratio:.2f}x a bare fork from warm forks"
        f" (target <= {SETUP_TARGET}x: {'met' if ratio <= SETUP_TARGET else 'MISSED'});"
        f" from new forks {statistics.median(new):.2f}x a bare fork, {statistics.median(usable):.2f}x a fork"
        " that has run its first query"
    )
    print(
        f"oracle episode, reset to close ({len(tasks)} examples, median ratio): from warm forks"
        f" {statistics.median(whole):.2f}x from new forks (the close's revert included)"
    )


async def measure() -> dict:
    tasks = [load_task(p) for p in task_files([EXAMPLES])]
    cache = SeedCache()
    for task in tasks:  # warm: seeds, footprints, compiled validators, imports
        await reference_footprint(task, cache)
        await play(task, cache)
    await setup_ratios(tasks, cache)
    per_episode = live_memory_mb()
    live = [Episode(tasks[i % len(tasks)], cache=cache) for i in range(LIVE)]
    for episode in live:
        await episode.areset()
    for episode in live:  # closed, their workspaces wait, warm, for the next 1,000
        episode.close()
    del live
    verdict = "met" if per_episode <= MB_TARGET else "MISSED"
    print(
        f"{LIVE} live episodes (reset, each with its workspace and session, sharing the seed; in a new process):"
        f" {per_episode:.2f} MB each  (target <= {MB_TARGET} MB: {verdict})"
    )
    one = await episodes_per_second(tasks, cache, 1, SERIAL)
    # A trainer's round after its first starts from the forks its first round played on:
    # their statements compiled, as the floor's are (each connection compiles what it runs
    # once). The round on the forks only reset above is that first round.
    first = await episodes_per_second(tasks, cache, LIVE, LIVE)
    many = await episodes_per_second(tasks, cache, LIVE, LIVE)
    cache.close_forks()  # the first round runs in as much memory as the others
    cold = await episodes_per_second(tasks, without_warm_forks(tasks, cache), LIVE, LIVE)
    ratio = many / one
    verdict = "met" if ratio >= THROUGHPUT_TARGET else "MISSED"
    print(
        f"oracle episodes per second ({len(tasks)} examples): {one:.1f} at concurrency 1 (floor), {many:.1f} with {LIVE} live"
        f" at once, {ratio:.2f}x  (target >= {THROUGHPUT_TARGET}x: {verdict}); these {LIVE} start from the warm"
        f" forks the {LIVE} before them played on, as in a trainer's every round after its first. A first"
        f" round, on forks only reset before: {first:.1f}, {first / one:.2f}x; on new forks: {cold:.1f},"
        f" {cold / one:.2f}x"
    )
    return {
        "mb_per_episode": per_episode,
        "c1": one,
        "c1000": many,
        "ratio": ratio,
        "c1000_reset_forks": first,
        "c1000_first": cold,
    }


def without_warm_forks(tasks: list[Task], cache: SeedCache) -> SeedCache:
    """A cache with `cache`'s seeds and footprints but no warm forks yet."""
    fresh = SeedCache()
    for task in tasks:
        fresh.keep(task, cache.snapshot(task))
    fresh.footprints.update(cache.footprints)
    return fresh


def run() -> dict:
    return anyio.run(measure)
