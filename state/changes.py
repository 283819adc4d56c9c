"""Change tracking: which rows changed since a base state, so diffs and hashes cost what the
change costs, not what the workspace holds.

Triggers on every content table log each row a write touches (`workspace_changes`: table,
rowid, and the row as it was in the base, kept from the first touch, as a list of SQL
literals from `quote()`, which is exact for every type, floats included). `mark_base` makes the
current state the base: it stores each table's multiset hash (`workspace_base`) and empties
the log. Forks carry both tables, so a fork of a marked seed knows, for every later state,
exactly which rows differ from the seed and what they were.

A table's multiset hash is the sum, modulo 2**256, of the SHA-256 of each row's canonical
JSON (columns in name order): independent of row order, and updated by subtracting the
touched rows' base values and adding their current ones. It tells equal states from unequal
ones for verification (not a defence against someone crafting collisions).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from .tables import columns, content_tables, dependency_order, replaced_when_changed, schema_fixed

CHANGES_TABLE = "workspace_changes"
BASE_TABLE = "workspace_base"
LINEAGE = ""
"""The `workspace_base` row whose digest names the base state itself."""

MODULUS = 2**256
REHASH_ABOVE = 256
"""Touched rows of a table beyond which its hash is computed from scratch."""

TRACKING_SQL = f"""
CREATE TABLE {CHANGES_TABLE} (tbl TEXT NOT NULL, rid INTEGER NOT NULL, base TEXT, PRIMARY KEY (tbl, rid))
    WITHOUT ROWID;
CREATE TABLE {BASE_TABLE} (tbl TEXT PRIMARY KEY, digest TEXT NOT NULL, cols TEXT NOT NULL DEFAULT '[]');
"""


def install_tracking(conn: sqlite3.Connection) -> None:
    """Create the log tables and the triggers on every content table."""
    conn.executescript(TRACKING_SQL)
    for table in content_tables(conn):
        names = " || ',' || ".join(f'quote(old."{c}")' for c in columns(conn, table))
        log = f"INSERT OR IGNORE INTO {CHANGES_TABLE} (tbl, rid, base) VALUES ('{table}', "
        conn.executescript(
            f"""
CREATE TRIGGER "{table}__track_insert" AFTER INSERT ON "{table}" BEGIN
    {log}new.rowid, NULL);
END;
CREATE TRIGGER "{table}__track_update" AFTER UPDATE ON "{table}" BEGIN
    {log}old.rowid, {names});
    {log}new.rowid, NULL);
END;
CREATE TRIGGER "{table}__track_delete" AFTER DELETE ON "{table}" BEGIN
    {log}old.rowid, {names});
