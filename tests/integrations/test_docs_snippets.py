"""Every snippet of docs/integrations.md runs as written, on CPU: Python blocks as scripts,
command blocks line by line in a shell whose PATH starts with this venv's `bin` (where
`coworkenv` and `pip` are), in a folder where `tasks/` is the checkout's. The verifiers
snippet runs in `tests/integrations/test_verifiers_env.py` (its venv of its own)."""

import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coworkenv.rollout import read_records
from coworkenv.task import example_tasks_dir, task_files

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integrations.md"
BIN = Path(sys.executable).parent

# Ray, TRL and OpenEnv warn about their own deprecations and experimental features.
pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning"
)


def blocks() -> list[tuple[str, str]]:
    """(language, code) of each fenced block of the page, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```", DOC.read_text(), flags=re.M | re.S)


def block(marker: str) -> tuple[str, str]:
    """The one block whose code holds `marker`."""
    (found,) = [b for b in blocks() if marker in b[1]]
    return found


#: What picks out each block, and the test that runs it.
MARKERS = {
    "pip wheel --no-deps": "test_the_install_lines_build_and_install_a_wheel_with_its_examples",
    "report out/oracle --budget": "test_the_budget_commands_print_the_budget",
    "ep = Episode(task, trial=0, seed=0)": "test_the_episode_snippet",
    "GRPOTrainer(": "test_the_trl_snippet_trains_a_step_on_cpu",
    "coworkenv env-server": "test_the_openenv_server_and_clients",
    "GenericEnvClient(base_url=": "test_the_openenv_server_and_clients",
    "load_environment(seed=0": "test_verifiers_env.py::test_the_docs_snippet_runs_as_written",
    "--backend ray --concurrency 16": "test_the_ray_command_finishes_every_episode",
    "run_batch(": "test_the_ray_python_snippet_streams_every_record",
    "TextEpisode(Episode(task": "test_the_snippets_without_an_extra_run_as_written",
    "async def my_agent(conversation: Conversation)": "test_the_snippets_without_an_extra_run_as_written",
    "requests kept for assertions": "test_the_snippets_without_an_extra_run_as_written",
    "coworkenv.integrations.verl": "test_integration_docs.py::test_the_snippet_runs_as_written",
    "coworkenv.integrations.skyrl": "test_integration_docs.py::test_the_snippet_runs_as_written",
    "from agents import": "test_integration_docs.py::test_the_snippet_runs_as_written",
    "coworkenv rollout-mcp": "test_integration_docs.py::test_the_rollout_mcp_command_lines_run_and_report_the_episodes",
}


def test_every_block_is_run_by_a_test() -> None:
    for language, code in blocks():
        claimed = [marker for marker in MARKERS if marker in code]
        assert len(claimed) == 1, f"a ```{language} block is run by no test, or by two:\n{code}"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A folder like a user's: `tasks/` is the checkout's, nothing else is there."""
    (tmp_path / "tasks").symlink_to(ROOT / "tasks")
    return tmp_path


def environment(**extra: str) -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", **extra}


