"""The Workspace: every service's state for one episode, in one SQLite database."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import sqlite_utils

from .audit import AUDIT_SQL, AuditLog
from .changes import install_tracking, mark_base
from .clock import CLOCK_KEY, Clock, format_time
from .content_hash import content_hash
from .diff import WorkspaceDiff, diff_connections
from .errors import WorkspaceError
from .schema import ServiceSchema
from .tables import META_TABLE, WorkspaceConnection

FORMAT = "coworkenv-workspace/1"

META_SQL = f"CREATE TABLE {META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL);"

#: How long a statement on a workspace file waits for another process's lock before SQLite
#: reports it busy (for synchronous callers: seeding, world operations, the clock).
BUSY_TIMEOUT_MS = 5000


@dataclass(frozen=True)
class Snapshot:
    """An immutable copy of a workspace's whole database, cheap to fork from."""

    data: bytes
    services: tuple[str, ...]

    def fork(self) -> Workspace:
        """A new in-memory workspace holding this snapshot's state."""
        return Workspace.from_snapshot(self)


def _connect(target: str, *, uri: bool = False) -> sqlite3.Connection:
    # Autocommit mode: tool calls manage their own savepoints. Connections may be used
    # from the event loop and from worker threads, never concurrently (callers serialize).
    conn = sqlite3.connect(
        target, uri=uri, isolation_level=None, check_same_thread=False, factory=WorkspaceConnection
    )
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


