"""OpenEnv: `coworkenv env-server` played with the real openenv-core clients over a socket."""

import json
import socket
import threading
from collections.abc import Iterator

import pytest

pytest.importorskip("openenv.core", reason="the OpenEnv integration needs the [openenv] extra")

import uvicorn
from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed

from coworkenv.integrations.openenv_server import build_app
from coworkenv.rollout import read_records
from tests.rollout.test_runner import ticket_task


def serve(app: object) -> Iterator[str]:
    """Serve the app on a free loopback port in a thread; yield its URL; stop it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    started = threading.Event()
    for _ in range(500):  # bounded: at most 5 s
        if server.started:
            started.set()
            break
        threading.Event().wait(0.01)
    assert started.is_set(), "the server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def records(tmp_path):  # type: ignore[no-untyped-def]
    return tmp_path / "records"


@pytest.fixture
def url(records):  # type: ignore[no-untyped-def]
    yield from serve(build_app([ticket_task()], max_sessions=2, records_dir=records))


async def test_the_mcp_tool_client_lists_and_calls_tools_and_a_generic_client_plays_the_turns(
    url, records
) -> None:  # type: ignore[no-untyped-def]
    async with MCPToolClient(base_url=url) as env:
        await env.reset(task_id="t-escalate", trial=3, seed=7)
        tools = await env.list_tools()
        assert "tickets_update_ticket" in [t.name for t in tools]
        update = next(t for t in tools if t.name == "tickets_update_ticket")
        assert update.input_schema["required"] == ["ticket_id"]
        text = await env.call_tool("tickets_update_ticket", ticket_id=1, priority="urgent")
        assert '"priority":"urgent"' in text
        bad = await env.call_tool("tickets_get_ticket", ticket_id="one")
        assert "Fix these arguments and call again." in bad

    async with GenericEnvClient(base_url=url) as env:
        first = await env.reset(task_id="t-escalate", trial=0)
        assert (first.done, first.reward) == (False, 0.0)
        assert first.observation["user_message"] == "Find the login ticket and set its priority to urgent."
        assert first.observation["system_prompt"].splitlines()[1].startswith("You act for me@acme.example")
        step = await env.step(
            {
                "type": "call_tool",
                "tool_name": "tickets_update_ticket",
                "arguments": {"ticket_id": 1, "priority": "urgent"},
            }
        )
        assert (step.done, step.reward, step.observation["tool_name"]) == (
            False,
            0.0,
            "tickets_update_ticket",
        )
        second = await env.step({"type": "message", "content": "Done."})
        assert (
            second.observation["user_message"]
            == "Anything new on it? Move it to Engineering if it is open again."
        )
        assert (second.done, second.reward, second.observation["turn"]) == (False, 0.0, 1)
        await env.step(
            {
                "type": "call_tool",
                "tool_name": "tickets_update_ticket",
                "arguments": {"ticket_id": 1, "queue": "Engineering"},
            }
        )
        end = await env.step({"type": "message", "content": "Moved."})
        assert (end.done, end.reward) == (True, 1.0)
        assert end.observation["rewards"] == {
            "score": 1.0,
            "success": 1.0,
            "raw_score": 1.0,
            "safety": 1.0,
            "collateral": 0.0,
        }
        state = await env.state()
        assert (state["task_id"], state["done"], state["step_count"]) == ("t-escalate", True, 4)

    [record] = read_records(records)
    assert (record.policy, record.trial, record.score, record.turn_boundaries) == ("openenv", 0, 1.0, [1, 5])


async def test_finishing_early_judges_the_episode_and_unknown_tasks_are_named(url) -> None:  # type: ignore[no-untyped-def]
    async with GenericEnvClient(base_url=url) as env:
        await env.reset(task_id="t-escalate")
        end = await env.step({"type": "finish"})
        assert (end.done, end.reward, end.observation["rewards"]["success"]) == (True, 0.0, 0.0)
        again = await env.step(
            {"type": "call_tool", "tool_name": "tickets_get_ticket", "arguments": {"ticket_id": 1}}
        )
        assert (again.done, again.reward) == (True, 0.0)
        missing = await env.reset(task_id="nope")
        assert missing.done is True
        assert missing.observation["error"] == "no task 'nope'; tasks: t-escalate"


async def test_sessions_are_bounded(url) -> None:  # type: ignore[no-untyped-def]
    async with GenericEnvClient(base_url=url) as one, GenericEnvClient(base_url=url) as two:
        await one.reset()
        await two.reset()
        # The server answers a third connection with one error message and closes it. A
        # client that sends first races that close, so read the answer on a bare socket.
        async with ws_connect(url.replace("http://", "ws://") + "/ws") as third:
            refusal = json.loads(await third.recv())
            with pytest.raises(ConnectionClosed):
                await third.recv()
        assert refusal["type"] == "error"
        assert refusal["data"]["message"].startswith("Server at capacity: 2/2 sessions active")
        assert (refusal["data"]["active_sessions"], refusal["data"]["max_sessions"]) == (2, 2)


async def test_a_question_is_answered_within_the_turn(url) -> None:  # type: ignore[no-untyped-def]
    from coworkenv.rollout.episodes.episode import NOTHING_TO_ADD

    async with GenericEnvClient(base_url=url) as env:
        await env.reset(task_id="t-escalate")
        asked = await env.step({"type": "message", "content": "Which ticket do you mean?"})
        assert (asked.done, asked.observation["turn"]) == (False, 0)
        assert asked.observation["user_message"] == NOTHING_TO_ADD
        done = await env.step({"type": "message", "content": "I set it to urgent."})
        assert done.observation["turn"] == 1
