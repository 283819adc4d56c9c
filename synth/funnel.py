"""The funnel report of a synthesis run: what survived each stage, why drafts failed,
how strong the kept tasks' verifiers are, and how diverse the kept set is."""

from __future__ import annotations

import html
import statistics
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field
from rich.console import Console
from rich.table import Table

from coworkenv.synth.diversity import Diversity, Lengths, diversity
from coworkenv.synth.diversity import request_template as request_template  # part of the report's API
from coworkenv.synth.family import KINDS
from coworkenv.synth.pipeline import DraftRecord, funnel_counts
from coworkenv.task import Task
from coworkenv.worlds import DEMO, PROFILES

#: What passing each funnel stage means, for the terminal and the page.
STAGE_DETAILS = {
    "generated": "the generator produced a draft",
    "schema_valid": "the draft is a valid task file",
    "seed_loads": "its seed state builds",
    "checks_valid": "every check names real tables, columns and tools",
    "noop_fails": "a do-nothing agent scores exactly 0",
    "solvable": "the reference solution scores 1.0, breaks no rule, changes nothing collateral, every event applies",
    "no_peeking": "the solution uses only ids, addresses and paths it was shown",
    "deterministic": "two runs of the solution end in the same state",
    "mutants_killed": "wrong variants of the solution fail (dropped, duplicated, collateral, wrong figures, undone, "
    "leaked, hedged, negated, contradicted, blank, created wrong, guessed)",
    "right_variants_pass": "right variants pass (other formats, reply-all, split updates, draft then send, harmless extras)",
    "consistent": "capability, services and turns match the request",
    "unique": "no near-duplicate of a kept task (checked before validation)",
    "judged": "an LLM judge finds every checked outcome asked for, and the request natural",
    "probed": "a test agent solved it at least --min-probe-pass times",
    "kept": "written to tasks/",
}


class CapabilityFunnel(BaseModel):
    capability: str
    counts: dict[str, int]
    failures: dict[str, int] = Field(description="Drafts that stopped at each stage")


class KeptTask(BaseModel):
    """One kept task: the rounds it took and the strength of its verifier."""

    task_id: str
    capability: str
    rounds: int = Field(description="Rounds until it was kept (1 = the first draft)")
    kill_rate: float | None = Field(description="Fraction of the solution's mutants its checks fail")
    kill_rates: dict[str, float] = Field(
        default_factory=dict, description="Share of mutants killed, per class"
    )
    acceptance_rates: dict[str, float] = Field(
        default_factory=dict, description="Share of right variants accepted, per class"
    )
    judge_score: float | None = Field(default=None, description="The judge's score out of 10, if judged")
    probe: str | None = Field(default=None, description="Probe attempts passed, e.g. '1/2' (pass@k > 0)")


class PlannedSlots(BaseModel):
    """What the plan asked of the slots (from drafts.jsonl): kinds and worlds, before validation."""

    kinds: dict[str, int] = Field(default_factory=dict, description="Slots by kind")
    worlds: int = Field(default=0, description="Distinct worlds the slots were planned on")
    industries: int = Field(default=0, description="Distinct industries of those worlds")
    on_generated_worlds: int = Field(default=0, description="Slots on a generated organization")


class Funnel(BaseModel):
    slots: int
    drafts: int
    counts: dict[str, int]
    reasons: dict[str, list[str]] = Field(description="Up to 5 example reasons per failing stage")
    by_capability: list[CapabilityFunnel]
    kill_rates: dict[str, float | None] = Field(description="Mutation kill rate of each kept task")
    kill_rates_by_class: dict[str, float] = Field(
        default_factory=dict,
        description="Share of mutants killed per mutant class, over every draft whose mutants ran "
        "(kept or not): how often each kind of wrong agent is told apart before the contract rejects",
    )
    rounds_to_keep: dict[str, int] = Field(
        description="Kept tasks by the round in which they were kept (1-based)"
    )
    kept_tasks: list[KeptTask] = Field(default_factory=list, description="Each kept task, by id")
    unfinished: int = Field(
        default=0, description="Slots whose last round met an endpoint failure (a rerun fills them)"
    )
    planned: PlannedSlots = Field(default_factory=PlannedSlots)
    diversity: Diversity


