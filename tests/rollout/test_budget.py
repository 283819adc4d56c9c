"""The token budget of a task set: the largest prompt and completion its episodes need."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coworkenv.cli import cli
from coworkenv.rollout.agents.budget import episode_budget, task_budget, token_budget
from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.task import dump_task
from tests.rollout.test_runner import ticket_task


def test_the_prompt_is_what_comes_before_the_first_answer_and_the_completion_the_rest() -> None:
    budget = task_budget([ticket_task()], count=len)
    assert budget.method == "the given counter"
    ((task_id, (prompt, completion)),) = budget.tasks.items()
    assert (task_id, budget.prompt, budget.completion) == ("t-escalate", prompt, completion)
    tools = len(json.dumps(tools_for_services(["tickets"]), separators=(",", ":")))
    assert prompt > tools
    assert completion > len("Anything new on it? Move it to Engineering if it is open again.")


def test_no_finished_episode_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"^no finished episodes to take a token budget from$"):
        token_budget([])


def test_report_budget_prints_the_largest_prompt_and_completion(tmp_path: Path) -> None:
    from coworkenv.rollout import read_records

    task_file = tmp_path / "task.json"
    task_file.write_text(dump_task(ticket_task()))
    out = tmp_path / "out"
    ran = CliRunner().invoke(cli, ["rollout", str(task_file), "--agent", "oracle", "--out", str(out)])
    assert ran.exit_code == 0, ran.output
    result = CliRunner().invoke(cli, ["report", str(out), "--budget"])
    assert result.exit_code == 0, result.output
    budget = token_budget(read_records(out))
    prompt, completion = episode_budget(read_records(out)[0], lambda text: len(text))  # another counter
    assert prompt > budget.prompt and completion > budget.completion  # characters outnumber tokens
    assert result.output.splitlines() == [
        f"prompt: {budget.prompt} tokens (t-escalate)",
        f"completion: {budget.completion} tokens (t-escalate)",
        f"largest over 1 task(s), counted with {budget.method}",
    ]
