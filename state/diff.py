"""Row-level differences between two workspace states."""

import sqlite3
from typing import Any

from pydantic import BaseModel, Field

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
    before: sqlite3.Connection, after: sqlite3.Connection, *, include_internal: bool = False
) -> WorkspaceDiff:
    """Compare two databases table by table. Tables present on one side only count as all added or removed."""
    names = sorted(
        set(content_tables(before, include_internal=include_internal))
        | set(content_tables(after, include_internal=include_internal))
    )
    result = WorkspaceDiff()
    for table in names:
        old = _rows(before, table)
        new = _rows(after, table)
        table_diff = TableDiff()
        for key in sorted(new.keys() - old.keys(), key=repr):
            table_diff.added.append(new[key][1])
        for key in sorted(old.keys() - new.keys(), key=repr):
            table_diff.removed.append(old[key][1])
        for key in sorted(old.keys() & new.keys(), key=repr):
            key_cols, old_row = old[key]
            new_row = new[key][1]
            changes = {
                col: ColumnChange(before=old_row.get(col), after=new_row.get(col))
                for col in sorted(set(old_row) | set(new_row))
                if old_row.get(col) != new_row.get(col)
            }
            if changes:
                table_diff.changed.append(
                    RowChange(key=dict(zip(key_cols, key, strict=True)), columns=changes)
                )
        if not table_diff.is_empty:
            result.tables[table] = table_diff
    return result


def _rows(conn: sqlite3.Connection, table: str) -> dict[tuple[Any, ...], tuple[list[str], dict[str, Any]]]:
    if table not in content_tables(conn, include_internal=True):
        return {}
    pk = primary_key(conn, table)
    names = columns(conn, table)
    select = ", ".join(f'"{n}"' for n in names)
    if pk == ["rowid"]:
        select = "rowid, " + select
        names = ["rowid", *names]
    out = {}
    for values in conn.execute(f'SELECT {select} FROM "{table}"'):
        row = dict(zip(names, values, strict=True))
        key = tuple(row[c] for c in pk)
        row.pop("rowid", None)
        out[key] = (pk, row)
    return out