def planned_slots(records: list[DraftRecord]) -> PlannedSlots:
    """The kinds and worlds of the slots' plans (slots drafted before plans were recorded are left out)."""
    plans = [r.request for r in _last_rounds(records) if r.request is not None]
    kinds = Counter(p.kind for p in plans)
    worlds = {p.world for p in plans if p.world is not None}
    industries = {
        DEMO if w == DEMO else PROFILES[w.split(":")[0]].industry
        for w in worlds
        if w == DEMO or w.split(":")[0] in PROFILES
    }
    return PlannedSlots(
        kinds={k: kinds[k] for k in KINDS if kinds[k]},
        worlds=len(worlds),
        industries=len(industries),
        on_generated_worlds=sum(p.world not in (None, DEMO) for p in plans),
    )


def build_funnel(records: list[DraftRecord], kept: list[Task]) -> Funnel:
    reasons: dict[str, list[str]] = {}
    for r in records:
        if r.failed_stage and len(reasons.setdefault(r.failed_stage, [])) < 5:
            reasons[r.failed_stage].append(r.reason)
    by_cap = []
    for cap in sorted({r.capability for r in records}):
        mine = [r for r in records if r.capability == cap]
        failures = Counter(r.failed_stage for r in mine if r.failed_stage)
        by_cap.append(CapabilityFunnel(capability=cap, counts=funnel_counts(mine), failures=dict(failures)))
    kill = {r.task_id: r.kill_rate for r in records if r.kept and r.task_id}
    rounds = Counter(str(r.round + 1) for r in records if r.kept)
    kept_rows = sorted(
        (
            KeptTask(
                task_id=r.task_id,
                capability=r.capability,
                rounds=r.round + 1,
                kill_rate=r.kill_rate,
                kill_rates=r.kill_rates,
                acceptance_rates=r.acceptance_rates,
                judge_score=r.judge_score,
                probe=None if r.probe_attempts is None else f"{r.probe_passes}/{r.probe_attempts}",
            )
            for r in records
            if r.kept and r.task_id
        ),
        key=lambda row: row.task_id,
    )
    return Funnel(
        slots=len({r.slot for r in records}),
        drafts=len(records),
        counts=funnel_counts(records),
        reasons=reasons,
        by_capability=by_cap,
        kill_rates=kill,
        kill_rates_by_class=_by_class(records),
        rounds_to_keep=dict(sorted(rounds.items())),
        kept_tasks=kept_rows,
        unfinished=sum(r.infrastructure for r in _last_rounds(records)),
        planned=planned_slots(records),
        diversity=diversity(kept),
    )


def _by_class(records: list[DraftRecord]) -> dict[str, float]:
    """The mean per-class kill rate over the drafts whose mutants ran."""
    rates: dict[str, list[float]] = {}
    for r in records:
        for kind, rate in r.kill_rates.items():
            rates.setdefault(kind, []).append(rate)
    return {kind: round(sum(v) / len(v), 4) for kind, v in sorted(rates.items())}


def _last_rounds(records: list[DraftRecord]) -> list[DraftRecord]:
    last: dict[int, DraftRecord] = {}
    for r in records:
        last[r.slot] = r
    return list(last.values())


def lengths_text(lengths: Lengths) -> str:
    """Medians of reference solutions for people: "median 2 turns, 6 tool calls (12 tasks)"."""
    if not lengths.tasks:
        return "none"
    return (
        f"median {_count(lengths.median_turns, 'turn')}, {_count(lengths.median_tool_calls, 'tool call')} "
        f"({_count(lengths.tasks, 'task')})"
    )


def _count(n: float | None, noun: str) -> str:
    return f"{n:g} {noun}" + ("" if n == 1 else "s")


def diversity_rows(funnel: Funnel) -> list[tuple[str, str]]:
    """The diversity figures as (figure, value) lines, for the terminal and the page."""
    d, plan = funnel.diversity, funnel.planned
    kinds = ", ".join(f"{n} {k}" for k, n in d.kinds.items()) or "none"
    planned_kinds = ", ".join(f"{n} {k}" for k, n in plan.kinds.items()) or "-"
    return [
        ("worlds", f"{d.distinct_worlds} ({d.distinct_industries} industries)"),
        (
            "planned worlds",
            f"{plan.worlds} ({plan.industries} industries); {_count(plan.on_generated_worlds, 'slot')} on "
            f"generated organizations; slots by kind: {planned_kinds}",
        ),
        ("kinds", f"{kinds}; multi-turn share {d.multi_turn_share:.2f}"),
        (
            "request templates",
            f"{d.distinct_templates} distinct; the most used {_count(d.max_template_uses, 'time')}",
        ),
        ("distinct-bigram ratio", f"{d.bigram_ratio:.3f} of user-message word bigrams"),
        ("tool-call sequences", f"{d.distinct_tool_sequences} distinct"),
        ("reference solutions", lengths_text(d.overall)),
        ("workdays", lengths_text(d.workdays)),
        ("people, openings", f"{d.distinct_people} distinct people, {d.distinct_openings} distinct openings"),
    ]


