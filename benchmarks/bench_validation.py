"""Validation throughput on the example tasks, and the verifier's cost per episode as a
ratio of the fork cost. Verification is all of it: turn checks, final checks, safety rules,
the collateral guard, re-asserted earlier turns and the final content hash (the goal
footprint is derived once per task, like the seed), and what a sandboxed run costs in a
waiting sandbox (against a bare fork doing the same) and in a new one (against starting its
interpreter bare)."""

import json
import sqlite3
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from coworkenv.rollout import NoopPolicy, OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import load_task, task_files
from coworkenv.verifiers.python_checks import forget_python_verdicts
from coworkenv.verifiers.sandbox import PYTHON, run_sandboxed, stop_sandbox_servers

from .timing import machine_cpu_seconds

EXAMPLES = Path(__file__).resolve().parent.parent / "tasks" / "examples"
SANDBOX_STARTS = 20
TRIVIAL_CHECK = "def check(final):\n    return True"
#: The floor of a sandbox start: its interpreter, started as the sandbox starts it, importing
#: what the sandbox's child imports, with no boundary around it.
CHILD_IMPORTS = [
    PYTHON,
    "-I",
    "-S",
    "-B",
    "-X",
    "utf8",
    "-c",
    "import json, resource, signal, sqlite3",
]


def wall_and_cpu_ms(fn: Callable[[], object], times: int) -> tuple[float, float | None]:
    """Mean wall time and machine CPU time of one call of `fn`, in milliseconds."""
    fn()
    cpu, started = machine_cpu_seconds(), time.perf_counter()
    for _ in range(times):
        fn()
    wall = (time.perf_counter() - started) / times * 1000
    after = machine_cpu_seconds()
    return wall, None if cpu is None or after is None else (after - cpu) / times * 1000


#: The floor of a run in a waiting sandbox: the same work with no boundary, no audit hook, no
#: limits and no scratch, done by a bare interpreter that forks a child per job, which opens
#: the database and runs the check, its answer read back through a pipe.
BARE_FORK_SERVER = """
import json, os, sqlite3, sys
for line in sys.stdin.buffer:
    job = json.loads(line)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        connection = sqlite3.connect(":memory:")
        connection.deserialize(bytes.fromhex(job["final"]))
        namespace = {}
        exec(job["code"], namespace)
        os.write(write_end, json.dumps(namespace["check"](final=connection)).encode())
        os._exit(0)
    os.close(write_end)
    answer = os.read(read_end, 65536)
    os.close(read_end)
    os.waitpid(pid, 0)
    sys.stdout.buffer.write(answer + b"\\n")
    sys.stdout.buffer.flush()
"""


def sandbox_runs() -> None:
    """One sandboxed run of a trivial check on a one-table database, in a waiting sandbox
    and in a new one, each against its floor."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (x)")
    data = db.serialize()
    first = run_sandboxed(TRIVIAL_CHECK, "check", databases={"final": data})
    if first.status != "ok":
        print(f"sandbox runs: not measured ({first.status}: {first.error})")
        return

    def warm() -> None:
        run_sandboxed(TRIVIAL_CHECK, "check", databases={"final": data})

    bare = subprocess.Popen(
        [PYTHON, "-I", "-S", "-c", BARE_FORK_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert bare.stdin is not None and bare.stdout is not None
    job = json.dumps({"code": TRIVIAL_CHECK, "final": data.hex()}).encode() + b"\n"

    def bare_fork() -> None:
        assert bare.stdin is not None and bare.stdout is not None
        bare.stdin.write(job)
        bare.stdin.flush()
        bare.stdout.readline()

    def cold() -> None:
        stop_sandbox_servers()
        run_sandboxed(TRIVIAL_CHECK, "check", databases={"final": data})

    for label, ours_fn, floor_label, floor_fn in (
        (
            "sandbox run (a trivial check, waiting server)",
            warm,
            "the same, a bare forking interpreter",
            bare_fork,
        ),
        (
            "sandbox start (a new server, then the run)",
            cold,
            "its interpreter and imports, bare",
            lambda: subprocess.run(CHILD_IMPORTS, check=True),
        ),
    ):
        ours, ours_cpu = wall_and_cpu_ms(ours_fn, SANDBOX_STARTS)
        floor, floor_cpu = wall_and_cpu_ms(floor_fn, SANDBOX_STARTS)
        cpu = (
            ""
            if ours_cpu is None or floor_cpu is None
            else f"; CPU over the machine {ours_cpu:.1f} vs {floor_cpu:.1f} ms"
        )
        print(
            f"{label:<44} {ours * 1000:9.1f} us   {floor_label:<34} {floor * 1000:9.1f} us"
            f"   ratio {ours / floor:5.2f}x{cpu}"
        )
    bare.stdin.close()
    bare.wait()


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
    sandbox_runs()
    return {
        "tasks_per_second": len(tasks) / basic,
        "full_per_second": len(tasks) / full,
        "verify_fork_ratio": v / f,
    }


def run() -> dict:
    return anyio.run(measure)
