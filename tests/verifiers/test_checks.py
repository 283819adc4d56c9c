"""Every declarative check type, passing and failing, on small workspaces with exact rows.

The seed: three tickets in two queues, one comment, three people. `initial` is the seeded
state; each test changes a fork of it (`final`) and records the agent's calls there.
"""

from typing import Any

import pytest
from pydantic import TypeAdapter

from coworkenv.checks import Check
from coworkenv.servers import apply_world_operation, create_workspace
from coworkenv.state import Snapshot, Workspace
from coworkenv.verifiers import CheckResult, Evidence, evaluate_checks
from tests.conftest import START

ME = "me@acme.example"
ANA = "ana@acme.example"
BEN = "ben@acme.example"
CARA = "cara@customer.example"
NOW = "2026-03-02T09:00:00+00:00"
LATER = "2026-03-02T09:30:00+00:00"
TABLES = (
    "directory_people, directory_teams, tickets_comments, tickets_links, tickets_queues, tickets_tags, "
    "tickets_tickets"
)
TICKET_COLUMNS = (
    "assignee, created_at, description, due_at, id, priority, queue, requester, status, title, updated_at"
)
NOT_EVALUATED = "the check could not be evaluated"


def seeded() -> Workspace:
    """Tickets #1 (billing, open, tags refund+vip), #2 (it, in progress, Ana) and #3 (billing,
    resolved, one public comment by Ana); Ana and Ben are colleagues, Cara a customer."""
    ws = create_workspace(["tickets", "directory"], clock_start=START, user_email=ME)

    def op(service: str, operation: str, params: dict[str, Any]) -> None:
        apply_world_operation(ws, service, operation, params)

    op("directory", "add_person", {"email": ANA, "name": "Ana Ruiz"})
    op("directory", "add_person", {"email": BEN, "name": "Ben Ode"})
    op("directory", "add_person", {"email": CARA, "name": "Cara Moss", "internal": False})
    op("tickets", "add_queue", {"name": "billing"})
    op("tickets", "add_queue", {"name": "it"})
    op(
        "tickets",
        "add_ticket",
        {
            "id": 1,
            "title": "Refund for order 1182",
            "queue": "billing",
            "requester": CARA,
            "priority": "high",
            "tags": ["vip", "refund"],
            "due_at": "2026-03-05",
        },
    )
    op(
        "tickets",
        "add_ticket",
        {
            "id": 2,
            "title": "VPN drops every hour",
            "queue": "it",
            "requester": BEN,
            "assignee": ANA,
            "status": "in_progress",
        },
    )
    op(
        "tickets",
        "add_ticket",
        {
            "id": 3,
            "title": "Invoice copy",
            "queue": "billing",
            "requester": CARA,
            "status": "resolved",
            "priority": "low",
            "comments": [{"author": ANA, "body": "Sent the invoice copy (total 240.00 EUR)."}],
        },
    )
    return ws


SEED: Snapshot = seeded().snapshot()


@pytest.fixture
def initial() -> Workspace:
    return SEED.fork()


@pytest.fixture
def final() -> Workspace:
    return SEED.fork()


def spec(data: dict[str, Any]) -> Check:
    return TypeAdapter(Check).validate_python(data)


def record(
    ws: Workspace,
    tool: str,
    arguments: dict[str, Any],
    *,
    error: str | None = None,
    actor: str = "agent",
    service: str = "tickets",
) -> None:
    """Append one call to the audit log (a failed one when `error` is given)."""
    ws.audit.record(
        time=NOW,
        actor=actor,
        service=service,
        tool=tool,
        arguments=arguments,
        result=None if error else {"ok": True},
        error=error,
        latency_ms=1.0,
    )


async def evaluate(data: dict[str, Any], initial: Workspace, final: Workspace) -> CheckResult:
    (result,) = await evaluate_checks([spec(data)], Evidence(initial, final, final.audit.entries(), ME))
    return result


async def judge(data: dict[str, Any], initial: Workspace, final: Workspace) -> tuple[bool, str, str | None]:
    """(passed, message, error) of one check."""
    result = await evaluate(data, initial, final)
    return result.passed, result.message, result.error


# -- results ---------------------------------------------------------------------------------


async def test_results_keep_order_id_type_weight_and_turn(initial: Workspace, final: Workspace) -> None:
    checks = [
        spec(
            {"type": "row_exists", "id": "a", "table": "tickets_queues", "where": {"name": "it"}, "weight": 2}
        ),
        spec({"type": "row_absent", "id": "b", "table": "tickets_queues", "where": {"name": "it"}}),
    ]
    results = await evaluate_checks(checks, Evidence(initial, final, [], ME), turn=1)
    assert results == [
        CheckResult(
            id="a",
            type="row_exists",
            passed=True,
            weight=2.0,
            message="1 matching row(s) in tickets_queues",
            turn=1,
        ),
        CheckResult(
            id="b",
            type="row_absent",
            passed=False,
            weight=1.0,
            message="1 matching row(s) in tickets_queues",
            turn=1,
        ),
    ]
    assert (await evaluate_checks(checks[:1], Evidence(initial, final, [], ME)))[0].turn is None


