"""Warm forks: a workspace given back to its snapshot's pool is put back to the snapshot's
state exactly (every row and rowid, the search index, meta, audit), whatever the run
wrote; a connection that cannot be put back is closed, never handed out again."""

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.state import ServiceSchema, Workspace
from coworkenv.state.changes import revert_to_base, touched
from coworkenv.state.forks import ForkPool
from coworkenv.state.tables import dependency_order
from tests.state.test_changes import WRITES, base, put_back_a_tag

MAIL_WRITES = [
    "UPDATE mail_messages SET subject = 'moved {n}', folder = 'archive' WHERE id = {n}",
    # cascades to recipients, labels, attachments (a message a reply refers to stays)
    "DELETE FROM mail_messages WHERE id = {n} AND id NOT IN"
    " (SELECT coalesce(in_reply_to, 0) FROM mail_messages UNION SELECT coalesce(forwarded_from, 0) FROM mail_messages)",
    "INSERT INTO mail_messages (owner, thread_id, folder, from_addr, subject, body, sent_at)"
    " SELECT owner, thread_id, 'drafts', from_addr, 'new {n}', 'body {n}', sent_at FROM mail_messages WHERE id = {n}",
    "INSERT OR IGNORE INTO mail_recipients (message_id, kind, position, address)"
    " SELECT max(id), 'cc', {n}, 'x{n}@example.com' FROM mail_messages",
    "DELETE FROM mail_recipients WHERE rowid = (SELECT min(rowid) FROM mail_recipients WHERE message_id >= {n})",
    "UPDATE tickets_comments SET id = id + 10000 WHERE id = {n}",  # the rowid itself moves
]


def everything(conn: sqlite3.Connection) -> dict[str, Any]:
    """Every row of every table with its rowid (meta, audit, change log and the search
    index's content included; the index's b-tree pages may differ), and a search's hits."""
    out: dict[str, Any] = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        if name.startswith("sqlite_") or name in ("mail_search", "mail_search_data", "mail_search_idx"):
            continue
        try:
            out[name] = conn.execute(f'SELECT rowid, * FROM "{name}" ORDER BY rowid').fetchall()
        except sqlite3.OperationalError:  # a WITHOUT ROWID table (the change log)
            out[name] = sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall())
    out["search"] = conn.execute(
        "SELECT rowid, recipients, attachments FROM mail_search WHERE mail_search MATCH 'invoice OR moved OR x1'"
        " ORDER BY rank"
    ).fetchall()
    return out


def record_call(ws: Workspace) -> int:
    return ws.audit.record(
        time=ws.clock.now_text(),
        actor="agent",
        service="mail",
        tool="send",
        arguments={"n": 1},
        result={"ok": True},
        error=None,
        latency_ms=1.0,
    )


#: What `write` takes: (index into WRITES, or len(WRITES) for `put_back_a_tag`; n) pairs, and
#: indexes into MAIL_WRITES.
ANY_WRITES = st.lists(st.tuples(st.integers(0, len(WRITES)), st.integers(1, 40)), max_size=20)
ANY_MAIL_WRITES = st.lists(st.integers(0, 40), max_size=8)


def write(ws: Workspace, writes: list[tuple[int, int]], mail: list[int], *, on_top: bool = False) -> None:
    """Random writes, then the clock, meta and audit moved. `on_top` of a state other writes
    made, a write that breaks a unique constraint there is left out, as a tool's would fail."""
    statements = [(None if which == len(WRITES) else WRITES[which].format(n=n)) for which, n in writes]
    statements += [MAIL_WRITES[which % len(MAIL_WRITES)].format(n=1 + which % 7) for which in mail]
    for sql in statements:
        try:
            put_back_a_tag(ws.conn) if sql is None else ws.conn.execute(sql)
        except sqlite3.IntegrityError:
            if not on_top:
                raise
    ws.clock.set(datetime(2026, 5, 1, 12, tzinfo=UTC))
    ws.set_meta("note", "the run's")
    record_call(ws)


@settings(max_examples=40, deadline=None)
@given(ANY_WRITES, ANY_MAIL_WRITES)
def test_a_given_back_fork_comes_back_as_the_snapshot_was(
    writes: list[tuple[int, int]], mail: list[int]
) -> None:
    pool = ForkPool(base())
    ws = pool.take()
    expected = everything(base().fork().conn)
    write(ws, writes, mail)
    conn = ws.conn
    assert pool.give_back(ws)
    again = pool.take()
    assert again.conn is conn
    assert everything(again.conn) == expected
    assert again.content_hash() == base().fork().content_hash()
    again.conn.execute("INSERT INTO mail_search (mail_search) VALUES ('integrity-check')")
    assert again.integrity_check() == "ok"
    assert again.conn.execute("PRAGMA foreign_keys").fetchone() == (1,)


