"""How the user words a request: one ask, many registers.

A family states what the user wants as an `Ask`: the steps (imperative sentences that carry
every fact the checks need, verbatim), optionally why (`context`), a manager's one-line
version (`short`) and who the request came from when it was forwarded. `request(ctx, ask)`
words it in one of eight registers (terse, polite, chatty, forwarded with the ask at the
bottom, a bullet list, a manager's one-liner, context first, a question), each in a few
variants, chosen by the world's culture and the user's seniority with the family's seeded
random generator. The facts in the steps reach the text unchanged, so checks hold whatever
the register.

`first_name` and `greeting` are for reference texts (replies, notes): "Hi Maria," never
"Hi Dr.,". `seams` finds what a template left behind (placeholders, doubled words, stray
spaces); a test runs it over every text of every kept task.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

REGISTERS = ("terse", "polite", "chatty", "forwarded", "bullets", "one_liner", "context_first", "question")

_WEIGHTS = {
    # terse polite chatty forwarded bullets one_liner context_first question
    "formal": (1, 4, 1, 2, 2, 1, 3, 3),
    "neutral": (2, 3, 2, 2, 2, 2, 2, 2),
    "casual": (3, 1, 4, 2, 2, 3, 1, 2),
}
_SENIOR = re.compile(r"\b(head|director|chief|vp|vice president|partner|principal|dean|manager|lead)\b", re.I)
_PREFIXES = {"dr", "dr.", "mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "prof", "prof.", "mx", "mx."}


class _Person(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...


@dataclass(frozen=True)
class Ask:
    """What the user wants.

    steps: imperative sentences, each starting with its verb ("Move ticket #61 to Billing.");
      the facts checks need (ids, figures, dates, names) are written here.
    context: why, or what happened ("The customer was charged twice."); optional.
    short: the same ask as a manager would dash it off, every needed fact included; optional
      (default: the steps joined).
    forwarded_from: the person whose message the user forwards (the context is their text);
      optional, the forwarded register needs it and a context.
    """

    steps: tuple[str, ...]
    context: str = ""
    short: str = ""
    forwarded_from: Any = None

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError("an ask has at least one step")
        for step in self.steps:
            if not step.strip() or step.strip()[-1] not in ".?!":
                raise ValueError(f"a step is one sentence ending in '.', '?' or '!': {step!r}")


def first_name(name: str) -> str:
    """The given name of a full name, skipping titles such as Dr. or Ms."""
    words = [w for w in name.split() if w.lower() not in _PREFIXES]
    return words[0] if words else name.split()[-1]


def greeting(person: _Person, *, formal: bool = False) -> str:
    """The opening line of a mail to `person`: "Hi Maria," (or "Dear Maria Lopez,")."""
    if formal:
        words = [w for w in person.name.split() if w.lower() not in _PREFIXES]
        return f"Dear {' '.join(words)},"
    return f"Hi {first_name(person.name)},"


def register_for(ctx: Any) -> str:
    """The register of the next request in `ctx`'s world, for its user (seeded by ctx.rng)."""
    culture = getattr(ctx.world, "culture", "neutral") if ctx.world is not None else "neutral"
    weights = list(_WEIGHTS.get(culture, _WEIGHTS["neutral"]))
    if _SENIOR.search(getattr(ctx.user, "title", "") or ""):
        weights[REGISTERS.index("one_liner")] += 2
        weights[REGISTERS.index("terse")] += 1
    rng: random.Random = ctx.rng
    return rng.choices(REGISTERS, weights)[0]


def request(ctx: Any, ask: Ask, *, register: str | None = None) -> str:
    """The user's message for `ask`, in `register` (default: one chosen by `register_for`)."""
    chosen = register or register_for(ctx)
    if chosen not in REGISTERS:
        raise ValueError(f"unknown register {chosen!r}; use one of {', '.join(REGISTERS)}")
    if chosen == "forwarded" and not (ask.context and ask.forwarded_from is not None):
        chosen = "context_first" if ask.context else "polite"
    if chosen == "context_first" and not ask.context:
        chosen = "question"
    rng: random.Random = ctx.rng
    sign = first_name(ctx.user.name)
    return _WRITERS[chosen](ask, rng, sign).strip()


def _lower_first(sentence: str) -> str:
    """'Move ticket #61.' -> 'move ticket #61' (a verb, lower-cased, final mark dropped)."""
    body = sentence.strip().rstrip(".!?").strip()
    first, _, rest = body.partition(" ")
    if first.isupper() and len(first) > 1:  # an acronym or id stays as it is
        return body
    return (first[:1].lower() + first[1:] + (" " + rest if rest else "")).strip()


def _joined(steps: Sequence[str]) -> str:
    """The steps as one clause: 'move it, assign it to Sam and then close it'."""
    parts = [_lower_first(s) for s in steps]
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return f"{parts[0]} and then {parts[1]}"
    return ", ".join(parts[:-1]) + f" and finally {parts[-1]}"


def _sentences(steps: Sequence[str]) -> str:
    return " ".join(s.strip() for s in steps)


def _context(ask: Ask) -> str:
    text = ask.context.strip()
    return text if not text or text[-1] in ".?!" else text + "."


