"""RL exports: rollouts with episode, per-check and per-turn rewards, and group advantages
(GRPO-style and GDPO-style) checked against hand-computed numbers."""

import json
import math
from typing import Any

import pytest

from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.rollout.exports.export_rl import export_rl, group_advantages, to_rl_row
from coworkenv.rollout.exports.export_sft import ExportError
from coworkenv.verifiers import Verdict
from coworkenv.verifiers.verdict import CheckResult
from tests.rollout.test_export_sft import BOUNDARIES, TRANSCRIPT, episode, read_jsonl, verdict

EPS = 1e-6


def test_rl_row_carries_the_transcript_and_every_reward(tmp_path):
    event = {
        "service": "tickets",
        "operation": "add_comment",
        "params": {"ticket_id": 1, "body": "?"},
        "announced": False,
    }
    record = episode(trial=2, policy="openai:m", status="truncated", result=verdict(moved=False)).model_copy(
        update={"turn_changes": [["none"], ["silent"]], "turn_events": [[], [event]]}
    )
    summary = export_rl([record], tmp_path)
    [row] = read_jsonl(tmp_path / "rl.jsonl")
    assert row == {
        "messages": TRANSCRIPT,
        "tools": tools_for_services(["tickets"]),
        "reward": 0.75,
        "reward_components": {"urgent": 1.0, "moved": 0.0, "bounded": 1.0, "optional": 1.0, "safety": 1.0},
        "turn_rewards": [1.0, 0.0],
        "turn_reward_components": [{"urgent": 1.0}, {"moved": 0.0}],
        "success": False,
        "task_id": "t-escalate",
        "trial": 2,
        "seed": 0,
        "policy": "openai:m",
        "status": "truncated",
        "turn_boundaries": BOUNDARIES,
        "turn_changes": [["none"], ["silent"]],
        "turn_events": [[], [event]],
    }
    assert summary == {
        "path": str(tmp_path / "rl.jsonl"),
        "records": 1,
        "rows": 1,
        "groups": 1,
        "advantages": "none",
        "level": None,
        "skipped": {},
        "errors": [],
    }


def test_a_safety_violation_zeroes_the_reward_and_the_safety_component():
    row = to_rl_row(episode(result=verdict(unsafe=True)))
    assert row["reward"] == 0.0
    assert row["success"] is False
    assert row["reward_components"] == {
        "urgent": 1.0,
        "moved": 1.0,
        "bounded": 1.0,
        "optional": 1.0,
        "safety": 0.0,
    }
    assert row["turn_rewards"] == [1.0, 1.0]


def test_a_record_without_verdict_has_zero_reward_and_no_components():
    row = to_rl_row(episode(no_verdict=True))
    assert (row["reward"], row["reward_components"], row["turn_rewards"], row["success"]) == (
        0.0,
        {},
        [],
        False,
    )
    assert row["turn_reward_components"] == []


def test_a_check_named_safety_is_refused_rather_than_overwritten():
    clash = Verdict(
        score=1.0,
        raw_score=1.0,
        success=True,
        checks=[CheckResult(id="safety", type="field_equals", passed=True, weight=1.0)],
    )
    with pytest.raises(ExportError, match="a check named 'safety' collides"):
        to_rl_row(episode(result=clash))


def test_error_records_are_left_out_and_reported(tmp_path):
    records = [
        episode(trial=0),
        episode(trial=1, status="error"),
        episode(trial=2, result=verdict(urgent=False)),
    ]
    summary = export_rl(records, tmp_path, advantages="grpo")
    rows = read_jsonl(tmp_path / "rl.jsonl")
    assert [(r["trial"], r["status"]) for r in rows] == [(0, "completed"), (2, "completed")]
    assert summary["rows"] == 2
    assert summary["records"] == 3
    assert summary["skipped"] == {"status error": 1}
    assert summary["errors"] == [
        {
            "task_id": "t-escalate",
            "policy": "oracle",
            "trial": 1,
            "error": "EndpointError: the model endpoint failed 5 times",
        }
    ]
    # the error row takes no part in the group: rewards 1.0 and 0.75 only
    assert [r["advantage"] for r in rows] == pytest.approx([0.125 / (0.125 + EPS), -0.125 / (0.125 + EPS)])


# --- advantages --------------------------------------------------------------------------


def row(
    task_id: str, reward: float, components: dict[str, float] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"task_id": task_id, "reward": reward, "reward_components": components or {}, **extra}


def test_grpo_normalizes_the_reward_within_each_task():
    rows = [row("a", 1.0), row("a", 0.0), row("b", 0.3), row("a", 0.5), row("a", 0.5)]
    out = group_advantages(rows, method="grpo")
    std = math.sqrt(0.125)  # population std of [1, 0, .5, .5] around .5
    assert [r["advantage"] for r in out] == pytest.approx(
        [0.5 / (std + EPS), -0.5 / (std + EPS), 0.0, 0.0, 0.0], abs=1e-12
    )
    assert out[0]["advantage"] == pytest.approx(1.414209, abs=1e-6)
    assert out[2]["advantage"] == 0.0  # a group of one
    assert "advantage" not in rows[0]  # the input rows are not touched


def test_grpo_gives_zero_to_a_group_whose_rewards_do_not_vary():
    out = group_advantages([row("a", 1 / 3), row("a", 1 / 3), row("a", 1 / 3)], method="grpo")
    assert [r["advantage"] for r in out] == [0.0, 0.0, 0.0]


