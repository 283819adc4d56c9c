"""TRL: the environment class and dataset drive real GRPO steps; tool methods carry the exact
schemas; multi-turn tasks play through `finish_turn`."""

import inspect
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="the TRL integration needs the [trl] extra (pip install -e '.[trl]')")
torch = pytest.importorskip("torch", reason="the TRL integration needs the [trl] extra")

from transformers.utils import get_json_schema  # noqa: E402

from coworkenv.integrations.tiny_model import tiny_model  # noqa: E402
from coworkenv.integrations.trl import (  # noqa: E402
    OVER,
    build_dataset,
    component_rewards,
    dataset_rows,
    environment_class,
    environment_factories,
)
from coworkenv.rollout import read_records  # noqa: E402
from coworkenv.rollout.agents.tool_schemas import tools_for_services  # noqa: E402
from tests.rollout.test_runner import ticket_task  # noqa: E402


def tool_names(cls: type) -> list[str]:
    """The methods TRL offers as tools (public functions of the class but reset and get_reward)."""
    return [
        n
        for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
        if n not in ("reset", "get_reward") and not n.startswith("_")
    ]


def test_tool_methods_are_the_mcp_tools_with_their_types_enums_and_bounds() -> None:
    env_class = environment_class([ticket_task()])
    mcp = {t["function"]["name"]: t["function"] for t in tools_for_services(["tickets"])}
    assert tool_names(env_class) == sorted([*mcp, "finish_turn"])
    env = env_class()
    update = get_json_schema(env.tickets_update_ticket)["function"]
    assert update["name"] == "tickets_update_ticket"
    assert update["description"] == " ".join(mcp["tickets_update_ticket"]["description"].split())
    params = update["parameters"]
    assert params["required"] == ["ticket_id"]
    assert params["properties"]["ticket_id"]["type"] == "integer"
    assert params["properties"]["priority"]["enum"] == ["low", "normal", "high", "urgent"]
    assert params["properties"]["priority"]["nullable"] is True
    assert params["properties"]["title"]["description"].endswith("(1 to 200 characters)")
    search = get_json_schema(env.tickets_search_tickets)["function"]["parameters"]
    assert search["properties"]["status"]["anyOf"][1] == {
        "type": "array",
        "items": {"type": "string", "enum": ["open", "pending", "in_progress", "resolved", "closed"]},
    }
    assert "required" not in search


def test_a_rollout_played_through_the_methods_scores_the_verdict_and_is_recorded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = environment_class([ticket_task()], records_dir=tmp_path)()
    row = dataset_rows([ticket_task()])[0]
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    env.reset(**row)
    env.tickets_update_ticket(ticket_id=1, priority="urgent")
    assert (
        env.finish_turn()
        == "The user answers: Anything new on it? Move it to Engineering if it is open again."
    )
    env.tickets_update_ticket(ticket_id=1, queue="Engineering")
    assert env.finish_turn() == OVER
    assert env.tickets_get_ticket(ticket_id=1) == OVER
    assert env.get_reward() == 1.0
    env.reset(**row)
    assert env.get_reward() == 0.0
    records = read_records(tmp_path)
    assert [(r.policy, r.trial, r.score) for r in records] == [("trl", 0, 1.0), ("trl", 1, 0.0)]


