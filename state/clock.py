"""The simulated clock of a workspace.

Domain time never comes from the wall clock: it starts at the task's date and moves only
when a tool call or an event moves it. The current time is stored in the workspace's meta
table, so it is part of every snapshot and fork.
"""

import sqlite3
from datetime import UTC, datetime, timedelta

CLOCK_KEY = "clock"
NOW_SQL = f"SELECT value FROM workspace_meta WHERE key = '{CLOCK_KEY}'"
"""The query of the clock's stored text (a statement may use it as a subquery)."""


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 time; a naive time is taken to be UTC."""
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def format_time(value: datetime) -> str:
    """The canonical text of a time: UTC, seconds precision, ISO 8601 with offset."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0).isoformat()


class Clock:
    """Reads and moves the workspace's simulated time."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def rebind(self, conn: sqlite3.Connection) -> None:
        """Read and write `conn` from now on (a released workspace rebinds to a closed one)."""
        self._conn = conn

    def now(self) -> datetime:
        """The current simulated time (timezone-aware, UTC)."""
        row = self._conn.execute(NOW_SQL).fetchone()
        return parse_time(row[0])

    def now_text(self) -> str:
        """The current simulated time in its canonical text form (the form it is stored in)."""
        row = self._conn.execute(NOW_SQL).fetchone()
        return str(row[0])

    def set(self, value: datetime) -> None:
        """Move the clock to `value`. Time never runs backwards."""
        if format_time(value) < self.now_text():
            raise ValueError(
                f"the clock cannot move backwards from {self.now_text()} to {format_time(value)}"
            )
        self._conn.execute(
            "UPDATE workspace_meta SET value = ? WHERE key = ?", (format_time(value), CLOCK_KEY)
        )

    def advance(self, delta: timedelta | None = None, *, seconds: float = 0, minutes: float = 0) -> datetime:
        """Move the clock forward and return the new time.

        The read and the write happen in one transaction (the caller's, or one begun here
        holding the write lock), so another process on the same file cannot move the clock
        in between and have its move lost.
        """
        step = (delta or timedelta()) + timedelta(seconds=seconds, minutes=minutes)
        if step < timedelta():
            raise ValueError("the clock only moves forward")
        if self._conn.in_transaction:
            return self._move(step)
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            new = self._move(step)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")
        return new

    def _move(self, step: timedelta) -> datetime:
        new = self.now() + step
        self._conn.execute("UPDATE workspace_meta SET value = ? WHERE key = ?", (format_time(new), CLOCK_KEY))
        return new