def test_gdpo_normalizes_each_component_separately_then_sums():
    rows = [
        row("a", 1.0, {"x": 1.0, "y": 1.0, "safety": 1.0}),
        row("a", 0.0, {"x": 0.0, "y": 0.0, "safety": 1.0}),
        row("a", 0.5, {"x": 1.0, "y": 0.0, "safety": 1.0}),
        row("a", 0.0, {"x": 0.0, "y": 1.0, "safety": 0.0}),
        row("b", 1.0, {"x": 1.0, "y": 1.0, "safety": 1.0}),
    ]
    out = group_advantages(rows, method="gdpo")
    # x = [1, 0, 1, 0] and y = [1, 0, 0, 1]: mean .5, std .5; safety = [1, 1, 1, 0]: mean .75, std sqrt(.1875)
    xy = 0.5 / (0.5 + EPS)
    safety_std = math.sqrt(0.1875)
    kept, broke = 0.25 / (safety_std + EPS), -0.75 / (safety_std + EPS)
    assert [r["advantage"] for r in out] == pytest.approx(
        [xy + xy + kept, -xy - xy + kept, xy - xy + kept, -xy + xy + broke, 0.0], abs=1e-12
    )
    grpo = group_advantages(rows, method="grpo")
    assert out[2]["advantage"] != pytest.approx(grpo[2]["advantage"])  # not the same as GRPO


def test_gdpo_counts_a_missing_component_as_zero():
    out = group_advantages([row("a", 1.0, {"x": 1.0}), row("a", 0.0, {})], method="gdpo")
    assert [r["advantage"] for r in out] == pytest.approx([0.5 / (0.5 + EPS), -0.5 / (0.5 + EPS)], abs=1e-12)


def turn_row(
    task_id: str, turn_rewards: list[float], turn_components: list[dict[str, float]]
) -> dict[str, Any]:
    return row(task_id, 0.0, turn_rewards=turn_rewards, turn_reward_components=turn_components)


def test_grpo_at_turn_level_normalizes_each_turn_index_over_the_rows_that_reached_it():
    rows = [
        turn_row("a", [1.0, 0.5], [{}, {}]),
        turn_row("a", [0.0, 0.5], [{}, {}]),
        turn_row("a", [0.5], [{}]),
        turn_row("b", [1.0, 0.0], [{}, {}]),
    ]
    out = group_advantages(rows, method="grpo", level="turn")
    std = math.sqrt(1 / 6)  # turn 0: [1, 0, .5] around .5
    assert out[0]["turn_advantages"] == pytest.approx([0.5 / (std + EPS), 0.0], abs=1e-12)
    assert out[1]["turn_advantages"] == pytest.approx([-0.5 / (std + EPS), 0.0], abs=1e-12)
    assert out[2]["turn_advantages"] == [0.0]
    assert out[3]["turn_advantages"] == [0.0, 0.0]  # a group of one
    assert "advantage" not in out[0]


def test_gdpo_at_turn_level_sums_each_turns_normalized_checks():
    rows = [
        turn_row("a", [1.0, 0.5], [{"found": 1.0}, {"moved": 1.0, "told": 0.0}]),
        turn_row("a", [0.0, 0.5], [{"found": 0.0}, {"moved": 0.0, "told": 1.0}]),
        turn_row("a", [1.0, 1.0], [{"found": 1.0}, {"moved": 1.0, "told": 1.0}]),
    ]
    out = group_advantages(rows, method="gdpo", level="turn")
    # turn 0: found = [1, 0, 1]: mean 2/3, std sqrt(2)/3
    s = math.sqrt(2) / 3
    up, down = (1 / 3) / (s + EPS), (-2 / 3) / (s + EPS)
    # turn 1: moved = [1, 0, 1] and told = [0, 1, 1] have the same spread
    assert out[0]["turn_advantages"] == pytest.approx([up, up + down], abs=1e-9)
    assert out[1]["turn_advantages"] == pytest.approx([down, down + up], abs=1e-9)
    assert out[2]["turn_advantages"] == pytest.approx([up, up + up], abs=1e-9)
    grpo = group_advantages(rows, method="grpo", level="turn")
    # turn 1 rewards [.5, .5, 1]: mean 2/3, std sqrt(1/18)
    assert grpo[0]["turn_advantages"][1] == pytest.approx((-1 / 6) / (math.sqrt(1 / 18) + EPS), abs=1e-12)


def test_unknown_methods_and_levels_are_refused():
    with pytest.raises(ValueError, match="unknown advantage method 'ppo'"):
        group_advantages([row("a", 1.0)], method="ppo")
    with pytest.raises(ValueError, match="unknown advantage level 'token'"):
        group_advantages([row("a", 1.0)], method="grpo", level="token")


def test_export_writes_turn_advantages_from_the_records(tmp_path):
    records = [
        episode(trial=0),
        episode(trial=1, result=verdict(moved=False)),
        episode("t-other", trial=0, result=verdict(urgent=False)),
    ]
    summary = export_rl(records, tmp_path, advantages="gdpo", level="turn")
    rows = read_jsonl(tmp_path / "rl.jsonl")
    assert (summary["groups"], summary["advantages"], summary["level"]) == (2, "gdpo", "turn")
    one = 0.5 / (0.5 + EPS)  # moved = [1, 0] within t-escalate; urgent does not vary
    assert rows[0]["turn_advantages"] == pytest.approx([0.0, one], abs=1e-12)
    assert rows[1]["turn_advantages"] == pytest.approx([0.0, -one], abs=1e-12)
    assert rows[2]["turn_advantages"] == [0.0, 0.0]
    assert all("advantage" not in r for r in rows)
    assert json.loads((tmp_path / "rl.jsonl").read_text().splitlines()[0])["turn_rewards"] == [1.0, 1.0]
