"""Procedural synthesis with full validation: kept tasks per second in one process and in the
default worker processes (one per core), each run from cold caches (its worlds rendered
again), and the cost of each validation stage."""

import os
import statistics
import tempfile
import time
from collections import defaultdict

import anyio

from coworkenv.rollout import SeedCache
from coworkenv.rollout.validation import validate_task
from coworkenv.servers.demo import forget_snapshots
from coworkenv.synth.generators import ProceduralGenerator
from coworkenv.synth.pipeline import plan_requests, synthesize
from coworkenv.task import parse_task

COUNT = 100
"""Slots of the two timed runs: enough that the worlds they cycle through (each rendered
once per process) are not most of the cost, as they are in a run's first slots."""
STAGE_COUNT = 22
TARGET = 10.0


async def kept_per_second(concurrency: int | None) -> tuple[int, float]:
    """Kept tasks and seconds of one procedural synthesis run of COUNT slots."""
    forget_snapshots()  # each run renders its worlds, as a new process does
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        state = await synthesize(ProceduralGenerator(), count=COUNT, out_dir=out, concurrency=concurrency)
        return state.kept, time.perf_counter() - started


async def measure() -> dict:
    kept_one, seconds_one = await kept_per_second(1)
    print(
        f"procedural synthesis, one process: {kept_one} of {COUNT} kept in {seconds_one:.1f} s"
        f" = {kept_one / seconds_one:.2f} kept tasks/s"
    )
    kept, seconds = await kept_per_second(None)
    rate, floor = kept / seconds, kept_one / seconds_one
    verdict = "met" if rate >= TARGET else "MISSED"
    print(
        f"procedural synthesis, {os.cpu_count()} worker processes (the default): {kept} of {COUNT} kept in"
        f" {seconds:.1f} s = {rate:.2f} kept tasks/s, {rate / floor:.2f}x one process"
        f"  (target >= {TARGET} kept tasks/s: {verdict})"
    )
    stages: dict[str, list[float]] = defaultdict(list)
    generator, cache = ProceduralGenerator(), SeedCache()
    for request in plan_requests(STAGE_COUNT, None, seed=1):
        t = time.perf_counter()
        text = await generator.draft(request, None, None, 0)
        stages["draft"].append(time.perf_counter() - t)
        t = time.perf_counter()
        task = parse_task(text)
        stages["schema"].append(time.perf_counter() - t)
        for stage in (await validate_task(task, cache=cache)).stages:
            stages[stage.name].append(stage.seconds)
    for name, values in stages.items():
        print(f"  stage {name:<14} median {statistics.median(values) * 1000:8.1f} ms  (n={len(values)})")
    return {"kept_per_second": rate, "one_process": floor}


def run() -> dict:
    return anyio.run(measure)
