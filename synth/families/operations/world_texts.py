"""What the operations families read from a world to write their tickets: values for the
placeholders of ticket titles and topics, the queues customers file into, whether the world
writes formally, and folder names."""

from __future__ import annotations

import re
import unicodedata
from datetime import timedelta

from coworkenv.world import Queue

from ...family import FamilyContext


def ticket_values(ctx: FamilyContext) -> dict[str, str]:
    """Values for the placeholders of ticket titles: the demo's order and invoice numbers, or
    any world's references, amounts, places and dates."""
    if ctx.on_demo:
        return {
            "order": f"NW-{ctx.rng.randint(10000, 99999)}",
            "invoice": f"INV-2026-{ctx.rng.randint(1000, 9999)}",
        }
    world = ctx.the_world
    return {
        "order": f"{world.reference_prefix}-{ctx.rng.randint(10000, 99999)}",
        "invoice": f"INV-{world.start.year}-{ctx.rng.randint(1000, 9999)}",
        "amount": f"{ctx.rng.randint(200, 9000)}.00 {world.currency}",
        "city": ctx.choice(["Springfield", "Riverton", "Lakeside", "Hillcrest", "Easton"]),
        "date": (world.start - timedelta(days=ctx.rng.randint(1, 9))).strftime("%d %B"),
    }


def topic_values(ctx: FamilyContext) -> dict[str, str]:
    """Values for every placeholder a world's topic may hold: a reference and an invoice
    number in the world's style, an amount in its currency, a place and a recent date."""
    world = ctx.the_world
    return {
        "order": f"{world.reference_prefix}-{ctx.rng.randint(10000, 99999)}",
        "invoice": f"INV-{world.start.year}-{ctx.rng.randint(1000, 9999)}",
        "amount": f"{ctx.rng.randint(200, 9000)}.00 {world.currency}",
        "city": ctx.choice(["Springfield", "Riverton", "Lakeside", "Hillcrest", "Easton"]),
        "date": (world.start - timedelta(days=ctx.rng.randint(1, 9))).strftime("%d %B").lstrip("0"),
    }


def customer_queues(ctx: FamilyContext) -> list[Queue]:
    """The world's queues that customers file into (every world has at least one)."""
    return [q for q in ctx.the_world.queues if q.requested_by == "customers"]


def writes_formally(ctx: FamilyContext) -> bool:
    """Whether the world's culture is formal (mail opens with "Dear ...")."""
    return ctx.the_world.culture == "formal"


def ascii_slug(text: str) -> str:
    """'Client Services' -> 'client-services', accents folded (a folder or file name)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", folded).strip("-")
