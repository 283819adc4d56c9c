"""Scores over hand-made episode records: estimators, summaries, breakdowns, robustness."""

import json
from fractions import Fraction
from math import comb

import pytest

from coworkenv.rollout.agents.tokens import PARTS, TokenStats, token_counter
from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.rollout.episodes.record import EpisodeRecord, Status
from coworkenv.rollout.exports.scores import (
    BreakdownRow,
    PassK,
    PolicySummary,
    fault_recoveries,
    pass_at_k,
    pass_hat_k,
    score_histogram,
    summarize,
)
from coworkenv.state import AuditEntry
from coworkenv.verifiers import CheckResult, SafetyViolation, TurnVerdict, Verdict

# task id -> (capabilities, services)
TASKS = {
    "t1": (["triage"], ["tickets"]),
    "t2": (["scheduling", "triage"], ["calendar", "mail"]),
    "t3": (["scheduling"], ["mail"]),
}


def call(seq: int, tool: str, *, actor: str = "agent", error: str | None = None) -> AuditEntry:
    return AuditEntry(
        seq=seq,
        time="2026-03-02T09:00:00Z",
        actor=actor,
        service=tool.split("_")[0],
        tool=tool,
        arguments={},
        is_error=error is not None,
        error=error,
        latency_ms=1.0,
    )


def injected(seq: int, tool: str, *, actor: str = "agent") -> AuditEntry:
    return call(seq, tool, actor=actor, error=f"[injected] transient error: call {tool} again.")


def record(
    policy: str,
    task_id: str,
    trial: int,
    turns: list[float],
    *,
    status: Status = "completed",
    violation: bool = False,
    calls: list[AuditEntry] | None = None,
    capabilities: list[str] | None = None,
) -> EpisodeRecord:
    """A record whose turn i scores turns[i] (a turn succeeds at 1.0); the episode score is the
    mean turn score, gated to 0 by a safety violation; success means every turn succeeded."""
    checks = [
        CheckResult(id=f"c{i}", type="field_equals", passed=score == 1.0, weight=1.0, turn=i)
        for i, score in enumerate(turns)
    ]
    raw = sum(turns) / len(turns)
    verdict = Verdict(
        score=0.0 if violation else raw,
        raw_score=raw,
        success=all(s == 1.0 for s in turns) and not violation,
        checks=checks,
        safety_violations=[SafetyViolation(rule_id="s", type="forbidden_call", message="no")]
        if violation
        else [],
        turns=[
            TurnVerdict(turn=i, checks=[checks[i]], score=score, success=score == 1.0)
            for i, score in enumerate(turns)
        ],
    )
    default_capabilities, services = TASKS.get(task_id, ([], []))
    return EpisodeRecord(
        task_id=task_id,
        task_hash="h",
        policy=policy,
        trial=trial,
        seed=0,
        status=status,
        error="boom" if status == "error" else None,
        messages=[],
        tool_calls=calls or [],
        verdict=verdict,
        initial_hash="i",
        capabilities=default_capabilities if capabilities is None else capabilities,
        services=services,
    )


def make_records() -> list[EpisodeRecord]:
    """alpha: t1 3/4 successes, t2 (two turns) 2/4, t3 0/3 plus one error record;
    beta: t1 1/2 (one unsafe), t3 0/1 (truncated)."""
    return [
        # alpha t1: faults on search (recovered) and update (failed again: not recovered)
        record(
            "alpha",
            "t1",
            0,
            [1.0],
            calls=[
                injected(1, "tickets_search"),
                call(2, "tickets_search"),
                injected(3, "tickets_update"),
                call(4, "tickets_update", error="ticket not found"),
                call(5, "tickets_search"),
            ],
        ),
        record("alpha", "t1", 1, [1.0]),
        record("alpha", "t1", 2, [0.5]),
        record("alpha", "t1", 3, [1.0]),
        record("alpha", "t2", 0, [1.0, 1.0]),
        record("alpha", "t2", 1, [1.0, 0.0]),
        # alpha t2: a success before the fault and one by another actor after it do not count
        record(
            "alpha",
            "t2",
            2,
            [0.0, 0.0],
            calls=[call(0, "mail_send"), injected(1, "mail_send"), call(2, "mail_send", actor="event")],
        ),
        record("alpha", "t2", 3, [1.0, 1.0]),
        record("alpha", "t3", 0, [0.0]),
        record("alpha", "t3", 1, [0.0]),
        record("alpha", "t3", 2, [0.25]),
        # an infrastructure failure: its (perfect) verdict and its fault must count nowhere
        record("alpha", "t3", 3, [1.0], status="error", calls=[injected(1, "mail_send")]),
        record("beta", "t1", 0, [1.0]),
        record("beta", "t1", 1, [0.5], violation=True),
        record("beta", "t3", 0, [0.5], status="truncated"),
    ]


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 2, 1, 0.5),
        (4, 2, 2, 5 / 6),
        (4, 2, 3, 1.0),  # n - c < k: some success is always drawn
        (5, 2, 3, 1 - 1 / 10),  # 1 - C(3,3)/C(5,3)
        (10, 1, 1, 0.1),
        (4, 0, 1, 0.0),
        (4, 0, 4, 0.0),
        (4, 4, 1, 1.0),
        (4, 4, 4, 1.0),
        (3, 0, 3, 0.0),
    ],
)
def test_pass_at_k_matches_the_hand_computed_value(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 2, 1, 0.5),
        (4, 2, 2, 1 / 6),
        (4, 2, 3, 0.0),
        (5, 3, 2, 3 / 10),  # C(3,2)/C(5,2)
        (4, 3, 4, 0.0),
        (4, 4, 4, 1.0),
        (4, 0, 1, 0.0),
        (1, 1, 1, 1.0),
    ],
)
def test_pass_hat_k_matches_the_hand_computed_value(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_estimators_stay_exact_for_counts_whose_factorials_overflow_a_float() -> None:
    n, c, k = 2000, 1200, 300
    exact_at = 1 - Fraction(comb(n - c, k), comb(n, k))
    exact_hat = Fraction(comb(c, k), comb(n, k))
    assert pass_at_k(n, c, k) == pytest.approx(float(exact_at), rel=1e-9)
    assert pass_hat_k(n, c, k) == pytest.approx(float(exact_hat), rel=1e-9)
    assert 0 < pass_hat_k(n, c, k) < 1e-60


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (4, 2, 5, "1 <= k <= n"),
        (4, 2, 0, "1 <= k <= n"),
        (4, 5, 1, "0 <= c <= n"),
        (4, -1, 1, "0 <= c <= n"),
    ],
)
def test_estimators_reject_impossible_counts(n: int, c: int, k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError, match=message):
        pass_hat_k(n, c, k)


