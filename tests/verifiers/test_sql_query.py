"""SQL checks run read-only and bounded: a runaway query is a clear check error, never a hang."""

import sqlite3
import threading
from collections.abc import Iterator

import anyio
import pytest

from coworkenv.verifiers.sql_query import run_read_only_query, run_read_only_query_async, writes
from coworkenv.verifiers.where import CheckSpecError

ENDLESS_CTE = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
CROSS_JOIN = "SELECT count(*) FROM big a, big b, big c, big d"


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    connection.execute("CREATE TABLE tickets (id INTEGER PRIMARY KEY, status TEXT)")
    connection.executemany("INSERT INTO tickets VALUES (?, ?)", [(1, "open"), (2, "closed"), (3, "open")])
    connection.execute("CREATE TABLE big (x)")
    connection.executemany("INSERT INTO big VALUES (?)", [(i,) for i in range(2000)])
    connection.commit()
    yield connection
    connection.close()


def test_one_cell_comes_back_as_a_scalar_and_rows_as_lists(conn: sqlite3.Connection) -> None:
    assert run_read_only_query(conn, "SELECT count(*) FROM tickets WHERE status = 'open'") == 2
    assert run_read_only_query(conn, "select id, status from tickets order by id") == [
        [1, "open"],
        [2, "closed"],
        [3, "open"],
    ]
    assert run_read_only_query(conn, "WITH o AS (SELECT id FROM tickets) SELECT max(id) FROM o") == 3


@pytest.mark.parametrize(
    "query", ["DELETE FROM tickets", "PRAGMA query_only = OFF", "  update tickets set id=1"]
)
def test_a_query_that_is_not_a_select_is_refused(conn: sqlite3.Connection, query: str) -> None:
    with pytest.raises(CheckSpecError) as raised:
        run_read_only_query(conn, query)
    assert str(raised.value) == "an sql check must be a SELECT (or WITH ... SELECT) query"


@pytest.mark.parametrize(
    "query",
    [
        "WITH x AS (SELECT 1) DELETE FROM tickets",
        "with x as (select 1) update tickets set status = 'open'",
        "WITH x AS (SELECT 9 AS id) INSERT INTO tickets (id, status) SELECT id, 'open' FROM x",
        "WITH x AS (SELECT 1) REPLACE INTO tickets (id, status) VALUES (1, 'gone')",
    ],
)
def test_a_write_hidden_in_a_with_clause_fails_and_changes_nothing(
    conn: sqlite3.Connection, query: str
) -> None:
    before = conn.execute("SELECT * FROM tickets ORDER BY id").fetchall()
    for _ in range(2):  # refused again: what is remembered is only the queries that read
        with pytest.raises(CheckSpecError) as raised:
            run_read_only_query(conn, query)
        assert str(raised.value) == "an sql check must only read: it writes (INSERT, UPDATE or DELETE)"
    assert conn.execute("SELECT * FROM tickets ORDER BY id").fetchall() == before
    conn.execute("DELETE FROM tickets WHERE id = 3")  # the connection itself still writes


def test_reads_of_every_kind_are_not_taken_for_writes(conn: sqlite3.Connection) -> None:
    # Sorting, DISTINCT and recursive queries write to SQLite's own scratch tables, never
    # to the database: only a write transaction counts.
    assert not writes(conn, "SELECT DISTINCT status FROM tickets ORDER BY status")
    assert not writes(
        conn,
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r WHERE x < 5) SELECT sum(x) FROM r",
    )
    assert not writes(conn, 'SELECT name FROM pragma_table_info("tickets")')
    assert writes(conn, "WITH x AS (SELECT 1) DELETE FROM tickets")
    assert run_read_only_query(conn, "SELECT DISTINCT status FROM tickets ORDER BY status") == [
        ["closed"],
        ["open"],
    ]


def test_a_check_leaves_the_connections_compiled_statements_alone(conn: sqlite3.Connection) -> None:
    # A setting changed on the connection (PRAGMA query_only, an authorizer) would make SQLite
    # compile each of its statements again; the guard asks SQLite about the query instead.
    traced: list[str] = []
    conn.set_trace_callback(traced.append)
    run_read_only_query(conn, "SELECT count(*) FROM tickets")
    conn.set_trace_callback(None)
    assert not [s for s in traced if s.upper().startswith("PRAGMA")]


def test_an_endless_recursive_query_stops_on_the_step_limit_with_a_clear_error(
    conn: sqlite3.Connection,
) -> None:
    with pytest.raises(CheckSpecError) as raised:
        run_read_only_query(conn, ENDLESS_CTE)
    assert str(raised.value) == "the sql check ran past 5 s (or 100000000 steps); simplify the query"


def test_a_four_way_cross_join_over_a_big_table_stops(conn: sqlite3.Connection) -> None:
    with pytest.raises(CheckSpecError) as raised:
        run_read_only_query(conn, CROSS_JOIN, max_steps=1_000_000)
    assert str(raised.value) == "the sql check ran past 5 s (or 1000000 steps); simplify the query"


def test_the_time_limit_stops_a_query_too(conn: sqlite3.Connection) -> None:
    with pytest.raises(CheckSpecError) as raised:
        run_read_only_query(conn, ENDLESS_CTE, max_seconds=0.05, max_steps=10**15)
    assert (
        str(raised.value) == "the sql check ran past 0.05 s (or 1000000000000000 steps); simplify the query"
    )


def test_too_many_rows_is_a_clear_error(conn: sqlite3.Connection) -> None:
    with pytest.raises(CheckSpecError) as raised:
        run_read_only_query(conn, "SELECT x FROM big", max_rows=100)
    assert str(raised.value) == "the sql check returned more than 100 rows; aggregate or filter them"


def test_the_connection_is_left_as_it_was_after_a_stopped_query(conn: sqlite3.Connection) -> None:
    with pytest.raises(CheckSpecError):
        run_read_only_query(conn, ENDLESS_CTE, max_steps=100_000)
    # No progress handler is left behind: a long query of the caller runs to its end.
    assert conn.execute("SELECT count(*) FROM big a, big b").fetchone() == (4_000_000,)
    assert conn.execute("PRAGMA query_only").fetchone() == (0,)
    conn.execute("PRAGMA query_only = ON")
    assert run_read_only_query(conn, "SELECT 1") == 1
    assert conn.execute("PRAGMA query_only").fetchone() == (1,)  # restored, not switched off


async def test_the_async_variant_runs_off_the_event_loop(conn: sqlite3.Connection) -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []
    conn.create_function("thread_id", 0, lambda: seen.append(threading.get_ident()) or 1)
    with anyio.fail_after(30):
        assert await run_read_only_query_async(conn, "SELECT thread_id()") == 1
        with pytest.raises(CheckSpecError):
            await run_read_only_query_async(conn, ENDLESS_CTE, max_steps=1_000_000)
    assert len(seen) == 1 and seen[0] != loop_thread
