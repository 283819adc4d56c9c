"""Right variants of a reference solution where a good assistant does the work differently
from the reference; each must PASS (the acceptance side of the contract, with
`synth.validation.acceptance`):

- second_note: an internal note ("Internal note: handled as asked.") on each ticket the
  reference updates or comments on, right after each such step (before it, where the step
  closes the ticket, which then takes no comments); an internal note is harmless however
  many there are.
- ticket_id_form: every "#61"-style ticket reference in the reference's written texts as
  "ticket ID 61", and (a second variant) as "Ticket-61": a ticket fact reads every form.
- reordered: in each turn, the first write step moved after the next write step, where
  nothing ties them: the moved step creates nothing (a later text may quote the new
  ticket's number), no step between them (the other write included) uses its result
  through a `$ref` or fails on purpose, they stay on the same side of a clarifying
  question, no path is named by both, and each step between that is of the same service
  names objects by literal ids, none of them the moved step's. A create, a search or an id
  taken from a `$ref` in the same service is not safely decidable, so it is not reordered.
- read_candidates_first: on a turn whose clarification lists `candidates`, each candidate
  read with its service's get tool (`READ_CANDIDATE`) just before the question.

A title reworded is not among them: a title is free text the agent words itself
(`TableRules.free_text`), but which rewording is still right (one that keeps the facts a
check reads in the title, and a title the user quoted as quoted) is not decided cheaply from
the steps; `other_format` rewrites titles' dates, times and ticket numbers already.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

from coworkenv.rollout.episodes.reference import user_messages
from coworkenv.synth.validation.variants import FREE_TEXT, Variant, step_of, tool_kind, with_solution
from coworkenv.task import SolutionStep, Task, Turn
from coworkenv.verifiers.created import normal, quotations

NOTE = "Internal note: handled as asked."
TOUCHES_TICKET = ("tickets_update_ticket", "tickets_add_comment")
CLOSED = ("closed",)
"""Statuses after which a ticket takes no comments: a note goes before the step that sets them."""

READ_CANDIDATE = {
    "ticket_id": "tickets_get_ticket",
    "event_id": "calendar_get_event",
    "message_id": "mail_get_message",
    "path": "files_read_file",
}
"""The read that shows an object, per argument that names it."""

TICKET_FORMS = ("ticket ID {}", "Ticket-{}")
"""Forms of a ticket reference, as templates for the ticket's number."""
_TICKET = re.compile(r"(?:\b[Tt]ickets?\s+)?#(\d+)\b")


def assistant_variants(task: Task) -> list[Variant]:
    """The right variants this module describes; all must pass."""
    return [
        *second_notes(task),
        *ticket_id_forms(task),
        *reordered(task),
        *candidates_read_first(task),
    ]


def second_notes(task: Task) -> list[Variant]:
    """One variant: an internal note on the ticket of each step that updates or comments on
    a ticket (see the module docstring)."""
    changed = task
    touched = []
    for i, turn in enumerate(task.turns):
        placed: list[tuple[SolutionStep, bool]] = []
        for j, step in enumerate(turn.solution):
            before_question = turn.clarification is not None and j < turn.clarification.after
            if step.tool not in TOUCHES_TICKET or step.expect_error or "ticket_id" not in step.arguments:
                placed.append((step, before_question))
                continue
            note = step_of(
                "tickets_add_comment", ticket_id=step.arguments["ticket_id"], body=NOTE, visibility="internal"
            )
            closes = step.arguments.get("status") in CLOSED
            placed += [(note, before_question), (step, before_question)][:: 1 if closes else -1]
            touched.append(f"turns[{i}].solution[{j}]")
        if len(placed) != len(turn.solution):
            changed = _with_placed(changed, i, placed)
    if not touched:
        return []
    return [
        Variant(
            "accept",
            "second_note",
            f"an internal note on the ticket of {', '.join(touched)}",
            changed,
        )
    ]


def _with_placed(task: Task, i: int, placed: list[tuple[SolutionStep, bool]]) -> Task:
    """Turn `i` with the solution `placed` lists, each step with whether it comes before the
    turn's clarifying question (whose `after` follows)."""
    changed = with_solution(task, i, [step for step, _ in placed])
    clarification = task.turns[i].clarification
    if clarification is None:
        return changed
    after = sum(before for _, before in placed)
    turn = changed.turns[i].model_copy(
        update={"clarification": clarification.model_copy(update={"after": after})}
    )
    return changed.model_copy(update={"turns": [*changed.turns[:i], turn, *changed.turns[i + 1 :]]})


def with_ticket_form(text: str, template: str) -> str:
    """`text` with each "#61" (and "ticket #61", "tickets #60 and #61") written by
    `template`, e.g. "ticket ID {}"."""
    return _TICKET.sub(lambda m: template.format(m.group(1)), text)


