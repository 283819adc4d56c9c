"""`export`: training data (SFT and RL rows) from rollout folders."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .options import (
    dirs_argument,
    max_result_chars_option,
    out_option,
    read_records,
    token_counter_for,
    tokenizer_option,
    tools_option,
)


@click.group()
def export() -> None:
    """Training data from rollout folders: SFT demonstrations and RL rollouts with rewards."""


@export.command("sft")
@dirs_argument
@click.option(
    "--min-score",
    type=click.FloatRange(0, 1),
    default=1.0,
    show_default=True,
    help="Leave out runs scoring below this.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["trl", "sharegpt"]),
    default="trl",
    show_default=True,
    help="trl: OpenAI-style messages and tools (TRL, prime-rl); sharegpt: LLaMA-Factory.",
)
@click.option("--policy", "policies", multiple=True, help="Only these policies (e.g. the teacher).")
@tools_option
@max_result_chars_option
@tokenizer_option
@out_option("Folder for sft.jsonl (and dataset_info.json for sharegpt).")
def export_sft_command(
    dirs: tuple[Path, ...],
    min_score: float,
    fmt: str,
    policies: tuple[str, ...],
    tool_format: str,
    max_result_chars: int | None,
    tokenizer: str | None,
    out_dir: Path,
) -> None:
    """Successful runs as SFT rows: TRL/prime-rl `messages` + `tools`, or LLaMA-Factory sharegpt
    with a dataset_info.json entry. Runs below --min-score, unsuccessful or unsafe runs are left
    out. --tools compact and --max-result-chars size rows for a small model, as the rollout
    agent's options of the same names do."""
    from coworkenv.rollout.exports.export_sft import export_sft

    records = read_records(dirs)
    count = token_counter_for(tokenizer)[0] if tokenizer else None
    summary = export_sft(
        records,
        out_dir,
        format=fmt,  # type: ignore[arg-type]
        min_score=min_score,
        policies=list(policies) or None,
        count_tokens=count,
        tools=tool_format,  # type: ignore[arg-type]
        max_result_chars=max_result_chars,
    )
    click.echo(json.dumps(summary, indent=2, default=str))


@export.command("rl")
@dirs_argument
@click.option(
    "--advantages",
    type=click.Choice(["none", "grpo", "gdpo"]),
    default="none",
    show_default=True,
    help="Group-relative advantages over the trials of each task.",
)
@click.option(
    "--level",
    type=click.Choice(["episode", "turn"]),
    default="episode",
    show_default=True,
    help="One row per episode, or one per turn with that turn's reward.",
)
@out_option("Folder for rl.jsonl.")
def export_rl_command(dirs: tuple[Path, ...], advantages: str, level: str, out_dir: Path) -> None:
    """Episodes as RL rows: messages, tools, reward, one reward component per check, per-turn
    rewards, and optionally GRPO- or GDPO-style advantages."""
    from coworkenv.rollout.exports.export_rl import export_rl

    records = read_records(dirs)
    summary = export_rl(records, out_dir, advantages=advantages, level=level)  # type: ignore[arg-type]
    click.echo(json.dumps(summary, indent=2, default=str))
