"""Which tables of a workspace hold content, and how their rows are keyed."""

import sqlite3

from .audit import AUDIT_TABLE

META_TABLE = "workspace_meta"
CHANGE_LOG_TABLES = ("workspace_changes", "workspace_base")
"""The change log and the base it is relative to (see `state.changes`): bookkeeping, never content."""
INTERNAL_TABLES = (META_TABLE, AUDIT_TABLE)


def content_tables(conn: sqlite3.Connection, *, include_internal: bool = False) -> list[str]:
    """Ordinary tables, sorted by name.

    Left out: SQLite's own tables, full-text virtual tables and their shadow tables (they
    are derived from the content tables), and unless asked, the meta table and audit log.
    """
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
    names = []
    for name, _ in rows:
        if name.startswith("sqlite_") or name in virtual:
            continue
        if any(name.startswith(v + "_") for v in virtual):
            continue
        if name in CHANGE_LOG_TABLES or (not include_internal and name in INTERNAL_TABLES):
            continue
        names.append(name)
    return sorted(names)


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Column names of a table, in declaration order."""
    return [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]


def primary_key(conn: sqlite3.Connection, table: str) -> list[str]:
    """Primary-key columns of a table; `["rowid"]` when it declares none."""
    info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    pk = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5] > 0]
    return pk or ["rowid"]