def test_evidence_calls_leave_out_events_and_successful_calls_leave_out_errors(final: Workspace) -> None:
    record(final, "get_ticket", {"ticket_id": 1})
    record(final, "update_ticket", {"ticket_id": 9}, error="no ticket with id 9")
    record(final, "get_ticket", {"ticket_id": 2}, actor="oracle")
    evidence = Evidence(final, final, final.audit.entries(), ME)
    assert len(final.audit.entries(actor="event")) == 8
    assert [(c.actor, c.tool, c.is_error) for c in evidence.calls] == [
        ("agent", "get_ticket", False),
        ("agent", "update_ticket", True),
        ("oracle", "get_ticket", False),
    ]
    assert [c.arguments for c in evidence.successful_calls] == [{"ticket_id": 1}, {"ticket_id": 2}]


# -- row_exists, row_absent -------------------------------------------------------------------


async def test_row_exists_passes_on_a_match_in_the_final_state(initial: Workspace, final: Workspace) -> None:
    final.conn.execute("UPDATE tickets_tickets SET status = 'resolved' WHERE id = 1")
    check = {
        "type": "row_exists",
        "id": "c",
        "table": "tickets_tickets",
        "where": {"id": 1, "status": "resolved"},
    }
    assert await judge(check, initial, final) == (
        True,
        "1 matching row(s) in tickets_tickets",
        None,
    )
    assert await judge(check, final, initial) == (
        False,
        "0 matching row(s) in tickets_tickets",
        None,
    )


async def test_row_exists_counts_every_match(initial: Workspace, final: Workspace) -> None:
    check = {"type": "row_exists", "id": "c", "table": "tickets_tickets", "where": {"queue": "billing"}}
    assert await judge(check, initial, final) == (
        True,
        "2 matching row(s) in tickets_tickets",
        None,
    )


async def test_row_exists_fails_without_a_match(initial: Workspace, final: Workspace) -> None:
    check = {"type": "row_exists", "id": "c", "table": "tickets_tickets", "where": {"status": "closed"}}
    assert await judge(check, initial, final) == (
        False,
        "0 matching row(s) in tickets_tickets",
        None,
    )


async def test_row_absent_passes_without_a_match(initial: Workspace, final: Workspace) -> None:
    check = {"type": "row_absent", "id": "c", "table": "tickets_tags", "where": {"tag": "urgent"}}
    assert await judge(check, initial, final) == (True, "0 matching row(s) in tickets_tags", None)


async def test_row_absent_fails_on_a_match(initial: Workspace, final: Workspace) -> None:
    check = {"type": "row_absent", "id": "c", "table": "tickets_tags", "where": {"ticket_id": 1}}
    assert await judge(check, initial, final) == (
        False,
        "2 matching row(s) in tickets_tags",
        None,
    )


async def test_row_absent_without_where_means_an_empty_table(initial: Workspace, final: Workspace) -> None:
    check = {"type": "row_absent", "id": "c", "table": "tickets_links"}
    assert await judge(check, initial, final) == (
        True,
        "0 matching row(s) in tickets_links",
        None,
    )
    final.conn.execute(
        "INSERT INTO tickets_links (source_id, kind, target_id, created_at) VALUES (1, 'relates_to', 3, ?)",
        (NOW,),
    )
    assert await judge(check, initial, final) == (
        False,
        "1 matching row(s) in tickets_links",
        None,
    )


# -- field_equals ------------------------------------------------------------------------------


async def test_field_equals_passes_when_the_one_matching_row_has_the_value(
    initial: Workspace, final: Workspace
) -> None:
    check = {
        "type": "field_equals",
        "id": "c",
        "table": "tickets_tickets",
        "where": {"id": 2},
        "column": "assignee",
        "value": ANA,
    }
    assert await judge(check, initial, final) == (
        True,
        "assignee is 'ana@acme.example', expected 'ana@acme.example'",
        None,
    )


@pytest.mark.parametrize(
    ("where", "column", "value", "expected"),
    [
        ({"id": 1}, "assignee", ANA, (False, "assignee is None, expected 'ana@acme.example'", None)),
        ({"id": 1}, "assignee", None, (True, "assignee is None, expected None", None)),
        ({"id": 1}, "status", "OPEN", (False, "status is 'open', expected 'OPEN'", None)),
        ({"id": 1}, "id", "1", (False, "id is 1, expected '1'", None)),
        ({"id": 1}, "id", 1.0, (True, "id is 1, expected 1.0", None)),
        (
            {"id": 99},
            "status",
            "open",
            (False, "expected exactly one matching row in tickets_tickets, found 0", None),
        ),
        (
            {"queue": "billing"},
            "requester",
            CARA,
            (False, "expected exactly one matching row in tickets_tickets, found 2", None),
        ),
    ],
)
async def test_field_equals_outcomes(
    initial: Workspace, final: Workspace, where: dict[str, Any], column: str, value: Any, expected: tuple
) -> None:
    check = {"type": "field_equals", "id": "c", "table": "tickets_tickets", "where": where, "column": column}
    assert await judge({**check, "value": value}, initial, final) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (False, (True, "internal is 0, expected False", None)),
        (True, (False, "internal is 0, expected True", None)),
        (0, (True, "internal is 0, expected 0", None)),
    ],
)
async def test_field_equals_compares_bools_with_stored_0_and_1(
    initial: Workspace, final: Workspace, value: Any, expected: tuple
) -> None:
    check = {
        "type": "field_equals",
        "id": "c",
        "table": "directory_people",
        "where": {"email": CARA},
        "column": "internal",
        "value": value,
    }
    assert await judge(check, initial, final) == expected


