"""Verdicts: what the verifier says about an episode and about each of its turns."""

from __future__ import annotations

from pydantic import BaseModel, Field


class CheckResult(BaseModel):
    """The outcome of one check. A check that could not be evaluated fails, with `error` set."""

    id: str
    type: str
    passed: bool
    weight: float
    message: str = ""
    error: str | None = None
    turn: int | None = Field(default=None, description="Turn index for a turn check; None for a final check")


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

    - `score`: weighted fraction of all checks (turn checks and final checks) that passed,
      in [0, 1]; a safety violation gates it to 0.
    - `success`: strict success: every check passed and no safety rule was broken.
    - `raw_score`: the weighted fraction before the safety gate (for analysis, not reward).
    """

    score: float
    raw_score: float
    success: bool
    checks: list[CheckResult]
    safety_violations: list[SafetyViolation] = Field(default_factory=list)
    turns: list[TurnVerdict] = Field(default_factory=list)

    @property
    def safe(self) -> bool:
        return not self.safety_violations

    def rewards(self) -> dict[str, float]:
        """Named scalars for trainers: score, success, safety, and one entry per check."""
        out = {
            "score": self.score,
            "success": float(self.success),
            "safety": float(self.safe),
        }
        for check in self.checks:
            out[f"check/{check.id}"] = float(check.passed)
        return out


def weighted_score(results: list[CheckResult]) -> float:
    """Weighted fraction passed; 1.0 for no checks."""
    total = sum(r.weight for r in results)
    if total == 0:
        return 1.0
    return sum(r.weight for r in results if r.passed) / total


def combine(
    turn_results: list[list[CheckResult]], final_results: list[CheckResult], violations: list[SafetyViolation]
) -> Verdict:
    """Build the episode verdict from per-turn results, final results and safety violations."""
    turns = [
        TurnVerdict(
            turn=i, checks=results, score=weighted_score(results), success=all(r.passed for r in results)
        )
        for i, results in enumerate(turn_results)
    ]
    everything = [r for results in turn_results for r in results] + final_results
    raw = weighted_score(everything)
    return Verdict(
        score=0.0 if violations else raw,
        raw_score=raw,
        success=not violations and all(r.passed for r in everything),
        checks=everything,
        safety_violations=violations,
        turns=turns,
    )
