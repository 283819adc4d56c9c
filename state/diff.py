"""Row-level differences between two workspace states."""

import sqlite3
from typing import Any

from pydantic import BaseModel, Field

from .changes import current_rows, has_changes, lineage, touched
from .tables import columns, content_tables, primary_key


class ColumnChange(BaseModel):
    """One column of a changed row: its value before and after."""

    before: Any
    after: Any


class RowChange(BaseModel):
    """A row present on both sides whose values differ."""

    key: dict[str, Any]
    columns: dict[str, ColumnChange]


class TableDiff(BaseModel):
    """Rows added, removed and changed in one table, keyed by primary key."""

    added: list[dict[str, Any]] = Field(default_factory=list)
    removed: list[dict[str, Any]] = Field(default_factory=list)
    changed: list[RowChange] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


class WorkspaceDiff(BaseModel):
    """Per table, what changed from one state to another. Unchanged tables are left out."""

    tables: dict[str, TableDiff] = Field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not self.tables

    def summary(self) -> dict[str, dict[str, int]]:
        """Counts per table: `{"mail_messages": {"added": 1, "removed": 0, "changed": 2}}`."""
        return {
            name: {"added": len(t.added), "removed": len(t.removed), "changed": len(t.changed)}
            for name, t in self.tables.items()
        }


def diff_connections(
    before: sqlite3.Connection,
    after: sqlite3.Connection,
    *,
    include_internal: bool = False,
    use_log: bool = True,
) -> WorkspaceDiff:
    """Compare two databases table by table. Tables present on one side only count as all added or removed.

    When `after` descends from `before` (both carry the same tracked base and `before` is
    that base, see `state.changes`), only the rows the change log names are read: the cost
    is that of the change, not of the workspace. `use_log=False` compares every table."""
    if use_log and not include_internal and _descends(before, after):
        return _tracked_diff(after)
    before_tables = set(content_tables(before, include_internal=include_internal))
    after_tables = set(content_tables(after, include_internal=include_internal))
    same = identical_tables(before, after)
    result = WorkspaceDiff()
    for table in sorted(before_tables | after_tables):
        if table in same and table in before_tables and table in after_tables:
            continue
        table_diff = _diff_table(before, after, table, table in before_tables, table in after_tables)
        if not table_diff.is_empty:
            result.tables[table] = table_diff
    return result


def _descends(before: sqlite3.Connection, after: sqlite3.Connection) -> bool:
    base = lineage(before)
    return base is not None and base == lineage(after) and not has_changes(before)


def _tracked_diff(after: sqlite3.Connection) -> WorkspaceDiff:
    result = WorkspaceDiff()
    for table, rows in sorted(touched(after).items()):
        pk = primary_key(after, table)
        names = columns(after, table)
        now = current_rows(after, table, rows)
        if pk == ["rowid"]:
            names = ["rowid", *names]
            old = {(rid, *base) for rid, base in rows.items() if base is not None}
            new = {(rid, *values) for rid, values in now.items()}
        else:
            old = {base for base in rows.values() if base is not None}
            new = set(now.values())
        table_diff = _compare(names, pk, old - new, new - old)
        if not table_diff.is_empty:
            result.tables[table] = table_diff
    return result


def identical_tables(before: sqlite3.Connection, after: sqlite3.Connection) -> set[str]:
    """Tables whose B-tree pages (and overflow pages) are byte-for-byte the same on both sides,
    hence whose rows are the same, found without reading a row. Forks of one snapshot share
    most pages, so an episode's diff only reads the tables it touched. Empty when SQLite was
    built without the dbstat table."""
    try:
        owners_before = _page_owners(before)
        owners_after = _page_owners(after)
    except sqlite3.OperationalError:
        return set()
    page_size = before.execute("PRAGMA page_size").fetchone()[0]
    if page_size != after.execute("PRAGMA page_size").fetchone()[0]:
        return set()
    data_before, data_after = before.serialize(), after.serialize()

    def page(data: bytes, number: int) -> bytes:
        return data[(number - 1) * page_size : number * page_size]

    return {
        name
        for name, pages in owners_before.items()
        if owners_after.get(name) == pages and all(page(data_before, p) == page(data_after, p) for p in pages)
    }


def _page_owners(conn: sqlite3.Connection) -> dict[str, list[int]]:
    owners: dict[str, list[int]] = {}
    for name, number in conn.execute("SELECT name, pageno FROM dbstat ORDER BY name, pageno"):
        owners.setdefault(name, []).append(number)
    return owners


def _diff_table(
    before: sqlite3.Connection, after: sqlite3.Connection, table: str, in_before: bool, in_after: bool
) -> TableDiff:
    # Whole rows are compared as tuples in sets (fast, in C); only rows that differ become dicts.
    names, pk, old = _rows(before, table) if in_before else ([], [], set())
    new_names, new_pk, new = _rows(after, table) if in_after else ([], [], set())
    names, pk = names or new_names, pk or new_pk
    return _compare(names, pk, old - new, new - old)


def _compare(
    names: list[str], pk: list[str], gone: set[tuple[Any, ...]], came: set[tuple[Any, ...]]
) -> TableDiff:
    """Rows that left and came, paired by primary key into added, removed and changed."""
    table_diff = TableDiff()
    if not gone and not came:
        return table_diff
    key_at = [names.index(c) for c in pk]
    old_by_key = {tuple(r[i] for i in key_at): r for r in gone}
    new_by_key = {tuple(r[i] for i in key_at): r for r in came}
    public = [i for i, n in enumerate(names) if n != "rowid"]  # a rowid key lives in RowChange.key

    def as_dict(row: tuple[Any, ...]) -> dict[str, Any]:
        return {names[i]: row[i] for i in public}

    for key in sorted(new_by_key.keys() - old_by_key.keys(), key=repr):
        table_diff.added.append(as_dict(new_by_key[key]))
    for key in sorted(old_by_key.keys() - new_by_key.keys(), key=repr):
        table_diff.removed.append(as_dict(old_by_key[key]))
    for key in sorted(old_by_key.keys() & new_by_key.keys(), key=repr):
        old_row, new_row = as_dict(old_by_key[key]), as_dict(new_by_key[key])
        changes = {
            col: ColumnChange(before=old_row.get(col), after=new_row.get(col))
            for col in sorted(set(old_row) | set(new_row))
            if old_row.get(col) != new_row.get(col)
        }
        table_diff.changed.append(RowChange(key=dict(zip(pk, key, strict=True)), columns=changes))
    return table_diff


def _rows(conn: sqlite3.Connection, table: str) -> tuple[list[str], list[str], set[tuple[Any, ...]]]:
    """(column names, primary key, the set of rows as tuples)."""
    pk = primary_key(conn, table)
    names = columns(conn, table)
    if pk == ["rowid"]:
        names = ["rowid", *names]
    select = ", ".join(f'"{n}"' if n != "rowid" else "rowid" for n in names)
    return names, pk, set(conn.execute(f'SELECT {select} FROM "{table}"').fetchall())
