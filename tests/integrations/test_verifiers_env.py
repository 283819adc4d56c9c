"""verifiers: real rollouts of the coworkenv environment with verifiers' chat harness, whose
model is a local OpenAI-compatible server answering from a script (streamed, as the
harness asks). The harness reaches the episode's tools over MCP; the environment plays the
user's turns; the reward and metrics are the episode's verdict."""

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

try:
    from coworkenv.integrations.verifiers_env import HARNESS_ID, TASKSET_ID, CoworkEnv, load_environment, vf
except ImportError as exc:  # the [verifiers] extra is not installed
    pytest.skip(f"the verifiers integration needs the [verifiers] extra: {exc}", allow_module_level=True)

from coworkenv.rollout import Episode, read_records
from coworkenv.rollout.agents.scripted_llm import Entry, ScriptedLLM
from coworkenv.task import dump_task
from tests.rollout.test_runner import ticket_task

# verifiers and the SDKs it pins warn about their own deprecations; what the rollout did is checked.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

URGENT = {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}}
TO_ENGINEERING = {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "queue": "Engineering"}}


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No uv on the PATH and no package index: the chat harness needs neither (it runs on
    this Python, with the packages the extra installed)."""
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir()))
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("UV_INDEX_URL", "http://127.0.0.1:9/simple")


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
def llm(llm_script: list[Entry]) -> Iterator[ScriptedLLM]:
    with ScriptedLLM(llm_script) as server:
        yield server


async def run_rollout(env: CoworkEnv, llm: ScriptedLLM) -> Any:
    """One rollout of the environment's first task, as `vf eval` runs it."""
    ctx = vf.ModelContext(
        model="scripted",
        client=vf.EvalClientConfig(base_url=llm.base_url, api_key_var="SCRIPTED_KEY"),
    )
    (task,) = list(env.taskset)
    async with env.serving():
        return await env.run_episode(task, ctx)


async def test_a_rollout_plays_both_turns_through_the_tools_and_scores_the_verdict(
    task_file: Path, llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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
    assert [r.get("stream") for r in llm.requests] == [True] * 4  # the harness streams its completions
    (trace,) = episode.traces
    assert trace.rewards == {"score": vf.Reward(score=1.0)}
    assert trace.reward == 1.0
    assert trace.metrics == {
        "score": 1.0,
        "success": 1.0,
        "raw_score": 1.0,
        "safety": 1.0,
        "collateral": 0.0,
        "goals": 1.0,
        "guards": 1.0,
        "turns": 1.0,
        "no_collateral": 1.0,
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
    task_file: Path, llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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
    assert first.traces[0].metrics["turns"] == 0.5
    (trace,) = second.traces
    assert trace.rewards == {"score": vf.Reward(score=0.0)}
    assert trace.metrics == {
        "score": 0.0,
        "success": 0.0,
        "raw_score": 0.0,
        "safety": 1.0,
        "collateral": 0.0,
        "goals": 0.0,
        "guards": 0.5,
        "turns": 0.0,
        "no_collateral": 1.0,
    }
    records = read_records(tmp_path / "records")
    agent_calls = [[c.tool for c in r.tool_calls if c.actor == "agent"] for r in records]
    assert [(r.trial, r.score) for r in records] == [(0, 0.5), (1, 0.0)]
    assert agent_calls == [["update_ticket"], []]


async def test_a_broken_model_endpoint_is_an_error_record_not_a_score(
    task_file: Path, llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
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


async def test_without_the_sandbox_the_environment_refuses_to_load_and_unjudged_rollouts_get_no_reward(
    llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coworkenv.rollout import NotReady
    from coworkenv.verifiers import sandbox

    monkeypatch.setenv("SCRIPTED_KEY", "sk-test")
    task_file = Path("tasks/examples/calendar-book-1on1.json").resolve()
    monkeypatch.setenv(sandbox.SWITCH, "off")
    with pytest.raises(NotReady, match=r"^Python checks cannot run here"):
        load_environment(task_file)
    monkeypatch.delenv(sandbox.SWITCH)
    env = load_environment(task_file, records_dir=tmp_path / "records")
    monkeypatch.setenv(sandbox.SWITCH, "off")  # the sandbox goes away after start-up
    llm.script[:] = [{"content": "Booked."}]
    episode = await run_rollout(env, llm)
    (trace,) = episode.traces
    assert not episode.ok
    assert trace.rewards == {"verdict_score": None}
    assert trace.reward == 0.0 and trace.has_error
    assert "the episode could not be judged: check '" in " ".join(e.message for e in trace.errors)
    (record,) = read_records(tmp_path / "records")
    assert (record.status, record.verdict) == ("error", None)


def test_verifiers_finds_the_taskset_and_environment_by_id(task_file: Path) -> None:
    config = vf.resolve_env_config({"taskset": {"id": TASKSET_ID, "tasks": [str(task_file)]}})
    env = vf.load_environment(config)
    assert type(env) is CoworkEnv
    assert [(t.data.id, t.data.turns, t.data.services) for t in env.taskset] == [
        ("t-escalate", 2, ["tickets"])
    ]


async def test_the_chat_harness_runs_on_this_python_without_uv(task_file: Path, tmp_path: Path) -> None:
    from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
    from verifiers.v1.runtimes import SubprocessRuntime
    from verifiers.v1.utils.loaders import harness_class

    from coworkenv.integrations.verifiers_env import OwnPythonChatHarness, _ScriptsOnThisPython

    env = load_environment(task_file.parent)
    assert env.config.agent.harness.id == HARNESS_ID
    assert harness_class(HARNESS_ID) is OwnPythonChatHarness
    runtime = SubprocessRuntime(vf.SubprocessConfig(), "own-python-test")
    await runtime.start()
    try:
        argv = await _ScriptsOnThisPython(runtime).prepare_uv_script(CHAT_PROGRAM_SOURCE)
        assert argv[0] == sys.executable and Path(argv[1]).read_text() == CHAT_PROGRAM_SOURCE
        # the program's packages import on this Python: it starts and explains its arguments
        done = await runtime.run([*argv, "--help"], {})
        assert done.exit_code == 0 and "--base-url" in done.stdout, done.stderr
    finally:
        await runtime.stop()


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


def test_the_docs_snippet_runs_as_written(llm: ScriptedLLM, tmp_path: Path) -> None:
    """docs/integrations.md's verifiers snippet, as a script, against the scripted model (its
    URL, ending in /v1 as vLLM's does, in MODEL_BASE_URL): three example tasks, each judged."""
    import re
    import subprocess

    doc = (Path(__file__).resolve().parents[2] / "docs" / "integrations.md").read_text()
    (code,) = [
        c
        for c in re.findall(r"^```python\n(.*?)^```", doc, flags=re.M | re.S)
        if "load_environment(seed=0" in c
    ]
    script = tmp_path / "snippet.py"
    script.write_text(code)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "MODEL_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "sk-test",
    }
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 3
    records = read_records(tmp_path / "out" / "vf")
    for line, record in zip(lines, records, strict=True):
        assert line.startswith(f"{record.task_id} {{'score': Reward(score={record.score}, weight=1.0)}} "), (
            line
        )
        assert line.endswith(" []"), line  # no errors: each rollout was judged
    assert {r.status for r in records} == {"completed"}