END;
"""
        )


def mark_base(conn: sqlite3.Connection, known: dict[str, tuple[str, int]] | None = None) -> None:
    """Make the current state the base: store every table's multiset hash and columns, empty
    the log. Over an earlier base (a seed planted on a fork of a rendered world), the hashes
    come from that base and the rows changed since, as `table_digests` computes them.
    `known` gives the columns and hash of tables whose rows are those of another base
    (copied from it, see `base_digests`): they are not hashed again."""
    tables = {table: columns(conn, table) for table in content_tables(conn)}
    known = {t: v for t, v in (known or {}).items() if t in tables and v[0] == json.dumps(tables[t])}
    if known.keys() == tables.keys():
        current = {table: known[table] for table in tables}  # in the order the tables come
    else:
        current = {**table_digests(conn), **known}
    digests = {
        table: value if cols == json.dumps(tables[table]) else table_digest(conn, table, tables[table])
        for table, (cols, value) in current.items()
    }
    lineage = hashlib.sha256(json.dumps(sorted(digests.items())).encode()).hexdigest()
    conn.execute(f"DELETE FROM {CHANGES_TABLE}")
    conn.execute(f"DELETE FROM {BASE_TABLE}")
    conn.executemany(
        f"INSERT INTO {BASE_TABLE} (tbl, digest, cols) VALUES (?, ?, ?)",
        [
            (LINEAGE, lineage, "[]"),
            *((t, format(d, "064x"), json.dumps(tables[t])) for t, d in digests.items()),
        ],
    )


def base_digests(conn: sqlite3.Connection, schema: str = "main") -> dict[str, tuple[str, int]]:
    """Each content table's columns (JSON text) and multiset hash as the base of the database
    `schema` (an attached one, say) holds them; empty when it has no base."""
    try:
        rows = conn.execute(
            f'SELECT tbl, digest, cols FROM "{schema}".{BASE_TABLE} WHERE tbl != ?', (LINEAGE,)
        )
        return {table: (cols, int(digest, 16)) for table, digest, cols in rows}
    except sqlite3.OperationalError:  # no change tracking there
        return {}


def lineage(conn: sqlite3.Connection) -> str | None:
    """The base this state descends from, or None when it is not tracked or no base was marked."""
    try:
        row = conn.execute(f"SELECT digest FROM {BASE_TABLE} WHERE tbl = ?", (LINEAGE,)).fetchone()
    except sqlite3.OperationalError:  # a workspace made before change tracking
        return None
    return None if row is None else str(row[0])


def has_changes(conn: sqlite3.Connection) -> bool:
    return conn.execute(f"SELECT 1 FROM {CHANGES_TABLE} LIMIT 1").fetchone() is not None


def touched(conn: sqlite3.Connection) -> dict[str, dict[int, tuple[Any, ...] | None]]:
    """Per table, each touched rowid with its base row (a tuple in declaration order), or
    None when the row was not in the base."""
    out: dict[str, dict[int, tuple[Any, ...] | None]] = {}
    for table, items in _logged(conn).items():
        values = decoded(conn, [(rid, base) for rid, base in items if base is not None])
        out[table] = {rid: values.get(rid) for rid, _ in items}
    return out


def decoded(conn: sqlite3.Connection, items: list[tuple[int, str]]) -> dict[int, tuple[Any, ...]]:
    """Base rows of one table as values, by rowid, from the lists of quote() literals the
    triggers wrote: SQLite reads them back exactly (a few hundred per statement)."""
    out: dict[int, tuple[Any, ...]] = {}
    for start in range(0, len(items), 200):
        chunk = items[start : start + 200]
        sql = " UNION ALL ".join(f"SELECT {int(rid)}, {base}" for rid, base in chunk)
        for rid, *values in conn.execute(sql):
            out[rid] = tuple(values)
    return out


def revert_to_base(conn: sqlite3.Connection) -> int:
    """Put every row the log names back as it was in the base (rowid included) and empty the
    log: the content tables then hold the base's rows again, so a used workspace can serve
    as a fresh fork of its base (see `state.forks`). Returns how many rows were logged.

    Each row goes back the way it came: a row the run added is deleted, a changed one is
    updated back, a removed one is inserted again, referenced tables before the tables that
    refer to them (the order a seed is written in). So the services' own triggers (search
    indexes, which follow the rows) end as they were too. No cascade reaches an untouched
    row (see `put_rows`). A value that moved between rows under a unique
    constraint can make this fail: it raises `sqlite3.IntegrityError` and changes nothing.
    Tables outside the log (meta, audit) are the caller's to restore."""
    targets = touched(conn)
    if not targets:
        return 0
    with schema_fixed(conn):
        put_rows(conn, targets, log=[])
    return sum(len(rows) for rows in targets.values())


def _logged(conn: sqlite3.Connection) -> dict[str, list[tuple[int, str | None]]]:
    """The change log per table: each touched rowid with its base row's quote() literals,
    or None when the row was not in the base."""
    out: dict[str, list[tuple[int, str | None]]] = {}
    for table, rid, base in conn.execute(f"SELECT tbl, rid, base FROM {CHANGES_TABLE}").fetchall():
        out.setdefault(table, []).append((rid, base))
    return out