def test_the_next_rowids_are_the_ones_a_fresh_fork_gives() -> None:
    pool = ForkPool(base())
    ws = pool.take()
    ws.conn.execute("INSERT INTO tickets_tags (ticket_id, tag) VALUES (1, 'new')")
    ws.conn.execute("DELETE FROM tickets_comments WHERE id = (SELECT max(id) FROM tickets_comments)")
    pool.give_back(ws)
    reused, fresh = pool.take(), base().fork()
    sql = "INSERT INTO tickets_tags (ticket_id, tag) VALUES (2, 'again')"
    assert reused.conn.execute(sql).lastrowid == fresh.conn.execute(sql).lastrowid
    assert record_call(reused) == record_call(fresh)


def test_a_given_back_workspace_is_closed_to_its_old_holder() -> None:
    pool = ForkPool(base())
    ws = pool.take()
    clock, audit, db = ws.clock, ws.audit, ws.db
    pool.give_back(ws)
    uses = (
        lambda: ws.rows("tickets_tickets"),
        ws.clock.now,
        clock.now,
        audit.entries,
        lambda: db["tickets_tickets"].count,
    )
    for use in uses:
        with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
            use()
    assert ws.release() is None  # nothing left to give back twice
    assert not pool.give_back(ws)


def test_a_pool_keeps_at_most_its_size_and_closes_the_rest() -> None:
    pool = ForkPool(base(), keep=2)
    taken = [pool.take() for _ in range(3)]
    conns = [ws.conn for ws in taken]
    assert [pool.give_back(ws) for ws in taken] == [True, True, False]
    with pytest.raises(sqlite3.ProgrammingError):
        conns[2].execute("SELECT 1")
    assert {pool.take().conn, pool.take().conn} == set(conns[:2])
    assert pool.take().conn not in conns  # none kept now: a new fork


def test_connections_left_idle_too_long_are_closed() -> None:
    pool = ForkPool(base())
    taken = [pool.take() for _ in range(2)]
    conns = [ws.conn for ws in taken]
    for ws in taken:
        pool.give_back(ws)
    assert pool.close_idle(3600) == 0 and pool.waiting == 2
    assert pool.close_idle(0) == 2 and pool.waiting == 0
    assert all(closed(conn) for conn in conns)


def test_every_caller_reads_one_read_only_fork_until_the_pool_lets_go_of_it() -> None:
    snapshot = base()
    pool = ForkPool(snapshot)
    seed = pool.read_only()
    assert pool.read_only() is seed
    assert seed.content_hash() == snapshot.fork().content_hash()
    count = seed.conn.execute("SELECT count(*) FROM tickets_tickets").fetchone()[0]
    with pytest.raises(sqlite3.OperationalError, match="attempt to write a readonly database"):
        seed.conn.execute("DELETE FROM tickets_tickets")
    with pytest.raises(sqlite3.OperationalError, match="attempt to write a readonly database"):
        record_call(seed)
    assert seed.conn.execute("SELECT count(*) FROM tickets_tickets").fetchone()[0] == count > 0
    assert pool.close_idle(3600) == 0 and pool.read_only() is seed
    pool.close_idle(0)  # unused for longer than that: let go of, not closed under its holder
    again = pool.read_only()
    assert again is not seed and not closed(seed.conn)
    pool.close()
    assert pool.read_only() is not again and not closed(again.conn)


