"""RL exports: every rollout with its rewards (episode, per check, per turn) and, optionally,
group-normalized advantages (GRPO-style or GDPO-style) over the trials of each task."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.exports.export_sft import ExportError, openai_messages, write_jsonl

RL_FILE = "rl.jsonl"
SAFETY = "safety"


def to_rl_row(record: EpisodeRecord) -> dict[str, Any]:
    """One rollout with its rewards.

    - `reward`: the verdict score (0.0 without a verdict); safety-gated.
    - `reward_components`: 1.0/0.0 per check id, plus `safety` (1.0 when no rule was broken).
    - `turn_rewards`: the score of each turn's checks, in turn order; `turn_reward_components`:
      1.0/0.0 per check id of each turn. Safety violations and final checks belong to no turn,
      so they appear only in the episode-level fields.
    - `turn_changes` and `turn_events`: per turn, the kinds of change before it (announced,
      silent, changed mind, clarification, none) and the events applied before it.
    """
    verdict = record.verdict
    components: dict[str, float] = {}
    turn_rewards: list[float] = []
    turn_components: list[dict[str, float]] = []
    if verdict is not None:
        for check in verdict.checks:
            if check.id == SAFETY:
                raise ExportError(
                    f"{record.task_id}: a check named {SAFETY!r} collides with the safety component"
                )
            components[check.id] = float(check.passed)
        components[SAFETY] = float(verdict.safe)
        turn_rewards = [turn.score for turn in verdict.turns]
        turn_components = [{c.id: float(c.passed) for c in turn.checks} for turn in verdict.turns]
    return {
        "messages": openai_messages(record, arguments="string", empty_content=None),
        "tools": tools_for_services(record.services),
        "reward": record.score,
        "reward_components": components,
        "turn_rewards": turn_rewards,
        "turn_reward_components": turn_components,
        "success": record.success,
        "task_id": record.task_id,
        "trial": record.trial,
        "seed": record.seed,
        "policy": record.policy,
        "status": record.status,
        "turn_boundaries": list(record.turn_boundaries),
        "turn_changes": [list(kinds) for kinds in record.turn_changes],
        "turn_events": [list(events) for events in record.turn_events],
    }


def group_advantages(
    rows: list[dict[str, Any]],
    *,
    method: Literal["grpo", "gdpo"],
    level: Literal["episode", "turn"] = "episode",
    eps: float = 1e-6,
) -> list[dict[str, Any]]:
    """Copies of `rows` with `advantage` (episode level) or `turn_advantages` (turn level),
    normalized within each group of rows that share a task_id (the trials of a task).

    - grpo: (r - mean) / (std + eps) of the reward (population std);
    - gdpo: each reward component normalized that way separately, then summed (not
      renormalized). A component missing from a row counts as 0.0.
    At turn level the same is done per turn index, over the rows that reached that turn,
    with `turn_rewards` (grpo) or `turn_reward_components` (gdpo). A group of one, or a group
    whose values are all equal, gets 0."""
    if method not in ("grpo", "gdpo"):
        raise ValueError(f"unknown advantage method {method!r}; use 'grpo' or 'gdpo'")
    if level not in ("episode", "turn"):
        raise ValueError(f"unknown advantage level {level!r}; use 'episode' or 'turn'")
    out = [dict(row) for row in rows]
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in out:
        groups.setdefault(row["task_id"], []).append(row)
    for group in groups.values():
        if level == "episode":
            if method == "grpo":
                values = _normalize([float(r["reward"]) for r in group], eps)
            else:
                values = _sum_normalized([r["reward_components"] for r in group], eps)
            for row, value in zip(group, values, strict=True):
                row["advantage"] = value
            continue
        for row in group:
            row["turn_advantages"] = [0.0] * len(row["turn_rewards"])
        for t in range(max((len(r["turn_rewards"]) for r in group), default=0)):
            reached = [r for r in group if len(r["turn_rewards"]) > t]
            if method == "grpo":
                values = _normalize([float(r["turn_rewards"][t]) for r in reached], eps)
            else:
                values = _sum_normalized([r["turn_reward_components"][t] for r in reached], eps)
            for row, value in zip(reached, values, strict=True):
                row["turn_advantages"][t] = value
    return out


def export_rl(
    records: Iterable[EpisodeRecord],
    out_dir: str | Path,
    *,
    advantages: Literal["none", "grpo", "gdpo"] = "none",
    level: Literal["episode", "turn"] = "episode",
) -> dict[str, Any]:
    """Write every rollout except infrastructure errors (status "error") to `<out_dir>/rl.jsonl`,
    with advantages when asked; return what was written and left out.

    Rows are built before anything is written and the file is replaced whole."""
    if advantages not in ("none", "grpo", "gdpo"):
        raise ValueError(f"unknown advantages {advantages!r}; use 'none', 'grpo' or 'gdpo'")
    records = list(records)
    kept = [r for r in records if r.status != "error"]
    errors = [
        {"task_id": r.task_id, "policy": r.policy, "trial": r.trial, "error": r.error}
        for r in records
        if r.status == "error"
    ]
    rows = [to_rl_row(r) for r in kept]
    if advantages != "none":
        rows = group_advantages(rows, method=advantages, level=level)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / RL_FILE, rows)
    skipped = Counter("status error" for _ in errors)
    return {
        "path": str(out / RL_FILE),
        "records": len(records),
        "rows": len(rows),
        "groups": len({row["task_id"] for row in rows}),
        "advantages": advantages,
        "level": level if advantages != "none" else None,
        "skipped": dict(skipped),
        "errors": errors,
    }


def _normalize(values: list[float], eps: float) -> list[float]:
    """(v - mean) / (std + eps) with the population std; all zeros when the values do not vary."""
    if len(values) < 2 or all(v == values[0] for v in values):
        return [0.0] * len(values)
    mean = math.fsum(values) / len(values)
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    return [(v - mean) / (std + eps) for v in values]


def _sum_normalized(components: list[dict[str, float]], eps: float) -> list[float]:
    """Each named component normalized within the group on its own, then summed per row."""
    totals = [0.0] * len(components)
    for name in sorted({name for c in components for name in c}):
        normalized = _normalize([float(c.get(name, 0.0)) for c in components], eps)
        for i, value in enumerate(normalized):
            totals[i] += value
    return totals
