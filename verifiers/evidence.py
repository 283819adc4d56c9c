"""What checks look at: the initial state, the state being judged, and the agent's calls."""

from __future__ import annotations

import sqlite3
from functools import cached_property
from typing import Any

from coworkenv.state import AuditEntry, Workspace, WorkspaceDiff
from coworkenv.state.diff import diff_connections
from coworkenv.state.tables import columns, content_tables

from .where import CheckSpecError, matches


class Evidence:
    """Read-only views for one evaluation: `initial` (the seeded state before the agent),
    `final` (the state being judged: end of a turn or of the episode) and `calls` (the
    audit entries of the agent or oracle in the judged span; events are left out)."""

    def __init__(
        self, initial: Workspace, final: Workspace, audit: list[AuditEntry], user_email: str
    ) -> None:
        self.initial = initial
        self.final = final
        self.audit = audit
        self.user_email = user_email
        self._rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._columns: dict[str, set[str]] = {}

    def with_audit(self, audit: list[AuditEntry]) -> Evidence:
        """The same states with other calls (another span of the episode, judged on the same
        state): what this one read of the states is shared (the diff, the rows and columns
        read), so it is not read again. Only while neither state changes."""
        other = Evidence(self.initial, self.final, audit, self.user_email)
        other._rows, other._columns = self._rows, self._columns
        for name in ("diff", "tables", "user_zone"):
            if name in self.__dict__:
                other.__dict__[name] = self.__dict__[name]
        return other

    @cached_property
    def calls(self) -> list[AuditEntry]:
        """Every call by the acting policy (not world events), errors included, in order."""
        return [e for e in self.audit if e.actor != "event"]

    @cached_property
    def successful_calls(self) -> list[AuditEntry]:
        return [e for e in self.calls if not e.is_error]

    @cached_property
    def diff(self) -> WorkspaceDiff:
        return diff_connections(self.initial.conn, self.final.conn)

    def conn(self, state: str) -> sqlite3.Connection:
        return self.initial.conn if state == "initial" else self.final.conn

    @cached_property
    def tables(self) -> set[str]:
        return set(content_tables(self.final.conn))

    def columns(self, table: str) -> set[str]:
        if table not in self._columns:
            if table not in self.tables:
                raise CheckSpecError(f"no table {table!r}; tables are: {', '.join(sorted(self.tables))}")
            self._columns[table] = set(columns(self.final.conn, table))
        return self._columns[table]

    def owner_column(self, table: str) -> str | None:
        """The column that ties each row of `table` to the one object it belongs to (a
        comment's `ticket_id`): a NOT NULL foreign key to another table's `id`. None for a
        table of objects in their own right (a ticket's `queue` names a queue, not an owner)."""
        conn = self.final.conn
        required = {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")') if row[3]}
        for _, _, parent, column, to, *_ in conn.execute(f'PRAGMA foreign_key_list("{table}")'):
            if column in required and to == "id" and parent != table:
                return str(column)
        return None

    @cached_property
    def user_zone(self) -> str:
        """The user's time zone from the directory, else UTC."""
        if "directory_people" in self.tables:
            row = self.row_by_key("directory_people", {"email": self.user_email})
            if row is not None and row["time_zone"]:
                return str(row["time_zone"])
        return "UTC"

    def person_name(self, email: str) -> str | None:
        """A person's name from the directory, when the task has one."""
        if "directory_people" not in self.tables:
            return None
        row = self.final.conn.execute(
            "SELECT name FROM directory_people WHERE lower(email) = lower(?)", (email,)
        ).fetchone()
        return None if row is None else str(row[0])

    def row_by_key(self, table: str, key: dict[str, Any], state: str = "final") -> dict[str, Any] | None:
        """One row by primary key (a point query, not a scan), or None."""
        where = " AND ".join("rowid = ?" if k == "rowid" else f'"{k}" = ?' for k in key)
        cursor = self.conn(state).execute(f'SELECT * FROM "{table}" WHERE {where}', list(key.values()))
        row = cursor.fetchone()
        return None if row is None else dict(zip([d[0] for d in cursor.description], row, strict=True))

    def matching(self, table: str, where: dict[str, Any], state: str = "final") -> list[dict[str, Any]]:
        """The rows of a table that satisfy `where`. Equality and `in` conditions on numbers
        and text are given to SQLite (an index or the primary key finds the rows), the whole
        filter is then applied as `matches` defines it; with none, every row is read."""
        clauses, params = [], []
        for column, condition in where.items():
            values = _pushable(condition)
            if values is not None:
                clauses.append(f'"{column}" IN ({", ".join("?" * len(values))})')
                params += values
        if not clauses:
            return [r for r in self.rows(table, state) if matches(r, where)]
        self.columns(table)
        ws = self.initial if state == "initial" else self.final
        return [r for r in ws.rows(table, " AND ".join(clauses), params) if matches(r, where)]

    def rows(self, table: str, state: str = "final") -> list[dict[str, Any]]:
        """All rows of a table in the initial or final state (cached per evaluation)."""
        key = (state, table)
        if key not in self._rows:
            self.columns(table)
            ws = self.initial if state == "initial" else self.final
            self._rows[key] = ws.rows(table)
        return self._rows[key]


def _pushable(condition: Any) -> list[Any] | None:
    """The values an equality or `in` condition allows, when SQLite compares them exactly as
    `matches` does (numbers and text, never booleans or NULL); else None."""
    if isinstance(condition, dict):
        if set(condition) == {"eq"}:
            condition = condition["eq"]
        elif set(condition) == {"in"} and isinstance(condition["in"], list) and condition["in"]:
            values = condition["in"]
            return values if all(_plain_value(v) for v in values) else None
        else:
            return None
    return [condition] if _plain_value(condition) else None


def _plain_value(value: Any) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)
