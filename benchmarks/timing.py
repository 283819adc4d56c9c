"""Small timing helpers shared by the benchmarks."""

import statistics
import time
from collections.abc import Awaitable, Callable
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
