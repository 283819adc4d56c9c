"""Validation throughput on the example tasks, and the verifier's cost per episode as a
ratio of the fork cost. Verification is all of it: turn checks, final checks, safety rules,
the collateral guard, re-asserted earlier turns and the final content hash (the goal
footprint is derived once per task, like the seed)."""

import statistics
import time
from pathlib import Path

import anyio

from coworkenv.rollout import NoopPolicy, OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.runner import reference_footprint
from coworkenv.rollout.validation import validate_task
from coworkenv.task import load_task, task_files
from coworkenv.verifiers.python_checks import forget_python_verdicts

EXAMPLES = Path(__file__).resolve().parent.parent / "tasks" / "examples"


async def measure() -> dict:
    tasks = [load_task(p) for p in task_files([EXAMPLES])]
    cache = SeedCache()
    for task in tasks:
        cache.snapshot(task)  # seeding and the footprint are paid once per task; measure per episode
        await reference_footprint(task, cache)
    started = time.perf_counter()
    for task in tasks:
        await run_episode(task, NoopPolicy(), cache=cache)
        await run_episode(task, OraclePolicy(), cache=cache)
    basic = time.perf_counter() - started
    started = time.perf_counter()
    reports = [await validate_task(task, cache=cache) for task in tasks]
    full = time.perf_counter() - started
    print(
        f"{len(tasks)} example tasks: oracle + no-op + verifier {len(tasks) / basic:6.1f} tasks/s; "
        f"full validation (with mutants) {len(tasks) / full:5.2f} tasks/s; all valid: {all(r.ok for r in reports)}"
    )
    # Python checks start a sandbox each: reported apart, each judged afresh (validation
    # has just judged these very states, and their verdicts are reused when it repeats).
    verify: dict[bool, list[float]] = {False: [], True: []}
    fork = []
    for task in tasks:
        with_python = any(c.type == "python" for c in task.all_checks())
        forget_python_verdicts()
        record = await run_episode(task, OraclePolicy(), cache=cache)
        verify[with_python].append(record.timings.verify)
        snapshot = cache.snapshot(task)
        t = time.perf_counter()
        snapshot.fork().close()
        fork.append(time.perf_counter() - t)
    f = statistics.median(fork) * 1e6
    v = statistics.median(verify[False]) * 1e6
    print(
        f"{f'verification per episode, all, {len(verify[False])} tasks (median)':<44} {v:9.1f} us   "
        f"{'fork of the seeded workspace':<34} {f:9.1f} us   ratio {v / f:5.1f}x"
    )
    if verify[True]:
        p = statistics.median(verify[True]) * 1e6
        print(
            f"{f'the same, {len(verify[True])} tasks with Python checks':<44} {p:9.1f} us   "
            f"{'fork of the seeded workspace':<34} {f:9.1f} us   ratio {p / f:5.1f}x"
        )
    return {
        "tasks_per_second": len(tasks) / basic,
        "full_per_second": len(tasks) / full,
        "verify_fork_ratio": v / f,
    }


def run() -> dict:
    return anyio.run(measure)