def closed(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False


@pytest.mark.parametrize(
    "how",
    [
        "a table created",
        "a temporary table",
        "a transaction left open",
        "a new base marked",
    ],
)
def test_a_connection_that_moved_is_not_kept(how: str) -> None:
    pool = ForkPool(base())
    ws = pool.take()
    if how == "a table created":
        ws.conn.execute("CREATE TABLE extra (x)")
    elif how == "a temporary table":
        ws.conn.execute("CREATE TEMP TABLE scratch (x)")
    elif how == "a transaction left open":
        ws.conn.execute("BEGIN")
    else:
        ws.conn.execute("UPDATE tickets_tickets SET priority = 'low' WHERE id = 1")
        ws.mark_base()
    conn = ws.conn
    assert not pool.give_back(ws)
    assert closed(conn)
    assert pool.take().conn is not conn


def test_a_snapshot_with_logged_changes_is_not_pooled() -> None:
    # Reverting goes back to the base, which is not this snapshot's state.
    fork = base().fork()
    fork.conn.execute("UPDATE tickets_tickets SET priority = 'low' WHERE id = 1")
    pool = ForkPool(fork.snapshot())
    ws = pool.take()
    assert not pool.give_back(ws)
    assert pool.take().rows("tickets_tickets", "id = 1")[0]["priority"] == "low"


def test_a_file_workspace_is_closed_not_kept(tmp_path: Path) -> None:
    pool = ForkPool(base())
    pool.take()
    path = base().fork().save(tmp_path / "ws.db")
    ws = Workspace.open(path)
    assert not pool.give_back(ws)
    assert closed(ws.conn)


def test_a_value_moved_under_a_unique_constraint_fails_the_revert_and_changes_nothing() -> None:
    schema = ServiceSchema(name="x", sql="CREATE TABLE x_users (id INTEGER PRIMARY KEY, email TEXT UNIQUE);")
    ws = Workspace.create([schema], clock_start=datetime(2026, 3, 2, tzinfo=UTC))
    ws.conn.executemany("INSERT INTO x_users VALUES (?, ?)", [(1, "a@x"), (2, "b@x")])
    ws.mark_base()
    pool = ForkPool(ws.snapshot())
    fork = pool.take()
    # Swap the two addresses: putting row 1 back first meets row 2 holding its old value.
    fork.conn.execute("UPDATE x_users SET email = 'tmp' WHERE id = 1")
    fork.conn.execute("UPDATE x_users SET email = 'a@x' WHERE id = 2")
    fork.conn.execute("UPDATE x_users SET email = 'b@x' WHERE id = 1")
    before = everything_plain(fork.conn)
    with pytest.raises(sqlite3.IntegrityError):
        revert_to_base(fork.conn)
    assert everything_plain(fork.conn) == before
    conn = fork.conn
    assert not pool.give_back(fork)
    assert closed(conn)


def everything_plain(conn: sqlite3.Connection) -> list[Any]:
    return [
        conn.execute("SELECT rowid, * FROM x_users ORDER BY rowid").fetchall(),
        conn.execute("SELECT * FROM workspace_changes").fetchall(),
    ]


def test_tables_are_ordered_after_the_tables_they_refer_to() -> None:
    conn = base().fork().conn
    order = dependency_order(
        conn, ["mail_recipients", "mail_messages", "tickets_comments", "tickets_tickets", "tickets_queues"]
    )
    assert order.index("mail_messages") < order.index("mail_recipients")
    assert order.index("tickets_queues") < order.index("tickets_tickets") < order.index("tickets_comments")
    assert order == [
        "mail_messages",
        "mail_recipients",
        "tickets_queues",
        "tickets_tickets",
        "tickets_comments",
    ]


@settings(max_examples=40, deadline=None)
@given(ANY_WRITES, ANY_MAIL_WRITES)
def test_a_warm_fork_taken_at_a_state_holds_that_state_exactly(
    writes: list[tuple[int, int]], mail: list[int]
) -> None:
    # A resumed turn start: a warm fork brought to another fork's state by that state's
    # changes holds what forking a snapshot of it gives (rows, rowids, search index, meta,
    # audit, change log), diffs and hashes like it, and goes back to the seed as any fork.
    pool = ForkPool(base())
    pool.give_back(pool.take())
    ws = pool.take()
    write(ws, writes, mail)
    changes = pool.changes_of(ws)
    assert changes is not None
    expected, expected_hash = everything(ws.snapshot().fork().conn), ws.content_hash()
    pool.give_back(pool.take())  # one warm fork waiting for take_at
    warm = pool.take_at(changes)
    assert warm is not None and warm.conn is not ws.conn
    assert everything(warm.conn) == expected
    assert warm.content_hash() == expected_hash
    assert touched(warm.conn) == touched(ws.conn)
    assert warm.audit.entries() == ws.audit.entries()
    sql = "INSERT INTO tickets_tags (ticket_id, tag) VALUES (2, 'next')"
    assert warm.conn.execute(sql).lastrowid == ws.conn.execute(sql).lastrowid
    assert warm.conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert pool.give_back(warm)
    assert everything(pool.take().conn) == everything(base().fork().conn)


def test_take_at_needs_a_waiting_fork_and_the_same_base() -> None:
    pool = ForkPool(base())
    ws = pool.take()
    ws.conn.execute("UPDATE tickets_tickets SET priority = 'urgent' WHERE id = 1")
    changes = pool.changes_of(ws)
    assert changes is not None
    assert pool.take_at(changes) is None  # no warm fork waits: forking the state is cheaper
    other = Workspace.create(
        [ServiceSchema("x", "CREATE TABLE x_things (id INTEGER PRIMARY KEY);")],
        clock_start=datetime(2026, 3, 2, tzinfo=UTC),
    )
    other.mark_base()
    foreign = ForkPool(other.snapshot())
    foreign.give_back(foreign.take())
    assert foreign.take_at(changes) is None  # the changes of another snapshot's fork
    ws.conn.execute("BEGIN")
    assert pool.changes_of(ws) is None  # mid-transaction: no state to take
    ws.conn.execute("ROLLBACK")


@settings(max_examples=30, deadline=None)
@given(ANY_WRITES, ANY_MAIL_WRITES, ANY_WRITES, ANY_MAIL_WRITES, ANY_WRITES, ANY_MAIL_WRITES)
def test_a_fork_taken_at_a_state_waits_there_and_moves_to_another_state_exactly(
    first: list[tuple[int, int]],
    first_mail: list[int],
    second: list[tuple[int, int]],
    second_mail: list[int],
    later: list[tuple[int, int]],
    later_mail: list[int],
) -> None:
    # Given back after take_at, a fork waits at the state it was taken at (whatever was
    # written on it since), and the next take_at of that state is that connection as it
    # was; another state or the seed is reached from there, writing what they differ in.
    pool = ForkPool(base())
    states = []
    for writes, mail in ((first, first_mail), (second, second_mail)):
        ws = pool.take()
        write(ws, writes, mail)
        changes = pool.changes_of(ws)
        assert changes is not None
        states.append((changes, everything(ws.snapshot().fork().conn), ws.content_hash()))
        pool.give_back(ws)
    pool.close()
    pool.give_back(pool.take())  # one connection, which goes from state to state
    (one, one_rows, one_hash), (two, two_rows, two_hash) = states
    warm = pool.take_at(one)
    assert warm is not None
    conn = warm.conn
    write(warm, later, later_mail, on_top=True)
    assert pool.give_back(warm) and pool.waiting == 1
    for changes, rows, digest in (
        (one, one_rows, one_hash),
        (two, two_rows, two_hash),
        (one, one_rows, one_hash),
    ):
        again = pool.take_at(changes)
        assert again is not None and again.conn is conn
        assert everything(again.conn) == rows
        assert again.content_hash() == digest
        assert touched(again.conn) == {t: r for t, r in touched(states_fork(changes, pool)).items()}
        write(again, later, later_mail, on_top=True)
        assert pool.give_back(again)
    seed = pool.take()
    assert seed.conn is conn
    assert everything(seed.conn) == everything(base().fork().conn)
    assert seed.content_hash() == base().fork().content_hash()


def test_a_row_whose_triggers_follow_only_inserts_and_deletes_is_put_by_deleting_and_inserting_it() -> None:
    # Two states add a recipient to one message at the same new rowid: moving from one to
    # the other changes that row, and the message's search entry follows only if the row
    # goes and comes back (the recipients' triggers act on inserts and deletes).
    pool = ForkPool(base())
    states = []
    for address in ("first@example.com", "second@example.com"):
        ws = pool.take()
        ws.conn.execute(
            "INSERT INTO mail_recipients (message_id, kind, position, address) VALUES (1, 'cc', 9, ?)",
            (address,),
        )
        states.append((pool.changes_of(ws), everything(ws.snapshot().fork().conn)))
        pool.give_back(ws)
    (one, _), (two, expected) = states
    assert one is not None and two is not None
    pool.close()
    pool.give_back(pool.take())
    first = pool.take_at(one)
    assert first is not None
    conn = first.conn
    pool.give_back(first)
    second = pool.take_at(two)
    assert second is not None and second.conn is conn
    assert everything(second.conn) == expected
    hits = "SELECT rowid FROM mail_search WHERE mail_search MATCH ?"
    assert second.conn.execute(hits, ('"second@example.com"',)).fetchall() == [(1,)]
    assert second.conn.execute(hits, ('"first@example.com"',)).fetchall() == []


def states_fork(changes: Any, pool: ForkPool) -> sqlite3.Connection:
    """A new fork brought to `changes` (its own pool's take_at), for comparing change logs."""
    other = ForkPool(pool.snapshot)
    other.give_back(other.take())
    ws = other.take_at(changes)
    assert ws is not None
    return ws.conn


def traced_revert(ws: Workspace) -> list[str]:
    """The statements a revert runs (a trigger's run shows as the statement that fired it)."""
    statements: list[str] = []
    ws.conn.set_trace_callback(statements.append)
    try:
        revert_to_base(ws.conn)
    finally:
        ws.conn.set_trace_callback(None)
    return [s for s in statements if not s.startswith("--")]


def test_a_revert_keeps_foreign_keys_on_unless_a_row_goes_while_another_still_refers_to_it() -> None:
    # Changing the setting makes SQLite compile every statement of the connection again,
    # so it is changed only when the rows cannot be put back with it on.
    expected = everything(base().fork().conn)
    sent = base().fork()
    sent.conn.execute(MAIL_WRITES[2].format(n=1))  # a new message, with a recipient
    sent.conn.execute(MAIL_WRITES[3].format(n=1))
    sent.conn.execute(MAIL_WRITES[1].format(n=2))  # a message gone, its recipients with it
    new = sent.conn.execute("SELECT max(id) FROM mail_messages").fetchone()[0]
    sent.conn.execute(  # a reply to the new message: both go, the reply first
        "INSERT INTO mail_messages (owner, thread_id, folder, from_addr, subject, body, sent_at, in_reply_to)"
        " SELECT owner, thread_id, 'sent', from_addr, 'Re: new', 'ok', sent_at, id FROM mail_messages WHERE id = ?",
        (new,),
    )
    ticket = sent.conn.execute(  # a new ticket and a comment on it: the comment goes first
        "INSERT INTO tickets_tickets (title, status, priority, queue, requester, created_at, updated_at)"
        " SELECT 'new', 'open', priority, queue, requester, created_at, updated_at FROM tickets_tickets WHERE id = 1"
    ).lastrowid
    sent.conn.execute(WRITES[9].format(n=ticket))
    statements = traced_revert(sent)
    assert not [s for s in statements if s.startswith("PRAGMA foreign_keys")]
    assert everything(sent.conn) == expected
    moved = base().fork()
    moved.conn.execute("INSERT INTO tickets_queues (name, description) VALUES ('Escalations', '')")
    moved.conn.execute("UPDATE tickets_tickets SET queue = 'Escalations' WHERE id = 1")
    # The new queue goes first (parents first) while ticket 1 still refers to it.
    statements = traced_revert(moved)
    assert [s for s in statements if s.startswith("PRAGMA foreign_keys")] == [
        "PRAGMA foreign_keys = OFF",
        "PRAGMA foreign_keys = ON",
    ]
    assert everything(moved.conn) == expected
    assert moved.conn.execute("PRAGMA foreign_keys").fetchone() == (1,)


def test_a_revert_writes_only_the_columns_that_differ_and_no_row_that_does_not() -> None:
    ws = base().fork()
    ws.conn.execute("UPDATE mail_messages SET is_read = 1 - is_read WHERE id = 1")
    ws.conn.execute("UPDATE mail_messages SET folder = folder WHERE id = 2")  # touched, not changed
    statements = traced_revert(ws)
    updates = {s for s in statements if s.startswith("UPDATE")}  # (a trigger repeats its statement)
    assert updates == {f'UPDATE "mail_messages" SET "is_read" = {ws_read(1)} WHERE rowid = 1'}
    assert everything(ws.conn) == everything(base().fork().conn)


def ws_read(message_id: int) -> int:
    """Whether message `message_id` of the base is read."""
    row = (
        base().fork().conn.execute("SELECT is_read FROM mail_messages WHERE id = ?", (message_id,)).fetchone()
    )
    return int(row[0])


def test_a_value_of_another_type_counts_as_changed() -> None:
    schema = ServiceSchema(name="x", sql="CREATE TABLE x_values (id INTEGER PRIMARY KEY, v);")
    ws = Workspace.create([schema], clock_start=datetime(2026, 3, 2, tzinfo=UTC))
    ws.conn.execute("INSERT INTO x_values VALUES (1, 1)")
    ws.mark_base()
    fork = ForkPool(ws.snapshot()).take()
    fork.conn.execute("UPDATE x_values SET v = 1.0 WHERE id = 1")
    assert fork.conn.execute("SELECT typeof(v) FROM x_values").fetchone() == ("real",)
    revert_to_base(fork.conn)
    assert fork.conn.execute("SELECT typeof(v), v FROM x_values").fetchone() == ("integer", 1)