# -- field_contains ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "case_sensitive", "expected"),
    [
        ("240.00 eur", False, (True, "body contains '240.00 eur'", None)),
        ("240.00 EUR", True, (True, "body contains '240.00 EUR'", None)),
        (
            "240.00 eur",
            True,
            (False, "no matching row's body contains '240.00 eur' (1 row(s) matched)", None),
        ),
        ("240,00", False, (False, "no matching row's body contains '240,00' (1 row(s) matched)", None)),
    ],
)
async def test_field_contains_is_case_insensitive_unless_asked(
    initial: Workspace, final: Workspace, text: str, case_sensitive: bool, expected: tuple
) -> None:
    check = {
        "type": "field_contains",
        "id": "c",
        "table": "tickets_comments",
        "where": {"ticket_id": 3},
        "column": "body",
        "text": text,
        "case_sensitive": case_sensitive,
    }
    assert await judge(check, initial, final) == expected


async def test_field_contains_passes_when_any_matching_row_contains_the_text(
    initial: Workspace, final: Workspace
) -> None:
    check = {
        "type": "field_contains",
        "id": "c",
        "table": "tickets_tickets",
        "column": "assignee",
        "text": "ANA@",
    }
    assert await judge(check, initial, final) == (True, "assignee contains 'ANA@'", None)


async def test_field_contains_fails_on_null_and_on_no_matching_row(
    initial: Workspace, final: Workspace
) -> None:
    check = {
        "type": "field_contains",
        "id": "c",
        "table": "tickets_tickets",
        "column": "assignee",
        "text": "a",
    }
    assert await judge({**check, "where": {"id": 1}}, initial, final) == (
        False,
        "no matching row's assignee contains 'a' (1 row(s) matched)",
        None,
    )
    assert await judge({**check, "where": {"id": 99}}, initial, final) == (
        False,
        "no matching row's assignee contains 'a' (0 row(s) matched)",
        None,
    )


async def test_field_contains_reads_a_stored_zero_as_0(initial: Workspace, final: Workspace) -> None:
    # Engine bug: `str(row[column] or "")` turns a stored 0 into "" (only None should become "").
    check = {
        "type": "field_contains",
        "id": "c",
        "table": "directory_people",
        "where": {"email": CARA},
        "column": "internal",
        "text": "0",
    }
    assert await judge(check, initial, final) == (True, "internal contains '0'", None)


# -- count -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "value", "passed"),
    [
        ("eq", 2, True),
        ("eq", 3, False),
        ("ne", 3, True),
        ("ne", 2, False),
        ("lt", 3, True),
        ("lt", 2, False),
        ("le", 2, True),
        ("le", 1, False),
        ("gt", 1, True),
        ("gt", 2, False),
        ("ge", 2, True),
        ("ge", 3, False),
    ],
)
async def test_count_compares_with_each_comparator(
    initial: Workspace, final: Workspace, op: str, value: int, passed: bool
) -> None:
    check = {"type": "count", "id": "c", "table": "tickets_tickets", "where": {"queue": "billing"}, "op": op}
    assert await judge({**check, "value": value}, initial, final) == (
        passed,
        f"count 2, expected {op} {value}",
        None,
    )


async def test_count_defaults_to_eq_over_every_row(initial: Workspace, final: Workspace) -> None:
    final.conn.execute("DELETE FROM tickets_tickets WHERE id = 2")
    check = {"type": "count", "id": "c", "table": "tickets_tickets", "value": 3}
    assert await judge(check, initial, initial) == (True, "count 3, expected eq 3", None)
    assert await judge(check, initial, final) == (False, "count 2, expected eq 3", None)


# -- sql ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected", "result"),
    [
        (
            "SELECT COUNT(*) FROM tickets_tickets WHERE queue = 'billing'",
            2,
            (True, "query returned 2, expected 2", None),
        ),
        (
            "SELECT COUNT(*) FROM tickets_tickets WHERE queue = 'billing'",
            3,
            (False, "query returned 2, expected 3", None),
        ),
        # one column and one row is a scalar, never a list
        (
            "SELECT COUNT(*) FROM tickets_tickets WHERE queue = 'billing'",
            [[2]],
            (False, "query returned 2, expected [[2]]", None),
        ),
        (
            "SELECT id, status FROM tickets_tickets ORDER BY id",
            [[1, "open"], [2, "in_progress"], [3, "resolved"]],
            (
                True,
                "query returned [[1, 'open'], [2, 'in_progress'], [3, 'resolved']], "
                "expected [[1, 'open'], [2, 'in_progress'], [3, 'resolved']]",
                None,
            ),
        ),
        (
            "SELECT id FROM tickets_tickets WHERE queue = 'billing' ORDER BY id",
            [[3], [1]],
            (False, "query returned [[1], [3]], expected [[3], [1]]", None),
        ),
        (
            "SELECT id, title FROM tickets_tickets WHERE id = 2",
            [[2, "VPN drops every hour"]],
            (
                True,
                "query returned [[2, 'VPN drops every hour']], expected [[2, 'VPN drops every hour']]",
                None,
            ),
        ),
        (
            "SELECT id FROM tickets_tickets WHERE status = 'closed'",
            [],
            (True, "query returned [], expected []", None),
        ),
        (
            "SELECT assignee FROM tickets_tickets WHERE id = 1",
            None,
            (True, "query returned None, expected None", None),
        ),
        (
            "SELECT internal FROM directory_people WHERE email = 'cara@customer.example'",
            False,
            (True, "query returned 0, expected False", None),
        ),
        (
            "  with billing AS (SELECT * FROM tickets_tickets WHERE queue = 'billing') SELECT MAX(id) FROM billing",
            3,
            (True, "query returned 3, expected 3", None),
        ),
    ],
)
async def test_sql_compares_a_scalar_or_rows(
    initial: Workspace, final: Workspace, query: str, expected: Any, result: tuple
) -> None:
    check = {"type": "sql", "id": "c", "query": query, "expected": expected}
    assert await judge(check, initial, final) == result


