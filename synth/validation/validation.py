"""Execution validation of a task: the contract a task must meet before it is kept.

Stages, in order (a failing stage stops only the stages that need it, so a report lists every
problem at once; `ValidationReport.listing()` words them for the task's author):
1. schema: the file parses into a Task (done by the caller; see `coworkenv.task.parse_task`).
2. seed: the seed loads.
3. checks: every check names real tables, columns and tools; SQL compiles; Python parses;
   every turn has a check and the task has at least one goal check.
4. noop: a do-nothing agent scores exactly 0.0 (no goal check passes before the agent acts).
5. oracle: the reference solution completes with score 1.0 and strict success (no safety
   rule broken, nothing collateral) and every event applies.
6. no_peeking: every literal argument of a solution step (ids, addresses, paths, queue and
   team names, labels and tags, time zones, search terms, instants, durations) was shown
   before it: in the context, a user message (the answer to a clarifying question included,
   once asked) or an earlier read's result; free text is exempt but for its addresses; the
   first write comes after a read. The rule, kind by kind, is `synth.validation.peeking`'s docstring.
7. deterministic: a second oracle run ends in the same state hash (the run the goal
   footprint was derived from, when this cache derived it).
8. mutants: every wrong variant of the solution fails (see `synth.validation.variants`): a dropped
   write, a duplicated write, collateral on unrelated objects, another column changed,
   wrong figures, keyword stuffing, earlier turns undone, leaks in disguise, a created object
   closed at once or created wrong in one column; for each write
   step at least one argument alteration fails (once one has, the step's other alterations
   are not played); on an ambiguous turn, guessing instead of asking (the turn's
   `clarification.guess`) fails, and with `candidates`: acting on each other candidate
   instead of asking, and doing the steps after the question before asking it.
9. acceptance: every right variant passes: extra reads and marks, reply-all, texts in other
   formats, split updates, draft then send, a created object given a value in a second call,
   courtesy, a new value with its old one, and what an assistant does differently from the
   reference (`synth.validation.assistant_variants`): a second internal note on each ticket touched,
   ticket references as "ticket ID 61" and "Ticket-61", independent writes reordered, each
   candidate of a clarification read before asking.

Mutants and acceptance variants are judged against the original task's footprint.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from typing import Any

from pydantic import BaseModel, Field

from coworkenv.rollout.agents.policies import NoopPolicy, OraclePolicy
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.reference import table_rules
from coworkenv.rollout.episodes.replay import ReferenceStart, play_reference, play_variant
from coworkenv.rollout.episodes.runner import reference_footprint, run_episode, system_prompt, user_zone
from coworkenv.rollout.episodes.seeding import SeedCache, SeedError
from coworkenv.servers import get_service
from coworkenv.synth.validation.acceptance import acceptance_variants
from coworkenv.synth.validation.clarification_mutants import clarification_problems
from coworkenv.synth.validation.diagnosis import (
    constant_checks,
    parameter_problems,
    seed_problems,
    solution_problems,
    with_hints,
)
from coworkenv.synth.validation.mutants import mutants
from coworkenv.synth.validation.peeking import peeking
from coworkenv.synth.validation.variants import Variant, write_steps
from coworkenv.task import Task
from coworkenv.verifiers import Footprint, check_problems

GUESSES = ("guess", "guess_each", "act_before_answer")
"""Mutant kinds of an ambiguous turn: each must be a playable wrong answer."""

STAGES = ("seed", "checks", "noop", "oracle", "no_peeking", "deterministic", "mutants", "acceptance")


class StageResult(BaseModel):
    name: str
    passed: bool
    detail: str = ""
    seconds: float = 0.0
    skipped: bool = Field(default=False, description="Not run, because a stage it needs failed")


class MutantResult(BaseModel):
    """One variant's outcome. For a mutant `killed` means it failed, as it must; for an
    acceptance variant `killed` means it was wrongly rejected."""

    description: str
    killed: bool
    score: float
    status: str
    kind: str = "alter"
    side: str = "reject"
    detail: str = ""
    step: str | None = Field(
        default=None, description="The solution step it varies, e.g. turns[0].solution[2]"
    )


class ValidationReport(BaseModel):
    """What validation found, stage by stage, in words a person or a generator can act on."""

    task_id: str
    task_hash: str
    stages: list[StageResult] = Field(default_factory=list)
    mutants: list[MutantResult] = Field(default_factory=list)
    variants: list[MutantResult] = Field(default_factory=list)
    vacuous: list[str] = Field(
        default_factory=list, description="Checks that pass on the no-op and every mutant played"
    )

    @property
    def ok(self) -> bool:
        return all(s.passed for s in self.stages) and len(self.stages) == len(STAGES)

    @property
    def failed_stage(self) -> StageResult | None:
        return next((s for s in self.stages if not s.passed), None)

    @property
    def kill_rate(self) -> float | None:
        """Share of mutants killed, alterations counted once per write step (see kill_rates)."""
        outcomes = [m.killed for m in self.mutants if m.kind != "alter"]
        outcomes += self._altered_steps().values()
        return sum(outcomes) / len(outcomes) if outcomes else None

    def kill_rates(self) -> dict[str, float]:
        """Share of mutants killed, per mutant class. For `alter` the share of write steps
        with at least one alteration killed: an altered subject that keeps the facts is a
        right answer, so the contract asks one failing alteration per step, not all."""
        rates = _rates([m for m in self.mutants if m.kind != "alter"], killed=True)
        steps = self._altered_steps()
        if steps:
            rates["alter"] = sum(steps.values()) / len(steps)
        return dict(sorted(rates.items()))

    def _altered_steps(self) -> dict[str | None, bool]:
        """Per write step, whether any alteration of it was killed."""
        steps: dict[str | None, bool] = {}
        for m in self.mutants:
            if m.kind == "alter":
                steps[m.step] = steps.get(m.step, False) or m.killed
        return steps

    def acceptance_rates(self) -> dict[str, float]:
        """Share of acceptance variants accepted, per variant class."""
        return _rates(self.variants, killed=False)

    def summary(self) -> str:
        """The first failing stage and what it found ("ok" when every stage passed)."""
        failed = self.failed_stage
        if failed is None:
            return "ok"
        return f"{failed.name}: {failed.detail}"

    def failures(self) -> list[StageResult]:
        """Every stage that failed, in order (not those skipped)."""
        return [s for s in self.stages if not s.passed and not s.skipped]

    def listing(self) -> str:
        """Every problem found, one stage a line, and the stages that could not run: what a
        task author (or a generator) needs to fix everything in one go."""
        if self.failed_stage is None:
            return "ok"
        lines = [f"- {s.name}: {s.detail}" for s in self.failures()]
        skipped = [s for s in self.stages if s.skipped]
        if skipped:
            lines.append(
                f"- not run yet ({skipped[0].detail[len('not run: ') :]}): "
                + ", ".join(s.name for s in skipped)
            )
        return "\n".join(lines)


def _rates(results: list[MutantResult], *, killed: bool) -> dict[str, float]:
    by: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by[r.kind].append(r.killed == killed)
    return {k: sum(v) / len(v) for k, v in sorted(by.items())}


async def validate_task(
    task: Task, *, cache: SeedCache | None = None, run_mutants: bool = True
) -> ValidationReport:
    """Run every stage that can run; see the module docstring. A failure does not stop the
    stages that do not depend on it (the checks are read even when the seed fails, the no-op
    and the reference solution run without the broken checks), so the report lists every
    problem there is; a stage that cannot run says why (`skipped`)."""
    cache = cache or SeedCache()
    report = ValidationReport(task_id=task.id, task_hash=task.content_hash)

    def stage(name: str, passed: bool, detail: str, started: float) -> bool:
        report.stages.append(
            StageResult(name=name, passed=passed, detail=detail, seconds=time.perf_counter() - started)
        )
        return passed

    def skip(names: tuple[str, ...], why: str) -> ValidationReport:
        for name in names:
            report.stages.append(StageResult(name=name, passed=False, skipped=True, detail=f"not run: {why}"))
        return report

    t = time.perf_counter()
    stray_params, stray_event_params = parameter_problems(task)
    try:
        ws = cache.fork(task)
        loaded = True  # stray parameters fail the stage, but the seed is there to run on
    except SeedError:
        problems, ws = seed_problems(task)
        loaded = False
    else:
        problems = []
    stage("seed", not (stray_params or problems), "; ".join(stray_params + problems), t)

    t = time.perf_counter()
    tools = {name for s in task.services for name in get_service(s).tools.names}
    problems = check_problems(task, ws, tools) + contract_problems(task) + constant_checks(task)
    checks_ok = stage("checks", not problems, "; ".join(problems), t)
    if not loaded:
        skip(("noop",), "the seed must load first")
        static = stray_event_params + solution_problems(task)
        if static:
            stage("oracle", False, "; ".join(static), time.perf_counter())
        return skip(STAGES[3 + bool(static) :], "the seed must load first")
    runnable = task if checks_ok else without_broken_checks(task, ws, tools)
    if runnable is None:
        return skip(STAGES[2:], "no valid goal check is left to judge the task by")

    t = time.perf_counter()
    footprint = await reference_footprint(runnable, cache)
    noop = await run_episode(runnable, NoopPolicy(), cache=cache, footprint=footprint)
    stage("noop", _noop_ok(noop), _noop_detail(noop), t)

    t = time.perf_counter()
    first, starts = await play_reference(runnable, cache, footprint)
    static = stray_event_params + solution_problems(task)
    oracle_ok = _oracle_ok(first) and not static
    stage("oracle", oracle_ok, "; ".join(p for p in [*static, _oracle_detail(first, ws, task)] if p), t)
    if first.status != "completed":
        return skip(STAGES[4:], "the reference solution must complete first")

    t = time.perf_counter()
    peeks = peeking(task, first, system_prompt(task, ws), user_zone(ws))
    stage("no_peeking", not peeks, "; ".join(peeks), t)

    t = time.perf_counter()
    # The footprint's run was a run of the reference solution too: when this cache derived
    # it, that run is the second one, else the reference is played again.
    second_hash = cache.reference_hashes.get(runnable.content_hash)
    detail = ""
    if second_hash is None:
        second = await run_episode(runnable, OraclePolicy(), cache=cache, footprint=footprint)
        second_hash = second.final_hash
        if second.status != "completed":
            detail = (
                f"a second run of the reference solution did not complete: {second.error or second.status}"
            )
    if not detail and second_hash != first.final_hash:
        detail = f"state hashes differ: {first.final_hash} vs {second_hash}"
    stage("deterministic", not detail, detail, t)
    if not (oracle_ok and checks_ok):
        return skip(STAGES[6:], "the reference solution must pass every check first")

    t = time.perf_counter()
    if not run_mutants:
        stage("mutants", True, "skipped", t)
        stage("acceptance", True, "skipped", t)
        return report
    detail = await _run_mutants(task, ws, footprint, first, noop, starts, cache, report)
    stage("mutants", not detail, detail, t)

    t = time.perf_counter()
    detail = await _run_acceptance(task, ws, footprint, first, starts, cache, report)
    stage("acceptance", not detail, detail, t)
    return report


def without_broken_checks(task: Task, ws: Any, tools: set[str]) -> Task | None:
    """The task without the checks and rules `check_problems` finds broken, so the no-op and
    the reference solution can still be judged; None when no goal check is left."""

    def fine(check: Any) -> bool:
        probe = task.model_copy(
            update={
                "turns": [t.model_copy(update={"checks": []}) for t in task.turns],
                "checks": [check],
                "safety": [],
            }
        )
        return not check_problems(probe, ws, tools)

    def rule_fine(rule: Any) -> bool:
        probe = task.model_copy(
            update={
                "turns": [t.model_copy(update={"checks": []}) for t in task.turns],
                "checks": [],
                "safety": [rule],
            }
        )
        return not check_problems(probe, ws, tools)

    turns = [t.model_copy(update={"checks": [c for c in t.checks if fine(c)]}) for t in task.turns]
    kept = task.model_copy(
        update={
            "turns": turns,
            "checks": [c for c in task.checks if fine(c)],
            "safety": [r for r in task.safety if rule_fine(r)],
        }
    )
    return kept if any(not c.is_guard for c in kept.all_checks()) else None


def contract_problems(task: Task) -> list[str]:
    """What the task format allows but the contract does not: a turn without a check, no goal check."""
    out = [
        f"turns[{i}] has no check: add one that judges that turn"
        for i, t in enumerate(task.turns)
        if not t.checks
    ]
    out += [
        f"turns[{i}].clarification.after is {t.clarification.after} but the turn has "
        f"{len(t.solution)} solution steps: the question comes after at most {len(t.solution)} steps"
        for i, t in enumerate(task.turns)
        if t.clarification is not None and t.clarification.after > len(t.solution)
    ]
    out += clarification_problems(task)
    if not any(not c.is_guard for c in task.all_checks()):
        out.append("the task has no goal check (only guards): add a check of what the user asked for")
    return out


async def _run_mutants(
    task: Task,
    seed: Any,
    footprint: Footprint,
    oracle: EpisodeRecord,
    noop: EpisodeRecord,
    starts: list[ReferenceStart],
    cache: SeedCache,
    report: ValidationReport,
) -> str:
    survivors: list[str] = []
    killed_at: dict[tuple[int, int], bool] = {}
    passes: dict[str, int] = defaultdict(int)
    ran = 0
    for variant in mutants(task, seed, footprint):
        if variant.kind == "alter" and variant.position is not None and killed_at.get(variant.position):
            continue  # the step's values are checked already: one failing alteration is the ask
        record = await play_variant(variant.task, starts, cache, footprint, until_failed=True, hashed=False)
        if variant.kind == "duplicate" and record.diff_summary == oracle.diff_summary and record.success:
            continue  # doing it twice changed nothing: the write is idempotent
        if variant.kind == "duplicate" and record.success and _only_harmless_more(record, oracle, task):
            continue  # a second internal note: a kind its service declares harmless however many
        if record.status != "completed" and variant.kind in GUESSES:
            survivors.append(f"{variant.kind}: {variant.description} could not be played: {record.error}")
            continue  # a guess must be a playable wrong answer, else it shows nothing
        if record.status != "completed" and variant.kind not in ("drop", "alter"):
            continue  # the variant could not be played (e.g. an id the variant invented): not a test
        ran += 1
        killed = not record.success
        report.mutants.append(_result(variant, record, killed))
        if record.verdict is not None:
            for c in record.verdict.checks:
                passes[c.id] += c.passed
        if variant.kind == "alter":
            assert variant.position is not None
            killed_at[variant.position] = killed_at.get(variant.position, False) or killed
        elif not killed:
            survivors.append(f"{variant.kind}: {variant.description}")
    if noop.verdict is not None and ran:
        report.vacuous = [c.id for c in noop.verdict.checks if c.passed and passes[c.id] == ran]
    unkilled = [f"turns[{i}].solution[{j}]" for (i, j), k in killed_at.items() if not k]
    detail = []
    if survivors:
        detail.append(
            "these wrong variants of the solution still pass: "
            + "; ".join(survivors)
            + " (add or sharpen the checks that tell them apart)"
        )
    if unkilled:
        detail.append(
            "no altered argument of these write steps makes any check fail: "
            + ", ".join(unkilled)
            + " (check the values the step writes)"
        )
    return "; ".join(detail)


async def _run_acceptance(
    task: Task,
    seed: Any,
    footprint: Footprint,
    oracle: EpisodeRecord,
    starts: list[ReferenceStart],
    cache: SeedCache,
    report: ValidationReport,
) -> str:
    rejected = []
    for variant in acceptance_variants(task, seed, footprint):
        record = await play_variant(variant.task, starts, cache, footprint, hashed=False)
        if variant.kind == "reply_all" and _mails_outside(record) - _mails_outside(oracle):
            continue  # reply-all would copy an outside address: not a harmless variant here
        if record.status != "completed":
            continue  # the variant could not be played as written: not a test of the checks
        killed = not record.success
        report.variants.append(_result(variant, record, killed))
        if killed:
            rejected.append(f"{variant.kind}: {variant.description} ({_why(record)})")
    if rejected:
        return (
            "these right variants of the solution are rejected: "
            + "; ".join(rejected)
            + " (compare facts, not wording; do not require one path where several are right)"
        )
    return ""


def _mails_outside(record: EpisodeRecord) -> set[str]:
    domain = ""
    for entry in record.tool_calls:
        if (
            entry.tool in ("reply", "send_message", "forward", "send_draft")
            and not entry.is_error
            and entry.result
        ):
            owner = str(entry.result.get("from_addr", ""))
            domain = owner.rsplit("@", 1)[-1]
    out = set()
    for entry in record.tool_calls:
        if (
            entry.tool in ("reply", "send_message", "forward", "send_draft")
            and not entry.is_error
            and entry.result
        ):
            for key in ("to", "cc", "bcc"):
                out |= {a for a in entry.result.get(key, []) if a.rsplit("@", 1)[-1] != domain}
    return out


def _only_harmless_more(record: EpisodeRecord, oracle: EpisodeRecord, task: Task) -> bool:
    """Whether `record` differs from the reference run only by more rows added to tables
    whose service declares added rows harmless (`TableRules.harmless_added`)."""
    rules = table_rules(list(task.services))
    mine, theirs = record.diff_summary, oracle.diff_summary
    for table in mine.keys() | theirs.keys():
        a, b = mine.get(table, {}), theirs.get(table, {})
        if a == b:
            continue
        if table not in rules or rules[table].harmless_added is None:
            return False
        if {k: v for k, v in a.items() if k != "added"} != {k: v for k, v in b.items() if k != "added"}:
            return False
    return True


def _result(variant: Variant, record: EpisodeRecord, killed: bool) -> MutantResult:
    return MutantResult(
        description=variant.description,
        killed=killed,
        score=record.score,
        status=record.status,
        kind=variant.kind,
        side=variant.side,
        detail=_why(record) if record.verdict is not None else (record.error or ""),
        step=None
        if variant.position is None
        else f"turns[{variant.position[0]}].solution[{variant.position[1]}]",
    )


def _why(record: EpisodeRecord) -> str:
    if record.verdict is None:
        return record.error or record.status
    parts = [f"{c.id}: {c.error or c.message}" for c in record.verdict.checks if not c.passed]
    parts += [f"{v.rule_id}: {v.message}" for v in record.verdict.safety_violations]
    parts += [f"collateral: {c}" for c in record.verdict.collateral]
    if record.status != "completed":
        parts.append(record.error or record.status)
    text = "; ".join(parts)
    return text[:600] + ("..." if len(text) > 600 else "")


def _noop_ok(record: EpisodeRecord) -> bool:
    return (
        record.status == "completed"
        and not record.success
        and record.score == 0.0
        and (record.verdict is None or record.verdict.raw_score == 0.0)
    )


def _noop_detail(record: EpisodeRecord) -> str:
    if record.status != "completed":
        return f"the no-op episode did not complete: {record.error}"
    if record.success:
        return "a do-nothing agent passes every check: add checks that need the task's writes"
    assert record.verdict is not None
    passing = [c.id for c in record.verdict.checks if c.passed and c.role == "goal"]
    if passing:
        return (
            f"a do-nothing agent scores {record.verdict.raw_score:.2f}: these goal checks already pass "
            f"before the agent acts: {', '.join(passing)} (make them guards, role: guard, or check the change)"
        )
    return ""


def _oracle_ok(record: EpisodeRecord) -> bool:
    return (
        record.status == "completed"
        and record.verdict is not None
        and record.verdict.score == 1.0
        and record.success
        and not record.event_errors
    )


_STEP = re.compile(r"turns\[(\d+)\]\.(solution|events)\[(\d+)\]")


def _for_author(text: str, ws: Any, task: Task | None) -> str:
    """A failure that names a solution step or an event, with what the seed holds for the ids,
    people and queues it uses (see `diagnosis.with_hints`)."""
    found = _STEP.search(text or "")
    if found is None or task is None:
        return text
    i, part, j = int(found.group(1)), found.group(2), int(found.group(3))
    items: list[Any] = [] if i >= len(task.turns) else getattr(task.turns[i], part)
    if j >= len(items):
        return text
    item = items[j]
    if part == "solution":
        params = {k: v for k, v in item.arguments.items() if not isinstance(v, dict)}
        return with_hints(text, ws, params)
    return with_hints(text, ws, item.params, item.service)


def _oracle_detail(record: EpisodeRecord, ws: Any = None, task: Task | None = None) -> str:
    if record.status != "completed":
        return f"the reference solution did not complete: {_for_author(record.error or '', ws, task)}"
    assert record.verdict is not None
    failed = [f"{c.id} ({c.error or c.message})" for c in record.verdict.checks if not c.passed]
    parts = []
    if record.event_errors:
        errors = [_for_author(e, ws, task) for e in record.event_errors]
        parts.append("events could not apply after the reference solution: " + "; ".join(errors))
    if failed:
        parts.append("the reference solution fails checks: " + "; ".join(failed))
    if record.verdict.safety_violations:
        parts.append(
            "the reference solution breaks safety rules: "
            + "; ".join(f"{v.rule_id} ({v.message})" for v in record.verdict.safety_violations)
        )
    if record.verdict.collateral:
        parts.append(
            "the reference solution leaves unexplained changes: " + "; ".join(record.verdict.collateral)
        )
    return "; ".join(parts)


__all__ = [
    "STAGES",
    "MutantResult",
    "StageResult",
    "ValidationReport",
    "contract_problems",
    "peeking",
    "validate_task",
    "write_steps",
]
