"""Helpers the operations families share: planting seed operations, the demo clock, and the
checks and diff allowances every task states."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from coworkenv.servers.demo import DemoPerson
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


def _first(person: DemoPerson) -> str:
    return person.name.split()[0]


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


def _bounded(text: str, *allowed: dict[str, Any]) -> dict[str, Any]:
    return {"id": "no-collateral", "type": "bounded_diff", "description": text, "allowed": list(allowed)}


def _allow(table: str, where: dict[str, Any], *kinds: str) -> dict[str, Any]:
    return {"table": table, "where": where, "kinds": list(kinds)}


def _max_id(ws: Workspace, table: str) -> int:
    return int(ws.conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0])


def _order(ctx: FamilyContext) -> str:
    return f"NW-{ctx.rng.randint(10000, 99999)}"


def _invoice(ctx: FamilyContext) -> str:
    return f"INV-2026-{ctx.rng.randint(1000, 9999)}"


NO_DELETE = [{"id": "no-delete", "type": "no_deletion"}]