def words_text(words: dict[str, float]) -> str:
    """Instruction lengths for people: "min 12, median 20, max 41 words" (or "none")."""
    if not words:
        return "none"
    return ", ".join(f"{k} {v:g}" for k, v in words.items()) + " words"


def rounds_text(rounds: dict[str, int]) -> str:
    """Rounds to keep for people: "7 in round 1, 2 in round 2" (or "none kept")."""
    return ", ".join(f"{n} in round {r}" for r, n in rounds.items()) or "none kept"


def print_funnel(funnel: Funnel, console: Console) -> None:
    """The funnel as terminal tables: stages, capabilities, failure reasons, kept tasks."""
    table = Table(title=f"Funnel: {funnel.slots} slots, {funnel.drafts} drafts")
    table.add_column("stage", no_wrap=True)
    table.add_column("drafts passed", justify="right", no_wrap=True)
    table.add_column("meaning", overflow="fold")
    for stage in funnel.counts:
        table.add_row(stage, str(funnel.counts[stage]), STAGE_DETAILS.get(stage, ""))
    console.print(table)
    caps = Table(title="By capability")
    caps.add_column("capability", overflow="fold")
    caps.add_column("drafts", justify="right", no_wrap=True)
    caps.add_column("kept", justify="right", no_wrap=True)
    caps.add_column("stopped at (count)", overflow="fold")
    for c in funnel.by_capability:
        stops = ", ".join(f"{k} ({v})" for k, v in sorted(c.failures.items())) or "-"
        caps.add_row(c.capability, str(c.counts["generated"]), str(c.counts["kept"]), stops)
    console.print(caps)
    if funnel.reasons:
        why = Table(title="Why drafts failed")
        why.add_column("stage", no_wrap=True)
        why.add_column("example reasons", overflow="fold")
        for stage, texts in funnel.reasons.items():
            why.add_row(stage, "\n".join(t[:200] for t in texts))
        console.print(why)
    if funnel.kept_tasks:
        kept = Table(title="Kept tasks")
        kept.add_column("task", overflow="fold")
        kept.add_column("rounds", justify="right", no_wrap=True)
        kept.add_column("kill rate", justify="right", no_wrap=True)
        kept.add_column("mutant classes killed", overflow="fold")
        kept.add_column("right variants accepted", overflow="fold")
        for row in funnel.kept_tasks:
            kept.add_row(
                row.task_id,
                str(row.rounds),
                _rate(row.kill_rate),
                classes_text(row.kill_rates),
                classes_text(row.acceptance_rates),
            )
        console.print(kept)
    if funnel.kill_rates_by_class:
        classes = Table(title="Mutants killed per class")
        classes.add_column("class", no_wrap=True)
        classes.add_column("killed", justify="right", no_wrap=True)
        for kind, rate in funnel.kill_rates_by_class.items():
            classes.add_row(kind, _rate(rate))
        console.print(classes)
    figures = Table(title="Diversity of the kept tasks")
    figures.add_column("figure", no_wrap=True)
    figures.add_column("value", overflow="fold")
    for name, value in diversity_rows(funnel):
        figures.add_row(name, value)
    console.print(figures)
    d = funnel.diversity
    rates = [r for r in funnel.kill_rates.values() if r is not None]
    console.print(
        f"kept {funnel.counts['kept']}: {d.single_turn} single-turn, {d.multi_turn} multi-turn; "
        f"{d.distinct_people} distinct people, {d.distinct_openings} distinct openings, "
        f"{d.distinct_templates} request templates, {d.distinct_tool_sequences} tool sequences, "
        f"{d.distinct_worlds} worlds; "
        f"instruction length {words_text(d.instruction_words)}; "
        f"mean mutation kill rate {statistics.mean(rates) if rates else 0:.2f}; "
        f"rounds to keep: {rounds_text(funnel.rounds_to_keep)}"
    )
    if funnel.unfinished:
        console.print(
            f"{funnel.unfinished} slots stopped at endpoint failures; run the same command again to fill them"
        )


