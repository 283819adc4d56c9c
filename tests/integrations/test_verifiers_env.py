"""verifiers: real rollouts of the coworkenv environment with verifiers' chat harness, whose
model is a local OpenAI-compatible server answering from a script (streamed, as the
harness asks). The harness reaches the episode's tools over MCP; the environment plays the
user's turns; the reward and metrics are the episode's verdict."""

import json
import os
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

try:
    from coworkenv.integrations.verifiers_env import TASKSET_ID, CoworkEnv, load_environment, vf
except ImportError as exc:  # the [verifiers] extra is not installed
    pytest.skip(f"the verifiers integration needs the [verifiers] extra: {exc}", allow_module_level=True)

from coworkenv.rollout import Episode, read_records
from coworkenv.rollout.agents.scripted_llm import Entry, ScriptedLLM, completion
from coworkenv.task import dump_task
from tests.rollout.test_runner import ticket_task

# verifiers and the SDKs it pins warn about their own deprecations; what the rollout did is checked.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

URGENT = {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}}
TO_ENGINEERING = {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "queue": "Engineering"}}


class StreamingLLM(ScriptedLLM):
    """`ScriptedLLM` that also answers `stream: true` requests with server-sent events."""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self
        base = super()._handler()

        class Handler(base):  # type: ignore[valid-type,misc]
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                if not request.get("stream"):
                    raise AssertionError("the harness asks for streamed completions")
                entry = llm._next(request)
                if "status" in entry:
                    self._send(int(entry["status"]), {"error": {"message": entry.get("error", "error")}})
                    return
                body = completion(entry, request.get("model") or llm.model, len(llm.requests))
                choice = body["choices"][0]
                delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
                if choice["message"].get("tool_calls"):
                    delta["tool_calls"] = [
                        {"index": i, **call} for i, call in enumerate(choice["message"]["tool_calls"])
                    ]
                chunk = {k: body[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
                events = [
                    chunk | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    chunk
                    | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
                    chunk | {"choices": [], "usage": body["usage"]},
                ]
                data = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


@pytest.fixture(autouse=True)
def harness_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat harness runs as a uv script; the uv that comes with the extra is beside python."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    path = tmp_path / "tasks" / "t-escalate.json"
    path.parent.mkdir()
    path.write_text(dump_task(ticket_task()))
    return path


@pytest.fixture
def llm_script() -> list[Entry]:
    return []


@pytest.fixture
def llm(llm_script: list[Entry]) -> Iterator[StreamingLLM]:
    with StreamingLLM(llm_script) as server:
        yield server


async def run_rollout(env: CoworkEnv, llm: ScriptedLLM) -> Any:
    """One rollout of the environment's first task, as `vf eval` runs it."""
    ctx = vf.ModelContext(
        model="scripted",
        client=vf.EvalClientConfig(base_url=llm.base_url.removesuffix("/v1"), api_key_var="SCRIPTED_KEY"),
    )
    (task,) = list(env.taskset)
    async with env.serving():
        return await env.run_episode(task, ctx)


async def test_a_rollout_plays_both_turns_through_the_tools_and_scores_the_verdict(
    task_file: Path, llm: StreamingLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", "sk-test")
    llm.script[:] = [
        {"tool_calls": [URGENT]},
        {"content": "It is urgent now."},
        {"tool_calls": [TO_ENGINEERING]},
        {"content": "Moved to Engineering."},
    ]
    env = load_environment(task_file.parent, records_dir=tmp_path / "records")
    episode = await run_rollout(env, llm)
    assert episode.ok, [(t.errors, t.stop_condition) for t in episode.traces]
    (trace,) = episode.traces
    assert trace.rewards == {"score": vf.Reward(score=1.0)}
    assert trace.reward == 1.0
    assert trace.metrics == {
        "score": 1.0,
        "success": 1.0,
        "raw_score": 1.0,
        "safety": 1.0,
        "collateral": 0.0,
        "check/urgent": 1.0,
        "check/moved": 1.0,
        "check/comment-kept": 1.0,
        "check/urgent@end": 1.0,
        "turn/0": 1.0,
        "turn/1": 1.0,
    }
    # the model was offered the episode's tools with their exact schemas, and turn 2's user
    # message came after turn 1's reply
    start = Episode(ticket_task()).reset()
    offered = {t["function"]["name"]: t["function"] for t in llm.requests[0]["tools"]}
    expected = {t["function"]["name"]: t["function"] for t in start.openai_tools}
    assert {n: (f["description"], f["parameters"]) for n, f in offered.items()} == {
        n: (f["description"], f["parameters"]) for n, f in expected.items()
    }
    assert llm.requests[0]["messages"][0] == {"role": "system", "content": start.system_prompt}
    assert llm.requests[0]["messages"][1] == {"role": "user", "content": start.user_message}
    last = llm.requests[2]["messages"]
    assert [m["role"] for m in last[-2:]] == ["assistant", "user"]
    assert last[-2]["content"] == "It is urgent now."
    assert last[-1]["content"] == "Anything new on it? Move it to Engineering if it is open again."
    (record,) = read_records(tmp_path / "records")
    assert (record.task_id, record.policy, record.trial, record.score) == ("t-escalate", "verifiers", 0, 1.0)
    # the agent's calls, and between the turns the silent event that reopened the ticket
    assert [(c.actor, c.tool, c.arguments) for c in record.tool_calls] == [
        ("agent", "update_ticket", {"ticket_id": 1, "priority": "urgent"}),
        ("event", "customer_comment", {"ticket_id": 1, "body": "Still broken!", "reopen": True}),
        ("agent", "update_ticket", {"ticket_id": 1, "queue": "Engineering"}),
    ]
    assert [m["content"] for m in record.messages if m["role"] == "assistant" and m.get("content")] == [
        "It is urgent now.",
        "Moved to Engineering.",
    ]


async def test_an_agent_that_does_nothing_scores_zero_and_each_rollout_gets_a_fresh_fork(
    task_file: Path, llm: StreamingLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", "sk-test")
    llm.script[:] = [
        {"tool_calls": [URGENT]},
        {"content": "Done."},
        {"content": "Nothing to do."},
    ]
    env = load_environment([task_file], records_dir=tmp_path / "records")
    first = await run_rollout(env, llm)
    second = await run_rollout(env, llm)  # the script is spent: the agent only answers
    assert first.traces[0].metrics["turn/0"] == 1.0
    assert first.traces[0].metrics["turn/1"] == 0.0
    (trace,) = second.traces
    assert trace.rewards == {"score": vf.Reward(score=0.0)}
    assert trace.metrics == {
        "score": 0.0,
        "success": 0.0,
        "raw_score": 0.0,
        "safety": 1.0,
        "collateral": 0.0,
        "check/urgent": 0.0,
        "check/moved": 0.0,
        "check/comment-kept": 1.0,
        "check/urgent@end": 0.0,
        "turn/0": 0.0,
        "turn/1": 0.0,
    }
    records = read_records(tmp_path / "records")
    agent_calls = [[c.tool for c in r.tool_calls if c.actor == "agent"] for r in records]
    assert [(r.trial, r.score) for r in records] == [(0, 0.5), (1, 0.0)]
    assert agent_calls == [["update_ticket"], []]


async def test_a_broken_model_endpoint_is_an_error_record_not_a_score(
    task_file: Path, llm: StreamingLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", "sk-test")
    llm.script[:] = [{"status": 400, "error": "bad request"}]
    env = load_environment(task_file, records_dir=tmp_path / "records")
    episode = await run_rollout(env, llm)
    (trace,) = episode.traces
    assert (episode.ok, trace.stop_condition, trace.rewards) == (False, "provider_error", {})
    (record,) = read_records(tmp_path / "records")
    assert (record.status, record.verdict) == ("error", None)
    assert record.error == 'ProviderError: upstream 400: {"error": {"message": "bad request"}}'


def test_verifiers_finds_the_taskset_and_environment_by_id(task_file: Path) -> None:
    config = vf.resolve_env_config({"taskset": {"id": TASKSET_ID, "tasks": [str(task_file)]}})
    env = vf.load_environment(config)
    assert type(env) is CoworkEnv
    assert [(t.data.id, t.data.turns, t.data.services) for t in env.taskset] == [
        ("t-escalate", 2, ["tickets"])
    ]


def test_no_task_files_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no task files in \["):
        load_environment(tmp_path)


def test_a_fresh_process_loads_the_environment_by_the_id_coworkenv(task_file: Path, tmp_path: Path) -> None:
    import subprocess

    script = (
        "import verifiers.v1 as vf\n"
        f"config = vf.resolve_env_config({{'taskset': {{'id': 'coworkenv', 'tasks': [{str(task_file)!r}]}}}})\n"
        "env = vf.load_environment(config)\n"
        "print(type(env).__name__, [t.data.id for t in env.taskset])\n"
    )
    # run outside the checkout, as a trainer would: its verifiers/ folder is coworkenv's own
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "CoworkEnv ['t-escalate']"
