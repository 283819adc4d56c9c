"""1,000 concurrent live episodes in one process: memory per episode (each reset, holding its
workspace, its starting fork and its session) and oracle throughput at concurrency 1,000 as a
ratio of the same episodes played one at a time. Episode i plays example task i mod 17, so the
mix covers every example's seed (0.07 to 0.48 MB snapshots) and 1 to 3 turns."""

import gc
import statistics
import time
from pathlib import Path

import anyio

from benchmarks.bench_memory import rss_mb
from benchmarks.timing import median_us, median_us_async
from coworkenv.rollout import Episode, OraclePolicy, SeedCache
from coworkenv.rollout.runner import drive, reference_footprint
from coworkenv.state import Snapshot
from coworkenv.task import Task, load_task, task_files

EXAMPLES = Path(__file__).resolve().parent.parent / "tasks" / "examples"
LIVE = 1000
SERIAL = 170
MB_TARGET = 1.0
THROUGHPUT_TARGET = 0.8
SETUP_TARGET = 3.0


async def play(task: Task, cache: SeedCache) -> None:
    """One oracle episode, reset to verdict."""
    policy = OraclePolicy()
    episode = Episode(task, cache=cache, policy=policy.name, actor=policy.actor)
    await drive(episode, policy)
    verdict = await episode.averdict()
    assert verdict is not None and verdict.score == 1.0, "the oracle must solve the benchmark task"


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


async def setup_ratios(tasks: list[Task], cache: SeedCache) -> None:
    """Episode set-up (reset: a fork for the agent, one for the verifier, the shared
    server's tools, the prompt, turn 0's events), per example task, against two floors of
    the same seed: a bare fork (deserializing the snapshot), and a fork that has answered
    its first query (SQLite reads the schema, change-tracking triggers included, on a new
    connection's first statement; any use of a workspace pays it)."""
    bare, usable = [], []
    for task in tasks:
        snapshot = cache.snapshot(task)

        async def reset(task: Task = task) -> None:
            await Episode(task, cache=cache).areset()

        def first_query(snapshot: Snapshot = snapshot) -> None:
            ws = snapshot.fork()
            ws.clock.now_text()
            ws.close()

        ours = await median_us_async(reset, repeat=100, warmup=5)
        bare.append(ours / median_us(lambda snapshot=snapshot: snapshot.fork().close(), repeat=100, warmup=5))
        usable.append(ours / median_us(first_query, repeat=100, warmup=5))
    ratio, usable_ratio = statistics.median(bare), statistics.median(usable)
    print(
        f"episode set-up ({len(tasks)} examples, median ratio): {ratio:.2f}x a bare fork"
        f" (target <= {SETUP_TARGET}x: {'met' if ratio <= SETUP_TARGET else 'MISSED'}),"
        f" {usable_ratio:.2f}x a fork that has run its first query"
    )


async def measure() -> dict:
    tasks = [load_task(p) for p in task_files([EXAMPLES])]
    cache = SeedCache()
    for task in tasks:  # warm: seeds, footprints, compiled validators, imports
        await reference_footprint(task, cache)
        await play(task, cache)
    await setup_ratios(tasks, cache)
    per_episode = await memory_per_episode(tasks, cache)
    verdict = "met" if per_episode <= MB_TARGET else "MISSED"
    print(
        f"{LIVE} live episodes (reset, each with its workspace, starting fork and session):"
        f" {per_episode:.2f} MB each  (target <= {MB_TARGET} MB: {verdict})"
    )
    one = await episodes_per_second(tasks, cache, 1, SERIAL)
    many = await episodes_per_second(tasks, cache, LIVE, LIVE)
    ratio = many / one
    verdict = "met" if ratio >= THROUGHPUT_TARGET else "MISSED"
    print(
        f"oracle episodes per second ({len(tasks)} examples): {one:.1f} at concurrency 1 (floor), {many:.1f} with {LIVE} live"
        f" at once, {ratio:.2f}x  (target >= {THROUGHPUT_TARGET}x: {verdict})"
    )
    return {"mb_per_episode": per_episode, "c1": one, "c1000": many, "ratio": ratio}


def run() -> dict:
    return anyio.run(measure)
