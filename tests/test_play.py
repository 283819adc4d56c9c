"""Playing a task turn by turn over a workspace file, then verifying the saved workspace."""

import subprocess
import sys
from pathlib import Path

from mcp import Client

from coworkenv.play import play, verdict_lines, verify_saved
from coworkenv.rollout import OraclePolicy, SeedCache
from coworkenv.rollout.episodes.session import AgentSession
from coworkenv.servers import build_workspace_server
from coworkenv.state import Workspace
from coworkenv.task import dump_task, load_task
from tests.rollout.test_runner import ticket_task


async def test_play_applies_events_judges_each_turn_and_ends_with_the_verdict(tmp_path: Path) -> None:
    task = ticket_task()
    db = tmp_path / "play.db"
    said: list[str] = []
    oracle = OraclePolicy()
    turn = 0

    async def agent_acts(prompt: str) -> str:
        # a stand-in for an external MCP agent: another connection to the same workspace file
        nonlocal turn
        ws = Workspace.open(db)
        async with Client(build_workspace_server(ws)) as client:
            tools = (await client.list_tools()).tools
            session = AgentSession(client, tools, [])
            await oracle.run_turn(session, task, turn)
        ws.close()
        turn += 1
        return "\n"

    verdict = await play(task, db, transport="stdio", port=0, say=said.append, wait=agent_acts)
    assert (verdict.score, verdict.success) == (1.0, True)
    assert said[0].startswith("Point your MCP client at this stdio command:\n  ")
    assert said[0].endswith(f"-m coworkenv serve --db {db} --service all")
    assert said[1:] == [
        "\n--- turn 1 of 2 ---\nUser: Find the login ticket and set its priority to urgent.",
        "  [pass] urgent: priority is 'urgent', expected 'urgent'",
        "[event] tickets.customer_comment (silent)",
        "\n--- turn 2 of 2 ---\nUser: Anything new on it? Move it to Engineering if it is open again.",
        "  [pass] moved: queue is 'Engineering', expected 'Engineering'",
    ]
    # the saved workspace can be verified later, by the CLI
    task_file = tmp_path / "task.json"
    task_file.write_text(dump_task(task))
    done = subprocess.run(
        [sys.executable, "-m", "coworkenv", "verify", str(task_file), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == "score 1.000  success True  (raw score 1.000)"


async def test_stopping_early_judges_the_remaining_turns_on_the_state_reached(tmp_path: Path) -> None:
    task = ticket_task()

    async def quit_now(prompt: str) -> str:
        return "q\n"

    verdict = await play(
        task, tmp_path / "p.db", transport="stdio", port=0, say=lambda s: None, wait=quit_now
    )
    assert [(r.id, r.passed) for r in verdict.checks] == [
        ("urgent", False),
        ("moved", False),
        ("comment-kept", False),
        ("urgent@end", False),
    ]
    assert verdict_lines(verdict)[0] == "score 0.000  success False  (raw score 0.000)"


async def test_verify_gives_the_verdict_play_gave_on_a_multi_turn_workspace(tmp_path: Path) -> None:
    # The README's example: its first turn is judged on the state at the end of that turn,
    # which the second turn changes; verify reads the turn verdicts play kept in the file.
    task = load_task(Path(__file__).parent.parent / "tasks/examples/multi-turn-silent-reopen.json")
    db = tmp_path / "play.db"
    oracle = OraclePolicy()
    turn = 0

    async def agent_acts(prompt: str) -> str:
        nonlocal turn
        ws = Workspace.open(db)
        async with Client(build_workspace_server(ws)) as client:
            session = AgentSession(client, (await client.list_tools()).tools, [])
            await oracle.run_turn(session, task, turn)
        ws.close()
        turn += 1
        return "\n"

    played = await play(task, db, transport="stdio", port=0, say=lambda s: None, wait=agent_acts)
    verified = await verify_saved(task, db)
    assert played.success is True
    assert verified == played


async def test_verify_without_turn_records_judges_turns_on_the_final_state(tmp_path: Path) -> None:
    task = ticket_task()
    db = tmp_path / "w.db"
    SeedCache().fork(task).save(db)  # a workspace nobody played: nothing recorded, nothing done
    verdict = await verify_saved(task, db)
    assert [(r.id, r.passed, r.turn) for r in verdict.checks] == [
        ("urgent", False, 0),
        ("moved", False, 1),
        ("comment-kept", False, None),
        ("urgent@end", False, None),
    ]
    assert (verdict.score, verdict.success) == (0.0, False)