class Workspace:
    """One SQLite database holding the tables of every enabled service, the meta table
    (format, services, task id, simulated clock) and the audit log.

    Create one with `Workspace.create(...)`, `Workspace.open(path)` or
    `Snapshot.fork()`. In memory by default; a file when asked.
    """

    def __init__(self, conn: sqlite3.Connection, services: tuple[str, ...], path: Path | None = None) -> None:
        self.conn = conn
        self.services = services
        self.path = path
        self.clock = Clock(conn)
        self.audit = AuditLog(conn)
        #: Who is acting now; every audited call records it.
        self.actor = "agent"
        self._db: sqlite_utils.Database | None = None

    # -- creating and opening -------------------------------------------------------------

    @classmethod
    def create(
        cls,
        schemas: Iterable[ServiceSchema],
        *,
        clock_start: datetime,
        task_id: str = "",
        path: str | Path | None = None,
    ) -> Workspace:
        """A new, empty workspace with the tables of the given services."""
        schemas = list(schemas)
        names = tuple(s.name for s in schemas)
        if len(set(names)) != len(names):
            raise WorkspaceError(f"a service is listed twice: {list(names)}")
        meta = {"task_id": task_id, CLOCK_KEY: format_time(clock_start)}
        if path is None:
            # An in-memory workspace starts as a copy of the empty one made once per set of
            # schemas: the same tables, triggers and base, without running their DDL again.
            ws = cls.from_snapshot(Snapshot(_empty_database(tuple((s.name, s.sql) for s in schemas)), names))
            ws.conn.executemany(f"INSERT INTO {META_TABLE} (key, value) VALUES (?, ?)", meta.items())
            return ws
        path = Path(path)
        if path.exists():
            raise WorkspaceError(f"{path} already exists; choose a new path or open it instead")
        conn = _connect(str(path))
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _create_tables(conn, [(s.name, s.sql) for s in schemas])
        conn.executemany(f"INSERT INTO {META_TABLE} (key, value) VALUES (?, ?)", meta.items())
        return cls(conn, names, path)

    @classmethod
    def open(cls, path: str | Path, *, read_only: bool = False) -> Workspace:
        """Open a saved workspace file in place: changes are written back to it (unless
        `read_only`). Several processes may open one file; SQLite serializes their writes.

        A missing file or one that is not a workspace raises `WorkspaceError`; the file is
        never created or modified by a failed open.
        """
        path = Path(path)
        if not path.is_file():
            raise WorkspaceError(f"no workspace file at {path}")
        conn = _connect(f"file:{path}?mode={'ro' if read_only else 'rw'}", uri=True)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            services = cls._read_services(conn, str(path))
        except WorkspaceError:
            conn.close()
            raise
        return cls(conn, services, path)

    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> Workspace:
        """Fork: a new in-memory workspace holding the snapshot's state."""
        conn = sqlite3.connect(
            ":memory:", isolation_level=None, check_same_thread=False, factory=WorkspaceConnection
        )
        # Deserialize into a fresh connection: doing it in place over a used FTS5 table
        # corrupts the index.
        conn.deserialize(snapshot.data)
        conn.execute("PRAGMA foreign_keys = ON")
        return cls(conn, snapshot.services)

    @staticmethod
    def _read_services(conn: sqlite3.Connection, where: str) -> tuple[str, ...]:
        try:
            rows = dict(conn.execute(f"SELECT key, value FROM {META_TABLE}").fetchall())
        except sqlite3.DatabaseError as exc:
            raise WorkspaceError(f"{where} is not a coworkenv workspace ({exc})") from exc
        if rows.get("format") != FORMAT:
            raise WorkspaceError(f"{where} is not a coworkenv workspace (format {rows.get('format')!r})")
        return tuple(json.loads(rows["services"]))

    # -- snapshots ---------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The whole state as immutable bytes."""
        if self.conn.in_transaction:
            raise WorkspaceError("cannot snapshot in the middle of a transaction")
        return Snapshot(self.conn.serialize(), self.services)

    def fork(self) -> Workspace:
        """A new in-memory workspace with a copy of this one's state."""
        return self.snapshot().fork()

    def restore(self, snapshot: Snapshot) -> None:
        """Replace this workspace's state with the snapshot's (in memory from now on)."""
        if snapshot.services != self.services:
            raise WorkspaceError(
                f"snapshot has services {list(snapshot.services)}, this workspace {list(self.services)}"
            )
        fresh = Workspace.from_snapshot(snapshot)
        self.conn.close()
        self.conn = fresh.conn
        self.clock = fresh.clock
        self.audit = fresh.audit
        self.path = None
        self._db = None

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the state to a database file. An existing file is kept unless `overwrite`."""
        path = Path(path)
        if path.exists() and not overwrite:
            raise WorkspaceError(f"{path} already exists; pass overwrite=True to replace it")
        tmp = path.with_name(path.name + ".tmp")
        tmp.unlink(missing_ok=True)
        target = sqlite3.connect(str(tmp))
        try:
            self.conn.backup(target)
        finally:
            target.close()
        tmp.replace(path)
        return path

    # -- reading -----------------------------------------------------------------------------

    @property
    def db(self) -> sqlite_utils.Database:
        """A sqlite-utils view of the same connection."""
        if self._db is None:
            self._db = sqlite_utils.Database(self.conn)
        return self._db

    @property
    def is_file(self) -> bool:
        """Whether the state lives in a database file, which other processes may write too."""
        return self.path is not None

    @property
    def task_id(self) -> str:
        return self.meta("task_id")

    def meta(self, key: str) -> str:
        row = self.conn.execute(f"SELECT value FROM {META_TABLE} WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            f"INSERT INTO {META_TABLE} (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def rows(self, table: str, where: str = "", params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a table as dicts (a convenience for tests, seeds and verifiers)."""
        sql = f'SELECT * FROM "{table}"' + (f" WHERE {where}" if where else "")
        cursor = self.conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]

    def mark_base(self, known: dict[str, tuple[str, int]] | None = None) -> None:
        """Make the current state the base that diffs and hashes of this workspace and its
        forks are computed from (see `state.changes`); seeds call it once seeded. `known`:
        the columns and hashes of tables copied whole from another base (`base_digests`)."""
        mark_base(self.conn, known)

    def content_hash(self) -> str:
        """The canonical content hash (see `state.content_hash`)."""
        return content_hash(self.conn)

    def diff(self, other: Workspace, *, include_internal: bool = False) -> WorkspaceDiff:
        """What changed from this workspace (before) to `other` (after)."""
        return diff_connections(self.conn, other.conn, include_internal=include_internal)

    def integrity_check(self) -> str:
        """SQLite's `PRAGMA integrity_check`: "ok" when the database is sound."""
        return str(self.conn.execute("PRAGMA integrity_check").fetchone()[0])

    # -- writing ----------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing: the writes inside are kept only if the block ends without an exception.

        On a file, outside any transaction, the block holds the write lock from its start
        (`BEGIN IMMEDIATE`), so a read inside it cannot go stale before a write.
        """
        if self.is_file and not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")
            return
        self.conn.execute("SAVEPOINT ws_txn")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK TO ws_txn")
            self.conn.execute("RELEASE ws_txn")
            raise
        else:
            self.conn.execute("RELEASE ws_txn")

    def try_begin_write(self, *, wait_ms: int) -> bool:
        """Begin a transaction that holds the database's write lock from its first statement
        (`BEGIN IMMEDIATE`), so no other process can write in between. Waits at most `wait_ms`
        for another connection's lock; False, with no transaction open, when that was not enough."""
        return self._try_locked("BEGIN IMMEDIATE", wait_ms)

    def try_commit(self, *, wait_ms: int) -> bool:
        """Commit the open transaction, waiting at most `wait_ms` for other connections still
        reading the file; False, with the transaction still open, when that was not enough."""
        return self._try_locked("COMMIT", wait_ms)

    def _try_locked(self, sql: str, wait_ms: int) -> bool:
        self.conn.execute(f"PRAGMA busy_timeout = {int(wait_ms)}")
        try:
            self.conn.execute(sql)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise
            return False
        finally:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return True

    def release(self) -> sqlite3.Connection | None:
        """Hand over the connection and end this workspace: from now on it behaves as
        closed (every use raises `sqlite3.ProgrammingError`), while the connection lives on
        with whoever took it (see `state.forks`); so do the `clock`, `audit` and `db` objects
        taken from it, though not a `conn` kept on its own. None when it was closed already."""
        conn = self.conn
        closed = _closed_connection()
        # The clock, audit log and sqlite-utils view someone may hold are closed with it.
        self.clock.rebind(closed)
        self.audit.rebind(closed)
        if self._db is not None:
            self._db.conn = closed
        self.conn = closed
        try:
            conn.total_changes  # noqa: B018 - raises on a closed connection
        except sqlite3.ProgrammingError:
            return None
        return conn

    def close(self) -> None:
        self.conn.close()