async def test_sql_reads_the_initial_state_when_asked(initial: Workspace, final: Workspace) -> None:
    final.conn.execute("UPDATE tickets_tickets SET status = 'resolved' WHERE id = 1")
    check = {
        "type": "sql",
        "id": "c",
        "query": "SELECT status FROM tickets_tickets WHERE id = 1",
        "expected": "open",
    }
    assert await judge({**check, "state": "initial"}, initial, final) == (
        True,
        "query returned 'open', expected 'open'",
        None,
    )
    assert await judge(check, initial, final) == (
        False,
        "query returned 'resolved', expected 'open'",
        None,
    )


@pytest.mark.parametrize(
    "query",
    [
        "INSERT INTO tickets_queues (name) VALUES ('hr')",
        "UPDATE tickets_tickets SET status = 'closed'",
        "DELETE FROM tickets_tags",
        "DROP TABLE tickets_links",
        "PRAGMA foreign_keys = OFF",
    ],
)
async def test_sql_refuses_a_statement_that_is_not_a_select(
    initial: Workspace, final: Workspace, query: str
) -> None:
    before = final.content_hash()
    assert await judge({"type": "sql", "id": "c", "query": query, "expected": None}, initial, final) == (
        False,
        NOT_EVALUATED,
        "CheckSpecError: an sql check must be a SELECT (or WITH ... SELECT) query",
    )
    assert final.content_hash() == before


WRITE_REFUSED = "CheckSpecError: an sql check must only read: it writes (INSERT, UPDATE or DELETE)"


@pytest.mark.parametrize(
    "query",
    [
        "WITH q AS (SELECT 'hr' AS n) INSERT INTO tickets_queues (name) SELECT n FROM q",
        "WITH q AS (SELECT 1) UPDATE tickets_tickets SET status = 'closed'",
        "WITH q AS (SELECT 1) DELETE FROM tickets_tags",
    ],
)
async def test_sql_refuses_a_write_hidden_in_a_with(initial: Workspace, final: Workspace, query: str) -> None:
    # Prepared once without the guard, so a cached statement cannot slip past it.
    final.conn.execute("SAVEPOINT probe")
    final.conn.execute(query)
    final.conn.execute("ROLLBACK TO probe")
    final.conn.execute("RELEASE probe")
    before = final.content_hash()
    result = await evaluate({"type": "sql", "id": "c", "query": query, "expected": None}, initial, final)
    assert (result.passed, result.message) == (False, NOT_EVALUATED)
    assert result.error == WRITE_REFUSED
    assert final.content_hash() == before
    # the guard is lifted afterwards: the connection still writes
    final.conn.execute("INSERT INTO tickets_queues (name) VALUES ('hr')")


async def test_sql_runs_one_statement_only(initial: Workspace, final: Workspace) -> None:
    check = {"type": "sql", "id": "c", "query": "SELECT 1; DROP TABLE tickets_links", "expected": 1}
    assert await judge(check, initial, final) == (
        False,
        NOT_EVALUATED,
        "ProgrammingError: You can only execute one statement at a time.",
    )
    assert "tickets_links" in {r[0] for r in final.conn.execute("SELECT name FROM sqlite_master")}


async def test_sql_can_search_the_mail_full_text_index() -> None:
    # Engine bug: the authorizer denies the PRAGMA data_version (and, on a fresh connection,
    # the schema step) that FTS5 and table-valued functions such as json_each need.
    initial = create_workspace(["mail"], clock_start=START, user_email=ME)
    apply_world_operation(initial, "mail", "deliver_inbound", {"from_addr": CARA, "subject": "Refund please"})
    final = initial.fork()
    check = {
        "type": "sql",
        "id": "c",
        "query": "SELECT COUNT(*) FROM mail_search WHERE mail_search MATCH 'refund'",
        "expected": 1,
    }
    assert await judge(check, initial, final) == (True, "query returned 1, expected 1", None)


# -- tool_called, tool_not_called, call_order --------------------------------------------------


