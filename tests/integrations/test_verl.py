"""verl: the coworkenv agent loop run by verl's own `AgentLoopWorker` on a batch that verl's
`RLHFDataset` read from a parquet file of `dataset_rows`, with a model path holding a tiny
tokenizer built here (Qwen3's chat template, tool calls read by verl's `hermes` parser).
Generation is the one part that is not verl's: a scripted server stands in for vLLM or
SGLang (verl's `LLMServerClient.generate`), writing what a model would."""

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

verl = pytest.importorskip("verl", reason="the verl agent loop needs the [verl] extra")

with warnings.catch_warnings():  # verl imports Ray's state API from where Ray deprecates it
    warnings.simplefilter("ignore", DeprecationWarning)
    import pandas as pd
    from hydra import compose, initialize_config_dir
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn
    from verl.workers.rollout.replica import TokenOutput

    from coworkenv.integrations.tool_text import ToolCall, render_tool_calls
    from coworkenv.integrations.verl import dataset_rows, write_agent_loop_config
from coworkenv.rollout import read_records  # noqa: E402
from coworkenv.task import Task, dump_task, parse_task  # noqa: E402
from tests.integrations.test_text_episode import LOOK, MOVE, TEMPLATES, TURN_2, URGENT  # noqa: E402
from tests.rollout.test_runner import ticket_task  # noqa: E402

# verl and the libraries under it warn about their own deprecations; what the loop did is checked.
pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::UserWarning", "ignore::FutureWarning"
)

HIGH = ToolCall("tickets_update_ticket", {"ticket_id": 1, "priority": "high"})
#: What the model writes, by task (known from its first user message) and reply number.
SCRIPTS = {
    "Find the login ticket and set its priority to urgent.": [
        "<think>\nTicket 1 is the login one.\n</think>\n\n" + render_tool_calls([URGENT]),
        "It is urgent now.",
        render_tool_calls([LOOK, MOVE]),
        "It was reopened: moved to Engineering.",
    ],
    "Make the login ticket urgent.": [
        '<tool_call>\n{"name": "tickets_update_ticket", "arguments": {"ticket_id": 1\n</tool_call>',
        render_tool_calls([HIGH]),
        "Done.",
    ],
}


def one_turn_task() -> Task:
    """A one-turn task the script gets wrong (high, not urgent)."""
    task = ticket_task().model_dump(mode="json", exclude={"content_hash"})
    task |= {"id": "t-urgent-once", "turns": [task["turns"][0] | {"user": "Make the login ticket urgent."}]}
    return parse_task(task)


class ScriptedServer:
    """Stands in for verl's `LLMServerClient`: answers `generate` with the tokens of the
    script's next reply for the trajectory (its task and how many replies it has), ended
    by the end-of-turn token as a model ends it. Keeps every prompt it was sent."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.prompts: list[str] = []

    async def generate(
        self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any], **kwargs: Any
    ) -> TokenOutput:
        prompt = self.tokenizer.decode(prompt_ids)
        self.prompts.append(prompt)
        assert prompt.endswith("<|im_start|>assistant\n")
        (script,) = [replies for user, replies in SCRIPTS.items() if f"<|im_start|>user\n{user}" in prompt]
        reply = script[prompt.count("<|im_start|>assistant") - 1]
        ids = [*self.tokenizer.encode(reply, add_special_tokens=False), self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), stop_reason="completed")


def tiny_model(folder: Path, corpus: list[str]) -> None:
    """A model folder without weights: a byte-level BPE tokenizer trained on the prompts and
    replies, Qwen3's chat template, and a Qwen2 config (verl reads the architecture)."""
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    bpe.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=2000, special_tokens=special, initial_alphabet=alphabet)
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )
    tokenizer.chat_template = (TEMPLATES / "qwen3.jinja").read_text()
    tokenizer.save_pretrained(folder)
    Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        architectures=["Qwen2ForCausalLM"],
    ).save_pretrained(folder)


def verl_config(model: Path, loops: Path, **rollout: Any) -> Any:
    """verl's own trainer config (ppo_trainer), pointed at the tiny model and the agent loops."""
    with initialize_config_dir(
        config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None
    ):
        config = compose(config_name="ppo_trainer")
    config.actor_rollout_ref.model.path = str(model)
    config.actor_rollout_ref.rollout.name = "vllm"
    config.actor_rollout_ref.rollout.prompt_length = 8192
    config.actor_rollout_ref.rollout.response_length = 2048
    config.actor_rollout_ref.rollout.agent.agent_loop_config_path = str(loops)
    for key, value in rollout.items():
        config.actor_rollout_ref.rollout.multi_turn[key] = value
    config.data.max_prompt_length = 8192
    return config