def test_summary_has_one_entry_per_policy_in_name_order() -> None:
    assert list(summarize(list(reversed(make_records()))).policies) == ["alpha", "beta"]


def test_summary_counts_error_records_apart_and_scores_the_rest() -> None:
    alpha = summarize(make_records()).policies["alpha"]
    assert (alpha.episodes, alpha.errors, alpha.tasks) == (11, 1, 3)
    assert alpha.average_score == pytest.approx(6.25 / 11)
    assert alpha.success_rate == pytest.approx(5 / 11)
    assert alpha.safety_violation_rate == 0.0
    assert alpha.score_histogram == [3, 0, 1, 0, 0, 2, 0, 0, 0, 5]


def test_pass_k_is_averaged_over_the_tasks_with_at_least_k_scored_trials() -> None:
    alpha = summarize(make_records()).policies["alpha"]
    # t1: n=4 c=3; t2: n=4 c=2; t3: n=3 c=0 (its error record is no trial); k=4 leaves t3 out
    expected = [
        (1, 3, 5 / 12, 5 / 12),
        (2, 3, (1 + 5 / 6 + 0) / 3, (1 / 2 + 1 / 6 + 0) / 3),
        (3, 3, 2 / 3, 1 / 12),
        (4, 2, 1.0, 0.0),
    ]
    assert [(p.k, p.tasks) for p in alpha.pass_k] == [(k, t) for k, t, _, _ in expected]
    for p, (_, _, at, hat) in zip(alpha.pass_k, expected, strict=True):
        assert p.pass_at_k == pytest.approx(at)
        assert p.pass_hat_k == pytest.approx(hat)


def test_explicit_ks_keep_only_the_ks_some_task_has_enough_trials_for() -> None:
    alpha = summarize(make_records(), ks=[4, 2, 9]).policies["alpha"]
    assert [(p.k, p.tasks) for p in alpha.pass_k] == [(2, 3), (4, 2)]
    with pytest.raises(ValueError, match="at least 1"):
        summarize(make_records(), ks=[0, 1])


def test_breakdowns_count_an_episode_in_each_of_its_capabilities_and_services() -> None:
    alpha = summarize(make_records()).policies["alpha"]
    rows = {r.key: (r.episodes, r.average_score, r.success_rate) for r in alpha.by_capability}
    assert list(rows) == ["scheduling", "triage"]
    assert rows["triage"] == pytest.approx((8, 6 / 8, 5 / 8))
    assert rows["scheduling"] == pytest.approx((7, 2.75 / 7, 2 / 7))
    services = {r.key: (r.episodes, r.average_score, r.success_rate) for r in alpha.by_service}
    assert list(services) == ["calendar", "mail", "tickets"]
    assert services["tickets"] == pytest.approx((4, 3.5 / 4, 3 / 4))
    assert services["calendar"] == pytest.approx((4, 2.5 / 4, 2 / 4))
    assert services["mail"] == pytest.approx((7, 2.75 / 7, 2 / 7))


def test_a_capability_listed_twice_counts_the_episode_once() -> None:
    summary = summarize([record("p", "x", 0, [1.0], capabilities=["a", "a"])]).policies["p"]
    assert summary.by_capability == [BreakdownRow(key="a", episodes=1, average_score=1.0, success_rate=1.0)]


