"""Small timing helpers shared by the benchmarks."""

import os
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any


def median_us(fn: Callable[[], Any], *, repeat: int = 2000, warmup: int = 50) -> float:
    """Median wall time of one call of `fn`, in microseconds."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


async def median_us_async(fn: Callable[[], Awaitable[Any]], *, repeat: int = 1000, warmup: int = 50) -> float:
    """Median wall time of one awaited call of `fn`, in microseconds."""
    for _ in range(warmup):
        await fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        await fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


async def interleaved_medians_us_async(
    fns: list[Callable[[], Awaitable[Any]]], *, rounds: int = 20, block: int = 100, warmup: int = 50
) -> list[float]:
    """Median wall time of one awaited call of each of `fns`, in microseconds, timed in
    turn: `block` calls of each, then again, `rounds` times. A machine that slows down or
    speeds up meanwhile weighs on each alike, so their ratios are of the same moments; in
    blocks, each pays for its own garbage and warms its own caches."""
    for fn in fns:
        for _ in range(warmup):
            await fn()
    samples: list[list[int]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, taken in zip(fns, samples, strict=True):
            for _ in range(block):
                start = time.perf_counter_ns()
                await fn()
                taken.append(time.perf_counter_ns() - start)
    return [statistics.median(taken) / 1000 for taken in samples]


def report(
    name: str, ours_us: float, floor_us: float, floor_name: str, target: float | None = None
) -> dict[str, Any]:
    """Print one line: our median, the floor's, and the ratio (with the target when there is one)."""
    ratio = ours_us / floor_us
    verdict = ""
    if target is not None:
        verdict = f"  (target <= {target:.2f}x: {'met' if ratio <= target else 'MISSED'})"
    print(
        f"{name:<44} {ours_us:9.1f} us   {floor_name:<34} {floor_us:9.1f} us   ratio {ratio:5.2f}x{verdict}"
    )
    return {"name": name, "ours_us": ours_us, "floor": floor_name, "floor_us": floor_us, "ratio": ratio}


def machine_cpu_seconds() -> float | None:
    """CPU time spent on the whole machine so far (Linux), or None where it cannot be read.
    A sandbox's own accounting loses the processes of its PID namespace; this does not."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # less idle and iowait