def rollout_batch(
    tmp_path: Path, tasks: list[Task], known: list[Task] | None = None, **rollout: Any
) -> tuple[DataProto, ScriptedServer]:
    """The tasks' rows through verl: parquet, RLHFDataset, collate, AgentLoopWorker (whose
    agent loops know the `known` tasks, by default the same)."""
    (tmp_path / "tasks").mkdir(exist_ok=True)
    for task in tasks if known is None else known:
        (tmp_path / "tasks" / f"{task.id}.json").write_text(dump_task(task))
    rows = dataset_rows(tasks)
    pd.DataFrame(rows).to_parquet(tmp_path / "train.parquet")
    corpus = [m["content"] for r in rows for m in r["prompt"]] + [s for v in SCRIPTS.values() for s in v]
    tiny_model(tmp_path / "model", [*corpus, json.dumps(ticket_task().model_dump(mode="json"))])
    loops = write_agent_loop_config(
        tmp_path / "loops.yaml", tasks=[tmp_path / "tasks"], records_dir=tmp_path / "records"
    )
    config = verl_config(tmp_path / "model", loops, **rollout)
    server = ScriptedServer(PreTrainedTokenizerFast.from_pretrained(tmp_path / "model"))
    worker = AgentLoopWorker(config, server)
    dataset = RLHFDataset([str(tmp_path / "train.parquet")], worker.tokenizer, config.data)
    batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
    return asyncio.run(worker.generate_sequences(batch)), server


def test_verl_plays_a_two_turn_and_a_one_turn_task_and_scores_each_verdict(tmp_path: Path) -> None:
    output, server = rollout_batch(tmp_path, [ticket_task(), one_turn_task()])
    assert output.batch["rm_scores"].sum(dim=-1).tolist() == [1.0, 0.0]
    assert output.non_tensor_batch["success"].tolist() == [1.0, 0.0]
    assert output.non_tensor_batch["score"].tolist() == [1.0, 0.0]
    assert output.meta_info["reward_extra_keys"] == ["score", "success", "raw_score", "safety", "collateral"]
    assert output.non_tensor_batch["turn_scores"].tolist() == [[1.0, 1.0], [0.0]]
    assert output.non_tensor_batch["__num_turns__"].tolist() == [10, 7]
    tokenizer = server.tokenizer
    # trained on: every reply and nothing else (tool results, the next user turn: masked)
    for i, replies in enumerate(SCRIPTS.values()):
        response, mask = output.batch["responses"][i], output.batch["response_mask"][i]
        generated = tokenizer.decode([t for t, m in zip(response.tolist(), mask.tolist(), strict=True) if m])
        assert generated == "<|im_end|>".join(replies) + "<|im_end|>"
    first = tokenizer.decode(output.batch["responses"][0][output.batch["attention_mask"][0][8192:].bool()])
    assert f"<|im_start|>user\n{TURN_2}<|im_end|>" in first and first.count("<tool_response>") == 3
    # the model saw only the tickets tools, as the chat template renders them
    assert server.prompts[0].count('{"type": "function", "function": {"name": "tickets_') == 8
    assert len(server.prompts) == 7  # one request per reply
    # verl's parser drops the unreadable call: the model is told, and nothing runs
    (told,) = [p for p in server.prompts if p.count("<|im_start|>assistant") == 2 and "ticket urgent." in p]
    assert "<tool_response>\nError: the tool call is not valid JSON (Expecting ',' delimiter" in told
    records = sorted(read_records(tmp_path / "records"), key=lambda r: r.task_id)
    assert [(r.task_id, r.policy, r.status, r.success) for r in records] == [
        ("t-escalate", "verl", "completed", True),
        ("t-urgent-once", "verl", "completed", False),
    ]
    assert [e.tool for e in records[0].tool_calls] == [
        "update_ticket",
        "customer_comment",
        "get_ticket",
        "update_ticket",
    ]
    assert records[0].messages[2]["tool_calls"][0]["function"]["name"] == "tickets_update_ticket"


def test_max_assistant_turns_ends_the_episode_judged_as_it_stands(tmp_path: Path) -> None:
    output, _ = rollout_batch(tmp_path, [ticket_task()], max_assistant_turns=2)
    assert output.batch["rm_scores"].sum(dim=-1).tolist() == [0.5]
    assert output.non_tensor_batch["turn_scores"].tolist() == [[1.0, 0.0]]


def test_a_row_whose_task_the_loop_does_not_know_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="no task 't-urgent-once' in this task set; its tasks: t-escalate"):
        rollout_batch(tmp_path, [ticket_task(), one_turn_task()], known=[ticket_task()])
