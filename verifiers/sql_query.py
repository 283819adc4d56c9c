"""SQL checks: one read-only query, bounded in time, VM steps and rows, off the event loop."""

from __future__ import annotations

import functools
import sqlite3
import time
from typing import Any

import anyio.to_thread

from .where import CheckSpecError

__all__ = [
    "MAX_ROWS",
    "MAX_SECONDS",
    "MAX_STEPS",
    "refuse_writes",
    "run_read_only_query",
    "run_read_only_query_async",
    "writes",
]

MAX_SECONDS = 5.0
MAX_STEPS = 100_000_000  # SQLite virtual-machine instructions: far beyond any fair check
MAX_ROWS = 10_000  # a check compares its result with an expected value written in a task
# The progress handler runs every this many instructions: often enough to stop in time,
# rarely enough to cost nothing.
STEP_INTERVAL = 10_000


READS_REMEMBERED = 4096
"""Queries known to only read, remembered per process (whether a statement writes is in
its text: a SELECT never does, an INSERT, UPDATE or DELETE after a WITH always does)."""
_READS_ONLY: set[str] = set()


def writes(conn: sqlite3.Connection, query: str) -> bool:
    """Whether the statement would write, from the program SQLite compiles for it (EXPLAIN
    runs nothing): a write begins a write transaction, the very step `PRAGMA query_only`
    refuses when a statement runs. The guard is asked before running instead of set on the
    connection because changing that setting makes SQLite compile every statement of the
    connection again on its next use: the episode's own, the verifier's and the revert's."""
    return any(op == "Transaction" and p2 for _, op, _, p2, *_ in conn.execute("EXPLAIN " + query))


def refuse_writes(conn: sqlite3.Connection, query: str, *, compiled: bool = False) -> None:
    """Raise CheckSpecError unless `query` is a SELECT (or WITH ... SELECT) that only reads
    (`writes`). A query known to read is not compiled again, unless `compiled` asks that it
    compile against `conn`; one that does not compile raises SQLite's error."""
    if not query.lstrip().lower().startswith(("select", "with")):
        raise CheckSpecError("an sql check must be a SELECT (or WITH ... SELECT) query")
    if query in _READS_ONLY and not compiled:
        return
    if writes(conn, query):
        raise CheckSpecError("an sql check must only read: it writes (INSERT, UPDATE or DELETE)")
    if len(_READS_ONLY) >= READS_REMEMBERED:
        _READS_ONLY.clear()
    _READS_ONLY.add(query)


def run_read_only_query(
    conn: sqlite3.Connection,
    query: str,
    *,
    max_seconds: float = MAX_SECONDS,
    max_steps: int = MAX_STEPS,
    max_rows: int = MAX_ROWS,
) -> Any:
    """Run a SELECT (or WITH ... SELECT) read-only; one cell comes back as a scalar, else a
    list of rows, each a list.

    Raises CheckSpecError for a query that is not a SELECT or that would write (a write
    hidden after a WITH clause; see `writes`), that runs past `max_seconds` or `max_steps`
    instructions, or that returns more than `max_rows` rows. Reads of full-text tables and
    table-valued functions work. Takes the connection's progress handler for the duration
    and removes it afterwards.
    """
    refuse_writes(conn, query)
    deadline = time.monotonic() + max_seconds
    budget = max(1, max_steps // STEP_INTERVAL)
    calls = [0]

    def progress() -> int:
        calls[0] += 1
        return 1 if calls[0] > budget or time.monotonic() > deadline else 0  # non-zero stops it

    conn.set_progress_handler(progress, STEP_INTERVAL)
    try:
        cursor = conn.execute(query)
        rows = cursor.fetchmany(max_rows + 1)
        cursor.close()
    except sqlite3.OperationalError as error:
        if str(error) == "interrupted":
            raise CheckSpecError(
                f"the sql check ran past {max_seconds:g} s (or {max_steps} steps); simplify the query"
            ) from None
        raise
    finally:
        conn.set_progress_handler(None, 0)
    if len(rows) > max_rows:
        raise CheckSpecError(f"the sql check returned more than {max_rows} rows; aggregate or filter them")
    if len(rows) == 1 and len(rows[0]) == 1:
        return rows[0][0]
    return [list(row) for row in rows]


async def run_read_only_query_async(
    conn: sqlite3.Connection,
    query: str,
    *,
    max_seconds: float = MAX_SECONDS,
    max_steps: int = MAX_STEPS,
    max_rows: int = MAX_ROWS,
) -> Any:
    """`run_read_only_query` in a worker thread, so the event loop keeps serving meanwhile.

    The connection must allow use from another thread (`check_same_thread=False`).
    """
    call = functools.partial(
        run_read_only_query, conn, query, max_seconds=max_seconds, max_steps=max_steps, max_rows=max_rows
    )
    return await anyio.to_thread.run_sync(call)
