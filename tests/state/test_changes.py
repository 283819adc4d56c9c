"""Change tracking: the diff read from the change log and the hash updated from it are exactly
what comparing and hashing every row gives, whatever writes happened (updates that change
nothing, a row deleted and put back, rowids reused, inserts, deletes across tables)."""

import sqlite3
from functools import lru_cache

from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.servers.render import northwind_workspace
from coworkenv.state import ServiceSchema, Snapshot, Workspace
from coworkenv.state.changes import BASE_TABLE, lineage, touched
from coworkenv.state.diff import diff_connections


@lru_cache(maxsize=1)
def base() -> Snapshot:
    ws = northwind_workspace(seed=0)
    ws.mark_base()
    return ws.snapshot()


def untracked_hash(ws: Workspace) -> str:
    """The content hash computed from every row (the base forgotten)."""
    copy = ws.fork()
    copy.conn.execute(f"DELETE FROM {BASE_TABLE}")
    assert lineage(copy.conn) is None
    return copy.content_hash()


WRITES = [
    "UPDATE tickets_tickets SET priority = 'urgent' WHERE id = {n}",
    "UPDATE tickets_tickets SET title = title WHERE id = {n}",  # changes nothing
    "UPDATE mail_messages SET is_read = 1 - is_read WHERE id = {n}",
    "DELETE FROM mail_labels WHERE rowid = (SELECT min(rowid) FROM mail_labels WHERE message_id >= {n})",
    "INSERT OR IGNORE INTO mail_labels (message_id, label) VALUES ({n}, 'x{n}')",
    "DELETE FROM tickets_tags WHERE ticket_id = {n}",
    "INSERT OR IGNORE INTO tickets_tags (ticket_id, tag) VALUES ({n}, 'vip')",
    "UPDATE calendar_events SET location = 'Room {n}' WHERE id = {n}",
    "DELETE FROM calendar_attendees WHERE event_id = {n}",
    "INSERT INTO tickets_comments (ticket_id, author, body, visibility, created_at) "
    "VALUES ({n}, 'me@northwind.example', 'note {n}', 'internal', '2026-03-02T09:00:00+00:00')",
    "DELETE FROM tickets_comments WHERE id = (SELECT max(id) FROM tickets_comments)",  # rowid reused next
    "UPDATE files_nodes SET content = content || ' {n}' WHERE kind = 'file' AND rowid = {n}",
]


def put_back_a_tag(conn: sqlite3.Connection) -> None:
    """Delete a row and insert the same values again: a new rowid, the same content."""
    row = conn.execute("SELECT ticket_id, tag FROM tickets_tags ORDER BY rowid LIMIT 1").fetchone()
    if row is not None:
        conn.execute("DELETE FROM tickets_tags WHERE ticket_id = ? AND tag = ?", row)
        conn.execute("INSERT INTO tickets_tags (ticket_id, tag) VALUES (?, ?)", row)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(WRITES)), st.integers(1, 40)), max_size=25))
def test_the_logged_diff_and_hash_equal_the_full_ones(writes: list[tuple[int, int]]) -> None:
    initial, final = base().fork(), base().fork()
    final.conn.execute("PRAGMA foreign_keys = OFF")  # random writes, not a valid story
    for which, n in writes:
        if which == len(WRITES):
            put_back_a_tag(final.conn)
        else:
            final.conn.execute(WRITES[which].format(n=n))
    logged = diff_connections(initial.conn, final.conn)
    full = diff_connections(initial.conn, final.conn, use_log=False)
    assert logged == full
    assert final.content_hash() == untracked_hash(final)


def test_an_untouched_fork_hashes_like_its_base_without_reading_rows() -> None:
    fork = base().fork()
    assert touched(fork.conn) == {}
    assert fork.content_hash() == untracked_hash(fork)
    assert diff_connections(base().fork().conn, fork.conn).is_empty


def test_a_diff_between_unrelated_states_reads_every_row() -> None:
    # Two forks that both changed since the base: the earlier one is not the base, so the
    # log does not apply and every table is compared.
    a, b = base().fork(), base().fork()
    a.conn.execute("UPDATE tickets_tickets SET priority = 'low' WHERE id = 1")
    b.conn.execute("UPDATE tickets_tickets SET priority = 'high' WHERE id = 1")
    (change,) = diff_connections(a.conn, b.conn).tables["tickets_tickets"].changed
    assert (change.key, change.columns["priority"].before, change.columns["priority"].after) == (
        {"id": 1},
        "low",
        "high",
    )


def test_values_come_back_exactly_from_the_log() -> None:
    schema = ServiceSchema(
        name="x", sql="CREATE TABLE x_things (id INTEGER PRIMARY KEY, x REAL, note TEXT, raw BLOB);"
    )
    ws = Workspace.create([schema], clock_start=base().fork().clock.now())
    ws.conn.execute("INSERT INTO x_things VALUES (1, 0.1 + 0.2, 'it''s, fine', x'00ff')")
    ws.mark_base()
    fork = ws.fork()
    fork.conn.execute("UPDATE x_things SET note = 'x', x = 1.5 WHERE id = 1")
    (change,) = diff_connections(ws.conn, fork.conn).tables["x_things"].changed
    assert change.columns["x"].before == 0.1 + 0.2  # 0.30000000000000004, not 0.3
    assert change.columns["note"].before == "it's, fine"
    assert fork.content_hash() == untracked_hash(fork)
    fork.conn.execute("UPDATE x_things SET note = 'it''s, fine', x = 0.1 + 0.2 WHERE id = 1")
    assert diff_connections(ws.conn, fork.conn).is_empty and fork.content_hash() == ws.content_hash()


def test_a_table_mostly_rewritten_is_hashed_from_scratch_and_still_agrees() -> None:
    fork = base().fork()
    fork.conn.executemany(
        "INSERT INTO mail_labels (message_id, label) VALUES (?, ?)", [(1, f"bulk-{i}") for i in range(400)]
    )
    assert len(touched(fork.conn)["mail_labels"]) == 400
    assert fork.content_hash() == untracked_hash(fork)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(WRITES) - 1), st.integers(1, 40)), max_size=25))
def test_a_base_marked_over_an_earlier_one_stores_the_hashes_of_every_row(
    writes: list[tuple[int, int]],
) -> None:
    # A seed planted on a fork of a rendered world is marked from the world's base and the
    # rows planted; what it stores is what hashing every table from scratch gives.
    planted = base().fork()
    planted.conn.execute("PRAGMA foreign_keys = OFF")
    for which, n in writes:
        planted.conn.execute(WRITES[which].format(n=n))
    planted.mark_base()
    assert touched(planted.conn) == {}
    stored = planted.conn.execute(f"SELECT tbl, digest FROM {BASE_TABLE} ORDER BY tbl").fetchall()
    scratch = planted.fork()
    scratch.conn.execute(f"DELETE FROM {BASE_TABLE}")
    scratch.mark_base()
    assert scratch.conn.execute(f"SELECT tbl, digest FROM {BASE_TABLE} ORDER BY tbl").fetchall() == stored
    planted.conn.execute(WRITES[0].format(n=3))
    assert planted.content_hash() == untracked_hash(planted)
