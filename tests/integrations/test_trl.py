"""TRL: the environment class and dataset drive real GRPO steps; tool methods carry the exact
schemas; multi-turn tasks play through `finish_turn`."""

import inspect
import json
import re

import pytest

pytest.importorskip("trl", reason="the TRL integration needs the [trl] extra (pip install 'coworkenv[trl]')")
torch = pytest.importorskip("torch", reason="the TRL integration needs the [trl] extra")

from transformers.utils import get_json_schema  # noqa: E402

from coworkenv.integrations.trl import OVER, build_dataset, dataset_rows, environment_class  # noqa: E402
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


def tiny_model_and_tokenizer(texts: list[str]):  # type: ignore[no-untyped-def]
    """A randomly initialised Qwen2-shaped model and a word-level tokenizer with the Qwen3
    chat template that TRL ships (so TRL knows how to parse its tool calls)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen3_chat_template

    special = [
        "<|endoftext|>",
        "<|im_start|>",
        "<|im_end|>",
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
    ]
    words = sorted({w for text in texts for w in re.findall(r"\w+|[^\w\s]+", text)} - set(special))
    vocab = {token: i for i, token in enumerate(["[UNK]", *special, *words])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token="[UNK]",
        pad_token="<|endoftext|>",
        eos_token="<|im_end|>",
        additional_special_tokens=special[1:],
        padding_side="left",
    )
    tokenizer.chat_template = qwen3_chat_template
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(vocab),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=16384,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    return Qwen2ForCausalLM(config), tokenizer


# TRL and transformers warn about their own deprecations and experimental features.
@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning", "ignore::DeprecationWarning")
def test_two_grpo_steps_on_cpu_score_every_rollout_from_its_verdict(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from trl import GRPOConfig, GRPOTrainer

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    tasks = [ticket_task()]
    env_class = environment_class(tasks, records_dir=tmp_path / "records")
    dataset = build_dataset(tasks, repeats=4)
    env = env_class()
    schemas = [get_json_schema(getattr(env, n)) for n in tool_names(env_class)]
    texts = [json.dumps(schemas), *(m["content"] for m in dataset[0]["prompt"])]
    model, tokenizer = tiny_model_and_tokenizer(texts)
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
        chat_template_kwargs={"enable_thinking": False},
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=dataset,
        environment_factory=env_class,
    )
    trainer.train()
    assert trainer.state.global_step == 2
    records = read_records(tmp_path / "records")
    assert len(records) == 4
    assert {(r.task_id, r.policy, r.status) for r in records} == {("t-escalate", "trl", "completed")}
    assert sorted(r.trial for r in records) == [0, 1, 2, 3]
    assert all(r.verdict is not None and r.score == 0.0 for r in records)
    logged = [h for h in trainer.state.log_history if "rewards/CoworkEnv/mean" in h]
    assert [h["rewards/CoworkEnv/mean"] for h in logged] == [0.0, 0.0]


def test_a_clarification_turn_gets_an_ask_user_tool_that_answers_within_the_turn() -> None:
    from pathlib import Path

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
