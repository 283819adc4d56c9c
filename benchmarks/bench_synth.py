"""Procedural synthesis with full validation: kept tasks per second in one process and in the
default worker processes (one per core), each run from cold caches (its worlds rendered
again); where the default run's CPU goes (this process drafts, renders and seeds, the
workers validate); and the cost of each validation stage."""

import os
import resource
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass

import anyio

from coworkenv.rollout import SeedCache
from coworkenv.rollout.validation import validate_task
from coworkenv.servers.render import forget_snapshots
from coworkenv.synth.generators import ProceduralGenerator
from coworkenv.synth.pipeline import plan_requests, synthesize
from coworkenv.task import parse_task

from .timing import machine_cpu_seconds

COUNT = 100
"""Slots of the two timed runs: enough that the worlds they cycle through (each rendered
once per process) are not most of the cost, as they are in a run's first slots."""
STAGE_COUNT = 22
TARGET = 10.0


@dataclass(frozen=True)
class SynthRun:
    kept: int
    seconds: float
    own_cpu: float  # this process's CPU seconds
    machine_cpu: float | None  # the whole machine's, workers and sandboxes included


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def synth_run(concurrency: int | None) -> SynthRun:
    """One procedural synthesis run of COUNT slots, timed."""
    forget_snapshots()  # each run renders its worlds, as a new process does
    with tempfile.TemporaryDirectory() as out:
        cpu, machine, started = own_cpu_seconds(), machine_cpu_seconds(), time.perf_counter()
        state = await synthesize(ProceduralGenerator(), count=COUNT, out_dir=out, concurrency=concurrency)
        seconds = time.perf_counter() - started
        after = machine_cpu_seconds()
        busy = None if machine is None or after is None else after - machine
        return SynthRun(state.kept, seconds, own_cpu_seconds() - cpu, busy)


async def measure() -> dict:
    one = await synth_run(1)
    others = "" if one.machine_cpu is None else f", {one.machine_cpu - one.own_cpu:.1f} s more on the machine"
    print(
        f"procedural synthesis, one process: {one.kept} of {COUNT} kept in {one.seconds:.1f} s"
        f" = {one.kept / one.seconds:.2f} kept tasks/s ({one.own_cpu:.1f} s of its CPU{others}:"
        " the sandboxes of the Python checks, and whatever else runs)"
    )
    default = await synth_run(None)
    rate, floor = default.kept / default.seconds, one.kept / one.seconds
    verdict = "met" if rate >= TARGET else "MISSED"
    cores = os.cpu_count() or 1
    print(
        f"procedural synthesis, {cores} worker processes (the default): {default.kept} of {COUNT} kept in"
        f" {default.seconds:.1f} s = {rate:.2f} kept tasks/s, {rate / floor:.2f}x one process"
        f"  (target >= {TARGET} kept tasks/s: {verdict})"
    )
    if default.machine_cpu is not None:
        capacity = cores * default.seconds
        print(
            f"  where its CPU went: the machine was busy {default.machine_cpu:.1f} of {capacity:.1f}"
            f" core-seconds ({100 * default.machine_cpu / capacity:.0f}%); this process (drafting, rendering"
            f" the worlds, seeding) {default.own_cpu:.1f} s, the workers and their sandboxes the rest"
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
    return {"kept_per_second": rate, "one_process": floor, "machine_cpu": default.machine_cpu}


def run() -> dict:
    return anyio.run(measure)
