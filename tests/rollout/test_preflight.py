"""An infrastructure failure is never a reward: start-up checks, and episodes whose checks
could not run end with status `error` and no verdict."""

from pathlib import Path

import pytest

from coworkenv.rollout import NotReady, OraclePolicy, check_ready, read_records, run_batch
from coworkenv.rollout.episodes.episode import Episode
from coworkenv.rollout.episodes.preflight import SANDBOX_FIX, needs_sandbox
from coworkenv.rollout.episodes.rewards import reward_components, reward_score
from coworkenv.task import load_task
from coworkenv.verifiers import sandbox
from tests.rollout.test_runner import ticket_task

ROOT = Path(__file__).resolve().parents[2]
WITH_PYTHON = ROOT / "tasks" / "examples" / "calendar-book-1on1.json"
OFF = "the sandbox is switched off (COWORKENV_SANDBOX=off); nothing was run"


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(sandbox.SWITCH, "off")


def test_the_switch_makes_every_sandboxed_run_unavailable(no_sandbox: None) -> None:
    result = sandbox.run_sandboxed("def check():\n    return 1\n", "check")
    assert (result.status, result.error) == ("unavailable", OFF)
    assert sandbox.sandbox_problem() == OFF


def test_the_sandbox_works_here() -> None:
    assert sandbox.sandbox_problem() is None


def test_start_up_refuses_tasks_with_python_checks_without_the_sandbox(no_sandbox: None) -> None:
    task = load_task(WITH_PYTHON)
    assert needs_sandbox(task) and not needs_sandbox(ticket_task())
    check_ready([ticket_task()])  # nothing to run in the sandbox: it may start
    with pytest.raises(NotReady) as refused:
        check_ready([ticket_task(), task])
    assert str(refused.value) == (
        f"Python checks cannot run here ({OFF}), and 1 task(s) have them (calendar-book-1on1): "
        f"their episodes could not be judged. To fix it, {SANDBOX_FIX}."
    )


def test_start_up_refuses_unknown_task_ids_and_no_tasks() -> None:
    with pytest.raises(NotReady, match=r"^unknown task id\(s\): nope; the tasks given are: t-escalate$"):
        check_ready([ticket_task()], task_ids=["t-escalate", "nope"])
    with pytest.raises(NotReady, match=r"^no tasks given: pass task files or folders of them$"):
        check_ready([])


def test_an_episode_whose_checks_cannot_run_has_no_verdict_and_no_reward(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = load_task(WITH_PYTHON)
    episode = Episode(task)
    episode.reset()
    monkeypatch.setenv(sandbox.SWITCH, "off")
    verdict = episode.verdict()
    record = episode.record()
    episode.close()
    assert verdict is None and record.verdict is None
    assert record.status == "error"
    assert record.error is not None
    assert record.error.startswith("check '") and record.error.endswith(
        f"could not run: python check unavailable: {OFF}"
    )
    assert (reward_score(verdict), reward_components(verdict)) == (None, None)


def test_a_batch_refuses_to_start_without_the_sandbox(no_sandbox: None, tmp_path: Path) -> None:
    with pytest.raises(NotReady, match=r"^Python checks cannot run here"):
        run_batch([load_task(WITH_PYTHON)], OraclePolicy, trials=1, out_dir=tmp_path)
    assert read_records(tmp_path) == []


def test_reward_components_are_named_alike_for_every_task() -> None:
    episode = Episode(ticket_task())
    episode.reset()
    episode.call("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"})
    verdict = episode.verdict()
    episode.close()
    assert reward_components(verdict) == {
        "goals": 0.5,
        "guards": 0.5,
        "turns": 0.5,
        "safety": 1.0,
        "no_collateral": 1.0,
    }


def test_the_ray_backend_without_ray_is_a_clear_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sys

    from click.testing import CliRunner

    from coworkenv.cli import cli
    from coworkenv.task import dump_task

    monkeypatch.setitem(sys.modules, "ray", None)  # as if the [ray] extra were not installed
    task_file = tmp_path / "task.json"
    task_file.write_text(dump_task(ticket_task()))
    result = CliRunner().invoke(
        cli,
        ["rollout", str(task_file), "--agent", "oracle", "--backend", "ray", "--out", str(tmp_path / "out")],
    )
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: cannot start: the Ray backend needs Ray: install the [ray] extra (pip install -e "
        "'.[ray]' in a checkout, or pip install 'ray>=2.60,<3'), or run with --backend local"
    )


def test_the_rollout_command_refuses_to_start_without_the_sandbox(no_sandbox: None, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from coworkenv.cli import cli

    result = CliRunner().invoke(
        cli, ["rollout", str(WITH_PYTHON), "--agent", "oracle", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"Error: cannot start: Python checks cannot run here ({OFF}), and 1 task(s) have them "
        f"(calendar-book-1on1): their episodes could not be judged. To fix it, {SANDBOX_FIX}."
    )
    assert not (tmp_path / "out").exists()  # nothing was written
