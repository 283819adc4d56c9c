"""`coworkenv rollout`, `report` and `export` where a user meets them: through the CLI, with
the model endpoints as local OpenAI-compatible servers that answer from a script."""

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from coworkenv.cli import cli
from coworkenv.rollout import read_records
from coworkenv.rollout.agents.openai_client import Endpoint, make_client, parse_endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.rollout.agents.user_simulator import SATISFIED
from coworkenv.synth.generators import LLMGenerator
from coworkenv.task import dump_task
from tests.rollout.test_runner import ticket_task


@pytest.fixture(autouse=True)
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads a key from the developer's environment."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], env=env, catch_exceptions=False)


def write_task(folder: Path, **overrides: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    task = ticket_task(**overrides)
    path = folder / f"{task.id}.json"
    path.write_text(dump_task(task))
    return path


def persona_task(folder: Path) -> Path:
    return write_task(
        folder,
        turns=[
            ticket_task().turns[0].model_copy(update={"user": "Please fix the priority of the login ticket."})
        ],
        checks=[],
        persona={"description": "Dana, a support agent", "facts": {"priority": "urgent"}},
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_user_model_answers_the_agent_in_every_episode(tmp_path: Path) -> None:
    task = persona_task(tmp_path / "tasks")
    agent_script = [
        {"content": "Which priority should it get?"},
        {
            "tool_calls": [
                {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}}
            ]
        },
        {"content": "Done: it is urgent now."},
    ]
    user_script = [{"content": "Urgent, please."}, {"content": SATISFIED}]
    with ScriptedLLM(agent_script, model="a") as agent_llm, ScriptedLLM(user_script, model="u") as user_llm:
        result = invoke(
            "rollout", task, "--agent", "openai", "--endpoint", f"agent=a@{agent_llm.base_url}",
            "--endpoint", f"user=u@{user_llm.base_url}", "--out", tmp_path / "out",
        )  # fmt: skip
        user_requests = user_llm.requests
    assert result.exit_code == 0, result.output
    assert [r["model"] for r in user_requests] == ["u", "u"]
    assert "Dana, a support agent" in user_requests[0]["messages"][0]["content"]
    [record] = read_records(tmp_path / "out")
    assert record.status == "completed"
    assert record.user_replies == [3]
    assert record.messages[3] == {"role": "user", "content": "Urgent, please."}


def test_api_key_env_is_what_the_agent_and_the_simulator_send(tmp_path: Path) -> None:
    task = persona_task(tmp_path / "tasks")
    with ScriptedLLM([{"content": "Done."}]) as agent_llm, ScriptedLLM([{"content": SATISFIED}]) as user_llm:
        result = invoke(
            "rollout", task, "--agent", "openai", "--endpoint", f"agent=a@{agent_llm.base_url},key_env=MY_KEY",
            "--endpoint", f"user=u@{user_llm.base_url},key_env=MY_KEY",
            "--out", tmp_path / "out",
            env={"MY_KEY": "secret-1", "OPENAI_API_KEY": "not-this-one"},
        )  # fmt: skip
        keys = agent_llm.keys + user_llm.keys
    assert result.exit_code == 0, result.output
    assert len(keys) >= 4  # a model list and a completion at each endpoint
    assert set(keys) == {"Bearer secret-1"}


def test_the_generator_reads_the_key_from_the_variable_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "secret-2")
    assert LLMGenerator(Endpoint(model="m", api_key_env="MY_KEY")).client.api_key == "secret-2"
    assert make_client("http://127.0.0.1:1/v1").api_key == "EMPTY"  # self-hosted: a placeholder


