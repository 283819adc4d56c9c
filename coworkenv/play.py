"""Playing a task by hand, or with any external MCP agent, over a workspace file.

`coworkenv play TASK --db PATH` seeds the task's workspace into PATH and serves it (over
HTTP in a child process, or tells you the stdio command for your MCP client). For each
turn it applies the turn's events, shows the user's message, waits until you say the turn
is done, and judges the turn's checks; at the end it prints the verdict. Tool calls and
this console use separate connections to the same SQLite file.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from coworkenv.rollout import apply_event, seed_workspace
from coworkenv.state import Workspace
from coworkenv.task import Task
from coworkenv.verifiers import CheckResult, Verdict, judge_episode, judge_turn


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
    initial = seed_workspace(task)
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
            ws.close()
            turn_results.append(results)
            for r in results:
                say(f"  [{'pass' if r.passed else 'FAIL'}] {r.id}: {r.error or r.message}")
            if answer.strip().lower() == "q":
                break
        ws = Workspace.open(db, read_only=True)
        for i in range(len(turn_results), len(task.turns)):
            turn_results.append(
                await judge_turn(task.turns[i].checks, initial, ws, ws.audit.entries(), task.user_email, i)
            )
        verdict = await judge_episode(
            task.checks, task.safety, initial, ws, ws.audit.entries(), task.user_email, turn_results
        )
        ws.close()
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
    return lines


async def verify_saved(task: Task, db: Path) -> Verdict:
    """The verdict of a saved workspace: every turn's checks and the final checks on its
    state, with its whole audit log; the initial state is the task's seed."""
    initial = seed_workspace(task)
    final = Workspace.open(db, read_only=True)
    try:
        audit = final.audit.entries()
        turns = [
            await judge_turn(turn.checks, initial, final, audit, task.user_email, i)
            for i, turn in enumerate(task.turns)
        ]
        return await judge_episode(task.checks, task.safety, initial, final, audit, task.user_email, turns)
    finally:
        final.close()
