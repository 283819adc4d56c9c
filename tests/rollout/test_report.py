"""Reports over hand-made records: task rows, JSON round trip, terminal tables, the HTML page."""

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from coworkenv.rollout.exports.report import (
    Report,
    TaskRow,
    breakdown_rows,
    build_report,
    print_report,
    report_json,
)
from coworkenv.rollout.exports.report_html import render_html, write_report
from tests.rollout.test_scores import make_records, record


def test_task_rows_count_scored_trials_successes_and_errors_per_task_and_policy() -> None:
    rows = build_report(make_records()).tasks
    assert [(r.task_id, r.policy, r.trials, r.successes, r.errors) for r in rows] == [
        ("t1", "alpha", 4, 3, 0),
        ("t1", "beta", 2, 1, 0),
        ("t2", "alpha", 4, 2, 0),
        ("t3", "alpha", 3, 0, 1),
        ("t3", "beta", 1, 0, 0),
    ]
    assert [r.average_score for r in rows] == pytest.approx([3.5 / 4, 0.5, 2.5 / 4, 0.25 / 3, 0.5])


def test_a_task_with_only_error_records_has_a_row_without_a_score() -> None:
    report = build_report([record("p", "t1", 0, [1.0], status="error")])
    assert report.tasks == [
        TaskRow(task_id="t1", policy="p", trials=0, successes=0, average_score=None, errors=1)
    ]


def test_report_json_reads_back_to_the_same_report() -> None:
    report = build_report(make_records())
    text = report_json(report)
    assert Report.model_validate_json(text) == report
    data = json.loads(text)
    assert sorted(data) == ["policies", "tasks"]
    assert data["policies"]["alpha"]["errors"] == 1


def test_breakdown_rows_put_single_before_multi_turn_and_turn_indexes_in_number_order() -> None:
    report = build_report([*make_records(), record("beta", "t9", 0, [1.0] * 11)])
    turns = [(row.key, policy) for row, policy in breakdown_rows(report, "by_turns")]
    assert turns == [
        ("single-turn", "alpha"),
        ("single-turn", "beta"),
        ("multi-turn", "alpha"),
        ("multi-turn", "beta"),
    ]
    keys = [row.key for row, _ in breakdown_rows(report, "by_turn_index")]
    assert keys == ["0", "0", "1", "1", *map(str, range(2, 11))]


def rendered(report: Report) -> str:
    console = Console(file=io.StringIO(), width=250, record=True, color_system=None)
    print_report(report, console)
    return console.export_text()


def row_cells(text: str, first: str, contains: str = "") -> list[str]:
    """The cells of the first table row whose first cell is `first` (and that contains `contains`)."""
    line = next(
        line
        for line in text.splitlines()
        if line.startswith("│") and line.split("│")[1].strip() == first and contains in line
    )
    return [c.strip() for c in line.split("│")[1:-1]]


def test_print_report_shows_policies_pass_k_robustness_and_every_breakdown() -> None:
    text = rendered(build_report(make_records()))
    for title in (
        "Policies",
        "pass@k and pass^k",
        "Robustness",
        "By capability",
        "By service",
        "Single- vs multi-turn",
        "By turn index",
        "Tasks",
    ):
        assert title in text
    # policy, episodes, errors, tasks, avg score, success, unsafe
    assert row_cells(text, "alpha", "0.568") == ["alpha", "11", "1", "3", "0.568", "0.455", "0.000"]
    assert row_cells(text, "beta", "0.333 │  0.333") == ["beta", "3", "0", "2", "0.500", "0.333", "0.333"]
    # one row per (policy, k): k, tasks with k attempts, pass@k, pass^k
    pass_k = [c for c in (row_cells(text, "alpha", f"│ {k} │") for k in range(1, 5))]
    assert pass_k == [
        ["alpha", "1", "3", "0.417", "0.417"],
        ["alpha", "2", "3", "0.611", "0.222"],
        ["alpha", "3", "3", "0.667", "0.083"],
        ["alpha", "4", "2", "1.000", "0.000"],
    ]
    assert "│ beta   │ 3 │" not in text  # beta has no task with 3 attempts
    # injected faults, robustness, success w/ faults
    assert row_cells(text, "alpha", "0.333 │")[1:] == ["3", "0.333", "0.500"]
    assert row_cells(text, "beta", "│               0 │")[1:] == ["0", "-", "-"]