def put_rows(
    conn: sqlite3.Connection,
    targets: dict[str, dict[int, tuple[Any, ...] | None]],
    *,
    log: list[tuple[str, int, str | None]],
) -> None:
    """Make each row named in `targets` (table, rowid) hold the values given (declaration
    order) or, for None, be absent, and make the change log `log` (rows of table, rowid and
    base literals). Rows to be absent are deleted, tables that refer to others first; then
    the others are updated in place (only the columns that differ: a row's search index
    entry is rewritten only when a column it indexes changes) or inserted with their rowid,
    referenced tables first, so the services' own triggers (search indexes, which follow
    the rows) end as the rows are. One transaction: on an error (a unique value that moved
    between rows) nothing is changed and it raises.

    Foreign keys stay on where the rows can be put so. The state put is one they allowed,
    so a cascade can only reach a row named in `targets`, which is then put as given. Where
    they cannot (a row goes while another row still refers to it, to be changed after it),
    the change is made again with them off. Changing that setting is kept for then: it
    makes SQLite compile every statement of the connection again on its next use, which the
    episode played next on a reverted fork paid on each of its statements."""
    order = dependency_order(conn, list(targets))
    try:
        _put(conn, targets, order, log)
    except sqlite3.IntegrityError:
        if conn.in_transaction:  # the setting cannot change within a transaction
            raise
        conn.execute("PRAGMA foreign_keys = OFF")
        try:
            _put(conn, targets, order, log)
        finally:
            conn.execute("PRAGMA foreign_keys = ON")


def _put(
    conn: sqlite3.Connection,
    targets: dict[str, dict[int, tuple[Any, ...] | None]],
    order: list[str],
    log: list[tuple[str, int, str | None]],
) -> None:
    conn.execute("SAVEPOINT ws_put_rows")
    try:
        # Rows to be absent go children first, so no row refers to one as it goes; within a
        # table in one statement per few hundred, newest first (foreign keys are checked at
        # the end of a statement, and a row mostly refers to older ones: a reply to its mail).
        for table in reversed(order):
            _delete(
                conn,
                table,
                sorted((r for r, values in targets[table].items() if values is None), reverse=True),
            )
        for table in order:
            wanted = {rid: values for rid, values in targets[table].items() if values is not None}
            if not wanted:
                continue
            cols = columns(conn, table)
            present = current_rows(conn, table, wanted, cols)
            changed: dict[tuple[int, ...], list[tuple[Any, ...]]] = {}
            for rid, values in wanted.items():
                now = present.get(rid)
                if now is not None:
                    at = tuple(i for i, (a, b) in enumerate(zip(now, values, strict=True)) if not _same(a, b))
                    if at:
                        changed.setdefault(at, []).append((*(values[i] for i in at), rid))
            if changed and replaced_when_changed(conn, table):
                # Its triggers follow inserts and deletes only: a changed row goes and comes back.
                again = sorted(row[-1] for rows in changed.values() for row in rows)
                _delete(conn, table, again)
                for rid in again:
                    del present[rid]
                changed = {}
            for at, rows in changed.items():
                sets = ", ".join(f'"{cols[i]}" = ?' for i in at)
                conn.executemany(f'UPDATE "{table}" SET {sets} WHERE rowid = ?', rows)
            missing = [(rid, *values) for rid, values in wanted.items() if rid not in present]
            if missing:
                names = ", ".join(f'"{c}"' for c in cols)
                marks = ", ".join("?" * len(cols))
                conn.executemany(f'INSERT INTO "{table}" (rowid, {names}) VALUES (?, {marks})', missing)
        conn.execute(f"DELETE FROM {CHANGES_TABLE}")
        conn.executemany(f"INSERT INTO {CHANGES_TABLE} (tbl, rid, base) VALUES (?, ?, ?)", log)
    except BaseException:
        conn.execute("ROLLBACK TO ws_put_rows")
        conn.execute("RELEASE ws_put_rows")
        raise
    conn.execute("RELEASE ws_put_rows")


