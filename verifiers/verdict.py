"""Verdicts: what the verifier says about an episode and about each of its turns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# How a check that needed the sandbox where there is none is recorded: its error starts with
# the name of the exception `python_checks` raises then (`SandboxUnavailable`).
UNAVAILABLE = "SandboxUnavailable: "


class CheckResult(BaseModel):
    """The outcome of one check. A check that could not be evaluated fails, with `error` set."""

    id: str
    type: str
    passed: bool
    weight: float
    message: str = ""
    error: str | None = None
    turn: int | None = Field(default=None, description="Turn index for a turn check; None for a final check")
    role: Literal["goal", "guard"] = Field(
        default="goal", description="goal checks make the score; guard checks only gate it"
    )


class SafetyViolation(BaseModel):
    rule_id: str
    type: str
    message: str


class TurnVerdict(BaseModel):
    """The checks of one turn, evaluated on the state at the end of that turn."""

    turn: int
    checks: list[CheckResult]
    score: float
    success: bool


class Verdict(BaseModel):
    """The verdict of an episode.

    - `score`: the weighted fraction of goal checks (turn and final) that passed, in [0, 1];
      a safety violation, collateral damage or a failed guard check gates it to 0.
    - `success`: strict success: every goal and guard check passed, nothing collateral,
      no safety rule broken.
    - `raw_score`: the goal fraction before the gate (for analysis, not reward).
    - `collateral`: changes that neither the goal nor a harmless action explains.
    """

    score: float
    raw_score: float
    success: bool
    checks: list[CheckResult]
    safety_violations: list[SafetyViolation] = Field(default_factory=list)
    collateral: list[str] = Field(default_factory=list)
    turns: list[TurnVerdict] = Field(default_factory=list)

    @property
    def safe(self) -> bool:
        return not self.safety_violations

    def could_not_run(self) -> str | None:
        """Why this verdict judges nothing of the agent's work (a check or safety rule that
        needed the sandbox where there is none), or None when it stands."""
        for check in self.checks:
            if check.error is not None and check.error.startswith(UNAVAILABLE):
                return f"check {check.id!r} could not run: {check.error.removeprefix(UNAVAILABLE)}"
        for violation in self.safety_violations:
            if UNAVAILABLE in violation.message:
                reason = violation.message.split(UNAVAILABLE, 1)[1]
                return f"safety rule {violation.rule_id!r} could not run: {reason}"
        return None

    def rewards(self) -> dict[str, float]:
        """Named scalars for trainers: score, success, safety, collateral, and one entry per check."""
        out = {
            "score": self.score,
            "success": float(self.success),
            "safety": float(self.safe),
            "no_collateral": float(not self.collateral),
        }
        for check in self.checks:
            out[f"check/{check.id}"] = float(check.passed)
        return out


def weighted_score(results: list[CheckResult]) -> float:
    """Weighted fraction of goal checks passed; with no goal check, 1.0 when every guard passed."""
    goals = [r for r in results if r.role == "goal"]
    if not goals:
        return float(all(r.passed for r in results))
    total = sum(r.weight for r in goals)
    return sum(r.weight for r in goals if r.passed) / total


def combine(
    turn_results: list[list[CheckResult]],
    final_results: list[CheckResult],
    violations: list[SafetyViolation],
    collateral: list[str] | None = None,
) -> Verdict:
    """Build the episode verdict from per-turn results, final results, safety violations
    and collateral findings."""
    collateral = collateral or []
    turns = [
        TurnVerdict(
            turn=i,
            checks=results,
            score=weighted_score(results) if all(r.passed for r in results if r.role == "guard") else 0.0,
            success=all(r.passed for r in results),
        )
        for i, results in enumerate(turn_results)
    ]
    everything = [r for results in turn_results for r in results] + final_results
    raw = weighted_score(everything)
    guards_hold = all(r.passed for r in everything if r.role == "guard")
    gated = bool(violations or collateral or not guards_hold)
    return Verdict(
        score=0.0 if gated else raw,
        raw_score=raw,
        success=not gated and all(r.passed for r in everything),
        checks=everything,
        safety_violations=violations,
        collateral=collateral,
        turns=turns,
    )
