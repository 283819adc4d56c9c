"""Warm forks: workspaces of one snapshot, handed out again once given back.

A fork is a new connection holding a copy of the snapshot, and a new connection reads its
whole schema (every table, index and change-tracking trigger) on its first statement: on
the demo workspace that parse costs about ten times the copy itself, and every episode
used to pay it twice (its workspace and the verifier's copy of the seed). A `ForkPool`
keeps the connections of forks given back and puts each back to the snapshot's state by
undoing its change log (`changes.revert_to_base`), at a cost that follows the change, not
the workspace; the schema stays parsed. Connections nobody took again for `IDLE_SECONDS`
are closed (`close_idle`; the seed cache calls it as it goes), so a process that moved on
to other tasks does not hold the memory of its earlier ones.

A later state of a fork can be had warm too: `changes_of(ws)` takes it as its changes since
the snapshot (the change log, the rows it names as they are, meta, the audit log's later
entries, sequences) and `take_at(changes)` brings a waiting connection there, at a cost that
follows the change. Validation resumes its variants at the reference run's turn starts so,
where forking a snapshot of the turn start would read the whole schema again. A fork taken
at a state goes back to that state when given back (it waits there for the next
`take_at` of it, which then costs nothing), and a waiting connection is moved from the
state it waits at to the one asked for: each move writes only the rows in which the two
states differ. Dozens of variants resume at each start, so most rows the reference wrote
before it are written once, not twice per variant (there and back).

The verifier reads each episode's starting state and never writes it, so every episode of
a snapshot reads the same one: `read_only()`, a fork opened with `PRAGMA query_only` (a
write raises), one connection however many episodes are live.

Only a snapshot at its base (seeded and marked, nothing logged since: what `SeedCache`
holds) can be pooled, since reverting goes back to the base. A given-back workspace is
closed to its old holder: every later use of it raises, as after `close()`. A connection
whose schema, base or transaction state moved is not kept.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass
from typing import Any

from .audit import AUDIT_TABLE
from .changes import CHANGES_TABLE, current_rows, lineage, put_rows, revert_to_base, touched
from .tables import META_TABLE, WorkspaceConnection, schema_fixed
from .workspace import Snapshot, Workspace

#: Given-back connections a pool keeps at most (more are closed): enough for a thousand
#: live episodes of one task to start again from warm forks.
FORKS_KEPT = 2048
#: Seconds a given-back connection waits for a `take()` before `close_idle` may close it.
IDLE_SECONDS = 10.0


@dataclass(frozen=True)
class _Base:
    """What a connection must show to be the snapshot's base, and the rows outside the
    change log to restore: the meta table, the audit log's length, SQLite's sequences."""

    schema_version: int
    lineage: str
    meta: tuple[tuple[int, str, str], ...]
    audit_seq: int
    sequences: tuple[tuple[str, int], ...] | None


@dataclass(frozen=True, eq=False)
class Changes:
    """A state of a fork of a pool's snapshot, as what it changed there: the change log,
    the rows it names as they are now (None: absent), and the rows outside the log (meta,
    the audit log's later entries, SQLite's sequences). `ForkPool.take_at` brings a warm
    fork to that state at a cost that follows the change, where forking a snapshot of it
    would read the whole schema again."""

    base: _Base
    log: list[tuple[str, int, str | None]]
    rows: dict[str, dict[int, tuple[Any, ...] | None]]
    meta: tuple[tuple[int, str, str], ...]
    audit: list[tuple[Any, ...]]
    sequences: tuple[tuple[str, int], ...] | None


class ForkPool:
    """Forks of one snapshot: `take()` one, `give_back()` it when done."""

    def __init__(self, snapshot: Snapshot, *, keep: int = FORKS_KEPT) -> None:
        self.snapshot = snapshot
        self.keep = keep
        # (when it was given back, the connection), oldest first; take() uses the newest.
        self._idle: deque[tuple[float, WorkspaceConnection]] = deque()
        # Connections given back at a state they were taken at (`take_at`), by the state's id,
        # and the state each connection handed out by take_at was taken at (forgotten with
        # a connection nobody gave back).
        self._parked: dict[int, tuple[Changes, deque[tuple[float, WorkspaceConnection]]]] = {}
        self._taken_at: weakref.WeakKeyDictionary[sqlite3.Connection, Changes] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._base: _Base | None = None
        self._poolable: bool | None = None
        self._read_only: Workspace | None = None
        self._read_at = 0.0

    def read_only(self) -> Workspace:
        """The snapshot's state as one workspace every caller shares and nobody writes
        (`PRAGMA query_only`: a write raises `sqlite3.OperationalError`): what verifiers
        read as the state episodes started from. It is never given back; `close_idle` and
        `close` let go of it, and it closes once the last holder drops it."""
        self._read_at = time.monotonic()
        ws = self._read_only
        if ws is None:
            ws = self.snapshot.fork()
            ws.conn.execute("PRAGMA query_only = ON")
            self._read_only = ws
        return ws

    def take(self) -> Workspace:
        """A workspace holding the snapshot's state: a kept connection when there is one
        (moved back from the state it waited at, if it waited at one), else a new fork."""
        try:
            return Workspace(self._idle.pop()[1], self.snapshot.services)
        except IndexError:  # none kept (deque operations are atomic: threads may share a pool)
            pass
        conn = self._unpark(None)
        if conn is not None:
            if self._move(conn, None):
                return Workspace(conn, self.snapshot.services)
            conn.close()
        ws = self.snapshot.fork()
        if self._poolable is None:
            self._poolable = _at_base(ws.conn)
            if self._poolable:
                self._base = _read_base(ws.conn)
        return ws

    def changes_of(self, ws: Workspace) -> Changes | None:
        """`ws` (a fork of this pool's snapshot) as its changes since the snapshot, for
        `take_at`; None when they cannot be had (the snapshot cannot be pooled, or `ws`
        moved its schema or its base, is a file or is mid-transaction)."""
        base, conn = self._base, ws.conn
        if base is None or ws.is_file or ws.services != self.snapshot.services or not _on_base(conn, base):
            return None
        log = conn.execute(f"SELECT tbl, rid, base FROM {CHANGES_TABLE} ORDER BY tbl, rid").fetchall()
        rids: dict[str, list[int]] = {}
        for table, rid, _ in log:
            rids.setdefault(table, []).append(rid)
        with schema_fixed(conn):
            rows: dict[str, dict[int, tuple[Any, ...] | None]] = {}
            for table, ids in rids.items():
                now = current_rows(conn, table, ids)
                rows[table] = {rid: now.get(rid) for rid in ids}
        audit = conn.execute(f"SELECT * FROM {AUDIT_TABLE} WHERE seq > ? ORDER BY seq", (base.audit_seq,))
        return Changes(
            base=base,
            log=log,
            rows=rows,
            meta=_meta(conn),
            audit=audit.fetchall(),
            sequences=_sequences(conn) if base.sequences is not None else None,
        )

    def take_at(self, changes: Changes) -> Workspace | None:
        """A warm fork brought to the state `changes` were taken of (`changes_of` on a fork
        of this pool's snapshot): the same rows, change log, meta, audit log and sequences.
        One given back after a `take_at` of the same changes waits there and costs nothing;
        another waiting connection is moved there from its state, writing the rows the two
        differ in. None when it cannot be (no connection is waiting, the changes are of
        another base, or applying them fails): fork a snapshot of that state instead."""
        base = self._base
        if base is None or changes.base != base:
            return None
        conn = self._unpark(changes)
        if conn is None:
            try:
                conn = self._idle.pop()[1]
            except IndexError:
                conn = self._unpark(None)
            if conn is None:
                return None
            if not self._move(conn, changes):
                conn.close()
                return None
        with self._lock:
            self._taken_at[conn] = changes
        return Workspace(conn, self.snapshot.services)

    def give_back(self, ws: Workspace) -> bool:
        """End `ws` (a workspace of this snapshot) and keep its connection for a later
        `take()` or `take_at()`: put back to the state it was taken at by `take_at`, else
        to the snapshot's. True when kept; when not (the pool is full, the snapshot cannot
        be pooled, or `ws` moved its schema or its base, is a file or is mid-transaction)
        it is closed."""
        if ws.is_file:
            ws.close()
            return False
        conn = ws.release()
        if conn is None:
            return False
        with self._lock:
            state = self._taken_at.pop(conn, None)
        if (
            self._base is None
            or self.waiting >= self.keep
            or ws.services != self.snapshot.services
            or not isinstance(conn, WorkspaceConnection)
        ):
            conn.close()
            return False
        if state is not None and self._move(conn, state):
            with self._lock:
                _, waiting = self._parked.setdefault(id(state), (state, deque()))
                waiting.append((time.monotonic(), conn))
            return True
        if not self._move(conn, None):
            conn.close()
            return False
        self._idle.append((time.monotonic(), conn))
        return True

    @property
    def waiting(self) -> int:
        """How many given-back connections wait for a `take()` or `take_at()`."""
        with self._lock:
            parked = sum(len(waiting) for _, waiting in self._parked.values())
        return len(self._idle) + parked

    def close_idle(self, seconds: float = IDLE_SECONDS) -> int:
        """Close the kept connections that have waited more than `seconds` (resource time,
        read from the monotonic clock; it never touches a workspace's simulated time), and
        let go of the read-only one when nobody asked for it as long. Returns how many
        kept connections were closed."""
        limit = time.monotonic() - seconds
        if self._read_at < limit:
            self._read_only = None  # closed by its last holder, if any still reads it
        closed = 0
        while self._idle and self._idle[0][0] < limit:
            try:
                _, conn = self._idle.popleft()
            except IndexError:  # taken meanwhile by another thread
                break
            conn.close()
            closed += 1
        with self._lock:
            for key, (_, waiting) in list(self._parked.items()):
                while waiting and waiting[0][0] < limit:
                    waiting.popleft()[1].close()
                    closed += 1
                if not waiting:
                    del self._parked[key]
        return closed

    def close(self) -> None:
        """Close every kept connection and let go of the read-only one."""
        self._read_only = None
        while self._idle:
            self._idle.pop()[1].close()
        with self._lock:
            for _, waiting in self._parked.values():
                while waiting:
                    waiting.pop()[1].close()
            self._parked.clear()

    def _unpark(self, state: Changes | None) -> WorkspaceConnection | None:
        """A connection waiting at `state`; with None, the one given back last at any state."""
        with self._lock:
            if state is not None:
                entry = self._parked.get(id(state))
                if entry is None or entry[0] is not state:
                    return None
                key, waiting = id(state), entry[1]
            else:
                latest = max(self._parked.items(), key=lambda item: item[1][1][-1][0], default=None)
                if latest is None:
                    return None
                key, waiting = latest[0], latest[1][1]
            conn = waiting.pop()[1]
            if not waiting:
                del self._parked[key]
            return conn

    def _move(self, conn: WorkspaceConnection, state: Changes | None) -> bool:
        """Bring a connection of this pool (at its base or at a state it was taken at, with
        whatever was written since) to `state`, or to the base for None, writing only the
        rows that differ. False when it cannot be (close it then)."""
        base = self._base
        if base is None:
            return False
        try:
            if not _on_base(conn, base):
                return False
            if conn.execute("SELECT 1 FROM temp.sqlite_master LIMIT 1").fetchone() is not None:
                return False
            with schema_fixed(conn):
                try:
                    _put_state_rows(conn, state)
                except sqlite3.IntegrityError:
                    if state is None:
                        raise
                    # A unique value that moved between rows of the two states (a row put back
                    # at another rowid): by way of the base, where neither holds it.
                    _put_state_rows(conn, None)
                    _put_state_rows(conn, state)
            if state is None:
                _put_outside_log(conn, base.meta, base.sequences)
                if _audit_seq(conn) != base.audit_seq:  # the log is append-only: later rows are a run's
                    conn.execute(f"DELETE FROM {AUDIT_TABLE} WHERE seq > ?", (base.audit_seq,))
            else:
                _put_outside_log(conn, state.meta, state.sequences)
                conn.execute(f"DELETE FROM {AUDIT_TABLE} WHERE seq > ?", (base.audit_seq,))
                if state.audit:
                    marks = ", ".join("?" * len(state.audit[0]))
                    conn.executemany(f"INSERT INTO {AUDIT_TABLE} VALUES ({marks})", state.audit)
        except sqlite3.Error:
            return False
        return True


def _put_state_rows(conn: sqlite3.Connection, state: Changes | None) -> None:
    """The rows and change log of `state` (None: the base), from whatever the log names now;
    raises `sqlite3.IntegrityError` having changed nothing when they cannot be put so."""
    if state is None:
        revert_to_base(conn)
        return
    targets = touched(conn)  # every row written since the base, as it was there
    for table, rows in state.rows.items():
        targets.setdefault(table, {}).update(rows)
    put_rows(conn, targets, log=state.log)


def _at_base(conn: sqlite3.Connection) -> bool:
    """Whether the state is its own base: tracked, marked, nothing logged since."""
    return (
        lineage(conn) is not None
        and conn.execute(f"SELECT 1 FROM {CHANGES_TABLE} LIMIT 1").fetchone() is None
    )


def _read_base(conn: sqlite3.Connection) -> _Base:
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    has_sequences = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone()
    mark = lineage(conn)
    assert mark is not None
    return _Base(
        schema_version=version,
        lineage=mark,
        meta=_meta(conn),
        audit_seq=_audit_seq(conn),
        sequences=_sequences(conn) if has_sequences else None,
    )


def _on_base(conn: sqlite3.Connection, base: _Base) -> bool:
    """Whether the connection descends from `base` with its schema unchanged, outside a transaction."""
    if conn.in_transaction:
        return False
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    return bool(version == base.schema_version and lineage(conn) == base.lineage)


def _put_outside_log(
    conn: sqlite3.Connection,
    meta: tuple[tuple[int, str, str], ...],
    sequences: tuple[tuple[str, int], ...] | None,
) -> None:
    """Make the meta table `meta`, and SQLite's sequences `sequences` unless None (a
    workspace without them)."""
    now = _meta(conn)
    if now != meta:  # mostly the clock: rewrite only the rows that differ
        kept = {row[0] for row in meta}
        conn.executemany(
            f"DELETE FROM {META_TABLE} WHERE rowid = ?", [(r[0],) for r in now if r[0] not in kept]
        )
        present = set(now)
        conn.executemany(
            f"INSERT OR REPLACE INTO {META_TABLE} (rowid, key, value) VALUES (?, ?, ?)",
            [row for row in meta if row not in present],
        )
    if sequences is not None and _sequences(conn) != sequences:
        conn.execute("DELETE FROM sqlite_sequence")
        conn.executemany("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", sequences)


def _meta(conn: sqlite3.Connection) -> tuple[tuple[int, str, str], ...]:
    return tuple(conn.execute(f"SELECT rowid, key, value FROM {META_TABLE} ORDER BY rowid").fetchall())


def _audit_seq(conn: sqlite3.Connection) -> int:
    return int(conn.execute(f"SELECT coalesce(max(seq), 0) FROM {AUDIT_TABLE}").fetchone()[0])


def _sequences(conn: sqlite3.Connection) -> tuple[tuple[str, int], ...]:
    return tuple(conn.execute("SELECT name, seq FROM sqlite_sequence ORDER BY name").fetchall())