def _delete(conn: sqlite3.Connection, table: str, rowids: list[int]) -> None:
    """Delete these rows, a few hundred per statement, in the order given (foreign keys are
    checked at the end of each statement)."""
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        conn.execute(f'DELETE FROM "{table}" WHERE rowid IN ({", ".join("?" * len(chunk))})', chunk)


def _same(a: Any, b: Any) -> bool:
    """Whether two column values are the same value of the same type (1 and 1.0 are not)."""
    return type(a) is type(b) and a == b


def current_rows(
    conn: sqlite3.Connection, table: str, rowids: Iterable[int], names: list[str] | None = None
) -> dict[int, tuple[Any, ...]]:
    """The rows that exist now among `rowids`, by rowid, values in declaration order."""
    ids = list(rowids)
    quoted = ", ".join(f'"{c}"' for c in (names or columns(conn, table)))
    out: dict[int, tuple[Any, ...]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for rid, *values in conn.execute(
            f'SELECT rowid, {quoted} FROM "{table}" WHERE rowid IN ({marks})', chunk
        ):
            out[rid] = tuple(values)
    return out


def row_digest(values: Sequence[Any]) -> int:
    """The SHA-256 of a row's canonical JSON (its values in the order of the column names
    sorted, see `by_name`), as an integer."""
    return int.from_bytes(hashlib.sha256(_CANONICAL.encode(values).encode()).digest(), "big")


def by_name(names: list[str]) -> list[int]:
    """The positions of `names` in sorted order: a row's values in declaration order are
    `[values[i] for i in by_name(names)]` in the order `row_digest` reads them."""
    return sorted(range(len(names)), key=names.__getitem__)


def table_digest(conn: sqlite3.Connection, table: str, names: list[str] | None = None) -> int:
    """A table's multiset hash from scratch."""
    quoted = ", ".join(f'"{n}"' for n in sorted(names or columns(conn, table)))
    total = 0
    for values in conn.execute(f'SELECT {quoted} FROM "{table}"'):
        total += row_digest(values)
    return total % MODULUS


def table_digests(conn: sqlite3.Connection) -> dict[str, tuple[str, int]]:
    """Every content table's columns (JSON text, declaration order) and multiset hash: from
    the base and the log when tracked (no row of an untouched table is read), else from
    scratch."""
    base: dict[str, tuple[str, str]] = {}
    if lineage(conn) is not None:
        base = {
            t: (cols, d)
            for t, d, cols in conn.execute(f"SELECT tbl, digest, cols FROM {BASE_TABLE} WHERE tbl != ''")
        }
    out: dict[str, tuple[str, int]] = {}
    for table in content_tables(conn):
        if table in base:
            cols, digest = base[table]
            out[table] = (cols, int(digest, 16))
        else:  # untracked, or made after the base
            names = columns(conn, table)
            out[table] = (json.dumps(names), table_digest(conn, table, names))
    if not base:
        return out
    for table, rows in touched(conn).items():
        if table not in base:
            continue
        cols, value = out[table]
        if len(rows) > REHASH_ABOVE:  # most of the table is new: reading it once is cheaper
            out[table] = (cols, table_digest(conn, table, json.loads(cols)))
            continue
        names = json.loads(cols)
        order = by_name(names)
        now = current_rows(conn, table, rows, names)
        for rid, before in rows.items():
            if before is not None:
                value -= row_digest([before[i] for i in order])
            if rid in now:
                value += row_digest([now[rid][i] for i in order])
        out[table] = (cols, value % MODULUS)
    return out


def _bytes_as_hex(value: object) -> str:
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot hash a value of type {type(value).__name__}")


_CANONICAL = json.JSONEncoder(separators=(",", ":"), default=_bytes_as_hex)
"""What `json.dumps(values, separators=(",", ":"), default=_bytes_as_hex)` writes, with the
encoder made once instead of once per row."""
