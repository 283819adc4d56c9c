"""Tokens per episode: each part of the transcript counted, the tools block of the episode's
services, the episodes over a 32k context, and the report's table."""

import json

from rich.console import Console

from coworkenv.rollout.agents.tokens import ESTIMATE, episode_tokens, estimate_tokens, token_stats
from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.exports.report import build_report, print_report


def episode(policy: str = "oracle", results: str = "x" * 40, trial: int = 0) -> EpisodeRecord:
    return EpisodeRecord(
        task_id="t",
        task_hash="h",
        policy=policy,
        trial=trial,
        seed=0,
        status="completed",
        messages=[
            {"role": "system", "content": "s" * 8},
            {"role": "user", "content": "u" * 12},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "ab", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c", "content": results},
            {"role": "assistant", "content": "done"},
        ],
        initial_hash="i",
        services=["mail"],
    )


def test_every_part_is_counted_with_the_given_counter() -> None:
    tools = len(json.dumps(tools_for_services(["mail"]), separators=(",", ":")))
    assert episode_tokens(episode(), len) == {
        "system": 8,
        "tools": tools,
        "user": 12,
        "assistant": len("ab{}") + len("done"),
        "tool_results": 40,
        "total": 8 + tools + 12 + 8 + 40,
    }


def test_the_estimate_rounds_up_at_four_characters() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5)] == [0, 1, 1, 2]


def test_stats_give_medians_maxima_and_episodes_over_the_context() -> None:
    small, large = episode(), episode(results="y" * 200_000, trial=1)
    stats = token_stats([small, large, episode(trial=2)])
    assert stats is not None and stats.over_context == 1
    assert stats.max["tool_results"] == episode_tokens(large)["tool_results"]
    assert stats.median["total"] == episode_tokens(small)["total"]
    assert token_stats([]) is None


def test_the_report_prints_tokens_per_policy() -> None:
    console = Console(width=140, record=True)
    report = build_report([episode(), episode("student")])
    print_report(report, console, tasks=False)
    text = console.export_text()
    total = episode_tokens(episode())["total"]
    assert report.policies["oracle"].tokens is not None
    if report.policies["oracle"].tokens.method == ESTIMATE:
        assert f"Tokens per episode ({ESTIMATE})" in text
    line = next(
        line for line in text.splitlines() if line.lstrip("│ ").startswith("student") and str(total) in line
    )
    assert line.split("│")[2].strip() == str(total)
