"""The audit log: one row per tool call or world operation, in the workspace itself.

Verifiers read it (a forbidden call, an order of calls) and exports rebuild trajectories
from it. It lives in the same database as the service tables, so a snapshot carries it.
"""

import json
import sqlite3
from typing import Any, Literal

from pydantic import BaseModel

from .clock import NOW_SQL
from .jsontext import compact_json

Actor = Literal["agent", "oracle", "event", "user", "system"]

AUDIT_TABLE = "audit_log"

AUDIT_SQL = f"""
CREATE TABLE {AUDIT_TABLE} (
    seq INTEGER PRIMARY KEY,
    time TEXT NOT NULL,
    actor TEXT NOT NULL,
    service TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    result TEXT,
    is_error INTEGER NOT NULL,
    error TEXT,
    latency_ms REAL NOT NULL
);
"""


class AuditEntry(BaseModel):
    """One recorded call: who called what, with which arguments, and what came back."""

    seq: int
    time: str
    actor: str
    service: str
    tool: str
    arguments: dict[str, Any]
    result: Any = None
    is_error: bool
    error: str | None = None
    latency_ms: float


class AuditLog:
    """Appends to and reads the workspace's audit log."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def rebind(self, conn: sqlite3.Connection) -> None:
        """Read and write `conn` from now on (a released workspace rebinds to a closed one)."""
        self._conn = conn

    def record(
        self,
        *,
        time: str | None,
        actor: str,
        service: str,
        tool: str,
        arguments: dict[str, Any],
        result: Any,
        error: str | None,
        latency_ms: float,
        result_json: str | None = None,
    ) -> int:
        """Append one entry and return its sequence number. `time` None is the workspace
        clock's time, read by the same statement that writes the entry. `result_json` is
        `result` already written by `compact_json`, for a caller that shows the same text
        elsewhere; `result` is then not read."""
        if result_json is None and result is not None:
            result_json = compact_json(result)
        cursor = self._conn.execute(
            f"INSERT INTO {AUDIT_TABLE} (time, actor, service, tool, arguments, result, is_error, error, "
            f"latency_ms) VALUES (COALESCE(?, ({NOW_SQL})), "
            "?, ?, ?, ?, ?, ?, ?, ?)",
            (
                time,
                actor,
                service,
                tool,
                compact_json(dict(sorted(arguments.items()))),
                result_json,
                int(error is not None),
                error,
                latency_ms,
            ),
        )
        return int(cursor.lastrowid or 0)

    def entries(self, *, since: int = 0, actor: str | None = None) -> list[AuditEntry]:
        """Entries with a sequence number above `since`, oldest first, optionally by one actor."""
        sql = f"SELECT * FROM {AUDIT_TABLE} WHERE seq > ?"
        params: list[Any] = [since]
        if actor is not None:
            sql += " AND actor = ?"
            params.append(actor)
        cursor = self._conn.execute(sql + " ORDER BY seq", params)
        names = [d[0] for d in cursor.description]
        out = []
        for values in cursor.fetchall():
            row = dict(zip(names, values, strict=True))
            row["arguments"] = json.loads(row["arguments"])
            row["result"] = None if row["result"] is None else json.loads(row["result"])
            row["is_error"] = bool(row["is_error"])
            out.append(AuditEntry(**row))
        return out

    def last_seq(self) -> int:
        """The sequence number of the newest entry, 0 when the log is empty."""
        row = self._conn.execute(f"SELECT MAX(seq) FROM {AUDIT_TABLE}").fetchone()
        return int(row[0] or 0)