def _create_tables(conn: sqlite3.Connection, schemas: Sequence[tuple[str, str]]) -> None:
    """The meta and audit tables, each (name, SQL) service schema's tables, change tracking
    and an empty base."""
    conn.executescript(META_SQL + AUDIT_SQL)
    for _, script in schemas:
        conn.executescript(script)
    conn.executemany(
        f"INSERT INTO {META_TABLE} (key, value) VALUES (?, ?)",
        [("format", FORMAT), ("services", json.dumps([name for name, _ in schemas]))],
    )
    install_tracking(conn)
    mark_base(conn)


@cache
def _empty_database(schemas: tuple[tuple[str, str], ...]) -> bytes:
    """A new workspace database of these (name, SQL) schemas, without a task id or clock."""
    conn = _connect(":memory:")
    try:
        _create_tables(conn, schemas)
        return conn.serialize()
    finally:
        conn.close()


@cache
def _closed_connection() -> sqlite3.Connection:
    """A closed connection: what a released workspace holds."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.close()
    return conn


def diff(before: Workspace | Snapshot, after: Workspace | Snapshot) -> WorkspaceDiff:
    """Rows added, removed and changed per table from `before` to `after`."""
    a = before.fork() if isinstance(before, Snapshot) else before
    b = after.fork() if isinstance(after, Snapshot) else after
    return a.diff(b)
