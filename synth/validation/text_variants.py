"""Variants of what a reference solution writes, for both sides of the contract.

A policy paid for mentioning a value learns to mention it in ways that are not the claim.
For every sentence of a written text (a mail body, a comment, a document) that states a
checked fact, the mutants keep the value in the text but make it not the claim, and must fail:

- hedge: the value beside a wrong alternative ("EUR 132,530 or EUR 132,531");
- negate: the sentence negated ("It is not the case that ...");
- rival: the sentence said twice, the second time with a wrong value (both as current);
- backwards: where a check forbids an old value, the old value given as current and the
  right one negated ("it is OLD, not NEW");
- weekday: for a date or time, a wrong weekday in a sentence of its own;
- blank: the whole text replaced by a greeting with no content.

The right rewrites must pass: courtesy around the text (a greeting, thanks, a sign-off), and
a checked value stated with the old value it replaces ("NEW (previously OLD)").

Sentences are found in the text as written; a value's place in a sentence comes from the same
mention finders the verdict uses (`verifiers.claims`), so the variants test the task's checks,
not a second reading of the text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from zoneinfo import ZoneInfo

from coworkenv.checks import Check, Fact, MailSent, StatesFacts
from coworkenv.state import Workspace
from coworkenv.synth.validation.variants import FREE_TEXT, Variant, replace_step, write_steps
from coworkenv.task import Task
from coworkenv.verifiers import Evidence
from coworkenv.verifiers.claims import reference_shape
from coworkenv.verifiers.evaluate import fact_mentions
from coworkenv.verifiers.facts import prepare

BLANK = "Hello,\n\nplease see below.\n\nBest regards"
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
#: Written texts that carry what the user asked to be said (a title or subject alone may be
#: a label that states nothing, so it is not blanked).
MESSAGE_TEXT = ("body", "content", "note", "description")
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+(?:[.!?]+(?=\s|$)|(?=\n)|$)")


@dataclass(frozen=True)
class Place:
    """Where a checked value stands in a step's text argument, as written."""

    argument: str
    sentence: tuple[int, int]
    value: tuple[int, int]


@dataclass(frozen=True)
class Located:
    """A checked fact found in the texts of a solution step (subject and body alike, since a
    check reads them together)."""

    i: int
    j: int
    places: tuple[Place, ...]
    fact: Fact
    old: Fact | None  # a forbidden old value of the same kind, when the check has one

    @property
    def arguments(self) -> list[str]:
        return list(dict.fromkeys(p.argument for p in self.places))


@dataclass(frozen=True)
class _Checked:
    """A fact a check asks for, the service whose writes it reads and the texts it reads it
    in (columns, or a mail's subject and body), and an absent fact of the same kind beside it."""

    fact: Fact
    service: str
    reads: frozenset[str]
    old: Fact | None


def _checked_facts(checks: list[Check]) -> list[_Checked]:
    out: dict[tuple[str, str, frozenset[str]], _Checked] = {}
    for check in checks:
        if isinstance(check, StatesFacts):
            service, reads = check.table.split("_", 1)[0], frozenset(check.columns)
        elif isinstance(check, MailSent):
            service, reads = "mail", frozenset({"subject", "body", "note"})
        else:
            continue
        for fact in check.facts:
            old = next((a for a in check.absent if a.kind == fact.kind), None)
            out.setdefault((fact.model_dump_json(), service, reads), _Checked(fact, service, reads, old))
    return list(out.values())


def locate(task: Task, seed: Workspace) -> Iterator[Located]:
    """Each fact a turn's checks (the last turn's: the task's final checks too) ask for, in
    each write step of that turn whose texts state it."""
    ev = Evidence(seed, seed, [], task.user_email)
    last = len(task.turns) - 1
    for i, j in write_steps(task):
        turn = task.turns[i]
        checked = _checked_facts([*turn.checks, *(task.checks if i == last else [])])
        step = turn.solution[j]
        texts = {a: v for a in FREE_TEXT if isinstance(v := step.arguments.get(a), str)}
        sentences = [
            (argument, m.span(), prepare(m.group()))
            for argument, text in texts.items()
            for m in _SENTENCE.finditer(text)
        ]
        for c in checked:
            places = []
            for argument, (s0, s1), prepared in sentences:
                if not step.tool.startswith(c.service + "_") or argument not in c.reads:
                    continue  # the check does not read this text
                if len(prepared) != s1 - s0:
                    continue  # positions would not map back to the text as written
                for x in fact_mentions(prepared, c.fact, ev):
                    if x.wanted:
                        places.append(Place(argument, (s0, s1), (s0 + x.start, s0 + x.end)))
            if places:
                yield Located(i, j, tuple(places), c.fact, c.old)