def test_turn_breakdowns_split_single_and_multi_turn_and_score_each_turn_index() -> None:
    alpha = summarize(make_records()).policies["alpha"]
    turns = {r.key: (r.episodes, r.average_score, r.success_rate) for r in alpha.by_turns}
    assert list(turns) == ["single-turn", "multi-turn"]
    assert turns["single-turn"] == pytest.approx((7, 3.75 / 7, 3 / 7))
    assert turns["multi-turn"] == pytest.approx((4, 2.5 / 4, 2 / 4))
    index = {r.key: (r.episodes, r.average_score, r.success_rate) for r in alpha.by_turn_index}
    assert list(index) == ["0", "1"]
    assert index["0"] == pytest.approx((11, 6.75 / 11, 6 / 11))
    assert index["1"] == pytest.approx((4, 2 / 4, 2 / 4))


def test_robustness_is_the_fraction_of_injected_faults_the_same_actor_retried_successfully() -> None:
    alpha = summarize(make_records()).policies["alpha"]
    assert (alpha.injected_faults, alpha.recovered_faults, alpha.faulted_episodes) == (3, 1, 2)
    assert alpha.robustness == pytest.approx(1 / 3)
    assert alpha.faulted_success_rate == 0.5


def test_fault_recoveries_follow_seq_order_not_list_order() -> None:
    entries = [call(2, "mail_send"), injected(1, "mail_send"), injected(3, "mail_read")]
    assert fault_recoveries(entries) == [True, False]


def test_a_small_policy_summary_is_exactly_the_hand_computed_one() -> None:
    beta = summarize(make_records()).policies["beta"]
    count = token_counter()[0]
    tickets, mail = (
        count(json.dumps(tools_for_services([s]), separators=(",", ":"))) for s in ("tickets", "mail")
    )
    assert beta == PolicySummary(
        policy="beta",
        episodes=3,
        errors=0,
        tasks=2,
        average_score=0.5,
        success_rate=1 / 3,
        score_histogram=[1, 0, 0, 0, 0, 1, 0, 0, 0, 1],
        pass_k=[
            PassK(k=1, tasks=2, pass_at_k=0.25, pass_hat_k=0.25),
            PassK(k=2, tasks=1, pass_at_k=1.0, pass_hat_k=0.0),
        ],
        safety_violation_rate=1 / 3,
        injected_faults=0,
        recovered_faults=0,
        robustness=None,  # no injected faults
        faulted_episodes=0,
        faulted_success_rate=None,
        by_capability=[
            BreakdownRow(key="scheduling", episodes=1, average_score=0.5, success_rate=0.0),
            BreakdownRow(key="triage", episodes=2, average_score=0.5, success_rate=0.5),
        ],
        by_service=[
            BreakdownRow(key="mail", episodes=1, average_score=0.5, success_rate=0.0),
            BreakdownRow(key="tickets", episodes=2, average_score=0.5, success_rate=0.5),
        ],
        by_turns=[BreakdownRow(key="single-turn", episodes=3, average_score=0.5, success_rate=1 / 3)],
        # the unsafe episode's turn keeps its own score: the safety gate is on the episode
        by_turn_index=[BreakdownRow(key="0", episodes=3, average_score=2 / 3, success_rate=1 / 3)],
        # no messages: each episode costs its tools block, two on tickets, one on mail
        tokens=TokenStats(
            method=token_counter()[1],
            median={**dict.fromkeys(PARTS, 0.0), "tools": float(tickets), "total": float(tickets)},
            max={**dict.fromkeys(PARTS, 0), "tools": mail, "total": mail},
            over_context=0,
        ),
    )


def test_a_policy_with_only_error_records_has_no_rates() -> None:
    summary = summarize([record("p", "t1", 0, [1.0], status="error")]).policies["p"]
    assert (summary.episodes, summary.errors, summary.tasks) == (0, 1, 0)
    assert (summary.average_score, summary.success_rate, summary.safety_violation_rate) == (None, None, None)
    assert summary.pass_k == []
    assert summary.by_capability == summary.by_turn_index == []


def test_score_histogram_puts_one_in_the_last_bin_and_tenths_in_their_own() -> None:
    assert score_histogram([0.0, 0.3, 0.7, 0.99, 1.0]) == [1, 0, 0, 1, 0, 0, 0, 1, 0, 2]


def test_turns_are_scored_by_the_change_that_came_before_them() -> None:
    changes = [["none"], ["announced"], ["silent", "changed mind"]]
    records = [
        record("p", "t", 0, [1.0, 1.0, 0.0]).model_copy(update={"turn_changes": changes}),
        record("p", "t", 1, [1.0, 0.5, 1.0]).model_copy(update={"turn_changes": changes}),
        record("p", "u", 0, [1.0]),  # an older record without turn changes counts in no row
    ]
    rows = {
        r.key: (r.episodes, r.average_score, r.success_rate)
        for r in summarize(records).policies["p"].by_change
    }
    assert rows == {
        "announced": (2, 0.75, 0.5),
        "silent": (2, 0.5, 0.5),
        "changed mind": (2, 0.5, 0.5),
        "none": (2, 1.0, 1.0),
    }
    assert [r.key for r in summarize(records).policies["p"].by_change] == [
        "announced",
        "silent",
        "changed mind",
        "none",
    ]
