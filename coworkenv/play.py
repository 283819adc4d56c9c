"""Playing a task by hand, or with any external MCP agent, over a workspace file.

`coworkenv play TASK --db PATH` seeds the task's workspace into PATH and serves it (over
HTTP in a child process, or tells you the stdio command for your MCP client). For each
turn it applies the turn's events, shows the user's message, waits until you say the turn
is done, and judges the turn's checks; at the end it prints the verdict. Tool calls and
this console use separate connections to the same SQLite file.

Each turn's verdict is kept in the file (meta key `turn_results`), because a turn is
judged on the state at the end of that turn, which later turns change. `verify` reads it
back, so `play` and `verify` give the same verdict on the same file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from coworkenv.rollout import SeedCache, apply_event
from coworkenv.rollout.episodes.reference import guarding_for, lasting_checks
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.state import Workspace
from coworkenv.task import Task
from coworkenv.verifiers import CheckResult, Evidence, Verdict, judge_evidence, judge_turn

TURN_RESULTS_KEY = "turn_results"


def serve_command(db: Path, transport: str, port: int) -> list[str]:
    command = [sys.executable, "-m", "coworkenv", "serve", "--db", str(db), "--service", "all"]
    if transport == "http":
        command += ["--transport", "http", "--port", str(port)]
    return command


async def play(
    task: Task,
    db: Path,
    *,
    transport: str,
    port: int,
    say: Callable[[str], None],
    wait: Callable[[str], Awaitable[str]],
) -> Verdict:
    """Run the console loop; `say` prints, `wait` asks and returns the answer (an empty
    answer ends the turn, "q" stops after it)."""
    cache = SeedCache()
    initial = cache.fork(task)
    initial.save(db, overwrite=True)
    server: subprocess.Popen[bytes] | None = None
    if transport == "http":
        server = subprocess.Popen(serve_command(db, "http", port), stdout=subprocess.DEVNULL)
        say(
            f"Serving the task's workspace at http://127.0.0.1:{port}/mcp (one server per service at /<service>/mcp)."
        )
    else:
        say("Point your MCP client at this stdio command:\n  " + " ".join(serve_command(db, "stdio", port)))
    turn_results: list[list[CheckResult]] = []
    try:
        for i, turn in enumerate(task.turns):
            ws = Workspace.open(db)
            for event in turn.events:
                apply_event(ws, event)
                say(
                    f"[event] {event.service}.{event.operation} ({'announced' if event.announced else 'silent'})"
                )
            seq = ws.audit.last_seq()
            ws.close()
            say(f"\n--- turn {i + 1} of {len(task.turns)} ---\nUser: {turn.user}")
            answer = await wait("Press Enter when the agent has finished this turn (q to stop): ")
            ws = Workspace.open(db)
            results = await judge_turn(
                turn.checks, initial, ws, ws.audit.entries(since=seq), task.user_email, i
            )
            turn_results.append(results)
            keep_turn_results(ws, turn_results)
            ws.close()
            for r in results:
                say(f"  [{'pass' if r.passed else 'FAIL'}] {r.id}: {r.error or r.message}")
            if answer.strip().lower() == "q":
                break
        verdict = await verify_saved(task, db, cache=cache)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    return verdict


def verdict_lines(verdict: Verdict) -> list[str]:
    """The verdict as lines of text for a terminal."""
    lines = [f"score {verdict.score:.3f}  success {verdict.success}  (raw score {verdict.raw_score:.3f})"]
    for r in verdict.checks:
        where = "final" if r.turn is None else f"turn {r.turn + 1}"
        lines.append(
            f"  [{'pass' if r.passed else 'FAIL'}] {r.id} ({where}, weight {r.weight:g}): {r.error or r.message}"
        )
    for v in verdict.safety_violations:
        lines.append(f"  [SAFETY] {v.rule_id}: {v.message}")
    for c in verdict.collateral:
        lines.append(f"  [COLLATERAL] {c}")
    return lines


def keep_turn_results(ws: Workspace, turn_results: list[list[CheckResult]]) -> None:
    """Record the verdicts of the turns judged so far in the workspace file."""
    ws.set_meta(TURN_RESULTS_KEY, json.dumps([[r.model_dump(mode="json") for r in t] for t in turn_results]))


def kept_turn_results(ws: Workspace) -> list[list[CheckResult]]:
    try:
        data = json.loads(ws.meta(TURN_RESULTS_KEY))
    except KeyError:
        return []
    return [[CheckResult.model_validate(r) for r in turn] for turn in data]


async def verify_saved(task: Task, db: Path, *, cache: SeedCache | None = None) -> Verdict:
    """The verdict of a saved workspace, with the guards (collateral, default safety rules)
    over the task's seed. Turns that `play` judged keep the verdict recorded at the end of
    that turn; turns without a record (a file written by other means) are judged on the
    final state with the whole audit log, as `run_episode` judges turns never reached."""
    cache = cache or SeedCache()
    footprint = await reference_footprint(task, cache)
    initial = cache.fork(task)
    final = Workspace.open(db, read_only=True)
    try:
        audit = final.audit.entries()
        turns = kept_turn_results(final)[: len(task.turns)]
        for i in range(len(turns), len(task.turns)):
            turns.append(await judge_turn(task.turns[i].checks, initial, final, audit, task.user_email, i))
        evidence = Evidence(initial, final, audit, task.user_email)
        return await judge_evidence(
            task.checks,
            task.safety,
            evidence,
            turns,
            guarding_for(task, footprint),
            lasting_checks(task, footprint),
        )
    finally:
        final.close()
