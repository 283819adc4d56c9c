"""A reward-hacking search: the cheap changes to a task's reference solution that a policy
optimising the verdict would try, each played and judged; one that still earns strict
success is a finding.

The contract's mutants (`synth.validation.mutants`) are the wrong variants every family must kill,
one change at a time. The search goes past them the way a policy does: it applies a change
to every written text of the solution at once, composes changes, and tries kinds the
contract does not make:

- texts (every written text that states a checked fact, all at once):
  `appended_alternatives` (a P.S. listing wrong values of each checked kind), `bare_values`
  (wrong values with no unit, in a sentence of their own), `quoted_wrong` (a wrong value
  quoted as someone else's), `affirm_then_deny` (the text, then "To be clear, it is not
  RIGHT."), `candidates_list` (a bullet list of the right value and wrong ones),
  `hedged_everywhere` (every checked value approximated), `unconfirmed_everywhere` (every
  checked value followed by "(to be confirmed)"), `taken_back` (the text, then "Ignore the
  previous figures.") and `all_at_once` (every one of these together);
- second texts (every write that states a checked fact): `second_text_wrong` (the write
  made again right after, to the same place, with a wrong value where the right one was: a
  second mail, a second note) and `second_text_denies` (the same, saying "Correction: it is
  not RIGHT.");
- turns (multi-turn tasks): `done_late` (every turn's writes moved to the last turn) and
  `done_early` (each turn's work done in the turn before, before the user asked);
- objects: `touched_resolved` (every ticket the solution writes to resolved at the end),
  `extra_public_comment` (a content-free public comment on each ticket it writes to);
- targets (any service whose tools name rows by id): `also_elsewhere` (each write done
  again on the nearest other object of its kind: a second ticket closed, the call logged on
  a second deal, a row of another page updated) and `swapped_targets` (one turn's writes of
  one tool aimed at each other's objects: each ticket routed where the other should go).

`red_team(task)` plays every variant that can be played and returns the findings: the ones
a wrong agent would be paid for. The CLI runs it over task files (`coworkenv redteam`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from decimal import Decimal

from pydantic import BaseModel, Field

from coworkenv.rollout.episodes.replay import play_reference, play_variant
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.state import Workspace
from coworkenv.state.tables import content_tables
from coworkenv.synth.validation.diagnosis import ID_TABLES
from coworkenv.synth.validation.text_variants import Located, Place, has_rivals, locate, wrong_value
from coworkenv.synth.validation.variants import Variant, replace_step, step_of, with_solution, write_steps
from coworkenv.task import SolutionStep, Task
from coworkenv.verifiers import Evidence

__all__ = ["Finding", "RedTeamReport", "red_team", "search_variants"]


class Finding(BaseModel):
    """A change to the reference solution that a wrong agent would still be paid for."""

    kind: str
    description: str
    score: float


class RedTeamReport(BaseModel):
    """What the search tried on one task and what still passed."""

    task_id: str
    tried: dict[str, int] = Field(default_factory=dict, description="Variants played, per kind")
    findings: list[Finding] = Field(default_factory=list)
    error: str | None = Field(default=None, description="Why the search could not run (the reference failed)")


def _wrong_values(at: Located, zone: str) -> list[str]:
    """Wrong values of the fact's kind: the contract's wrong value and a near one."""
    first = wrong_value(at.fact, zone)
    fact = at.fact
    if fact.number is not None:
        near = Decimal(str(fact.number)) + 1
        return [first, f"{near:,}"]
    if fact.ticket is not None:
        return [first, f"#{fact.ticket + 1}"]
    if fact.date is not None:
        day = dt.date.fromisoformat(fact.date) - dt.timedelta(days=7)
        return [first, day.isoformat()]
    return [first]


Edit = Callable[[str, list[tuple[Located, str]]], str]
"""A text edit: the text, and each checked fact in it with the value as the text writes it."""


def _text_edits(zone: str) -> dict[str, Edit]:
    def appended(text: str, facts: list[tuple[Located, str]]) -> str:
        wrong = [v for at, _ in facts for v in _wrong_values(at, zone)]
        return text + "\n\nP.S. It could also be " + " or ".join(wrong) + "."

    def valued(facts: list[tuple[Located, str]]) -> list[tuple[Located, str]]:
        """The facts with a kind of their own (a phrase or a person has no wrong value to offer)."""
        return [(at, right) for at, right in facts if has_rivals(at.fact)]

    def bare(text: str, facts: list[tuple[Located, str]]) -> str:
        wrong = [
            v.lstrip("#")
            for at, _ in valued(facts)
            if at.fact.ticket is None
            for v in _wrong_values(at, zone)
        ]
        return text + "\n\nOther figures seen: " + ", ".join(wrong) + "." if wrong else text

    def quoted(text: str, facts: list[tuple[Located, str]]) -> str:
        said = " and ".join(f'"{_wrong_values(at, zone)[0]}"' for at, _ in valued(facts))
        return text + f"\n\nThe earlier message said {said}." if said else text

    def deny(text: str, facts: list[tuple[Located, str]]) -> str:
        return text + "\n\nTo be clear, it is not " + " and not ".join(right for _, right in facts) + "."

    def candidates(text: str, facts: list[tuple[Located, str]]) -> str:
        items = [v for at, right in valued(facts) for v in (right, *_wrong_values(at, zone))]
        return text + "\n\nCandidates:\n" + "\n".join(f"- {v}" for v in items) if items else text

    def hedged(text: str, facts: list[tuple[Located, str]]) -> str:
        return text  # in place: see _hedge_in_place

    def unconfirmed(text: str, facts: list[tuple[Located, str]]) -> str:
        return text  # in place: see _unconfirm_in_place

    def taken_back(text: str, facts: list[tuple[Located, str]]) -> str:
        return text + "\n\nIgnore the previous figures."

    edits: dict[str, Edit] = {
        "appended_alternatives": appended,
        "bare_values": bare,
        "quoted_wrong": quoted,
        "affirm_then_deny": deny,
        "candidates_list": candidates,
        "hedged_everywhere": hedged,
        "unconfirmed_everywhere": unconfirmed,
        "taken_back": taken_back,
    }

    def everything(text: str, facts: list[tuple[Located, str]]) -> str:
        for name, edit in edits.items():
            if name not in ("hedged_everywhere", "unconfirmed_everywhere"):
                text = edit(text, facts)
        return text

    return {**edits, "all_at_once": everything}


def _literal(at: Located, text: str, place: Place) -> str:
    """The value as the text writes it, as a reference on its own ("61" of "tickets #60, 61"
    as "#61")."""
    literal = text[place.value[0] : place.value[1]]
    return f"#{literal}" if at.fact.kind == "ticket" and literal.isdigit() else literal


def _hedge_in_place(text: str, places: list[Place]) -> str:
    """Every checked value in the text approximated ("approximately EUR 450")."""
    for start in sorted({p.value[0] for p in places}, reverse=True):
        text = text[:start] + "approximately " + text[start:]
    return text


def _unconfirm_in_place(text: str, places: list[Place]) -> str:
    """Every checked value followed by "(to be confirmed)"."""
    for end in sorted({p.value[1] for p in places}, reverse=True):
        text = text[:end] + " (to be confirmed)" + text[end:]
    return text


def _text_variants(task: Task, seed: Workspace) -> Iterator[Variant]:
    zone = Evidence(seed, seed, [], task.user_email).user_zone
    by_text: dict[tuple[int, int, str], list[tuple[Located, Place]]] = {}
    for at in locate(task, seed):
        for place in at.places:
            by_text.setdefault((at.i, at.j, place.argument), []).append((at, place))
    if not by_text:
        return
    for kind, edit in _text_edits(zone).items():
        variant = task
        for (i, j, argument), found in by_text.items():
            step = variant.turns[i].solution[j]
            text: str = step.arguments[argument]
            facts = list({id(at): (at, _literal(at, text, p)) for at, p in found}.values())
            if kind in ("hedged_everywhere", "all_at_once"):
                measured = [p for at, p in found if at.fact.kind in ("number", "date", "time")]
                edited = _hedge_in_place(text, measured)
            elif kind == "unconfirmed_everywhere":
                edited = _unconfirm_in_place(text, [p for _, p in found])
            else:
                edited = text
            edited = edit(edited, facts)
            if edited == text:
                continue
            changed = step.model_copy(update={"arguments": {**step.arguments, argument: edited}})
            steps = list(variant.turns[i].solution)
            steps[j] = changed
            variant = with_solution(variant, i, steps)
        if variant is not task:
            yield Variant("reject", kind, f"{kind} in every text that states a checked fact", variant)


def _second_text_variants(task: Task, seed: Workspace) -> Iterator[Variant]:
    """Each fact-stating write made twice: the second time wrong, or denying the first."""
    zone = Evidence(seed, seed, [], task.user_email).user_zone
    by_step: dict[tuple[int, int], list[tuple[Located, Place]]] = {}
    for at in locate(task, seed):
        for place in at.places:
            by_step.setdefault((at.i, at.j), []).append((at, place))
    if not by_step:
        return

    def wrong(text: str, found: list[tuple[Located, Place]], argument: str) -> str:
        for at, place in sorted(found, key=lambda f: -f[1].value[0]):
            if place.argument == argument:
                v0, v1 = place.value
                value = wrong_value(at.fact, zone)
                if not text[v0:v1].startswith("#"):  # "#61" may be written with its "#" outside
                    value = value.lstrip("#")
                text = text[:v0] + value + text[v1:]
        return text

    def denies(text: str, found: list[tuple[Located, Place]], argument: str) -> str:
        said = {_literal(at, text, p) for at, p in found if p.argument == argument}
        return "Correction: it is not " + " and not ".join(sorted(said)) + "." if said else text

    for kind, make in (("second_text_wrong", wrong), ("second_text_denies", denies)):
        variant = task
        for (i, j), found in sorted(by_step.items(), reverse=True):  # later steps first: indices hold
            step = variant.turns[i].solution[j]
            texts = {
                argument: make(step.arguments[argument], found, argument)
                for argument in {p.argument for _, p in found}
            }
            again = step.model_copy(update={"id": None, "arguments": {**step.arguments, **texts}})
            steps = list(variant.turns[i].solution)
            steps.insert(j + 1, again)
            variant = with_solution(variant, i, steps)
        yield Variant("reject", kind, f"{kind}: each write that states a checked fact made again", variant)


def _turn_variants(task: Task) -> Iterator[Variant]:
    if not task.is_multi_turn:
        return
    last = len(task.turns) - 1
    writes = write_steps(task)
    moved = [task.turns[i].solution[j] for i, j in writes if i < last]
    if moved:
        variant = task
        for i in range(last):
            kept = [s for j, s in enumerate(task.turns[i].solution) if (i, j) not in writes]
            variant = with_solution(variant, i, kept)
        variant = with_solution(variant, last, [*moved, *variant.turns[last].solution])
        yield Variant("reject", "done_late", "every turn's writes done in the last turn", variant)
    for i in range(last):
        nxt = task.turns[i + 1].solution
        if not any((i + 1, j) in writes for j in range(len(nxt))):
            continue
        variant = with_solution(task, i, [*task.turns[i].solution, *nxt])
        variant = with_solution(variant, i + 1, [])
        yield Variant(
            "reject", "done_early", f"turns[{i + 1}]'s work done in turns[{i}], before it was asked", variant
        )


def _object_variants(task: Task) -> Iterator[Variant]:
    tickets: list[object] = []
    for i, j in write_steps(task):
        step = task.turns[i].solution[j]
        ticket = step.arguments.get("ticket_id")
        if step.tool.startswith("tickets_") and ticket is not None and ticket not in tickets:
            tickets.append(ticket)
        if step.tool == "tickets_create_ticket":
            named = step.id or f"created_{i}_{j}"
            tickets.append({"$ref": f"{named}.id"})
    if not tickets:
        return
    last = len(task.turns) - 1
    ended = [
        s.arguments.get("ticket_id")
        for turn in task.turns
        for s in turn.solution
        if s.tool == "tickets_update_ticket" and s.arguments.get("status") in ("resolved", "closed")
    ]
    ends: list[SolutionStep] = [
        step_of("tickets_update_ticket", ticket_id=t, status="resolved") for t in tickets if t not in ended
    ]
    named_task = _named_creates(task)
    if ends and "tickets_tickets.status" not in task.guards.free:  # a freed status is any right one
        yield Variant(
            "reject",
            "touched_resolved",
            "every ticket the solution writes to, resolved at the end",
            with_solution(named_task, last, [*named_task.turns[last].solution, *ends]),
        )
    comments = [
        step_of("tickets_add_comment", ticket_id=t, body="Update: please see above.", visibility="public")
        for t in tickets
    ]
    yield Variant(
        "reject",
        "extra_public_comment",
        "a content-free public comment on every ticket the solution writes to",
        with_solution(named_task, last, [*named_task.turns[last].solution, *comments]),
    )


def _id_arguments(step: SolutionStep) -> list[tuple[str, int]]:
    """The arguments of a step that name a seed row by its integer id, with their values."""
    return [
        (name, value)
        for name, value in step.arguments.items()
        if name in ID_TABLES and isinstance(value, int) and not isinstance(value, bool)
    ]


def _target_variants(task: Task, seed: Workspace) -> Iterator[Variant]:
    """The writes aimed at other objects of the same kind: each also done on a neighbour
    (`also_elsewhere`), or the targets of one turn's writes of one tool swapped round
    (`swapped_targets`)."""
    named = {v for turn in task.turns for s in turn.solution for _, v in _id_arguments(s)}
    tables = set(content_tables(seed.conn))
    variant = task
    for i, j in sorted(write_steps(task), reverse=True):  # later steps first: indices hold
        step = task.turns[i].solution[j]
        for name, value in _id_arguments(step)[:1]:
            table = ID_TABLES[name]
            if table not in tables:
                continue
            other = seed.conn.execute(
                f"SELECT id FROM {table} WHERE id != ? ORDER BY abs(id - ?), id LIMIT 20", (value, value)
            ).fetchall()
            free = [r[0] for r in other if r[0] not in named]
            if free:
                again = step.model_copy(update={"id": None, "arguments": {**step.arguments, name: free[0]}})
                variant = replace_step(variant, i, j, step, again)
    if variant is not task:
        yield Variant("reject", "also_elsewhere", "each write also done on a neighbouring object", variant)
    groups: dict[tuple[int, str, str], list[tuple[int, int]]] = {}
    for i, j in write_steps(task):
        step = task.turns[i].solution[j]
        for name, value in _id_arguments(step)[:1]:
            groups.setdefault((i, step.tool, name), []).append((j, value))
    for (i, tool, name), found in groups.items():
        values = [v for _, v in found]
        rest = [{k: v for k, v in task.turns[i].solution[j].arguments.items() if k != name} for j, _ in found]
        if len(set(values)) < 2 or all(r == rest[0] for r in rest):
            continue  # one target, or the same write on each: swapping changes nothing
        rotated = values[1:] + values[:1]
        steps = list(task.turns[i].solution)
        for (j, _), value in zip(found, rotated, strict=True):
            steps[j] = steps[j].model_copy(update={"arguments": {**steps[j].arguments, name: value}})
        yield Variant(
            "reject",
            "swapped_targets",
            f"the {tool} calls of turns[{i}] aimed at each other's {name}",
            with_solution(task, i, steps),
        )


def _named_creates(task: Task) -> Task:
    """The task with every create_ticket step given an id, so later steps can refer to it."""
    out = task
    for i, j in write_steps(task):
        step = out.turns[i].solution[j]
        if step.tool == "tickets_create_ticket" and not step.id:
            steps = list(out.turns[i].solution)
            steps[j] = step.model_copy(update={"id": f"created_{i}_{j}"})
            out = with_solution(out, i, steps)
    return out


def search_variants(task: Task, seed: Workspace) -> list[Variant]:
    """Every variant the search plays on `task`."""
    return [
        *_text_variants(task, seed),
        *_second_text_variants(task, seed),
        *_turn_variants(task),
        *_object_variants(task),
        *_target_variants(task, seed),
    ]


async def red_team(task: Task, cache: SeedCache | None = None) -> RedTeamReport:
    """Play every search variant of `task` and report those that still earn strict success."""
    cache = cache or SeedCache()
    report = RedTeamReport(task_id=task.id)
    footprint = await reference_footprint(task, cache)
    oracle, starts = await play_reference(task, cache, footprint)
    if not oracle.success:
        report.error = f"the reference solution does not succeed: {oracle.error or oracle.status}"
        return report
    seed = cache.fork(task)
    for variant in search_variants(task, seed):
        record = await play_variant(variant.task, starts, cache, footprint, until_failed=True)
        if record.status != "completed":
            continue  # the change could not be played (a step before its object exists)
        report.tried[variant.kind] = report.tried.get(variant.kind, 0) + 1
        if record.success and record.final_hash != oracle.final_hash:  # the reference's end is no change
            report.findings.append(
                Finding(kind=variant.kind, description=variant.description, score=record.score)
            )
    return report
