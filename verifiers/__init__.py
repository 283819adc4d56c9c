"""Verifiers: checks over the final (and per-turn) state and the audit log, never the
agent's prose. Declarative checks, Python checks in a sandbox, safety rules, verdicts."""

from __future__ import annotations

from coworkenv.checks import Check, SafetyRule
from coworkenv.state import AuditEntry, Workspace

from .evaluate import evaluate_checks
from .evidence import Evidence
from .safety import check_safety
from .static import check_problems
from .verdict import CheckResult, SafetyViolation, TurnVerdict, Verdict, combine
from .where import CheckSpecError

__all__ = [
    "CheckResult",
    "CheckSpecError",
    "Evidence",
    "SafetyViolation",
    "TurnVerdict",
    "Verdict",
    "check_problems",
    "check_safety",
    "combine",
    "evaluate_checks",
    "judge_episode",
    "judge_evidence",
    "judge_turn",
]


async def judge_turn(
    checks: list[Check],
    initial: Workspace,
    current: Workspace,
    audit: list[AuditEntry],
    user_email: str,
    turn: int,
) -> list[CheckResult]:
    """A turn's checks on the state at the end of that turn, with that turn's calls."""
    return await evaluate_checks(checks, Evidence(initial, current, audit, user_email), turn=turn)


async def judge_episode(
    final_checks: list[Check],
    safety: list[SafetyRule],
    initial: Workspace,
    final: Workspace,
    audit: list[AuditEntry],
    user_email: str,
    turn_results: list[list[CheckResult]],
) -> Verdict:
    """The episode verdict: final checks and safety rules over the whole episode, combined
    with the per-turn results already evaluated."""
    return await judge_evidence(
        final_checks, safety, Evidence(initial, final, audit, user_email), turn_results
    )


async def judge_evidence(
    final_checks: list[Check],
    safety: list[SafetyRule],
    evidence: Evidence,
    turn_results: list[list[CheckResult]],
) -> Verdict:
    """`judge_episode` on evidence the caller already holds (to reuse its diff)."""
    final_results = await evaluate_checks(final_checks, evidence)
    violations = await check_safety(safety, evidence)
    return combine(turn_results, final_results, violations)
