"""What a trainer takes as rewards from an episode: the score, and components named the same
for every task.

A task's checks have ids of its own (`urgent`, `routed`), so a trainer that keeps one reward
column per name across a batch of tasks (TRL's reward functions, a verifiers metric averaged
by `vf-eval`) cannot use them. The components group the checks by what they judge instead;
every task has each of them, and each is in [0, 1], higher being better, so multi-reward
training (GDPO: each component normalised within its group of rollouts, then summed) can
take them as they are:

- `goals`: the weighted fraction of goal checks passed (the score before its gate);
- `guards`: the fraction of guard checks that held (1.0 for a task without any);
- `turns`: the fraction of turns whose checks all passed;
- `safety`: 1.0 when no safety rule was broken;
- `no_collateral`: 1.0 when nothing changed that the goal does not explain.

An episode that broke (status `error`: an endpoint that failed, checks that could not run)
has no reward and no components: None, for the trainer to mask out.
"""

from __future__ import annotations

from coworkenv.verifiers import Verdict

__all__ = ["COMPONENTS", "reward_components", "reward_score"]

COMPONENTS = ("goals", "guards", "turns", "safety", "no_collateral")


def reward_score(verdict: Verdict | None) -> float | None:
    """The verdict's score; None without a verdict (an episode that broke)."""
    return None if verdict is None else float(verdict.score)


def reward_components(verdict: Verdict | None) -> dict[str, float] | None:
    """The components above, in that order; None without a verdict."""
    if verdict is None:
        return None
    guards = [check.passed for check in verdict.checks if check.role == "guard"]
    return {
        "goals": float(verdict.raw_score),
        "guards": sum(guards) / len(guards) if guards else 1.0,
        "turns": sum(turn.success for turn in verdict.turns) / len(verdict.turns) if verdict.turns else 1.0,
        "safety": float(verdict.safe),
        "no_collateral": float(not verdict.collateral),
    }
