"""The report over a run's records: per-policy summaries and per-task rows, as JSON or as
rich tables in the terminal (the HTML page is in `report_html`)."""

from __future__ import annotations

import os
import sys
from collections import defaultdict

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table
from rich.text import Text

from coworkenv.rollout.agents.tokens import CONTEXT, ESTIMATE, TokenCounter
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.records_io import latest_records
from coworkenv.rollout.exports.scores import (
    MULTI_TURN,
    SINGLE_TURN,
    BreakdownRow,
    PolicySummary,
    scored,
    summarize,
)

TURN_KINDS = (SINGLE_TURN, MULTI_TURN)


class TaskRow(BaseModel):
    """One policy on one task: scored attempts, strict successes, mean score, error records."""

    task_id: str
    policy: str
    trials: int
    successes: int
    average_score: float | None
    errors: int


class Report(BaseModel):
    """Summaries keyed by policy name, and one row per (task, policy), sorted."""

    policies: dict[str, PolicySummary]
    tasks: list[TaskRow]

    @property
    def ks(self) -> list[int]:
        """Every k that some policy has pass@k for, in order."""
        return sorted({p.k for s in self.policies.values() for p in s.pass_k})


#: Columns for tables printed where the output is not a terminal and `COLUMNS` is unset.
PIPE_WIDTH = 120


def terminal_console() -> Console:
    """A console as wide as the terminal, or as `COLUMNS` says; `PIPE_WIDTH` when the output
    is not a terminal and `COLUMNS` is unset (rich would assume 80)."""
    if os.environ.get("COLUMNS") or sys.stdout.isatty():
        return Console()
    return Console(width=PIPE_WIDTH)


