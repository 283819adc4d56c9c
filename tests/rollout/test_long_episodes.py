"""Long episodes fit: the reference run of a hard workday, tools block included, stays inside
a 32k-token context, and the report counts it."""

import anyio
import pytest

import coworkenv.synth.families  # noqa: F401  (registers the families)
from coworkenv.rollout import OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.agents.tokens import CONTEXT, episode_tokens, estimate_tokens
from coworkenv.synth.family import Difficulty, build_task
from coworkenv.worlds import world


@pytest.mark.parametrize("family_name", ["support_day", "meeting_day", "composed_day"])
@pytest.mark.parametrize("profile", [None, "telecom"])
def test_a_hard_workday_fits_in_32k_tokens(family_name: str, profile: str | None) -> None:
    task = build_task(family_name, 2, Difficulty.level(2), world=world(profile, 300) if profile else None)
    record = anyio.run(lambda: run_episode(task, OraclePolicy(), cache=SeedCache()))
    assert record.verdict is not None and record.verdict.success
    tokens = episode_tokens(record, estimate_tokens)
    assert len(task.turns) >= 6
    assert tokens["tool_results"] > 0 and tokens["tools"] > 0
    assert tokens["total"] <= CONTEXT, tokens
