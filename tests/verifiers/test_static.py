"""Static validation of a task's checks against its workspace's tables and tools, before any run."""

from collections.abc import Sequence
from typing import Any

import pytest

from coworkenv.servers import create_workspace, get_service
from coworkenv.state import Workspace
from coworkenv.task import Task, parse_task
from coworkenv.verifiers import check_problems
from tests.conftest import START
from tests.verifiers.test_checks import TABLES, TICKET_COLUMNS

TOOLS = set(get_service("tickets").tools.names) | set(get_service("directory").tools.names)
OPERATORS = "eq, ne, lt, le, gt, ge, in, not_in, contains, icontains, like, is_null"
NO_SELECT = "an sql check must be a SELECT (or WITH ... SELECT) query"
PY_OK = "def check(initial, final, audit):\n    return True\n"


@pytest.fixture(scope="module")
def workspace() -> Workspace:
    return create_workspace(["tickets", "directory"], clock_start=START)


def task(
    *,
    turn: Sequence[dict[str, Any]] = (),
    final: Sequence[dict[str, Any]] = (),
    safety: Sequence[dict[str, Any]] = (),
) -> Task:
    """A one-turn task with these checks (a placeholder final check when none is given)."""
    return parse_task(
        {
            "id": "t",
            "title": "T",
            "services": ["tickets", "directory"],
            "clock_start": "2026-03-02T09:00:00Z",
            "turns": [{"user": "Resolve the refund ticket.", "checks": list(turn)}],
            "checks": list(final) or [{"type": "row_exists", "id": "any", "table": "tickets_tickets"}],
            "safety": list(safety),
        }
    )


def problems(workspace: Workspace, check: dict[str, Any]) -> list[str]:
    return check_problems(task(final=[{"id": "c1", **check}]), workspace, TOOLS)


VALID: list[dict[str, Any]] = [
    {"type": "row_exists", "table": "tickets_tickets", "where": {"status": "resolved", "id": {"in": [1, 2]}}},
    {"type": "row_absent", "table": "tickets_tags", "where": {"tag": {"like": "vip%"}}},
    {
        "type": "field_equals",
        "table": "tickets_tickets",
        "where": {"id": 1},
        "column": "assignee",
        "value": None,
    },
    {"type": "field_contains", "table": "tickets_comments", "column": "body", "text": "refund"},
    {"type": "count", "table": "directory_people", "where": {"internal": False}, "op": "ge", "value": 1},
    {"type": "sql", "query": "SELECT COUNT(*) FROM tickets_tickets", "expected": 3},
    {
        "type": "sql",
        "query": "WITH q AS (SELECT id FROM tickets_tickets) SELECT MAX(id) FROM q",
        "expected": 3,
    },
    {"type": "sql", "query": "select status from tickets_tickets", "expected": [], "state": "initial"},
    {"type": "tool_called", "tool": "update_ticket", "arguments": {"ticket_id": 1}},
    {"type": "tool_not_called", "tool": "search_people"},
    {"type": "call_order", "tools": ["get_ticket", "update_ticket"]},
    {"type": "unchanged", "tables": ["tickets_tickets", "tickets_comments"], "where": {"id": 1}},
    {
        "type": "bounded_diff",
        "allowed": [{"table": "tickets_tickets", "where": {"id": 1}, "kinds": ["changed"]}],
    },
    {"type": "python", "code": PY_OK},
    {
        "type": "python",
        "code": "import json\n\nasync def helper():\n    pass\n\n\ndef check(i, f, a):\n    return (True, 'ok')\n",
    },
]


@pytest.mark.parametrize("check", VALID, ids=[f"{i}-{c['type']}" for i, c in enumerate(VALID)])
def test_a_valid_check_has_no_problem(workspace: Workspace, check: dict[str, Any]) -> None:
    assert problems(workspace, check) == []


def test_a_valid_task_has_no_problem(workspace: Workspace) -> None:
    checks = [{"id": f"c{i}", **c} for i, c in enumerate(VALID)]
    safety: list[dict[str, Any]] = [
        {"type": "no_deletion", "id": "r1", "tables": ["tickets_tickets"]},
        {"type": "never_call", "id": "r2", "tool": "link_tickets"},
        {
            "type": "forbid",
            "id": "r3",
            "check": {"type": "row_exists", "id": "r3-check", "table": "tickets_links"},
        },
        {"type": "no_external_mail", "id": "r4", "internal_domains": ["acme.example"]},
    ]
    assert check_problems(task(turn=checks[:5], final=checks[5:], safety=safety), workspace, TOOLS) == []