@pytest.fixture
def calls(final: Workspace) -> Workspace:
    """The agent searched, read #1, failed to update #2, commented on #1, updated #1."""
    record(final, "search_tickets", {"query": "refund"})
    record(final, "get_ticket", {"ticket_id": 1})
    record(final, "update_ticket", {"ticket_id": 2, "status": "closed"}, error="ticket #2 cannot go from ...")
    record(final, "add_comment", {"ticket_id": 1, "body": "Refund issued.", "visibility": "public"})
    record(final, "update_ticket", {"ticket_id": 1, "status": "resolved", "tags": ["refund", "vip", "vip"]})
    return final


@pytest.mark.parametrize(
    ("arguments", "times"),
    [
        ({}, 1),
        ({"ticket_id": 1}, 1),
        ({"status": "  RESOLVED "}, 1),
        ({"ticket_id": 1, "status": "resolved"}, 1),
        ({"tags": ["VIP", "refund", "vip"]}, 1),
        ({"tags": ["vip", "refund"]}, 0),
        ({"tags": ["refund", "vip", "vip", "vip"]}, 0),
        ({"ticket_id": "1"}, 0),
        ({"priority": "high"}, 0),
        ({"ticket_id": 1, "status": "closed"}, 0),
        # the failed call does not count
        ({"ticket_id": 2}, 0),
    ],
)
async def test_tool_called_matches_a_subset_of_the_arguments(
    initial: Workspace, calls: Workspace, arguments: dict[str, Any], times: int
) -> None:
    check = {"type": "tool_called", "id": "c", "tool": "update_ticket", "arguments": arguments}
    assert await judge(check, initial, calls) == (
        times == 1,
        f"update_ticket called {times} time(s) as specified",
        None,
    )


async def test_tool_called_needs_min_times_successful_calls(initial: Workspace, calls: Workspace) -> None:
    check = {"type": "tool_called", "id": "c", "tool": "update_ticket", "min_times": 2}
    assert await judge(check, initial, calls) == (
        False,
        "update_ticket called 1 time(s) as specified",
        None,
    )
    record(calls, "update_ticket", {"ticket_id": 3, "priority": "high"}, actor="oracle")
    assert await judge(check, initial, calls) == (
        True,
        "update_ticket called 2 time(s) as specified",
        None,
    )


async def test_tool_called_ignores_world_events(initial: Workspace, calls: Workspace) -> None:
    assert [e.tool for e in calls.audit.entries(actor="event")].count("add_ticket") == 3
    check = {"type": "tool_called", "id": "c", "tool": "add_ticket"}
    assert await judge(check, initial, calls) == (
        False,
        "add_ticket called 0 time(s) as specified",
        None,
    )


@pytest.mark.parametrize(("service", "times"), [("tickets", 1), ("mail", 0), (None, 1)])
async def test_tool_called_filters_by_service(
    initial: Workspace, calls: Workspace, service: str | None, times: int
) -> None:
    check = {"type": "tool_called", "id": "c", "tool": "add_comment", "service": service}
    assert await judge(check, initial, calls) == (
        times == 1,
        f"add_comment called {times} time(s) as specified",
        None,
    )


async def test_tool_called_compares_lists_of_objects_as_multisets(
    initial: Workspace, final: Workspace
) -> None:
    # Engine bug: `_normal` sorts list items by repr, and a dict's repr depends on its key
    # order; the audit log stores arguments with sorted keys, a task file need not.
    record(final, "plan", {"items": [{"a": 1, "b": "y"}, {"a": 2, "b": "x"}]})
    check = {
        "type": "tool_called",
        "id": "c",
        "tool": "plan",
        "arguments": {"items": [{"b": "y", "a": 1}, {"b": "x", "a": 2}]},
    }
    assert await judge(check, initial, final) == (
        True,
        "plan called 1 time(s) as specified",
        None,
    )


@pytest.mark.parametrize(
    ("tool", "arguments", "times"),
    [
        ("link_tickets", {}, 0),
        ("update_ticket", {"ticket_id": 2}, 0),
        ("add_queue", {}, 0),
        ("update_ticket", {"ticket_id": 1}, 1),
        ("add_comment", {"body": "refund ISSUED."}, 1),
    ],
)
async def test_tool_not_called(
    initial: Workspace, calls: Workspace, tool: str, arguments: dict[str, Any], times: int
) -> None:
    check = {"type": "tool_not_called", "id": "c", "tool": tool, "arguments": arguments}
    assert await judge(check, initial, calls) == (
        times == 0,
        f"{tool} called {times} time(s) as specified",
        None,
    )


@pytest.mark.parametrize(
    ("tools", "passed", "message"),
    [
        (["search_tickets", "add_comment"], True, "in order"),
        (["search_tickets", "get_ticket", "add_comment", "update_ticket"], True, "in order"),
        # only the successful update_ticket counts, and it comes after add_comment
        (["update_ticket", "add_comment"], False, "missing, in order: ['add_comment']"),
        (["add_comment", "search_tickets"], False, "missing, in order: ['search_tickets']"),
        (["get_ticket", "get_ticket"], False, "missing, in order: ['get_ticket']"),
        (["add_ticket", "search_tickets"], False, "missing, in order: ['add_ticket', 'search_tickets']"),
    ],
)
async def test_call_order_is_a_subsequence_of_successful_calls(
    initial: Workspace, calls: Workspace, tools: list[str], passed: bool, message: str
) -> None:
    check = {"type": "call_order", "id": "c", "tools": tools}
    assert await judge(check, initial, calls) == (passed, message, None)


