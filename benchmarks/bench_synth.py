"""Procedural synthesis with full validation: kept tasks per second, and the cost of each
validation stage."""

import statistics
import tempfile
import time
from collections import defaultdict

import anyio

from coworkenv.rollout import SeedCache
from coworkenv.rollout.validation import validate_task
from coworkenv.synth.generators import ProceduralGenerator
from coworkenv.synth.pipeline import plan_requests, synthesize
from coworkenv.task import parse_task

COUNT = 22


async def measure() -> dict:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        state = await synthesize(ProceduralGenerator(), count=COUNT, out_dir=out)
        seconds = time.perf_counter() - started
    print(
        f"procedural synthesis: {state.kept} of {COUNT} kept in {seconds:.1f} s = {state.kept / seconds:.2f} kept tasks/s"
    )
    stages: dict[str, list[float]] = defaultdict(list)
    generator, cache = ProceduralGenerator(), SeedCache()
    for request in plan_requests(COUNT, None, seed=1):
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
    return {"kept_per_second": state.kept / seconds}


def run() -> dict:
    return anyio.run(measure)
