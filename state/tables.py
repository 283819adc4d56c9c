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
    return sorted(names)


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Column names of a table, in declaration order."""
    return [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]


def primary_key(conn: sqlite3.Connection, table: str) -> list[str]:
    """Primary-key columns of a table; `["rowid"]` when it declares none."""
    info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
    pk = [row[1] for row in sorted(info, key=lambda r: r[5]) if row[5] > 0]
    return pk or ["rowid"]
