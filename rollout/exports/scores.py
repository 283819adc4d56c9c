"""Scores over episode records: pass@k, pass^k, success rates, safety, robustness, breakdowns.

Records are grouped by policy, then by task; `trial` tells attempts apart. A record with
status "error" is an infrastructure failure, not a task failure: it is left out of every
score and counted in `errors`. A "truncated" record is an attempt like any other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, Field

from coworkenv.rollout.agents.tokens import TokenCounter, TokenStats, token_stats
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.turn_changes import KINDS as CHANGE_KINDS
from coworkenv.servers.faults import INJECTED_PREFIX
from coworkenv.state import AuditEntry

SCORE_BINS = 10
SINGLE_TURN = "single-turn"
MULTI_TURN = "multi-turn"


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): the probability that at least one of k attempts,
    drawn without replacement from n attempts of which c succeeded, is a success.

    1 - C(n-c, k) / C(n, k), computed as a product so that large n does not overflow.
    """
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    all_fail = 1.0
    for i in range(n - c + 1, n + 1):
        all_fail *= 1.0 - k / i
    return 1.0 - all_fail


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (tau-bench): the probability that k attempts, drawn without replacement from n
    attempts of which c succeeded, all succeed: C(c, k) / C(n, k), computed as a product."""
    _check_counts(n, c, k)
    if c < k:
        return 0.0
    all_pass = 1.0
    for i in range(k):
        all_pass *= (c - i) / (n - i)
    return all_pass


class PassK(BaseModel):
    """pass@k and pass^k for one k, averaged over the `tasks` that have at least k attempts."""

    k: int
    tasks: int
    pass_at_k: float
    pass_hat_k: float


class BreakdownRow(BaseModel):
    """Episodes in one group (a capability, a service, single/multi-turn, a turn index)."""

    key: str
    episodes: int
    average_score: float
    success_rate: float


class PolicySummary(BaseModel):
    """Every score of one policy. Rates are None when there is nothing to take them over."""

    policy: str
    episodes: int = Field(description="Scored episodes (status completed or truncated)")
    errors: int = Field(description="Episodes with status error, left out of every score")
    tasks: int
    average_score: float | None
    success_rate: float | None
    score_histogram: list[int] = Field(
        description=f"Episodes per score bin: {SCORE_BINS} equal bins over [0, 1], the last one closed"
    )
    pass_k: list[PassK]
    safety_violation_rate: float | None = Field(description="Fraction of episodes with any violation")
    injected_faults: int
    recovered_faults: int
    robustness: float | None = Field(
        description="Fraction of injected faults after which the same actor later called the same tool successfully"
    )
    faulted_episodes: int
    faulted_success_rate: float | None
    by_capability: list[BreakdownRow]
    by_service: list[BreakdownRow]
    by_turns: list[BreakdownRow] = Field(description="Single-turn and multi-turn episodes")
    by_turn_index: list[BreakdownRow] = Field(
        description="Per turn index, the turn verdicts of the episodes that reached it"
    )
    by_change: list[BreakdownRow] = Field(
        default_factory=list,
        description="Per kind of change before a turn (announced, silent, changed mind, clarification, none), "
        "the verdicts of the turns it came before",
    )
    tokens: TokenStats | None = Field(
        default=None, description="Tokens per episode (see rollout.agents.tokens)"
    )

    def pass_at(self, k: int) -> PassK | None:
        return next((p for p in self.pass_k if p.k == k), None)


class Summary(BaseModel):
    """Summaries keyed by policy name, in name order."""

    policies: dict[str, PolicySummary]


def summarize(
    records: list[EpisodeRecord], *, ks: list[int] | None = None, tokens: TokenCounter | None = None
) -> Summary:
    """Summarize records per policy. `ks` are the k of pass@k and pass^k; by default 1 up to
    the most attempts any task of the policy has. A k no task has enough attempts for is
    left out. `tokens` counts the token figures (default: `tokens.token_counter()`)."""
    if ks is not None and any(k < 1 for k in ks):
        raise ValueError(f"every k must be at least 1, got {ks}")
    by_policy: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        by_policy[record.policy].append(record)
    return Summary(
        policies={name: _summarize_policy(name, by_policy[name], ks, tokens) for name in sorted(by_policy)}
    )


def scored(records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    """The records that count as attempts (every status but error)."""
    return [r for r in records if r.status != "error"]


def is_multi_turn(record: EpisodeRecord) -> bool:
    return record.verdict is not None and len(record.verdict.turns) > 1


def fault_recoveries(entries: list[AuditEntry]) -> list[bool]:
    """For each injected fault in an audit log, whether the same actor later called the same
    tool successfully."""
    ordered = sorted(entries, key=lambda e: e.seq)
    out = []
    for i, entry in enumerate(ordered):
        if entry.error is None or not entry.error.startswith(INJECTED_PREFIX):
            continue
        out.append(
            any(
                not later.is_error and later.actor == entry.actor and later.tool == entry.tool
                for later in ordered[i + 1 :]
            )
        )
    return out


def score_histogram(scores: list[float], bins: int = SCORE_BINS) -> list[int]:
    """Counts of scores in `bins` equal bins over [0, 1]; a score of 1 falls in the last bin."""
    counts = [0] * bins
    for score in scores:
        # the epsilon keeps a score like 0.3 (0.29999...) in its own bin
        counts[min(max(int(score * bins + 1e-9), 0), bins - 1)] += 1
    return counts


def _summarize_policy(
    policy: str, records: list[EpisodeRecord], ks: list[int] | None, tokens: TokenCounter | None = None
) -> PolicySummary:
    episodes = scored(records)
    by_task: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for record in episodes:
        by_task[record.task_id].append(record)
    recoveries = {id(r): fault_recoveries(r.tool_calls) for r in episodes}
    faults = [recovered for rs in recoveries.values() for recovered in rs]
    faulted = [r for r in episodes if recoveries[id(r)]]
    by_capability: dict[str, list[EpisodeRecord]] = defaultdict(list)
    by_service: dict[str, list[EpisodeRecord]] = defaultdict(list)
    by_turns: dict[str, list[EpisodeRecord]] = defaultdict(list)
    turn_scores: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    change_scores: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for record in episodes:
        for capability in dict.fromkeys(record.capabilities):
            by_capability[capability].append(record)
        for service in dict.fromkeys(record.services):
            by_service[service].append(record)
        by_turns[MULTI_TURN if is_multi_turn(record) else SINGLE_TURN].append(record)
        for turn in record.verdict.turns if record.verdict else []:
            turn_scores[turn.turn].append((turn.score, turn.success))
            if turn.turn < len(record.turn_changes):
                for kind in record.turn_changes[turn.turn]:
                    change_scores[kind].append((turn.score, turn.success))
    return PolicySummary(
        policy=policy,
        episodes=len(episodes),
        errors=len(records) - len(episodes),
        tasks=len(by_task),
        average_score=_mean(r.score for r in episodes),
        success_rate=_mean(float(r.success) for r in episodes),
        score_histogram=score_histogram([r.score for r in episodes]),
        pass_k=_pass_k([(len(rs), sum(r.success for r in rs)) for rs in by_task.values()], ks),
        safety_violation_rate=_mean(float(bool(r.verdict and r.verdict.safety_violations)) for r in episodes),
        injected_faults=len(faults),
        recovered_faults=sum(faults),
        robustness=_mean(float(f) for f in faults),
        faulted_episodes=len(faulted),
        faulted_success_rate=_mean(float(r.success) for r in faulted),
        by_capability=[_row(key, by_capability[key]) for key in sorted(by_capability)],
        by_service=[_row(key, by_service[key]) for key in sorted(by_service)],
        by_turns=[_row(key, by_turns[key]) for key in (SINGLE_TURN, MULTI_TURN) if key in by_turns],
        by_turn_index=[_scores_row(str(i), turn_scores[i]) for i in sorted(turn_scores)],
        by_change=[_scores_row(kind, change_scores[kind]) for kind in CHANGE_KINDS if kind in change_scores],
        tokens=token_stats(episodes, tokens),
    )


def _pass_k(counts: list[tuple[int, int]], ks: list[int] | None) -> list[PassK]:
    """pass@k and pass^k averaged over the tasks (n attempts, c successes) with n >= k."""
    wanted = sorted(set(ks)) if ks is not None else range(1, max((n for n, _ in counts), default=0) + 1)
    rows = []
    for k in wanted:
        eligible = [(n, c) for n, c in counts if n >= k]
        if not eligible:
            continue
        rows.append(
            PassK(
                k=k,
                tasks=len(eligible),
                pass_at_k=sum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible),
                pass_hat_k=sum(pass_hat_k(n, c, k) for n, c in eligible) / len(eligible),
            )
        )
    return rows


def _scores_row(key: str, scores: list[tuple[float, bool]]) -> BreakdownRow:
    return BreakdownRow(
        key=key,
        episodes=len(scores),
        average_score=sum(s for s, _ in scores) / len(scores),
        success_rate=sum(ok for _, ok in scores) / len(scores),
    )


def _row(key: str, records: list[EpisodeRecord]) -> BreakdownRow:
    return BreakdownRow(
        key=key,
        episodes=len(records),
        average_score=sum(r.score for r in records) / len(records),
        success_rate=sum(r.success for r in records) / len(records),
    )


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return sum(items) / len(items) if items else None


__all__ = [
    "BreakdownRow",
    "PassK",
    "PolicySummary",
    "Summary",
    "fault_recoveries",
    "is_multi_turn",
    "pass_at_k",
    "pass_hat_k",
    "score_histogram",
    "scored",
    "summarize",
]
