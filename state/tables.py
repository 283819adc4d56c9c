"""Which tables of a workspace hold content, and how their rows are keyed."""

import sqlite3
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from .audit import AUDIT_TABLE

META_TABLE = "workspace_meta"
CHANGE_LOG_TABLES = ("workspace_changes", "workspace_base")
"""The change log and the base it is relative to (see `state.changes`): bookkeeping, never content."""
INTERNAL_TABLES = (META_TABLE, AUDIT_TABLE)
TRACKING_TRIGGERS = ("__track_insert", "__track_update", "__track_delete")
"""How the names of the change log's triggers end (see `state.changes`)."""


class WorkspaceConnection(sqlite3.Connection):
    """A connection that remembers what it has read of its schema (which tables hold
    content, each table's columns) for as long as the schema does not change: verification
    asks for them several times per check, and each `sqlite_master` or `PRAGMA table_info`
    read costs tens of microseconds. A schema change (SQLite's `schema_version` moves)
    forgets it all. Workspaces open every connection with this class."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.schema_memo: dict[Any, Any] = {}
        self._memo_version = -1
        self._fixed = 0

    @contextmanager
    def schema_fixed(self) -> Iterator[None]:
        """Within the block the remembered schema is trusted without asking SQLite for its
        schema version each time (about 6 µs a time, thousands of times per validated
        task): for code that runs no DDL, such as verification and reverts."""
        self.memo()
        self._fixed += 1
        try:
            yield
        finally:
            self._fixed -= 1

    def memo(self) -> dict[Any, Any]:
        """The remembered schema facts, valid for the current schema version."""
        if self._fixed:
            return self.schema_memo
        (version,) = self.execute("PRAGMA schema_version").fetchone()
        if version != self._memo_version:
            self.schema_memo.clear()
            self._memo_version = version
        return self.schema_memo


@contextmanager
def schema_fixed(*conns: sqlite3.Connection) -> Iterator[None]:
    """`WorkspaceConnection.schema_fixed` on each workspace connection of `conns` (others
    have no memo to trust)."""
    with ExitStack() as stack:
        for conn in conns:
            if isinstance(conn, WorkspaceConnection):
                stack.enter_context(conn.schema_fixed())
        yield


def _memo(conn: sqlite3.Connection) -> dict[Any, Any] | None:
    return conn.memo() if isinstance(conn, WorkspaceConnection) else None


def content_tables(conn: sqlite3.Connection, *, include_internal: bool = False) -> list[str]:
    """Ordinary tables, sorted by name.

    Left out: SQLite's own tables, full-text virtual tables and their shadow tables (they
    are derived from the content tables), and unless asked, the meta table and audit log.
    """
    memo = _memo(conn)
    key = ("tables", include_internal)
    if memo is not None and key in memo:
        return list(memo[key])
    rows = conn.execute(
        "SELECT name, upper(substr(sql, 1, 20)) = 'CREATE VIRTUAL TABLE' FROM sqlite_master WHERE type = 'table'"
    ).fetchall()
    virtual = tuple(name for name, is_virtual in rows if is_virtual)
    shadow = tuple(v + "_" for v in virtual)
    skipped = CHANGE_LOG_TABLES if include_internal else CHANGE_LOG_TABLES + INTERNAL_TABLES
    names = [
        name
        for name, is_virtual in rows
        if not is_virtual
        and not name.startswith("sqlite_")
        and not (shadow and name.startswith(shadow))
        and name not in skipped
    ]
    names.sort()
    if memo is not None:
        memo[key] = tuple(names)
    return names


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Column names of a table, in declaration order."""
    return [row[1] for row in _table_info(conn, table)]


def primary_key(conn: sqlite3.Connection, table: str) -> list[str]:
    """Primary-key columns of a table; `["rowid"]` when it declares none."""
    info = _table_info(conn, table)
    pk = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5] > 0]
    return pk or ["rowid"]


def _table_info(conn: sqlite3.Connection, table: str) -> tuple[tuple[Any, ...], ...]:
    # A table that does not exist (yet) has no columns: that is not remembered.
    return _table_pragma(conn, "table_info", table, remember_none=False)


def _table_pragma(
    conn: sqlite3.Connection, pragma: str, table: str, *, remember_none: bool = True
) -> tuple[tuple[Any, ...], ...]:
    """The rows of `PRAGMA <pragma>("<table>")`, remembered for as long as the schema stands."""
    memo = _memo(conn)
    key = (pragma, table)
    if memo is not None and key in memo:
        return memo[key]
    rows = tuple(conn.execute(f'PRAGMA {pragma}("{table}")').fetchall())
    if memo is not None and (rows or remember_none):
        memo[key] = rows
    return rows


def replaced_when_changed(conn: sqlite3.Connection, table: str) -> bool:
    """Whether a row of `table` whose values change must be deleted and inserted again
    rather than updated, for what the schema derives from it to follow: the table's own
    triggers (change tracking aside) act on inserts or deletes but none on updates (mail's
    recipients feed their message's search entry so), and no table refers to it, so
    deleting a row of it cascades nowhere."""
    memo = _memo(conn)
    key = ("replaced", table)
    if memo is not None and key in memo:
        return bool(memo[key])
    events: set[str] = set()
    for name, sql in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (table,)
    ):
        if str(name).endswith(TRACKING_TRIGGERS):
            continue
        head = str(sql).upper().split(" ON ", 1)[0]
        events.update(e for e in ("INSERT", "DELETE", "UPDATE") if f" {e}" in head)
    referred = any(
        row[2] == table
        for other in content_tables(conn)
        if other != table
        for row in _table_pragma(conn, "foreign_key_list", other)
    )
    replaced = bool(events) and "UPDATE" not in events and not referred
    if memo is not None:
        memo[key] = replaced
    return replaced


def dependency_order(conn: sqlite3.Connection, tables: list[str]) -> list[str]:
    """`tables` with every table after the tables its foreign keys refer to (a table's
    references to itself aside), else by name."""
    refs = {
        table: sorted({row[2] for row in _table_pragma(conn, "foreign_key_list", table)} - {table})
        for table in tables
    }
    out: list[str] = []
    placed: set[str] = set()

    def place(table: str, path: tuple[str, ...]) -> None:
        if table in placed or table in path:  # a cycle is broken where it is met
            return
        for parent in refs.get(table, []):
            if parent in refs:
                place(parent, (*path, table))
        placed.add(table)
        out.append(table)

    for table in sorted(tables):
        place(table, ())
    return out