def _terse(ask: Ask, rng: random.Random, sign: str) -> str:
    variant = rng.randrange(3)
    if variant == 0:
        return _sentences(ask.steps)
    if variant == 1 and ask.context:
        return f"{_context(ask)} {_sentences(ask.steps)}"
    return f"{_sentences(ask.steps)} Thanks."


def _polite(ask: Ask, rng: random.Random, sign: str) -> str:
    opening = rng.choice(["Hello,", "Good morning,", "Hi,"])
    ask_line = rng.choice(
        [
            f"Could you please {_joined(ask.steps)}?",
            f"I would be grateful if you could {_joined(ask.steps)}.",
            f"Would you kindly {_joined(ask.steps)}?",
        ]
    )
    context = f" {_context(ask)}" if ask.context else ""
    closing = rng.choice(["Many thanks,", "Thank you,", "Kind regards,"])
    return f"{opening}\n\n{ask_line}{context}\n\n{closing}\n{sign}"


def _chatty(ask: Ask, rng: random.Random, sign: str) -> str:
    opening = rng.choice(["Hey!", "Hi there!", "Morning!"])
    filler = rng.choice(["Hope the week is going okay.", "Quick favour.", "One more for your list."])
    context = f" {_context(ask)}" if ask.context else ""
    ask_line = rng.choice(
        [
            f"When you get a minute, can you {_joined(ask.steps)}?",
            f"Can I hand you this one? Please {_joined(ask.steps)}.",
            f"Could you {_joined(ask.steps)}? No rush, today is fine.",
        ]
    )
    return f"{opening} {filler}{context} {ask_line} Thanks a lot, {sign}"


def _forwarded(ask: Ask, rng: random.Random, sign: str) -> str:
    sender = ask.forwarded_from
    quoted = "\n".join(f"> {line}" if line else ">" for line in _context(ask).splitlines())
    header = rng.choice(
        [
            f"---------- Forwarded message ----------\nFrom: {sender.name}\n\n{quoted}",
            f"{sender.name} wrote:\n\n{quoted}",
        ]
    )
    ask_line = rng.choice(
        [
            f"See above. Please {_joined(ask.steps)}.",
            f"Can you take care of this? {_sentences(ask.steps)}",
        ]
    )
    return f"{header}\n\n{ask_line}\n\n{sign}"


def _bullets(ask: Ask, rng: random.Random, sign: str) -> str:
    lead = (
        _context(ask)
        if ask.context and rng.random() < 0.5
        else rng.choice(["To do:", "A few things, please:", "Please take care of the following:"])
    )
    lines = "\n".join(f"- {s.strip().rstrip('.')}" for s in ask.steps)
    tail = f"\n\n{_context(ask)}" if ask.context and not lead.startswith(_context(ask)) else ""
    return f"{lead}\n{lines}{tail}"


def _one_liner(ask: Ask, rng: random.Random, sign: str) -> str:
    text = ask.short.strip() if ask.short else _joined(ask.steps)
    text = text.rstrip(".")
    text = text[:1].upper() + text[1:]
    return rng.choice([f"{text}, thanks.", f"{text} pls.", f"{text}. {sign[:1]}."])


def _context_first(ask: Ask, rng: random.Random, sign: str) -> str:
    connector = rng.choice(["Please", "So please", "Given that, please"])
    return f"{_context(ask)} {connector} {_joined(ask.steps)}."


def _question(ask: Ask, rng: random.Random, sign: str) -> str:
    ask_line = rng.choice([f"Can you {_joined(ask.steps)}?", f"Are you able to {_joined(ask.steps)}?"])
    return f"{ask_line} {_context(ask)}" if ask.context and rng.random() < 0.5 else ask_line


_WRITERS = {
    "terse": _terse,
    "polite": _polite,
    "chatty": _chatty,
    "forwarded": _forwarded,
    "bullets": _bullets,
    "one_liner": _one_liner,
    "context_first": _context_first,
    "question": _question,
}

_PLACEHOLDER = re.compile(
    r"\{[a-z_]*\}|<[^<>@\n]{2,60}>|\b(?:TODO|TBD|XXX|null)\b|\bNone\b(?! of\b)|\[[A-Z _]{3,}\]"
)
_DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.I)
_BAD_SPACING = re.compile(r" [.,;:!?](?!\w)|\.\.(?!\.)|[^\S\n]{2,}|[^\S\n]+$", re.M)
_EMPTY_GREETING = re.compile(r"\bDear\s*,|\b(?:Hi|Hello|Dear)(?:\s+,|\s+(?:Dr|Mr|Mrs|Ms|Prof)\.?,)")


def seams(text: str) -> list[str]:
    """What a template left in `text`: placeholders, doubled words, stray spacing, an empty or
    title-only greeting. Empty: none found."""
    found: list[str] = []
    for pattern, what in (
        (_PLACEHOLDER, "placeholder"),
        (_DOUBLED, "doubled word"),
        (_BAD_SPACING, "spacing"),
        (_EMPTY_GREETING, "greeting"),
    ):
        for match in pattern.finditer(text):
            if what == "doubled word" and match.group(1).isdigit():
                continue
            found.append(f"{what}: {match.group(0)!r}")
    return found