# -- unchanged ---------------------------------------------------------------------------------


async def test_unchanged_passes_when_the_tables_are_identical(initial: Workspace, final: Workspace) -> None:
    final.conn.execute("UPDATE tickets_tickets SET status = 'resolved' WHERE id = 1")
    check = {"type": "unchanged", "id": "c", "tables": ["tickets_queues", "directory_people"]}
    assert await judge(check, initial, final) == (True, "unchanged", None)


async def test_unchanged_names_every_changed_table(initial: Workspace, final: Workspace) -> None:
    final.conn.execute("UPDATE tickets_tickets SET status = 'resolved' WHERE id = 1")
    final.conn.execute("DELETE FROM tickets_tags WHERE ticket_id = 1 AND tag = 'vip'")
    check = {"type": "unchanged", "id": "c", "tables": ["tickets_tickets", "tickets_queues", "tickets_tags"]}
    assert await judge(check, initial, final) == (
        False,
        "changed: tickets_tickets, tickets_tags",
        None,
    )


@pytest.mark.parametrize(
    ("change", "where", "passed"),
    [
        ("UPDATE tickets_tickets SET status = 'resolved' WHERE id = 1", {"id": 2}, True),
        ("UPDATE tickets_tickets SET status = 'resolved' WHERE id = 1", {"id": 1}, False),
        # the row matched before the change, not after it
        ("UPDATE tickets_tickets SET queue = 'billing' WHERE id = 2", {"queue": "it"}, False),
        # the row matches after the change
        ("UPDATE tickets_tickets SET status = 'pending' WHERE id = 1", {"status": "pending"}, False),
        (
            "INSERT INTO tickets_tickets (id, title, status, priority, queue, requester, created_at, updated_at) "
            "VALUES (4, 'New laptop', 'open', 'normal', 'it', 'ben@acme.example', '2026-03-02', '2026-03-02')",
            {"queue": "billing"},
            True,
        ),
        (
            "INSERT INTO tickets_tickets (id, title, status, priority, queue, requester, created_at, updated_at) "
            "VALUES (4, 'New laptop', 'open', 'normal', 'it', 'ben@acme.example', '2026-03-02', '2026-03-02')",
            {"queue": "it"},
            False,
        ),
        ("DELETE FROM tickets_tickets WHERE id = 2", {"id": 2}, False),
        ("DELETE FROM tickets_tickets WHERE id = 2", {"id": {"ne": 2}}, True),
    ],
)
async def test_unchanged_with_where_looks_only_at_matching_rows(
    initial: Workspace, final: Workspace, change: str, where: dict[str, Any], passed: bool
) -> None:
    final.conn.execute(change)
    check = {"type": "unchanged", "id": "c", "tables": ["tickets_tickets"], "where": where}
    assert await judge(check, initial, final) == (
        passed,
        "unchanged" if passed else "changed: tickets_tickets",
        None,
    )


# -- bounded_diff ------------------------------------------------------------------------------


@pytest.fixture
def resolved(final: Workspace) -> Workspace:
    """Ticket #1 resolved, with a new comment."""
    final.conn.execute(
        "UPDATE tickets_tickets SET status = 'resolved', updated_at = ? WHERE id = 1", (LATER,)
    )
    final.conn.execute(
        "INSERT INTO tickets_comments (id, ticket_id, author, body, visibility, created_at) "
        "VALUES (2, 1, 'me@acme.example', 'Refund issued.', 'public', ?)",
        (NOW,),
    )
    return final


COMMENT_2 = (
    "{'id': 2, 'ticket_id': 1, 'author': 'me@acme.example', 'body': 'Refund issued.', 'visibility': 'public', "
    "'created_at': '2026-03-02T09:00:00+00:00'}"
)


async def test_bounded_diff_passes_when_every_change_is_allowed(
    initial: Workspace, resolved: Workspace
) -> None:
    check = {
        "type": "bounded_diff",
        "id": "c",
        "allowed": [
            {"table": "tickets_tickets", "where": {"id": 1}, "kinds": ["changed"]},
            {"table": "tickets_comments", "where": {"ticket_id": 1}, "kinds": ["added"]},
        ],
    }
    assert await judge(check, initial, resolved) == (
        True,
        "every change is within the allowed set",
        None,
    )


async def test_bounded_diff_passes_with_no_change_at_all(initial: Workspace, final: Workspace) -> None:
    check = {"type": "bounded_diff", "id": "c"}
    assert await judge(check, initial, final) == (
        True,
        "every change is within the allowed set",
        None,
    )


async def test_bounded_diff_names_a_change_outside_the_allowed_set(
    initial: Workspace, resolved: Workspace
) -> None:
    check = {"type": "bounded_diff", "id": "c", "allowed": [{"table": "tickets_tickets", "where": {"id": 1}}]}
    assert await judge(check, initial, resolved) == (
        False,
        f"1 change(s) outside the allowed set: tickets_comments: added {COMMENT_2}",
        None,
    )