HEADERS = [
    "policy",
    "episodes",
    "errors",
    "avg score",
    "success",
    "unsafe",
    "pass@k",
    "pass^k",
    "injected faults",
    "robustness",
    "success w/ faults",
    "capability",
    "service",
    "turns",
    "successes",
]


def test_at_100_columns_every_table_fits_and_no_header_is_cut() -> None:
    records = [
        *make_records(),
        record("openai:a-rather-long-model-name-for-a-policy", "a-task-with-a-long-identifier-0", 0, [1.0]),
    ]
    console = Console(file=io.StringIO(), width=100, record=True, color_system=None)
    print_report(build_report(records), console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    header_lines = [line for line in text.splitlines() if line.startswith("┃")]
    headers = {c.strip() for line in header_lines for c in line.split("┃")[1:-1]}
    assert set(HEADERS) <= headers
    assert not [h for h in headers if "…" in h]


def test_a_resumed_run_counts_only_the_latest_record_of_each_trial() -> None:
    first = record("p", "t1", 0, [1.0], status="error")
    rerun = record("p", "t1", 0, [1.0])
    other = record("p", "t1", 1, [0.0])
    report = build_report([first, other, rerun])
    assert report.tasks == [
        TaskRow(task_id="t1", policy="p", trials=2, successes=1, average_score=0.5, errors=0)
    ]
    summary = report.policies["p"]
    assert (summary.episodes, summary.errors, summary.success_rate) == (2, 0, 0.5)


def test_print_report_shows_names_literally_not_as_rich_markup() -> None:
    text = rendered(build_report([record("p", "t1", 0, [1.0], capabilities=["[bold]x"])]))
    assert "[bold]x" in text


def html_page() -> str:
    records = [*make_records(), record("alpha", "<script>alert(1)</script>", 0, [1.0], capabilities=["a&b"])]
    return render_html(build_report(records))


def test_html_has_every_section_and_one_svg_per_chart() -> None:
    page = html_page()
    assert page.startswith("<!DOCTYPE html>")
    for section in (
        "overview",
        "scores",
        "pass-k",
        "capabilities",
        "turns",
        "changes",
        "breakdowns",
        "tasks",
    ):
        assert f'<section id="{section}">' in page
    # a histogram per policy (2), pass@k, pass^k, capabilities, turn index, change before the turn
    assert page.count("<svg") == page.count("</svg>") == 7
    assert page.count("<polyline") == 4  # one line per policy in each of the two k charts
    for title in (
        "By capability",
        "By service",
        "Single- vs multi-turn",
        "By turn index",
        "By change before the turn",
        "Tasks",
    ):
        assert f"<h2>{title}</h2>" in page


def test_html_is_self_contained() -> None:
    page = html_page()
    assert "http" not in page
    assert "<script" not in page
    assert "<link" not in page
    assert "src=" not in page


def test_html_escapes_every_name() -> None:
    page = html_page()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "a&amp;b" in page
    assert "a&b" not in page


def test_html_charts_say_when_there_is_no_data() -> None:
    page = render_html(build_report([record("p", "t1", 0, [1.0], status="error")]))
    assert page.count("<svg") == 6
    assert page.count(">no data</text>") == 6


def test_write_report_writes_both_files_whole(tmp_path: Path) -> None:
    records = make_records()
    out = tmp_path / "runs" / "report"
    paths = write_report(records, out)
    assert paths == {"json": out / "report.json", "html": out / "report.html"}
    assert Report.model_validate_json(paths["json"].read_text()) == build_report(records)
    assert paths["html"].read_text() == render_html(build_report(records))
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json"]


def test_html_overview_is_narrow_tables_that_scroll_within_the_column() -> None:
    page = html_page()
    overview = page.split('<section id="overview">')[1].split("</section>")[0]
    heads = re.findall(r"<thead><tr>(.*?)</tr></thead>", overview)
    assert [re.findall(r"<th>(.*?)</th>", h) for h in heads] == [
        ["policy", "episodes", "errors", "tasks", "avg score", "success", "unsafe"],
        ["policy", "k", "tasks", "pass@k", "pass^k"],
        ["policy", "injected faults", "robustness", "success w/ faults"],
        ["policy", "median total", "max total", "over 32k", "median tools", "median tool results"],
    ]
    assert page.count('<div class="table"><table>') == page.count("<table>")
    assert ".table { max-width: 100%; overflow-x: auto; }" in page