def wrong_value(fact: Fact, zone: str) -> str:
    """A wrong value of the fact's kind, written plainly."""
    if fact.number is not None:
        value = Decimal(str(fact.number)) * 10 + 1
        return f"{value:,}" + ("%" if fact.unit == "%" else "")
    if fact.date is not None:
        day = dt.date.fromisoformat(fact.date) + dt.timedelta(days=1)
        return f"{WEEKDAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]} {day.year}"
    if fact.time is not None:
        local = (fact.time + dt.timedelta(hours=1)).astimezone(
            ZoneInfo(fact.zones[0] if fact.zones else zone)
        )
        return local.strftime("%H:%M")
    if fact.ticket is not None:
        return f"#{fact.ticket + 1000}"  # far from the tickets a task lists
    if fact.person is not None:
        return "Alex Morgan"
    assert fact.text is not None
    digits = re.search(r"\d+$", fact.text)
    if digits:
        return fact.text[: digits.start()] + str(int(digits.group()) + 1).zfill(len(digits.group()))
    return "something else"


def _written(fact: Fact, zone: str) -> str:
    """The fact's own value, written plainly (for the old value of a backwards correction)."""
    if fact.number is not None:
        return f"{Decimal(str(fact.number)):,}" + ("%" if fact.unit == "%" else "")
    if fact.date is not None:
        day = dt.date.fromisoformat(fact.date)
        return f"{WEEKDAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]} {day.year}"
    if fact.time is not None:
        return fact.time.astimezone(ZoneInfo(fact.zones[0] if fact.zones else zone)).strftime("%H:%M")
    if fact.ticket is not None:
        return f"#{fact.ticket}"
    return str(fact.person or fact.text)


def with_texts(task: Task, at: Located, texts: dict[str, str]) -> Task:
    step = task.turns[at.i].solution[at.j]
    changed = step.model_copy(update={"arguments": {**step.arguments, **texts}})
    return replace_step(task, at.i, at.j, changed)


def edit_texts(task: Task, at: Located, edit: Callable[[str, list[Place]], str]) -> dict[str, str]:
    """Each text argument of the step, edited at its places (last first, so the positions
    of the earlier ones hold)."""
    step = task.turns[at.i].solution[at.j]
    out = {}
    for argument in at.arguments:
        places = sorted((p for p in at.places if p.argument == argument), key=lambda p: -p.value[0])
        out[argument] = edit(step.arguments[argument], places)
    return out


def _insert_after_values(words: str) -> Callable[[str, list[Place]], str]:
    def edit(text: str, places: list[Place]) -> str:
        for p in places:
            text = text[: p.value[1]] + words + text[p.value[1] :]
        return text

    return edit


def _negate_sentences(text: str, places: list[Place]) -> str:
    for s0, s1 in sorted({p.sentence for p in places}, reverse=True):
        rest = text[s0:s1].lstrip()
        lead = s1 - len(rest)
        text = text[:lead] + "It is not the case that " + rest[:1].lower() + rest[1:] + text[s1:]
    return text


def _replace_values(template: str) -> Callable[[str, list[Place]], str]:
    def edit(text: str, places: list[Place]) -> str:
        for p in places:
            v0, v1 = p.value
            text = text[:v0] + template.format(value=text[v0:v1]) + text[v1:]
        return text

    return edit


def _after_first_sentence(task: Task, at: Located, make: Callable[[str, Place], str]) -> dict[str, str]:
    """The step's texts with a sentence added after the first that states the fact."""
    place = at.places[0]
    text: str = task.turns[at.i].solution[at.j].arguments[place.argument]
    s0, s1 = place.sentence
    first = text[s0:s1].rstrip()
    end = s0 + len(first)
    added = make(text, place)
    return {
        place.argument: text[:end]
        + ("" if first.endswith((".", "!", "?")) else ".")
        + " "
        + added
        + text[end:]
    }


def has_rivals(fact: Fact) -> bool:
    """Whether another value of the fact's kind can contradict it (a phrase has no kind of
    its own to compete with, unless it is a reference like GO-95359)."""
    if fact.person is not None:
        return False
    return fact.text is None or reference_shape(fact.text) is not None