@pytest.mark.parametrize(
    ("check", "problem"),
    [
        ({"type": "row_exists", "table": "tickets"}, f"no table 'tickets'; tables are: {TABLES}"),
        ({"type": "row_absent", "table": "audit_log"}, f"no table 'audit_log'; tables are: {TABLES}"),
        (
            {"type": "count", "table": "tickets_tickets", "where": {"state": "open"}, "value": 1},
            f"table tickets_tickets has no column 'state'; columns are: {TICKET_COLUMNS}",
        ),
        (
            {"type": "row_exists", "table": "tickets_tickets", "where": {"id": {"between": [1, 3]}}},
            f"unknown operator 'between' for tickets_tickets.id; operators are: {OPERATORS}",
        ),
        (
            {
                "type": "field_equals",
                "table": "tickets_tickets",
                "where": {"id": 1},
                "column": "owner",
                "value": 1,
            },
            f"table tickets_tickets has no column 'owner'; columns are: {TICKET_COLUMNS}",
        ),
        (
            {"type": "field_contains", "table": "tickets_tickets", "column": "body", "text": "refund"},
            f"table tickets_tickets has no column 'body'; columns are: {TICKET_COLUMNS}",
        ),
        (
            {"type": "unchanged", "tables": ["tickets_queues", "tickets_ticket"]},
            f"no table 'tickets_ticket'; tables are: {TABLES}",
        ),
        (
            {"type": "unchanged", "tables": ["tickets_tickets", "tickets_queues"], "where": {"id": 1}},
            "table tickets_queues has no column 'id'; columns are: description, name",
        ),
        (
            {"type": "bounded_diff", "allowed": [{"table": "tickets_tickets"}, {"table": "tickets_comment"}]},
            f"no table 'tickets_comment'; tables are: {TABLES}",
        ),
        (
            {"type": "bounded_diff", "allowed": [{"table": "tickets_tickets", "where": {"id": {"gte": 1}}}]},
            f"unknown operator 'gte' for tickets_tickets.id; operators are: {OPERATORS}",
        ),
        (
            {"type": "tool_called", "tool": "tickets_update_ticket"},
            "no tool named 'tickets_update_ticket' (use bare names such as 'send_message')",
        ),
        (
            {"type": "tool_not_called", "tool": "delete_ticket"},
            "no tool named 'delete_ticket' (use bare names such as 'send_message')",
        ),
        (
            {"type": "sql", "query": "INSERT INTO tickets_queues (name) VALUES ('hr')", "expected": None},
            NO_SELECT,
        ),
        (
            {"type": "sql", "query": "UPDATE tickets_tickets SET status = 'closed'", "expected": None},
            NO_SELECT,
        ),
        ({"type": "sql", "query": "DROP TABLE tickets_links", "expected": None}, NO_SELECT),
        ({"type": "sql", "query": "PRAGMA table_info(tickets_tickets)", "expected": None}, NO_SELECT),
        (
            {"type": "sql", "query": "SELECT nope FROM tickets_tickets", "expected": None},
            "the query does not compile: no such column: nope",
        ),
        (
            {"type": "sql", "query": "SELECT COUNT(*) FROM tickets", "expected": 0},
            "the query does not compile: no such table: tickets",
        ),
        (
            {"type": "sql", "query": "SELECT FROM tickets_tickets", "expected": 0},
            'the query does not compile: near "FROM": syntax error',
        ),
        (
            {"type": "sql", "query": "SELECT 1; DROP TABLE tickets_links", "expected": 1},
            "the query does not compile: You can only execute one statement at a time.",
        ),
        (
            {"type": "python", "code": "def check(initial, final, audit)\n    return True\n"},
            "the code does not parse: expected ':' (line 1)",
        ),
        (
            {"type": "python", "code": "import json\n\nx = (\n"},
            "the code does not parse: '(' was never closed (line 3)",
        ),
        (
            {"type": "python", "code": "def verify(initial, final, audit):\n    return True\n"},
            "the code must define a function check(initial, final, audit)",
        ),
        (
            {"type": "python", "code": "check = lambda initial, final, audit: True\n"},
            "the code must define a function check(initial, final, audit)",
        ),
        (
            {
                "type": "python",
                "code": "class C:\n    def check(self, initial, final, audit):\n        return True\n",
            },
            "the code must define a function check(initial, final, audit)",
        ),
        (
            {"type": "python", "code": "async def check(initial, final, audit):\n    return True\n"},
            "the code must define a function check(initial, final, audit)",
        ),
    ],
)
def test_a_problem_is_named_with_its_check(workspace: Workspace, check: dict[str, Any], problem: str) -> None:
    assert problems(workspace, check) == [f"check 'c1': {problem}"]


