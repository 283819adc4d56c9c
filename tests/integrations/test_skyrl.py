"""SkyRL: the coworkenv environment made by skyrl-gym's own `make`, played the way SkyRL's
generator plays a `BaseTextEnv` (init, then step with each model reply until done) on a
two-turn task, with the replies a model would write."""

from pathlib import Path
from typing import Any

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="the SkyRL environment needs the [skyrl] extra")
omegaconf = pytest.importorskip("omegaconf", reason="SkyRL passes its env_config as an omegaconf DictConfig")

from coworkenv.integrations.skyrl import ENV_ID, CoworkTextEnv, dataset_rows, register_env  # noqa: E402
from coworkenv.integrations.text_episode import UnscoredEpisode  # noqa: E402
from coworkenv.integrations.tool_text import ToolCall, render_tool_calls  # noqa: E402
from coworkenv.rollout import read_records  # noqa: E402
from coworkenv.task import dump_task  # noqa: E402
from tests.integrations.test_text_episode import LOOK, MOVE, TURN_2, URGENT, qwen3  # noqa: E402
from tests.rollout.test_runner import ticket_task  # noqa: E402

REPLIES = [
    "<think>The login ticket is #1.</think>\n" + render_tool_calls([URGENT]),
    "It is urgent now.",
    render_tool_calls([LOOK, MOVE]),
    "It was reopened: moved to Engineering.",
]


@pytest.fixture
def task_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "t-escalate.json").write_text(dump_task(ticket_task()))
    return folder


def make_env(task_folder: Path, records: Path | None = None, **extras: Any) -> Any:
    """As SkyRL's generator makes one: its env_config (SkyRL's typed config has no entry for
    coworkenv: empty), the dataset row as extras."""
    register_env()
    (row,) = dataset_rows([task_folder], records_dir=records)
    return skyrl_gym.make(
        row["env_class"], env_config=omegaconf.OmegaConf.create({}), extras={**row, **extras}
    ), row


def play(
    env: Any, prompt: list[dict[str, str]], replies: list[str]
) -> tuple[list[dict[str, str]], list[Any]]:
    """SkyRL's generator loop: the chat history grows by each reply and its observations."""
    chat_history, _ = env.init(prompt)
    outputs = []
    for reply in replies:
        out = env.step(reply)
        outputs.append(out)
        chat_history += [{"role": "assistant", "content": reply}, *out["observations"]]
        if out["done"]:
            break
    env.close()
    return chat_history, outputs


def test_a_two_turn_task_runs_end_to_end_in_the_environment_skyrl_gym_makes(
    task_folder: Path, tmp_path: Path
) -> None:
    env, row = make_env(task_folder, tmp_path / "records", max_turns=10)
    assert isinstance(env, CoworkTextEnv) and skyrl_gym.registry[ENV_ID].entry_point.endswith(
        ":CoworkTextEnv"
    )
    assert row["task_id"] == "t-escalate" and [m["role"] for m in row["prompt"]] == ["system", "user"]
    chat_history, outputs = play(env, row["prompt"], REPLIES)
    assert [(o["reward"], o["done"]) for o in outputs] == [
        (0.0, False),
        (0.0, False),
        (0.0, False),
        (1.0, True),
    ]
    assert outputs[1]["observations"] == [{"role": "user", "content": TURN_2}]
    assert outputs[-1]["metadata"] == {
        "rewards": {"score": 1.0, "success": 1.0, "raw_score": 1.0, "safety": 1.0, "collateral": 0.0},
        "status": "completed",
    }
    assert env.get_metrics() == outputs[-1]["metadata"]["rewards"]
    assert (
        CoworkTextEnv.aggregate_metrics([env.get_metrics(), {**env.get_metrics(), "score": 0.0}])["score"]
        == 0.5
    )
    # the conversation renders with the model's chat template: tool results in user turns
    rendered = qwen3(chat_history)
    assert rendered.count("<tool_response>") == 3 and rendered.count("<|im_start|>user") == 4
    (record,) = read_records(tmp_path / "records")
    assert (record.task_id, record.policy, record.trial, record.status) == (
        "t-escalate",
        "skyrl",
        0,
        "completed",
    )
    assert [e.tool for e in record.tool_calls] == [
        "update_ticket",
        "customer_comment",
        "get_ticket",
        "update_ticket",
    ]


