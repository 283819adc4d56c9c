"""World generation plus seeding of every service, against building the demo workspace;
and a fork of a cached world's seed against a fork of the demo's (issue target: <= 5x, and
a fork as cheap as today)."""

import statistics
import time
from collections.abc import Callable
from typing import Any

from coworkenv.servers.render import northwind_workspace, render_workspace
from coworkenv.worlds import PROFILES, generate_world

from .timing import median_us, report

CASES = [
    ("law_firm", 8),
    ("software_support", None),
    ("hospital_admin", None),
    ("telecom", 300),
    ("logistics", 300),
    ("housing_association", 300),
    ("dental_clinics", 300),
]


def _median_us(fn: Callable[[], Any], repeat: int = 5) -> float:
    fn()  # warm: imports and Faker locales load once per process
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def run() -> list[dict]:
    demo_us = _median_us(lambda: northwind_workspace(seed=0))
    results = []
    for name, size in CASES:
        profile = PROFILES[name]

        def build(profile=profile, size=size) -> None:  # type: ignore[no-untyped-def]
            render_workspace(generate_world(profile, size, 1))

        label = f"{name}:{size or profile.size} generate + seed"
        results.append(report(label, _median_us(build), demo_us, "northwind_workspace(seed=0)", 5.0))
    demo = northwind_workspace(seed=0).snapshot()
    big = render_workspace(generate_world(PROFILES["telecom"], 300, 1)).snapshot()
    results.append(
        report(
            "fork of a cached telecom:300 seed",
            median_us(lambda: big.fork().close(), repeat=500),
            median_us(lambda: demo.fork().close(), repeat=500),
            "fork of the demo seed",
            1.5,
        )
    )
    return results


if __name__ == "__main__":
    run()