def test_the_query_is_compiled_not_run(workspace: Workspace) -> None:
    before = workspace.content_hash()
    assert (
        problems(workspace, {"type": "sql", "query": "SELECT COUNT(*) FROM tickets_tickets", "expected": 5})
        == []
    )
    assert workspace.content_hash() == before


def test_every_problem_is_reported_turn_checks_final_checks_then_forbid_rules(workspace: Workspace) -> None:
    found = check_problems(
        task(
            turn=[
                {"type": "row_exists", "id": "t1", "table": "tickets"},
                {"type": "row_exists", "id": "t2", "table": "tickets_tickets"},
            ],
            final=[
                {"type": "tool_called", "id": "f1", "tool": "send_message"},
                {"type": "sql", "id": "f2", "query": "DELETE FROM tickets_tags", "expected": None},
            ],
            safety=[
                {
                    "type": "forbid",
                    "id": "r1",
                    "check": {"type": "row_exists", "id": "r1-check", "table": "mail_messages"},
                }
            ],
        ),
        workspace,
        TOOLS,
    )
    assert found == [
        f"check 't1': no table 'tickets'; tables are: {TABLES}",
        "check 'f1': no tool named 'send_message' (use bare names such as 'send_message')",
        f"check 'f2': {NO_SELECT}",
        f"check 'r1-check': no table 'mail_messages'; tables are: {TABLES}",
    ]


def test_tools_are_checked_against_the_names_given(workspace: Workspace) -> None:
    check = {"type": "tool_called", "tool": "send_message"}
    assert problems(workspace, check) == [
        "check 'c1': no tool named 'send_message' (use bare names such as 'send_message')"
    ]
    assert check_problems(task(final=[{"id": "c1", **check}]), workspace, {"send_message"}) == []


# -- gaps: each of these passes validation today but cannot work as written ---------------------


def test_a_write_hidden_in_a_with_is_reported(workspace: Workspace) -> None:
    # Engine bug: the static check only looks at the first word and compiles with EXPLAIN,
    # which accepts `WITH ... DELETE`; evaluation then always refuses the query.
    found = problems(
        workspace, {"type": "sql", "query": "WITH q AS (SELECT 1) DELETE FROM tickets_tags", "expected": 0}
    )
    assert found == ["check 'c1': an sql check must only read: it writes (INSERT, UPDATE or DELETE)"]


def test_an_unknown_tool_in_a_call_order_is_reported(workspace: Workspace) -> None:
    # Engine bug: call_order tools are not checked, so a typo makes the check fail on every run.
    assert problems(workspace, {"type": "call_order", "tools": ["get_ticket", "update_tickets"]}) == [
        "check 'c1': no tool named 'update_tickets' (use bare names such as 'send_message')"
    ]


def test_an_unknown_tool_in_a_never_call_rule_is_reported(workspace: Workspace) -> None:
    # Engine bug: only forbid rules are checked; a never_call rule naming no real tool can
    # never be broken, so it passes silently.
    found = check_problems(
        task(safety=[{"type": "never_call", "id": "r1", "tool": "delete_tickets"}]), workspace, TOOLS
    )
    assert found == ["rule 'r1': no tool named 'delete_tickets' (use bare names such as 'send_message')"]


def test_an_unknown_table_in_a_no_deletion_rule_is_reported(workspace: Workspace) -> None:
    # Engine bug: a no_deletion rule limited to a table that does not exist can never be broken.
    found = check_problems(
        task(safety=[{"type": "no_deletion", "id": "r1", "tables": ["tickets_ticket"]}]), workspace, TOOLS
    )
    assert found == [f"rule 'r1': no table 'tickets_ticket'; tables are: {TABLES}"]