def ticket_id_forms(task: Task) -> list[Variant]:
    """One variant per form of `TICKET_FORMS`: every written text of the solution (but what
    the user quoted, kept as quoted) with its ticket references in that form."""
    quoted = quotations(user_messages(task))
    out = []
    for template in TICKET_FORMS:
        changed = task
        where = []
        for i, turn in enumerate(task.turns):
            steps = list(turn.solution)
            for j, step in enumerate(steps):
                texts = {
                    k: with_ticket_form(v, template)
                    for k, v in step.arguments.items()
                    if k in FREE_TEXT and isinstance(v, str) and normal(v) not in quoted
                }
                texts = {k: v for k, v in texts.items() if v != step.arguments[k]}
                if texts:
                    steps[j] = step.model_copy(update={"arguments": {**step.arguments, **texts}})
                    where.append(f"turns[{i}].solution[{j}]")
            if steps != turn.solution:
                changed = with_solution(changed, i, steps)
        if where:
            out.append(
                Variant(
                    "accept",
                    "ticket_id_form",
                    f'the tickets of {", ".join(where)} written as "{template.format(61)}"',
                    changed,
                )
            )
    return out


def reordered(task: Task) -> list[Variant]:
    """Per turn, its first write step moved after the next write step, where that is safe
    (see the module docstring)."""
    out = []
    for i, turn in enumerate(task.turns):
        for j, k in _write_pairs(turn):
            if not _movable(turn, j, k):
                continue
            steps = list(turn.solution)
            moved = [*steps[:j], *steps[j + 1 : k + 1], steps[j], *steps[k + 1 :]]
            first, second = steps[j], steps[k]
            out.append(
                Variant(
                    "accept",
                    "reordered",
                    f"turns[{i}].solution[{j}] ({first.tool}) moved after solution[{k}] ({second.tool})",
                    with_solution(task, i, moved),
                    (i, j),
                )
            )
            break
    return out


def _write_pairs(turn: Turn) -> Iterator[tuple[int, int]]:
    """(j, k) of each write step and the next write step of the turn."""
    writes = [j for j, s in enumerate(turn.solution) if not tool_kind(s.tool)[0]]
    yield from itertools.pairwise(writes)


def _movable(turn: Turn, j: int, k: int) -> bool:
    """Whether step `j` can move after step `k` with nothing else changed."""
    steps = turn.solution
    moved = steps[j]
    if turn.clarification is not None and (j < turn.clarification.after) != (k < turn.clarification.after):
        return False  # it would cross the question
    if moved.expect_error or moved.tool.split("_", 1)[1].startswith("create_"):
        return False  # a later step may name what it creates literally (the new ticket's number)
    for other in steps[j + 1 : k + 1]:
        if other.expect_error or (moved.id is not None and moved.id in _refs(other.arguments)):
            return False
        if _paths(moved) & _paths(other):
            return False
        if _service(other) == _service(moved) and not _apart(moved, other):
            return False
    return True


def _service(step: SolutionStep) -> str:
    return step.tool.split("_", 1)[0]


def _refs(value: Any) -> set[str]:
    """The step ids `value`'s `$ref`s read from."""
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            return {str(value["$ref"]).split(".", 1)[0]}
        return {r for v in value.values() for r in _refs(v)}
    if isinstance(value, list):
        return {r for v in value for r in _refs(v)}
    return set()


def _paths(step: SolutionStep) -> set[str]:
    """Every file path a step names, in any argument but its texts (an attachment too)."""
    out = set()
    for key, value in step.arguments.items():
        if key in FREE_TEXT:
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v.startswith("/"):
                out.add(v.rstrip("/"))
    return out


def _ids(step: SolutionStep) -> set[str] | None:
    """The objects a step names by id, as JSON values; None when it names none or names
    one through a `$ref` (which object that is, is only known when played)."""
    named = [v for k, v in step.arguments.items() if k.endswith(("_id", "_ids")) or k == "path"]
    if not named or _refs(named):
        return None
    return {json.dumps(x) for v in named for x in (v if isinstance(v, list) else [v])}


def _apart(a: SolutionStep, b: SolutionStep) -> bool:
    """Whether two steps of one service name disjoint objects, each by literal ids."""
    ids_a, ids_b = _ids(a), _ids(b)
    return ids_a is not None and ids_b is not None and not ids_a & ids_b


def candidates_read_first(task: Task) -> list[Variant]:
    """Per turn whose clarification lists candidates, each of them read just before the
    question (see `READ_CANDIDATE`); none where a candidate has no read."""
    out = []
    for i, turn in enumerate(task.turns):
        clarification = turn.clarification
        if clarification is None or not clarification.candidates:
            continue
        if any(c.argument not in READ_CANDIDATE for c in clarification.candidates):
            continue
        reads = [
            step_of(READ_CANDIDATE[c.argument], **{c.argument: c.value}) for c in clarification.candidates
        ]
        at = clarification.after
        placed = [(s, n < at) for n, s in enumerate(turn.solution)]
        placed = [*placed[:at], *((r, True) for r in reads), *placed[at:]]
        tools = ", ".join(sorted({r.tool for r in reads}))
        out.append(
            Variant(
                "accept",
                "read_candidates_first",
                f"turns[{i}] each of its {len(reads)} candidates read before asking ({tools})",
                _with_placed(task, i, placed),
            )
        )
    return out


__all__ = [
    "NOTE",
    "READ_CANDIDATE",
    "assistant_variants",
    "candidates_read_first",
    "reordered",
    "second_notes",
    "ticket_id_forms",
    "with_ticket_form",
]