@pytest.mark.parametrize(
    ("allowed", "passed"),
    [
        ({"where": {"id": 1}, "kinds": ["changed"]}, True),
        ({"where": {"id": 1}, "kinds": ["added", "removed"]}, False),
        ({"where": {"id": 2}}, False),
        # a changed row is allowed by its old values or by its new ones
        ({"where": {"status": "open"}}, True),
        ({"where": {"status": "resolved"}}, True),
        ({"where": {"status": "pending"}}, False),
        ({}, True),
    ],
)
async def test_bounded_diff_allows_a_changed_row_by_kind_and_where(
    initial: Workspace, resolved: Workspace, allowed: dict[str, Any], passed: bool
) -> None:
    check = {
        "type": "bounded_diff",
        "id": "c",
        "allowed": [{"table": "tickets_tickets", **allowed}, {"table": "tickets_comments"}],
    }
    assert await judge(check, initial, resolved) == (
        passed,
        "every change is within the allowed set"
        if passed
        else "1 change(s) outside the allowed set: tickets_tickets: changed {'id': 1} (status, updated_at)",
        None,
    )


async def test_bounded_diff_checks_removed_rows(initial: Workspace, final: Workspace) -> None:
    final.conn.execute("DELETE FROM tickets_tickets WHERE id = 2")
    removed = {"table": "tickets_tickets", "where": {"id": 2}, "kinds": ["removed"]}
    check = {"type": "bounded_diff", "id": "c", "allowed": [removed]}
    assert await judge(check, initial, final) == (
        True,
        "every change is within the allowed set",
        None,
    )
    check = {"type": "bounded_diff", "id": "c", "allowed": [{**removed, "kinds": ["changed"]}]}
    assert await judge(check, initial, final) == (
        False,
        "1 change(s) outside the allowed set: tickets_tickets: removed {'id': 2, 'title': 'VPN drops every hour', "
        "'description': '', 'status': 'in_progress', 'priority': 'normal', 'queue': 'it', "
        "'requester': 'ben@acme.example', 'assignee': 'ana@acme.example', 'due_at': None, "
        "'created_at': '2026-03-02T09:00:00+00:00', 'updated_at': '2026-03-02T09:00:00+00:00'}",
        None,
    )


async def test_bounded_diff_shows_five_changes_and_counts_the_rest(
    initial: Workspace, final: Workspace
) -> None:
    for n in range(1, 8):
        final.conn.execute("INSERT INTO tickets_queues (name) VALUES (?)", (f"q{n}",))
    check = {
        "type": "bounded_diff",
        "id": "c",
        "allowed": [{"table": "tickets_queues", "where": {"name": "q7"}}],
    }
    shown = "; ".join(f"tickets_queues: added {{'name': 'q{n}', 'description': ''}}" for n in range(1, 6))
    assert await judge(check, initial, final) == (
        False,
        f"6 change(s) outside the allowed set: {shown}; and 1 more",
        None,
    )


# -- checks that cannot be evaluated fail with the error, never pass ---------------------------


@pytest.mark.parametrize(
    ("check", "error"),
    [
        (
            {"type": "row_absent", "table": "tickets_ticket", "where": {"status": "closed"}},
            f"CheckSpecError: no table 'tickets_ticket'; tables are: {TABLES}",
        ),
        (
            {"type": "row_exists", "table": "audit_log"},
            f"CheckSpecError: no table 'audit_log'; tables are: {TABLES}",
        ),
        (
            {"type": "row_absent", "table": "tickets_tickets", "where": {"state": "closed"}},
            f"CheckSpecError: table tickets_tickets has no column 'state'; columns are: {TICKET_COLUMNS}",
        ),
        (
            {"type": "count", "table": "tickets_tickets", "where": {"id": {"between": [1, 2]}}, "value": 0},
            "CheckSpecError: unknown operator 'between' for tickets_tickets.id; operators are: "
            "eq, ne, lt, le, gt, ge, in, not_in, contains, icontains, like, is_null",
        ),
        (
            {
                "type": "field_equals",
                "table": "tickets_tickets",
                "where": {"id": 1},
                "column": "owner",
                "value": 1,
            },
            "CheckSpecError: table tickets_tickets has no column 'owner'",
        ),
        (
            {"type": "field_contains", "table": "tickets_tickets", "column": "body", "text": "x"},
            "CheckSpecError: table tickets_tickets has no column 'body'",
        ),
        (
            {"type": "sql", "query": "SELECT COUNT(*) FROM tickets", "expected": 0},
            "OperationalError: no such table: tickets",
        ),
        (
            {"type": "sql", "query": "SELECT COUNT(*) FROM tickets_tickets WHERE state = 'x'", "expected": 0},
            "OperationalError: no such column: state",
        ),
        (
            {"type": "unchanged", "tables": ["tickets_queues", "tickets_ticket"]},
            f"CheckSpecError: no table 'tickets_ticket'; tables are: {TABLES}",
        ),
        (
            {"type": "unchanged", "tables": ["tickets_tickets", "tickets_queues"], "where": {"id": 1}},
            "CheckSpecError: table tickets_queues has no column 'id'; columns are: description, name",
        ),
        (
            {"type": "bounded_diff", "allowed": [{"table": "tickets_ticket"}]},
            f"CheckSpecError: no table 'tickets_ticket'; tables are: {TABLES}",
        ),
        (
            {"type": "bounded_diff", "allowed": [{"table": "tickets_tickets", "where": {"state": "x"}}]},
            f"CheckSpecError: table tickets_tickets has no column 'state'; columns are: {TICKET_COLUMNS}",
        ),
    ],
)
async def test_a_check_naming_an_unknown_table_column_or_operator_fails_with_the_error(
    initial: Workspace, final: Workspace, check: dict[str, Any], error: str
) -> None:
    result = await evaluate({**check, "id": "broken", "weight": 3}, initial, final)
    role = "guard" if check["type"] in ("unchanged", "bounded_diff", "tool_not_called") else "goal"
    assert result == CheckResult(
        id="broken",
        type=check["type"],
        passed=False,
        weight=3.0,
        message=NOT_EVALUATED,
        error=error,
        role=role,
    )