# TRL and transformers warn about their own deprecations and experimental features.
@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning", "ignore::DeprecationWarning")
def test_two_grpo_steps_on_cpu_score_every_rollout_from_its_verdict(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from trl import GRPOConfig, GRPOTrainer

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    tasks = [ticket_task()]
    model, tokenizer = tiny_model(tasks)
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=8,
        max_steps=2,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        multi_objective_aggregation="normalize_then_sum",
        chat_template_kwargs={"enable_thinking": False},
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=build_dataset(tasks, repeats=4),
        environment_factory=environment_factories(tasks, records_dir=tmp_path / "records"),
        reward_funcs=component_rewards(),
    )
    trainer.train()
    assert trainer.state.global_step == 2
    records = read_records(tmp_path / "records")
    assert len(records) == 4
    assert {(r.task_id, r.policy, r.status) for r in records} == {("t-escalate", "trl", "completed")}
    assert sorted(r.trial for r in records) == [0, 1, 2, 3]
    assert all(r.verdict is not None and r.score == 0.0 for r in records)
    logged = [h for h in trainer.state.log_history if "rewards/tickets/mean" in h]
    assert [h["rewards/tickets/mean"] for h in logged] == [0.0, 0.0]
    # nothing done: no goal met, no turn passed; every guard holds, nothing broken
    assert [h["rewards/goals/mean"] for h in logged] == [0.0, 0.0]
    assert [h["rewards/turns/mean"] for h in logged] == [0.0, 0.0]
    assert [h["rewards/safety/mean"] for h in logged] == [1.0, 1.0]


def test_each_set_of_services_gets_a_class_and_prompts_carry_only_their_tools() -> None:
    from coworkenv.task import load_task

    calendar = load_task(Path("tasks/examples/calendar-book-1on1.json"))
    factories = environment_factories([ticket_task(), calendar])
    assert list(factories) == ["calendar+directory", "tickets"]
    for name, env_class in factories.items():
        mcp = [t["function"]["name"] for t in tools_for_services(name.split("+"))]
        assert set(tool_names(env_class)) - {"finish_turn", "ask_user"} == set(mcp)
    rows = dataset_rows([ticket_task(), calendar])
    assert [(r["task_id"], r["environment"]) for r in rows] == [
        ("t-escalate", "tickets"),
        ("calendar-book-1on1", "calendar+directory"),
    ]


def test_without_the_sandbox_trl_refuses_to_start_and_unjudged_rollouts_get_no_reward(
    tmp_path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    from coworkenv.rollout import NotReady
    from coworkenv.task import load_task
    from coworkenv.verifiers import sandbox

    task = load_task(Path("tasks/examples/calendar-book-1on1.json"))
    monkeypatch.setenv(sandbox.SWITCH, "off")
    with pytest.raises(NotReady, match=r"^Python checks cannot run here"):
        environment_factories([task])
    with pytest.raises(NotReady, match=r"^Python checks cannot run here"):
        environment_class([task])
    monkeypatch.delenv(sandbox.SWITCH)
    env = environment_factories([task], records_dir=tmp_path)["calendar+directory"]()
    monkeypatch.setenv(sandbox.SWITCH, "off")  # the sandbox goes away after start-up
    env.reset(**dataset_rows([task])[0])
    assert (env.get_reward(), env._reward_components()) == (None, None)
    assert [fn(environments=[env]) for fn in component_rewards()] == [[None]] * 5
    [record] = read_records(tmp_path)
    assert (record.status, record.verdict) == ("error", None)
    env.reset(task_id="nope")
    assert env.get_reward() is None
    assert (
        env.calendar_get_event(event_id=1)
        == "no task 'nope' in this environment; its tasks: calendar-book-1on1"
    )


def test_a_clarification_turn_gets_an_ask_user_tool_that_answers_within_the_turn() -> None:
    from coworkenv.task import load_task

    task = load_task(Path("tasks/examples/clarification-which-ticket.json"))
    env_class = environment_class([task])
    assert "ask_user" in tool_names(env_class)
    assert "ask_user" not in tool_names(environment_class([ticket_task()]))
    env = env_class()
    env.reset(**dataset_rows([task])[0])
    clarification = next(t.clarification for t in task.turns if t.clarification)
    assert env.ask_user(question="Which one do you mean?") == f"The user answers: {clarification.answer}"
    env.ask_user(question="And anything else?")
    assert env.episode is not None and env.episode.record().agent_stats["needless_questions"] == 1
    assert get_json_schema(env.ask_user)["function"]["parameters"]["required"] == ["question"]