def build_report(
    records: list[EpisodeRecord], *, ks: list[int] | None = None, tokens: TokenCounter | None = None
) -> Report:
    """Summarize records per policy and per task (see `scores.summarize` for the semantics).

    Only the latest record of each (policy, task, trial) counts: after a resumed run, the
    error record it superseded is left out."""
    records = latest_records(records)
    groups: dict[tuple[str, str], list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        groups[(record.task_id, record.policy)].append(record)
    tasks = []
    for (task_id, policy), group in sorted(groups.items()):
        attempts = scored(group)
        tasks.append(
            TaskRow(
                task_id=task_id,
                policy=policy,
                trials=len(attempts),
                successes=sum(r.success for r in attempts),
                average_score=sum(r.score for r in attempts) / len(attempts) if attempts else None,
                errors=len(group) - len(attempts),
            )
        )
    return Report(policies=summarize(records, ks=ks, tokens=tokens).policies, tasks=tasks)


def report_json(report: Report) -> str:
    """The report as indented JSON (`Report.model_validate_json` reads it back)."""
    return report.model_dump_json(indent=2) + "\n"


def fmt(value: float | None) -> str:
    """A rate or score for display: three decimals, or a dash when there is none."""
    return "-" if value is None else f"{value:.3f}"


def print_report(report: Report, console: Console, *, tasks: bool = True) -> None:
    """Render the report as rich tables: policies, pass@k and pass^k (one row per k, so any
    number of trials fits), robustness, then breakdowns by capability, by service, single-
    vs multi-turn, by turn index, and (unless `tasks` is false) per task. Each table is a
    few narrow columns, so at 100 columns no header is cut."""
    for table in (
        _policies_table(report),
        _pass_k_table(report),
        _robustness_table(report),
        _tokens_table(report),
    ):
        console.print(table)
    for title, column, field in BREAKDOWNS:
        console.print(_breakdown_table(report, title, column, field))
    if not tasks:
        return
    per_task = _table(
        "Tasks", ["task", "policy", "trials", "successes", "avg score", "errors"], text_columns=2
    )
    for row in report.tasks:
        per_task.add_row(
            Text(row.task_id),
            Text(row.policy),
            str(row.trials),
            str(row.successes),
            fmt(row.average_score),
            str(row.errors),
        )
    console.print(per_task)


def _table(title: str, headers: list[str], text_columns: int = 1) -> Table:
    """A table whose first `text_columns` columns hold names (wrapped when long) and the
    rest short figures, which never wrap, so their headers are never cut."""
    table = Table(title=title)
    for i, header in enumerate(headers):
        if i < text_columns:
            table.add_column(header, overflow="fold")
        else:
            table.add_column(header, justify="right", no_wrap=True)
    return table


def _policies_table(report: Report) -> Table:
    table = _table("Policies", ["policy", "episodes", "errors", "tasks", "avg score", "success", "unsafe"])
    for s in report.policies.values():
        table.add_row(
            Text(s.policy),
            str(s.episodes),
            str(s.errors),
            str(s.tasks),
            fmt(s.average_score),
            fmt(s.success_rate),
            fmt(s.safety_violation_rate),
        )
    return table


def _pass_k_table(report: Report) -> Table:
    table = _table("pass@k and pass^k", ["policy", "k", "tasks", "pass@k", "pass^k"])
    for s in report.policies.values():
        for p in s.pass_k:
            table.add_row(Text(s.policy), str(p.k), str(p.tasks), fmt(p.pass_at_k), fmt(p.pass_hat_k))
    return table


def _robustness_table(report: Report) -> Table:
    table = _table("Robustness", ["policy", "injected faults", "robustness", "success w/ faults"])
    for s in report.policies.values():
        table.add_row(Text(s.policy), str(s.injected_faults), fmt(s.robustness), fmt(s.faulted_success_rate))
    return table


TOKEN_HEADERS = [
    "policy",
    "median total",
    "max total",
    f"over {CONTEXT // 1024}k",
    "median tools",
    "median tool results",
]


def token_rows(report: Report) -> list[list[str]]:
    """One row per policy with token figures (see `rollout.agents.tokens`): median and largest total
    per episode, episodes over the context, median tools block and tool results."""
    rows = []
    for s in report.policies.values():
        if s.tokens is None:
            continue
        t = s.tokens
        rows.append(
            [
                s.policy,
                f"{t.median['total']:.0f}",
                str(t.max["total"]),
                str(t.over_context),
                f"{t.median['tools']:.0f}",
                f"{t.median['tool_results']:.0f}",
            ]
        )
    return rows


def token_method(report: Report) -> str:
    return next((s.tokens.method for s in report.policies.values() if s.tokens is not None), ESTIMATE)


def _tokens_table(report: Report) -> Table:
    table = _table(f"Tokens per episode ({token_method(report)})", TOKEN_HEADERS)
    for row in token_rows(report):
        table.add_row(Text(row[0]), *row[1:])
    return table


#: (title, first column, the PolicySummary field with the rows), for the terminal and the HTML page.
BREAKDOWNS = [
    ("By capability", "capability", "by_capability"),
    ("By service", "service", "by_service"),
    ("Single- vs multi-turn", "turns", "by_turns"),
    ("By turn index", "turn", "by_turn_index"),
    ("By change before the turn", "change", "by_change"),
]


def breakdown_rows(report: Report, field: str) -> list[tuple[BreakdownRow, str]]:
    """(row, policy) pairs of one breakdown over every policy, by key then policy."""
    rows = [(row, s.policy) for s in report.policies.values() for row in getattr(s, field)]
    return sorted(rows, key=lambda item: (_sort_key(item[0].key), item[1]))


def _breakdown_table(report: Report, title: str, column: str, field: str) -> Table:
    table = _table(title, [column, "policy", "episodes", "avg score", "success"], text_columns=2)
    for row, policy in breakdown_rows(report, field):
        # Text, not str: a name like "[bold]" is shown as is, never read as rich markup
        table.add_row(
            Text(row.key), Text(policy), str(row.episodes), fmt(row.average_score), fmt(row.success_rate)
        )
    return table


def _sort_key(key: str) -> tuple[int, str]:
    # turn indexes sort as numbers, single- before multi-turn, everything else by name
    if key.isdigit():
        return (int(key), "")
    if key in TURN_KINDS:
        return (TURN_KINDS.index(key), "")
    return (1 << 30, key)


__all__ = [
    "BREAKDOWNS",
    "TOKEN_HEADERS",
    "Report",
    "TaskRow",
    "breakdown_rows",
    "build_report",
    "fmt",
    "print_report",
    "report_json",
    "terminal_console",
    "token_method",
    "token_rows",
]
