"""What the workday families share: the moments of a day, how a request is worded in the
world's register with the moment it arrives, references and request texts of the world, and
events between turns."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from coworkenv.synth.validation.mutants import NUMBER
from coworkenv.task import Turn

from ...family import FamilyContext
from ...phrasing import Ask, request

Json = dict[str, Any]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def say(ctx: FamilyContext, moment: str, *steps: str, context: str = "", short: str = "") -> str:
    """The user's message: the moment it arrives, then the ask in the world's register. Every
    fact a check needs is in `steps` (registers may leave the context out)."""
    text = request(ctx, Ask(steps=tuple(steps), context=context, short=short))
    if "morning" not in moment.lower():  # a polite opening must not greet the wrong time of day
        text = text.replace("Good morning,", "Hello,", 1)
    return f"{moment} {text}"


def reference(ctx: FamilyContext) -> str:
    """A reference in the world's format (`NW-12345`)."""
    return f"{ctx.the_world.reference_prefix}-{ctx.rng.randint(10000, 99999)}"


def references(ctx: FamilyContext, n: int) -> list[str]:
    """`n` different references in the world's format."""
    out: list[str] = []
    while len(out) < n:
        ref = reference(ctx)
        if ref not in out:
            out.append(ref)
    return out


def plain_topics(topics: Sequence[Any]) -> list[Any]:
    """The topics with no figure of their own (a figure in a written text is what the wrong-figure
    mutants change, so the texts of a day hold only the figures its checks ask for); all of
    them when none is plain."""
    plain = [t for t in topics if not NUMBER.search(_PLACEHOLDER.sub("", f"{t.title} {t.body}"))]
    return plain or list(topics)


def customer_queue(ctx: FamilyContext) -> Any:
    """The first queue customers file into (the demo company's Support)."""
    return next(q for q in ctx.the_world.queues if q.requested_by == "customers")


def fill(ctx: FamilyContext, text: str, ref: str) -> str:
    """A world topic with its placeholders filled: `{order}` the reference, `{invoice}` an
    invoice number, `{city}` a place, `{date}` a day; amounts and counts in words, so the
    only figures of a day are those its checks ask for."""
    values = {
        "order": ref,
        "invoice": f"INV-{ctx.rng.randint(1000, 9999)}",
        "amount": "the amount charged",
        "city": ctx.choice(["Leeds", "Lyon", "Porto", "Ghent", "Graz", "Turku"]),
        "date": "last Tuesday",
        "n": "several",
    }
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def changed_mind(turn: Json) -> Json:
    """The turn marked as one where the user revises an earlier request, where the task format
    has that mark (reports count success by kind of change)."""
    return {**turn, "changed_mind": True} if "changed_mind" in Turn.model_fields else turn


def mail_event(sender: str, minutes: int, announced: bool, **params: object) -> Json:
    """An inbound mail from `sender` after `minutes`."""
    return {
        "service": "mail",
        "operation": "deliver_inbound",
        "announced": announced,
        "advance_minutes": minutes,
        "params": {"from_addr": sender, **params},
    }