def claim_mutants(task: Task, seed: Workspace) -> list[Variant]:
    """Texts that keep each checked value but make it not the claim; all must fail."""
    zone = Evidence(seed, seed, [], task.user_email).user_zone
    out: list[Variant] = []
    seen: set[tuple[str, int, int]] = set()
    for at in locate(task, seed):
        if (at.fact.kind, at.i, at.j) in seen:
            continue  # one fact of each kind per step is enough
        seen.add((at.fact.kind, at.i, at.j))
        step = task.turns[at.i].solution[at.j]
        where = f"turns[{at.i}].solution[{at.j}] ({step.tool}) {'/'.join(at.arguments)}"
        what = at.fact.kind
        wrong = wrong_value(at.fact, zone)
        found = [
            (
                "hedge",
                f"the checked {what} beside a wrong alternative",
                edit_texts(task, at, _insert_after_values(f" or {wrong}")),
            ),
            (
                "negate",
                f"each sentence with the checked {what} negated",
                edit_texts(task, at, _negate_sentences),
            ),
        ]
        if has_rivals(at.fact):

            def again(text: str, p: Place, wrong: str = wrong) -> str:
                (s0, s1), (v0, v1) = p.sentence, p.value
                if text[v0:v1][:1].isdigit():
                    wrong = wrong.lstrip("#")  # the "#" of "tickets #61, #62" stands before the value
                return (text[s0:v0] + wrong + text[v1:s1]).strip()

            found.append(
                (
                    "rival",
                    f"the sentence said again with a wrong {what}",
                    _after_first_sentence(task, at, again),
                )
            )
        if at.old is not None:
            backwards = edit_texts(task, at, _replace_values(_written(at.old, zone) + ", not {value}"))
            found.append(("backwards", f"the old {what} given as current", backwards))
        if at.fact.date is not None or at.fact.time is not None:
            day = dt.date.fromisoformat(at.fact.date) if at.fact.date else at.fact.time.date()  # type: ignore[union-attr]
            other = WEEKDAYS[(day.weekday() + 1) % 7]
            found.append(
                (
                    "weekday",
                    f"a wrong weekday beside the checked {what}",
                    _after_first_sentence(task, at, lambda *_, other=other: f"That is on {other}."),
                )
            )
        out += [
            Variant("reject", kind, f"{where}: {description}", with_texts(task, at, texts), (at.i, at.j))
            for kind, description, texts in found
        ]
    return out


#: Tools that send or post a message someone reads, and the argument that carries it.
MESSAGES = {
    "mail_send_message": "body",
    "mail_reply": "body",
    "mail_forward": "note",
    "mail_save_draft": "body",
    "tickets_add_comment": "body",
}


def blank_mutants(task: Task, seed: Workspace) -> list[Variant]:
    """Each message the solution sends or posts, its text replaced by a greeting with no
    content: a message the user asked for must carry what it was asked to say. A message
    whose subject states a checked fact keeps it there, so it is left out."""
    located = {(at.i, at.j): at for at in locate(task, seed)}
    out = []
    for i, j in write_steps(task):
        step = task.turns[i].solution[j]
        argument = MESSAGES.get(step.tool)
        if argument is None or not isinstance(step.arguments.get(argument), str):
            continue
        at = located.get((i, j))
        if at is not None and any(a not in MESSAGE_TEXT for a in at.arguments):
            continue  # the checked fact stands in the subject too: blanking the body keeps it
        changed = step.model_copy(update={"arguments": {**step.arguments, argument: BLANK}})
        out.append(
            Variant(
                "reject",
                "blank",
                f"turns[{i}].solution[{j}] ({step.tool}) {argument}: a greeting with no content",
                replace_step(task, i, j, changed),
                (i, j),
            )
        )
    return out


def courteous_variants(task: Task) -> list[Variant]:
    """Each written message wrapped in a greeting and thanks; all must pass."""
    out = []
    for i, j in write_steps(task):
        step = task.turns[i].solution[j]
        for argument in MESSAGE_TEXT:
            text = step.arguments.get(argument)
            if not isinstance(text, str) or not text.strip() or step.tool == "files_write_file":
                continue
            polite = f"Thanks for your patience.\n\n{text.rstrip()}\n\nLet me know if anything else comes up. Have a good day!"
            changed = step.model_copy(update={"arguments": {**step.arguments, argument: polite}})
            out.append(
                Variant(
                    "accept",
                    "courtesy",
                    f"turns[{i}].solution[{j}] ({step.tool}) {argument} with a greeting and thanks around it",
                    replace_step(task, i, j, changed),
                    (i, j),
                )
            )
    return out


def old_value_variants(task: Task, seed: Workspace) -> list[Variant]:
    """Each checked value that replaces a forbidden old one, stated with it ("NEW (previously
    OLD)"); all must pass."""
    zone = Evidence(seed, seed, [], task.user_email).user_zone
    out = []
    seen: set[tuple[int, int]] = set()
    for at in locate(task, seed):
        if at.old is None or (at.i, at.j) in seen:
            continue
        seen.add((at.i, at.j))
        step = task.turns[at.i].solution[at.j]
        texts = edit_texts(task, at, _insert_after_values(f" (previously {_written(at.old, zone)})"))
        out.append(
            Variant(
                "accept",
                "with_old_value",
                f"turns[{at.i}].solution[{at.j}] ({step.tool}): the new {at.fact.kind} stated with the old one",
                with_texts(task, at, texts),
                (at.i, at.j),
            )
        )
    return out
