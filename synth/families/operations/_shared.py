"""Helpers the operations families share: planting seed operations, the demo clock, and the
shapes of the checks every task states."""

from __future__ import annotations

import re
import unicodedata
from datetime import timedelta
from typing import Any

from coworkenv.state import Workspace, format_time

from ...family import FamilyContext


def _plant(
    ctx: FamilyContext, services: list[str], operations: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], Workspace]:
    """The planted operations' results, and the workspace as seeding will leave it, for the
    queries that decide which demo rows also meet a task's condition."""
    return ctx.seeded(services, operations)


def _op(service: str, operation: str, **params: Any) -> dict[str, Any]:
    return {"service": service, "operation": operation, "params": params}


def _at(ctx: FamilyContext, **delta: float) -> str:
    """The demo clock start moved by `delta` (negative values lie in the past), as stored text."""
    return format_time(ctx.start + timedelta(**delta))


def _field(check_id: str, table: str, where: dict[str, Any], column: str, value: Any, text: str) -> dict:
    return {
        "id": check_id,
        "type": "field_equals",
        "table": table,
        "where": where,
        "column": column,
        "value": value,
        "description": text,
    }


def _guard(check: dict[str, Any]) -> dict[str, Any]:
    """The check as a guard: it holds on the seed already (an object the goal must leave
    alone), so it gates success but earns nothing."""
    return {**check, "role": "guard"}


def _states(
    check_id: str, table: str, where: dict[str, Any], columns: list[str], facts: list[dict], text: str
) -> dict[str, Any]:
    """Some row of `table` matching `where` states `facts` in `columns` (compared by meaning)."""
    return {
        "id": check_id,
        "type": "states",
        "table": table,
        "where": where,
        "columns": columns,
        "facts": facts,
        "description": text,
    }


def _max_id(ws: Workspace, table: str) -> int:
    return int(ws.conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0])


def _order(ctx: FamilyContext) -> str:
    return f"NW-{ctx.rng.randint(10000, 99999)}"


def _invoice(ctx: FamilyContext) -> str:
    return f"INV-2026-{ctx.rng.randint(1000, 9999)}"


def _ticket_values(ctx: FamilyContext) -> dict[str, str]:
    """Values for the placeholders of ticket titles: the demo's order and invoice numbers, or
    any world's references, amounts, places and dates."""
    if ctx.on_demo:
        return {"order": _order(ctx), "invoice": _invoice(ctx)}
    world = ctx.the_world
    return {
        "order": f"{world.reference_prefix}-{ctx.rng.randint(10000, 99999)}",
        "invoice": f"INV-{world.start.year}-{ctx.rng.randint(1000, 9999)}",
        "amount": f"{ctx.rng.randint(200, 9000)}.00 {world.currency}",
        "city": ctx.choice(["Springfield", "Riverton", "Lakeside", "Hillcrest", "Easton"]),
        "date": (world.start - timedelta(days=ctx.rng.randint(1, 9))).strftime("%d %B"),
    }


def _slug(text: str) -> str:
    """'Client Services' -> 'client-services' (a folder or file name)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", folded).strip("-")


def _topic_values(ctx: FamilyContext) -> dict[str, str]:
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


def _customer_queues(ctx: FamilyContext) -> list[Any]:
    """The world's queues that customers file into (every world has at least one)."""
    return [q for q in ctx.the_world.queues if q.requested_by == "customers"]


def _formal(ctx: FamilyContext) -> bool:
    return ctx.the_world.culture == "formal"
