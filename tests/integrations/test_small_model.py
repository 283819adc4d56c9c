"""The real small model in the loop (docs/small-model.md): SmolLM2-135M-Instruct from its wheel,
two SFT steps on real SFT rows, served over HTTP, one episode through `coworkenv rollout
--agent openai`. What is asserted is the plumbing (the model's tool calls were parsed and
reached the workspace), not success."""

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

for module in ("torch", "transformers", "trl", "datasets", "gguf"):
    pytest.importorskip(
        module, reason="the small-model test needs the [small-model] extra: run `make small-model`"
    )

from click.testing import CliRunner  # noqa: E402

from coworkenv.cli import cli  # noqa: E402
from coworkenv.rollout import OraclePolicy, read_records, run_episode  # noqa: E402
from coworkenv.rollout.agents.model_server import ChatModel, ModelServer  # noqa: E402
from coworkenv.rollout.exports.export_sft import to_trl_row  # noqa: E402
from coworkenv.small_model import GGUF_FILE, SmallModelError, gguf_path, load_base, load_saved  # noqa: E402
from coworkenv.small_model_train import TrainSettings, held_out_loss, render, train  # noqa: E402
from coworkenv.task import load_task  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "tasks" / "examples"
TASK = EXAMPLES / "tickets-route-unassigned.json"


def _wheel_installed() -> bool:
    try:
        gguf_path()
    except SmallModelError:
        return False
    return True


pytestmark = [
    pytest.mark.slow,
    pytest.mark.xfail(
        reason="after two SFT steps on two rows the model copies the prompt's tool-call format "
        "example instead of calling a tool, so no call parses (docs/small-model.md)",
        strict=False,
    ),
    pytest.mark.skipif(
        not _wheel_installed(), reason="the model wheel is not installed: run `make small-model`"
    ),
]


async def _sft_rows() -> list[dict[str, Any]]:
    """Real rows: oracle demonstrations of example tasks, exported as `export sft` writes them."""
    rows = []
    for name in ("tickets-route-unassigned.json", "directory-manager-lookup.json"):
        record = await run_episode(load_task(EXAMPLES / name), OraclePolicy())
        assert record.verdict is not None and record.verdict.success
        rows.append(to_trl_row(record, tools="compact"))
    return rows


def test_the_wheels_model_trains_serves_and_acts_through_rollout(tmp_path: Path) -> None:
    assert gguf_path().name == GGUF_FILE
    rows = anyio.run(_sft_rows)  # the rollout CLI below runs its own event loop
    model, tokenizer = load_base()
    assert type(model).__name__ == "LlamaForCausalLM"
    assert model.config.max_position_embeddings == 8192

    rendered = render(tokenizer, rows, 2048)
    assert rendered.dropped == 0
    first = tokenizer.decode(rendered.rows[0]["input_ids"])
    assert first.startswith("<|im_start|>system\n")
    assert "<tool_call>\n{" in first
    # the loss is on the assistant's tokens only: the first masked token opens a tool call
    masked = [
        t
        for t, m in zip(rendered.rows[0]["input_ids"], rendered.rows[0]["assistant_masks"], strict=True)
        if m
    ]
    assert tokenizer.decode(masked).lstrip().startswith("<tool_call>")

    before = held_out_loss(model, tokenizer, rows, 2048)
    log = train(
        rows,
        tmp_path / "model",
        TrainSettings(steps=2, max_length=2048, learning_rate=5e-4),
        model=model,
        tokenizer=tokenizer,
    )
    assert log["steps"] == 2
    assert len(log["losses"]) == 2
    tuned, tuned_tokenizer = load_saved(tmp_path / "model")
    after = held_out_loss(tuned, tuned_tokenizer, rows, 2048)
    assert after < before  # two steps on these very rows

    os.environ.setdefault("COWORKENV_LOCAL_KEY", "local")
    with ModelServer(ChatModel(tuned, tuned_tokenizer), name="smollm2-test") as server:
        result = CliRunner().invoke(
            cli,
            [
                "rollout",
                str(TASK),
                "--agent",
                "openai",
                "--endpoint",
                f"agent=smollm2-test@{server.base_url},key_env=COWORKENV_LOCAL_KEY",
                "--tools",
                "compact",
                "--max-steps",
                "3",
                "--max-tokens",
                "96",
                "--max-result-chars",
                "1500",
                "--out",
                str(tmp_path / "rollout"),
            ],
        )
        requests = server.requests
    assert result.exit_code == 0, result.output
    (record,) = read_records(tmp_path / "rollout")
    assert record.status in ("completed", "truncated")
    assert requests >= 1
    calls = [
        call["function"]
        for message in record.messages
        if message["role"] == "assistant"
        for call in message.get("tool_calls") or []
    ]
    assert calls, "the model wrote no tool call the server could parse"
    agent_entries = [e for e in record.tool_calls if e.actor == "agent"]
    assert agent_entries, "no parsed tool call reached the workspace"
    # each audited call is one the model wrote, with the arguments it wrote
    written = [(c["name"], json.loads(c["arguments"])) for c in calls if _is_object(c["arguments"])]
    for entry in agent_entries:
        assert (f"{entry.service}_{entry.tool}", entry.arguments) in written


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False