def test_each_environment_is_a_new_episode_with_its_own_trial_on_a_fresh_fork(task_folder: Path) -> None:
    first, row = make_env(task_folder, max_turns=10)
    second, _ = make_env(task_folder, max_turns=10)
    play(first, row["prompt"], REPLIES[:1])  # the first one made the ticket urgent
    _, outputs = play(second, row["prompt"], [render_tool_calls([LOOK])])
    assert '"priority":"normal"' in outputs[0]["observations"][0]["content"]
    assert second.text_episode.episode.trial == first.text_episode.episode.trial + 1


def test_max_turns_ends_the_episode_judged_as_it_stands(task_folder: Path) -> None:
    env, row = make_env(task_folder, max_turns=2)
    _, outputs = play(env, row["prompt"], REPLIES)
    assert [(o["reward"], o["done"]) for o in outputs] == [(0.0, False), (0.5, True)]
    assert outputs[-1]["metadata"]["rewards"]["success"] == 0.0


def test_an_episode_without_a_verdict_raises_instead_of_rewarding(task_folder: Path, tmp_path: Path) -> None:
    env, row = make_env(task_folder, tmp_path / "records", max_turns=10)
    env.init(row["prompt"])
    env.step(REPLIES[0])
    env.text_episode.episode.fail("a check could not be evaluated")
    env.step(REPLIES[1])
    with pytest.raises(
        UnscoredEpisode, match="episode of t-escalate has no verdict: a check could not be evaluated"
    ):
        env.step(REPLIES[3])
    (record,) = read_records(tmp_path / "records")
    assert (record.status, record.verdict) == ("error", None)


def test_bad_configuration_is_refused_with_what_to_fix(task_folder: Path) -> None:
    register_env()
    register_env()  # registering again does nothing
    with pytest.raises(ValueError, match="needs `tasks` \\(files or folders\\): in the row's `coworkenv`"):
        skyrl_gym.make(ENV_ID, env_config={}, extras={"task_id": "t-escalate"})
    with pytest.raises(KeyError, match="no task 'nope' in this task set; its tasks: t-escalate"):
        skyrl_gym.make(ENV_ID, env_config={"tasks": [str(task_folder)]}, extras={"task_id": "nope"})
    (row,) = dataset_rows(task_folder, seed=7)
    assert row["coworkenv"] == {"tasks": [str(task_folder.resolve())], "seed": 7, "records_dir": None}
    seeded = skyrl_gym.make(ENV_ID, env_config={"seed": 8}, extras=row)  # env_config wins
    assert seeded.text_episode.episode.seed == 8
    unreadable = render_tool_calls([ToolCall("tickets_get_ticket", {"ticket_id": 1})]).replace("}}", "}")
    env, row = make_env(task_folder, max_turns=10)
    _, outputs = play(env, row["prompt"], [unreadable])
    assert outputs[0]["observations"][0]["content"].startswith("Error: the tool call is not valid JSON")


def test_max_result_chars_comes_from_the_row_or_the_env_config(task_folder: Path) -> None:
    register_env()
    (row,) = dataset_rows(task_folder, max_result_chars=60)
    assert row["coworkenv"] == {
        "tasks": [str(task_folder.resolve())],
        "seed": 0,
        "records_dir": None,
        "max_result_chars": 60,
    }
    env = skyrl_gym.make(ENV_ID, env_config={}, extras=row)
    assert env.text_episode.max_result_chars == 60
    env.init(row["prompt"])
    (observation,) = env.step(render_tool_calls([LOOK]))["observations"]
    assert observation["content"].startswith(observation["content"][:60] + "\n[result cut: the first 60 of ")
    env.close()
    wider = skyrl_gym.make(ENV_ID, env_config={"max_result_chars": 500}, extras=row)  # env_config wins
    assert wider.text_episode.max_result_chars == 500
    wider.close()
