"""Verifiers: checks over the final (and per-turn) state and the audit log, never the
agent's prose. Declarative checks, Python checks in a sandbox, safety rules, verdicts."""

from __future__ import annotations

from coworkenv.checks import Check, SafetyRule
from coworkenv.state import AuditEntry, Workspace
from coworkenv.state.tables import schema_fixed

from .ahead import IN_TURN, ahead_guards, turn_writes
from .clarified import ASKED_FIRST, asked_first
from .collateral import Guarding, collateral
from .evaluate import evaluate_checks
from .evidence import Evidence
from .footprint import Footprint, derive_footprint
from .safety import check_safety
from .static import check_problems
from .verdict import CheckResult, SafetyViolation, TurnVerdict, Verdict, combine
from .where import CheckSpecError

__all__ = [
    "ASKED_FIRST",
    "IN_TURN",
    "CheckResult",
    "CheckSpecError",
    "Evidence",
    "Footprint",
    "Guarding",
    "SafetyViolation",
    "TurnVerdict",
    "Verdict",
    "ahead_guards",
    "asked_first",
    "check_problems",
    "check_safety",
    "collateral",
    "combine",
    "derive_footprint",
    "evaluate_checks",
    "judge_episode",
    "judge_evidence",
    "judge_turn",
    "turn_writes",
]


async def judge_turn(
    checks: list[Check],
    initial: Workspace,
    current: Workspace,
    audit: list[AuditEntry],
    user_email: str,
    turn: int,
    *,
    evidence: Evidence | None = None,
) -> list[CheckResult]:
    """A turn's checks on the state at the end of that turn, with that turn's calls. Give
    `evidence` when you hold one of these states and calls (`Evidence.with_audit`): what it
    read of the states is not read again."""
    if evidence is None:
        evidence = Evidence(initial, current, audit, user_email)
    with schema_fixed(initial.conn, current.conn):  # judging runs no DDL
        return await evaluate_checks(checks, evidence, turn=turn)


async def judge_episode(
    final_checks: list[Check],
    safety: list[SafetyRule],
    initial: Workspace,
    final: Workspace,
    audit: list[AuditEntry],
    user_email: str,
    turn_results: list[list[CheckResult]],
    guarding: Guarding | None = None,
    lasting: list[Check] | None = None,
) -> Verdict:
    """The episode verdict from the initial and final workspaces (see `judge_evidence`)."""
    evidence = Evidence(initial, final, audit, user_email)
    return await judge_evidence(final_checks, safety, evidence, turn_results, guarding, lasting)


LASTING_SUFFIX = "@end"
"""Id suffix of an earlier turn's check re-asserted on the final state."""


async def judge_evidence(
    final_checks: list[Check],
    safety: list[SafetyRule],
    evidence: Evidence,
    turn_results: list[list[CheckResult]],
    guarding: Guarding | None = None,
    lasting: list[Check] | None = None,
) -> Verdict:
    """The episode verdict: final checks and safety rules over the whole episode, combined
    with the per-turn results already evaluated.

    With `guarding`, the default guards apply: the collateral guard (every change explained)
    and the default safety rules. `lasting` are earlier turns' checks whose outcome must still
    hold at the end (the reference run says which): each is re-evaluated on the final state
    as a guard, so undoing an earlier turn's work denies success."""
    with schema_fixed(evidence.initial.conn, evidence.final.conn):  # judging runs no DDL
        return await _judge_evidence(final_checks, safety, evidence, turn_results, guarding, lasting)


async def _judge_evidence(
    final_checks: list[Check],
    safety: list[SafetyRule],
    evidence: Evidence,
    turn_results: list[list[CheckResult]],
    guarding: Guarding | None,
    lasting: list[Check] | None,
) -> Verdict:
    final_results = await evaluate_checks(final_checks, evidence)
    for result in await evaluate_checks(lasting or [], evidence):
        final_results.append(
            result.model_copy(
                update={
                    "id": result.id + LASTING_SUFFIX,
                    "role": "guard",
                    "message": "still holds at the end: " + result.message,
                }
            )
        )
    violations = await check_safety(safety, evidence, guarding)
    found = collateral(evidence, guarding) if guarding is not None and guarding.guards.collateral else []
    return combine(turn_results, final_results, violations, found)