def run_python(code: str, cwd: Path, timeout: float = 600, **env: str) -> str:
    script = cwd / "snippet.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        env=environment(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def run_commands(code: str, cwd: Path, timeout: float = 600, **env: str) -> str:
    done = subprocess.run(
        ["bash", "-e", "-c", code],
        cwd=cwd,
        env=environment(**env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_episode_snippet(workdir: Path) -> None:
    out = run_python(block("ep = Episode(task, trial=0, seed=0)")[1], workdir)
    assert out.splitlines()[-1] == "completed ['search_tickets', 'update_ticket']"


@pytest.mark.parametrize(
    "marker",
    [
        "TextEpisode(Episode(task",
        "async def my_agent(conversation: Conversation)",
        "requests kept for assertions",
    ],
)
def test_the_snippets_without_an_extra_run_as_written(marker: str, workdir: Path) -> None:
    out = run_python(block(marker)[1], workdir)
    assert out.strip(), f"the snippet printed nothing:\n{block(marker)[1]}"


def test_the_budget_commands_print_the_budget(workdir: Path) -> None:
    out = run_commands(block("report out/oracle --budget")[1], workdir)
    lines = out.splitlines()[-3:]
    assert lines[0].startswith("prompt: ") and lines[0].endswith("tokens (safety-no-external-leak)")
    assert lines[1].startswith("completion: ") and lines[1].endswith("tokens (mail-triage-invoices)")
    examples = len(list((ROOT / "tasks" / "examples").glob("*.json")))
    assert lines[2].startswith(f"largest over {examples} task(s), counted with ")


def test_the_trl_snippet_trains_a_step_on_cpu(workdir: Path) -> None:
    pytest.importorskip("trl", reason="the TRL snippet needs the [trl] extra")
    run_python(block("GRPOTrainer(")[1], workdir, TRL_EXPERIMENTAL_SILENCE="1")
    records = read_records(workdir / "out" / "grpo" / "records")
    assert len(records) == 2  # one step: two generations of one prompt
    assert {r.policy for r in records} == {"trl"}
    assert len({r.task_id for r in records}) == 1


def test_the_openenv_server_and_clients(workdir: Path) -> None:
    pytest.importorskip("openenv.core", reason="the OpenEnv snippets need the [openenv] extra")
    (_, command) = block("coworkenv env-server")
    server = subprocess.Popen(
        ["bash", "-c", "exec " + command.strip()],
        cwd=workdir,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(3000):  # bounded: at most five minutes (a loaded machine is slow)
            if server.poll() is not None:
                raise AssertionError(f"the server stopped: {server.stderr.read() if server.stderr else ''}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", 8001)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("the server did not start")
        out = run_python(block("GenericEnvClient(base_url=")[1], workdir)
    finally:
        server.terminate()
        server.wait(timeout=30)
    from coworkenv.rollout.agents.tool_schemas import tools_for_services
    from coworkenv.task import load_task

    task = load_task(ROOT / "tasks" / "examples" / "tickets-route-unassigned.json")
    listed, user_message, end = out.splitlines()
    assert listed.startswith(f"{len(tools_for_services(task.services))} tools; ")
    assert user_message == task.turns[0].user
    assert end.startswith("True 0.0 {'score': 0.0, 'success': 0.0, ")
    # the MCP client's episode took trial 0 and never ended; the generic client's took 1
    [record] = read_records(workdir / "out" / "openenv")
    assert (record.task_id, record.policy, record.trial, record.score) == (task.id, "openenv", 1, 0.0)


def test_the_ray_command_finishes_every_episode(workdir: Path) -> None:
    pytest.importorskip("ray", reason="the Ray snippets need the [ray] extra")
    out = run_commands(block("--backend ray --concurrency 16")[1], workdir, timeout=900)
    episodes = 8 * len(task_files([example_tasks_dir()]))
    assert f"{episodes} episode(s) run, 0 already done" in out
    records = read_records(workdir / "out" / "teacher")
    assert sorted((r.task_id, r.trial) for r in records) == sorted(
        {(r.task_id, trial) for r in records for trial in range(8)}
    )
    assert len(records) == episodes and all(r.status == "completed" for r in records)


def test_the_ray_python_snippet_streams_every_record(workdir: Path) -> None:
    pytest.importorskip("ray", reason="the Ray snippets need the [ray] extra")
    out = run_python(block("run_batch(")[1], workdir, timeout=900)
    lines = out.splitlines()
    episodes = 2 * len(task_files([example_tasks_dir()]))
    assert lines[-1] == f"{episodes} episodes, 0 errors"
    assert [line.split()[0] for line in lines[:-1]] == [f"{i}/{episodes}" for i in range(1, episodes + 1)]


def test_the_install_lines_build_and_install_a_wheel_with_its_examples(tmp_path: Path) -> None:
    """In a fresh venv whose dependencies are this one's (no index is asked), from a copy of
    the checkout: the editable install, the wheel and its install with extras."""
    for extra, module in (("trl", "trl"), ("ray", "ray")):  # no index is asked: this venv must have them
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the install lines name the [{extra}] extra, which is not installed here")
    checkout = tmp_path / "checkout"
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        source, copy = ROOT / name, checkout / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():  # coworkenv/<subpackage> links to the top-level folders
            copy.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, copy)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    ours = next(p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir())
    (site / "parent.pth").write_text(f"{ours}\n")  # every dependency, and pip, from this venv
    (venv / "bin" / "pip").write_text(f'#!/bin/sh\nexec {venv / "bin" / "python"} -m pip "$@"\n')
    (venv / "bin" / "pip").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip reads 0 as "do not isolate": setuptools comes from here
    }
    (_, lines) = block("pip wheel --no-deps")
    done = subprocess.run(
        ["bash", "-e", "-c", lines], cwd=checkout, env=env, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "from coworkenv.task import example_tasks_dir; print(example_tasks_dir())",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    examples = Path(where)
    assert examples == site / "coworkenv" / "examples"
    assert sorted(p.name for p in examples.glob("*.json")) == sorted(
        p.name for p in (ROOT / "tasks" / "examples").glob("*.json")
    )