def test_no_key_for_openai_fails_before_the_batch(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks")
    result = CliRunner().invoke(
        cli,
        [
            "rollout",
            str(task),
            "--agent",
            "openai",
            "--endpoint",
            "agent=gpt",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 1
    assert "no API key: set OPENAI_API_KEY" in result.output
    assert not (tmp_path / "out").exists()


def test_an_unreachable_endpoint_fails_before_the_batch_with_the_reason(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks")
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = CliRunner().invoke(
        cli,
        [
            "rollout",
            str(task),
            "--agent",
            "openai",
            "--endpoint",
            f"agent=m@{url}",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 1
    assert f"the model endpoint {url} is not reachable" in result.output
    assert not (tmp_path / "out").exists()


def test_a_refused_key_fails_before_the_batch(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks")
    with ScriptedLLM([]) as llm:
        llm.model_list_status = 401
        result = CliRunner().invoke(
            cli,
            [
                "rollout",
                str(task),
                "--agent",
                "openai",
                "--endpoint",
                f"agent=m@{llm.base_url}",
                "--out",
                str(tmp_path / "out"),
            ],
        )
        completions = len(llm.requests)
    assert result.exit_code == 1
    assert "refused the request (HTTP 401)" in result.output
    assert completions == 0


def test_a_batch_in_which_every_episode_errored_exits_non_zero(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks")
    with ScriptedLLM([{"status": 400, "error": "bad model"}] * 2) as llm:
        result = invoke(
            "rollout", task, "--agent", "openai", "--endpoint", f"agent=m@{llm.base_url}",
            "--trials", "2", "--out", tmp_path / "out",
        )  # fmt: skip
    assert result.exit_code == 1
    assert "every episode ended in an error" in result.output
    assert "bad model" in result.output
    assert [r.status for r in read_records(tmp_path / "out")] == ["error", "error"]


def test_an_empty_folder_is_a_usage_error_for_rollout_and_export(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    rolled = invoke("rollout", empty, "--out", tmp_path / "out")
    assert rolled.exit_code == 2
    assert f"no task files (*.json) in {empty}" in rolled.output
    for kind in ("sft", "rl"):
        exported = invoke("export", kind, empty, "--out", tmp_path / kind)
        assert exported.exit_code == 2
        assert f"no episode records (records.jsonl) in {empty}" in exported.output
        assert not (tmp_path / kind).exists()


def test_noise_outside_0_to_1_is_refused(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks")
    result = invoke("rollout", task, "--agent", "noisy", "--noise", "5", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert "--noise" in result.output and "0<=x<=1" in result.output


def test_a_synth_folder_rolls_out_its_tasks_and_skips_the_funnel(tmp_path: Path) -> None:
    synth = tmp_path / "synth"
    write_task(synth / "tasks")
    (synth / "funnel.json").write_text(json.dumps({"slots": 1, "drafts": 1}))
    result = invoke("rollout", synth, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert [r.task_id for r in read_records(tmp_path / "out")] == ["t-escalate"]


def test_save_demo_over_an_existing_file_names_the_overwrite_flag(tmp_path: Path) -> None:
    path = tmp_path / "demo.db"
    path.write_bytes(b"keep me")
    result = invoke("save-demo", path)
    assert result.exit_code == 2
    assert f"{path} already exists; pass --overwrite to replace it" in result.output
    assert path.read_bytes() == b"keep me"


def test_report_tables_fit_the_columns_of_the_terminal(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks")
    assert invoke("rollout", task, "--trials", "2", "--out", tmp_path / "out").exit_code == 0
    result = invoke("report", tmp_path / "out", env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    tables = [line for line in result.output.splitlines() if line[:1] in "┏┃│└┡"]
    assert tables and max(len(line) for line in tables) <= 100
    wide = invoke("report", tmp_path / "out", env={"COLUMNS": "180"})
    wide_tables = [line for line in wide.output.splitlines() if line[:1] in "┏┃│└┡"]
    assert wide_tables and max(len(line) for line in wide_tables) <= 180


def test_a_noisy_agent_with_drift_loses_the_thread_in_the_later_turn(tmp_path: Path) -> None:
    from coworkenv.rollout import read_records

    task = write_task(tmp_path / "tasks")
    args = ["rollout", task, "--agent", "noisy", "--noise", "0", "--seed", "3", "--trials", "2"]
    assert invoke(*args, "--noise-drift", "0.9", "--out", tmp_path / "drift").exit_code == 0
    assert invoke(*args, "--out", tmp_path / "steady").exit_code == 0
    turns = {
        name: sorted([t.success for t in r.verdict.turns] for r in read_records(tmp_path / name) if r.verdict)
        for name in ("drift", "steady")
    }
    assert turns == {"drift": [[True, False]] * 2, "steady": [[True, True]] * 2}


@pytest.mark.parametrize(
    ("spec", "role", "endpoint"),
    [
        ("agent=gpt-4.1", "agent", Endpoint(model="gpt-4.1")),
        (
            "agent=Qwen/Qwen3-8B@http://127.0.0.1:8000/v1",
            "agent",
            Endpoint(model="Qwen/Qwen3-8B", base_url="http://127.0.0.1:8000/v1"),
        ),
        (
            "user=qwen2.5:14b@http://localhost:11434/v1,key_env=MY_KEY,timeout=30,attempts=2",
            "user",
            Endpoint(
                model="qwen2.5:14b",
                base_url="http://localhost:11434/v1",
                api_key_env="MY_KEY",
                timeout=30,
                attempts=2,
            ),
        ),
        ("agent=m,retry_budget=5,backoff=0.5", "agent", Endpoint(model="m", retry_budget=5, backoff=0.5)),
    ],
)
def test_an_endpoint_value_names_a_role_a_model_a_url_and_settings(
    spec: str, role: str, endpoint: Endpoint
) -> None:
    assert parse_endpoint(spec, ("agent", "user")) == (role, endpoint)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("gpt-4.1", "'gpt-4.1' names no role: write ROLE=MODEL[@URL]"),
        ("judge=m", "unknown role 'judge' in 'judge=m'; this command's roles: agent, user"),
        ("agent=", "'agent=' names no model"),
        (
            "agent=m@localhost:8000/v1",
            "the URL after '@' must start with http:// or https://, not 'localhost:8000/v1'",
        ),
        ("agent=m,temperature=1", "unknown setting 'temperature=1'; settings are key_env=..., timeout=..."),
        ("agent=m,timeout=0", "'agent=m,timeout=0': timeout: Input should be greater than 0"),
        ("agent=m,attempts=many", "attempts: Input should be a valid integer"),
    ],
)
def test_a_bad_endpoint_value_is_a_usage_error_that_says_what_to_write(
    tmp_path: Path, value: str, message: str
) -> None:
    task = write_task(tmp_path / "tasks")
    result = invoke("rollout", task, "--agent", "openai", "--endpoint", value, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()


def test_roles_are_given_once_and_only_where_a_model_is_called(tmp_path: Path) -> None:
    task = write_task(tmp_path / "tasks")
    twice = invoke("rollout", task, "--agent", "openai", "--endpoint", "agent=a", "--endpoint", "agent=b",
                   "--out", tmp_path / "out")  # fmt: skip
    assert twice.exit_code == 2 and "the agent endpoint is given twice" in twice.output
    missing = invoke("rollout", task, "--agent", "openai", "--out", tmp_path / "out")
    assert missing.exit_code == 2 and "--agent openai needs --endpoint agent=MODEL[@URL]" in missing.output
    unused = invoke("rollout", task, "--agent", "oracle", "--endpoint", "agent=a", "--out", tmp_path / "out")
    assert unused.exit_code == 2
    assert "--endpoint agent=... is for --agent openai; --agent oracle calls no model" in unused.output