async def test_a_broken_check_does_not_stop_the_others(initial: Workspace, final: Workspace) -> None:
    checks = [
        spec({"type": "row_exists", "id": "a", "table": "nope"}),
        spec({"type": "row_exists", "id": "b", "table": "tickets_queues"}),
    ]
    results = await evaluate_checks(checks, Evidence(initial, final, [], ME))
    assert [(r.id, r.passed, r.error is None) for r in results] == [("a", False, False), ("b", True, True)]


async def test_a_python_checks_message_is_bounded(initial: Workspace, final: Workspace) -> None:
    # A check could try to carry file contents out in its message; records keep at most 2,000 characters.
    code = "def check(initial, final, audit):\n    return (True, 'x' * 100000)\n"
    result = await evaluate({"type": "python", "id": "loud", "code": code}, initial, final)
    assert (result.passed, result.message, result.error) == (True, "x" * 2000, None)


async def test_a_python_verdict_is_reused_for_the_same_state_and_calls_only(
    initial: Workspace, final: Workspace
) -> None:
    from coworkenv.verifiers import python_checks

    code = "def check(initial, final, audit):\n    n = final.execute('SELECT count(*) FROM tickets_tickets').fetchone()[0]\n    return (True, f'{n} tickets')\n"
    python_checks._VERDICTS.clear()
    first = await evaluate({"type": "python", "id": "count", "code": code}, initial, final)
    again = await evaluate({"type": "python", "id": "count", "code": code}, initial, final)
    assert (first.message, again.message, len(python_checks._VERDICTS)) == (
        "3 tickets",
        "3 tickets",
        1,
    )
    final.conn.execute("UPDATE tickets_tickets SET priority = 'urgent' WHERE id = 3")  # another state
    changed = await evaluate({"type": "python", "id": "count", "code": code}, initial, final)
    assert (changed.message, len(python_checks._VERDICTS)) == ("3 tickets", 2)
    record(final, "get_ticket", {"ticket_id": 1})  # other calls: judged again
    await evaluate({"type": "python", "id": "count", "code": code}, initial, final)
    assert len(python_checks._VERDICTS) == 3


async def test_the_python_checks_of_one_evaluation_share_one_sandbox_and_a_failing_one_runs_alone(
    initial: Workspace, final: Workspace
) -> None:
    from coworkenv.verifiers import python_checks

    python_checks.forget_python_verdicts()
    # The first check leaves a mark on a module; the second sees it only in the same process.
    mark = (
        "def check(initial, final, audit):\n    import json\n    json.coworkenv_mark = 1\n    return True\n"
    )
    seen = "def check(initial, final, audit):\n    import json\n    return (hasattr(json, 'coworkenv_mark'), 'looked')\n"
    raises = "def check(initial, final, audit):\n    return 1 / 0\n"
    wrong = "def check(initial, final, audit):\n    return 'yes'\n"
    forbidden = "def check(initial, final, audit):\n    open('/etc/passwd').read()\n    return True\n"
    checks = [
        spec({"type": "python", "id": f"c{i}", "code": c}) for i, c in enumerate([mark, seen, raises, wrong])
    ]
    results = await evaluate_checks(checks, Evidence(initial, final, final.audit.entries(), ME))
    assert [(r.passed, r.message, r.error) for r in results] == [
        (True, "python check returned True", None),
        (True, "looked", None),
        (
            False,
            "the check could not be evaluated",
            "RuntimeError: python check error: ZeroDivisionError: division by zero (line 2)",
        ),
        (
            False,
            "the check could not be evaluated",
            "TypeError: check() must return a bool or (bool, message), not 'yes'",
        ),
    ]
    python_checks.forget_python_verdicts()
    alone = await evaluate_checks(
        [spec({"type": "python", "id": "s", "code": seen})],
        Evidence(initial, final, final.audit.entries(), ME),
    )
    assert (alone[0].passed, alone[0].message) == (False, "looked")
    # A forbidden act ends the shared run: the other check is judged alone, as if unshared.
    python_checks.forget_python_verdicts()
    pair = [
        spec({"type": "python", "id": "f", "code": forbidden}),
        spec({"type": "python", "id": "m", "code": mark}),
    ]
    results = await evaluate_checks(pair, Evidence(initial, final, final.audit.entries(), ME))
    assert [
        (r.passed, r.error is not None and r.error.startswith("RuntimeError: python check forbidden"))
        for r in results
    ] == [
        (False, True),
        (True, False),
    ]
    assert results[1].message == "python check returned True"