def classes_text(rates: dict[str, float]) -> str:
    """ "all 9", or "7/9, short: duplicate 0.50, undo 0.00" for per-class rates."""
    if not rates:
        return "-"
    short = {k: v for k, v in rates.items() if v < 1.0}
    if not short:
        return f"all {len(rates)}"
    return f"{len(rates) - len(short)}/{len(rates)}, short: " + ", ".join(
        f"{k} {v:.2f}" for k, v in short.items()
    )


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render_funnel_html(funnel: Funnel) -> str:
    """One self-contained page: funnel bars with what each stage means, failures by
    capability, reasons, each kept task's rounds and kill rate, and the diversity."""
    e = html.escape
    top = max(funnel.counts.values()) or 1
    bars = "".join(
        f'<tr><td>{e(stage)}</td><td>{e(STAGE_DETAILS.get(stage, ""))}</td><td class="n">{n}</td>'
        f'<td><svg width="320" height="14"><rect width="{320 * n / top:.1f}" height="14" fill="#4878a8"/></svg></td></tr>'
        for stage, n in funnel.counts.items()
    )
    caps = "".join(
        f"<tr><td>{e(c.capability)}</td><td class='n'>{c.counts['generated']}</td><td class='n'>{c.counts['kept']}</td>"
        f"<td>{e(', '.join(f'{k} ({v})' for k, v in sorted(c.failures.items())) or '-')}</td></tr>"
        for c in funnel.by_capability
    )
    reasons = "".join(
        f"<tr><td>{e(stage)}</td><td>{'<br>'.join(e(t[:300]) for t in texts)}</td></tr>"
        for stage, texts in funnel.reasons.items()
    )
    services = sorted({s for row in funnel.diversity.coverage.values() for s in row})
    coverage = "".join(
        f"<tr><td>{e(cap)}</td>"
        + "".join(f"<td class='n'>{row.get(s, 0) or ''}</td>" for s in services)
        + "</tr>"
        for cap, row in sorted(funnel.diversity.coverage.items())
    )
    kept = "".join(
        f"<tr><td>{e(row.task_id)}</td><td>{e(row.capability)}</td><td class='n'>{row.rounds}</td>"
        f"<td class='n'>{_rate(row.kill_rate)}</td><td>{e(classes_text(row.kill_rates))}</td>"
        f"<td>{e(classes_text(row.acceptance_rates))}</td></tr>"
        for row in funnel.kept_tasks
    )
    d = funnel.diversity
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>coworkenv synthesis funnel</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1100px}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:4px 8px;vertical-align:top}}.n{{text-align:right}}</style></head><body>
<h1>Synthesis funnel</h1><p>{funnel.slots} slots, {funnel.drafts} drafts, {funnel.counts["kept"]} kept.</p>
<section id="funnel"><h2>Stages</h2><table><tr><th>stage</th><th>a draft passes when</th><th>drafts passed</th><th></th></tr>
{bars}</table></section>
<section id="capabilities"><h2>By capability</h2><table><tr><th>capability</th><th>drafts</th><th>kept</th>
<th>stopped at</th></tr>{caps}</table></section>
<section id="reasons"><h2>Why drafts failed</h2><table>{reasons or "<tr><td>none</td></tr>"}</table></section>
<section id="kept"><h2>Kept tasks</h2><p>Rounds to keep: {e(rounds_text(funnel.rounds_to_keep))}.</p>
<table><tr><th>task</th><th>capability</th><th>rounds</th><th>mutation kill rate</th><th>mutant classes killed</th><th>right variants accepted</th></tr>
{kept or "<tr><td colspan='4'>none</td></tr>"}</table></section>
<section id="diversity"><h2>Diversity of the kept tasks</h2>
<table>{"".join(f"<tr><td>{e(k)}</td><td>{e(v)}</td></tr>" for k, v in diversity_rows(funnel))}</table>
<p>{d.single_turn} single-turn, {d.multi_turn} multi-turn; {d.distinct_people} distinct people;
{d.distinct_openings} distinct openings; {d.distinct_templates} request templates; {d.distinct_tool_sequences} tool
sequences; {d.distinct_worlds} worlds; instruction length {e(words_text(d.instruction_words))}.</p>
<table><tr><th>capability</th>{"".join(f"<th>{e(s)}</th>" for s in services)}</tr>{coverage}</table></section>
</body></html>
"""


def write_funnel(funnel: Funnel, out_dir: Path) -> dict[str, Path]:
    paths = {"json": out_dir / "funnel.json", "html": out_dir / "funnel.html"}
    paths["json"].write_text(funnel.model_dump_json(indent=2))
    paths["html"].write_text(render_funnel_html(funnel))
    return paths
