"""The report as one self-contained HTML page: inline CSS and inline SVG charts, no scripts
and no external resources, so it opens anywhere, offline. Every text is escaped."""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from coworkenv.rollout.agents.tokens import TokenCounter
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.exports.report import (
    BREAKDOWNS,
    TOKEN_HEADERS,
    Report,
    breakdown_rows,
    build_report,
    fmt,
    report_json,
    token_method,
    token_rows,
)

PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d"]

WIDTH, HEIGHT = 480, 240
LEFT, RIGHT, TOP, BOTTOM = 44, 12, 12, 34

CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; max-width: 1100px; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
.table { max-width: 100%; overflow-x: auto; }  /* a table wider than the column scrolls in it */
h3 { font-size: 1rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.6rem; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: flex; flex-wrap: wrap; gap: 1.5rem; }
figure { margin: 0; } figcaption { font-size: 0.9rem; margin-bottom: 0.3rem; }
svg.chart { background: #fff; border: 1px solid #eee; }
svg.chart text { font-size: 11px; fill: #444; }
.legend span { display: inline-block; margin-right: 1rem; font-size: 0.9rem; }
.legend i { display: inline-block; width: 0.8rem; height: 0.8rem; margin-right: 0.3rem; vertical-align: middle; }
"""


def render_html(report: Report) -> str:
    """The whole report as one HTML page: overview table; a score histogram per policy;
    pass@k and pass^k against k; success by capability and by turn index; breakdown tables
    (capability, service, single- vs multi-turn, turn index) and per-task rows."""
    colors = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(report.policies)}
    legend = "".join(
        f'<span><i style="background:{color}"></i>{escape(name)}</span>' for name, color in colors.items()
    )
    legend_html = f'<div class="legend">{legend}</div>'
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>coworkenv report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>coworkenv report</h1>",
        '<section id="overview"><h2>Policies</h2>',
        _overview_table(report),
        "</section>",
        '<section id="scores"><h2>Score distribution</h2><div class="charts">',
    ]
    for name, s in report.policies.items():
        parts.append(_figure(f"{name}: episodes per score", _histogram(s.score_histogram, colors[name])))
    parts.append("</div></section>")
    ks = report.ks
    parts += [
        '<section id="pass-k"><h2>pass@k and pass^k</h2>',
        legend_html,
        '<div class="charts">',
        _figure(
            "pass@k (at least one of k attempts succeeds)",
            _line_chart(
                ks, {n: {p.k: p.pass_at_k for p in s.pass_k} for n, s in report.policies.items()}, colors
            ),
        ),
        _figure(
            "pass^k (all k attempts succeed)",
            _line_chart(
                ks, {n: {p.k: p.pass_hat_k for p in s.pass_k} for n, s in report.policies.items()}, colors
            ),
        ),
        "</div></section>",
        '<section id="capabilities"><h2>Success by capability</h2>',
        legend_html,
        _figure("success rate per capability", _grouped_bars(report, "by_capability", colors)),
        "</section>",
        '<section id="turns"><h2>Success by turn index</h2>',
        legend_html,
        _figure(
            "success rate of turn i, over episodes that reached it",
            _grouped_bars(report, "by_turn_index", colors),
        ),
        "</section>",
        '<section id="changes"><h2>Success by change before the turn</h2>',
        legend_html,
        _figure(
            "success rate of turns after an announced or silent event, a change of mind, a clarification",
            _grouped_bars(report, "by_change", colors),
        ),
        "</section>",
        '<section id="breakdowns">',
    ]
    for title, column, field in BREAKDOWNS:
        parts += [f"<h2>{escape(title)}</h2>", _breakdown_table(report, column, field)]
    parts += ["</section>", '<section id="tasks"><h2>Tasks</h2>', _tasks_table(report), "</section>"]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(
    records: list[EpisodeRecord],
    out_dir: str | Path,
    *,
    ks: list[int] | None = None,
    tokens: TokenCounter | None = None,
) -> dict[str, Path]:
    """Write `report.json` and `report.html` for the records into out_dir (created if need
    be); returns their paths under the keys "json" and "html". Each file is written whole
    (to a temporary name, then renamed), so a failure never leaves half a report."""
    report = build_report(records, ks=ks, tokens=tokens)
    contents = {"json": report_json(report), "html": render_html(report)}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for kind, text in contents.items():
        path = out / f"report.{kind}"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        paths[kind] = path
    return paths


# ---- tables


def _table(headers: list[str], rows: list[list[str]], numeric_from: int) -> str:
    """An HTML table of already-escaped cells; columns from `numeric_from` on align right."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{c}</td>' if i >= numeric_from else f"<td>{c}</td>" for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f'<div class="table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _overview_table(report: Report) -> str:
    """Three narrow tables (policies; pass@k and pass^k, one row per k; robustness), so the
    overview fits the page's column whatever the number of trials."""
    policies = [
        [
            escape(s.policy),
            str(s.episodes),
            str(s.errors),
            str(s.tasks),
            fmt(s.average_score),
            fmt(s.success_rate),
            fmt(s.safety_violation_rate),
        ]
        for s in report.policies.values()
    ]
    pass_k = [
        [escape(s.policy), str(p.k), str(p.tasks), fmt(p.pass_at_k), fmt(p.pass_hat_k)]
        for s in report.policies.values()
        for p in s.pass_k
    ]
    robustness = [
        [escape(s.policy), str(s.injected_faults), fmt(s.robustness), fmt(s.faulted_success_rate)]
        for s in report.policies.values()
    ]
    return "\n".join(
        [
            _table(
                ["policy", "episodes", "errors", "tasks", "avg score", "success", "unsafe"],
                policies,
                numeric_from=1,
            ),
            "<h3>pass@k and pass^k</h3>",
            _table(["policy", "k", "tasks", "pass@k", "pass^k"], pass_k, numeric_from=1),
            "<h3>Robustness to injected tool errors</h3>",
            _table(
                ["policy", "injected faults", "robustness", "success w/ faults"], robustness, numeric_from=1
            ),
            f"<h3>Tokens per episode ({escape(token_method(report))})</h3>",
            _table(TOKEN_HEADERS, [[escape(c) for c in row] for row in token_rows(report)], numeric_from=1),
        ]
    )


def _breakdown_table(report: Report, column: str, field: str) -> str:
    rows = [
        [escape(row.key), escape(policy), str(row.episodes), fmt(row.average_score), fmt(row.success_rate)]
        for row, policy in breakdown_rows(report, field)
    ]
    return _table([column, "policy", "episodes", "avg score", "success"], rows, numeric_from=2)


def _tasks_table(report: Report) -> str:
    rows = [
        [
            escape(t.task_id),
            escape(t.policy),
            str(t.trials),
            str(t.successes),
            fmt(t.average_score),
            str(t.errors),
        ]
        for t in report.tasks
    ]
    return _table(["task", "policy", "trials", "successes", "avg score", "errors"], rows, numeric_from=2)


# ---- charts: plain SVG, no xmlns (inline SVG in HTML needs none, and the page names no URL)


def _figure(caption: str, svg: str) -> str:
    return f"<figure><figcaption>{escape(caption)}</figcaption>{svg}</figure>"


def _svg(label: str, body: list[str], extra_height: int = 0) -> str:
    height = HEIGHT + extra_height
    return (
        f'<svg class="chart" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'role="img" aria-label="{escape(label)}" style="overflow: visible">' + "".join(body) + "</svg>"
    )


def _x(fraction: float) -> float:
    return LEFT + fraction * (WIDTH - LEFT - RIGHT)


def _y(fraction: float) -> float:
    return HEIGHT - BOTTOM - fraction * (HEIGHT - TOP - BOTTOM)


def _y_axis(top: float, ticks: list[float]) -> list[str]:
    """Grid lines and labels for values 0..top at the given ticks."""
    out = []
    for tick in ticks:
        y = _y(tick / top if top else 0)
        label = f"{tick:g}" if top > 1 else f"{tick:.2f}".rstrip("0").rstrip(".")
        out.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(label)}</text>')
    return out


def _x_label(fraction: float, label: str) -> str:
    return (
        f'<text x="{_x(fraction):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle">{escape(label)}</text>'
    )


def _no_data() -> str:
    return f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">no data</text>'


RATE_TICKS = [0.0, 0.25, 0.5, 0.75, 1.0]


def _histogram(counts: list[int], color: str) -> str:
    """Bars of episode counts over equal score bins on [0, 1]."""
    top = max(counts, default=0)
    if top == 0:
        return _svg("score histogram", [_no_data()])
    step = max(1, -(-top // 4))
    body = _y_axis(top, [float(t) for t in range(0, top + 1, step)])
    bins = len(counts)
    for i, count in enumerate(counts):
        x0, x1 = _x(i / bins) + 1, _x((i + 1) / bins) - 1
        y = _y(count / top)
        body.append(
            f'<rect x="{x0:.1f}" y="{y:.1f}" width="{x1 - x0:.1f}" height="{_y(0) - y:.1f}" fill="{color}">'
            f"<title>{escape(f'score {i / bins:g}-{(i + 1) / bins:g}: {count}')}</title></rect>"
        )
    body += [_x_label(0, "0"), _x_label(0.5, "0.5"), _x_label(1, "1")]
    return _svg("score histogram", body)


def _line_chart(ks: list[int], series: dict[str, dict[int, float]], colors: dict[str, str]) -> str:
    """One line per policy of a rate in [0, 1] against k."""
    if not ks:
        return _svg("rate against k", [_no_data()])
    body = _y_axis(1.0, RATE_TICKS)

    def fx(k: int) -> float:
        # a margin on both sides keeps the first and last labels inside the chart
        return 0.5 if len(ks) == 1 else 0.05 + 0.9 * (k - ks[0]) / (ks[-1] - ks[0])

    body += [_x_label(fx(k), f"k={k}") for k in ks]
    for name, values in series.items():
        points = [(_x(fx(k)), _y(values[k])) for k in ks if k in values]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            body.append(f'<polyline points="{path}" fill="none" stroke="{colors[name]}" stroke-width="2"/>')
        for (x, y), k in zip(points, [k for k in ks if k in values], strict=True):
            tip = escape(f"{name} k={k}: {values[k]:.3f}")
            body.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colors[name]}"><title>{tip}</title></circle>'
            )
    return _svg("rate against k", body)


def _grouped_bars(report: Report, field: str, colors: dict[str, str]) -> str:
    """Success rate per key (capability, turn index), one bar per policy in each group."""
    rows = breakdown_rows(report, field)
    keys = list(dict.fromkeys(row.key for row, _ in rows))
    if not keys:
        return _svg("success rate", [_no_data()])
    body = _y_axis(1.0, RATE_TICKS)
    policies = list(report.policies)
    group = 1 / len(keys)
    bar = group * 0.8 / len(policies)
    for row, policy in rows:
        g = keys.index(row.key)
        x0 = _x(g * group + group * 0.1 + policies.index(policy) * bar)
        x1 = _x(g * group + group * 0.1 + (policies.index(policy) + 1) * bar)
        y = _y(row.success_rate)
        tip = escape(f"{row.key} / {policy}: {row.success_rate:.3f} over {row.episodes} episodes")
        body.append(
            f'<rect x="{x0:.1f}" y="{y:.1f}" width="{max(x1 - x0 - 1, 1):.1f}" height="{_y(0) - y:.1f}" '
            f'fill="{colors[policy]}"><title>{tip}</title></rect>'
        )
    if len(keys) <= 4:
        body += [_x_label((i + 0.5) * group, key) for i, key in enumerate(keys)]
        return _svg("success rate", body)
    # many groups: slanted labels below the axis, in a taller chart
    y = HEIGHT - BOTTOM + 12
    for i, key in enumerate(keys):
        x = _x((i + 0.5) * group)
        body.append(
            f'<text x="{x:.1f}" y="{y}" text-anchor="end" transform="rotate(-40 {x:.1f} {y})">{escape(key)}</text>'
        )
    return _svg("success rate", body, extra_height=max(len(k) for k in keys) * 5)


__all__ = ["render_html", "write_report"]
