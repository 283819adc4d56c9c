"""`where` filters: every operator, equality shorthand, bools stored as 0/1, None, type
mismatches, and the errors for unknown columns and operators."""

from typing import Any

import pytest
from pydantic import TypeAdapter

from coworkenv.checks import WHERE_OPERATORS, Check
from coworkenv.servers import apply_world_operation, create_workspace
from coworkenv.verifiers import CheckSpecError, Evidence, evaluate_checks
from coworkenv.verifiers.where import matches, validate_where
from tests.conftest import START

ROW: dict[str, Any] = {
    "id": 7,
    "title": "Refund for Order 1182",
    "status": "open",
    "due_at": "2026-03-05T00:00:00+00:00",
    "assignee": None,
    "internal": 1,
    "score": 2.5,
}
COLUMNS = set(ROW)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({}, True),
        # equality shorthand: exact, case-sensitive, no coercion between text and numbers
        ({"status": "open"}, True),
        ({"status": "Open"}, False),
        ({"id": 7}, True),
        ({"id": 7.0}, True),
        ({"id": "7"}, False),
        ({"score": 2.5}, True),
        # every condition must hold
        ({"status": "open", "id": 7}, True),
        ({"status": "open", "id": 8}, False),
    ],
)
def test_equality_shorthand(where: dict[str, Any], expected: bool) -> None:
    assert matches(ROW, where) is expected


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"eq": "open"}, True),
        ({"eq": "pending"}, False),
        ({"ne": "open"}, False),
        ({"ne": "closed"}, True),
        ({"in": ["open", "pending"]}, True),
        ({"in": ["closed", "resolved"]}, False),
        ({"in": []}, False),
        ({"not_in": ["closed", "resolved"]}, True),
        ({"not_in": ["pending", "open"]}, False),
        ({"not_in": []}, True),
        ({"is_null": False}, True),
        ({"is_null": True}, False),
        # several operators on one column must all hold
        ({"ne": "closed", "in": ["open"]}, True),
        ({"ne": "closed", "in": ["pending"]}, False),
    ],
)
def test_equality_and_membership_operators(condition: dict[str, Any], expected: bool) -> None:
    assert matches(ROW, {"status": condition}) is expected


@pytest.mark.parametrize(
    ("column", "condition", "expected"),
    [
        ("id", {"lt": 8}, True),
        ("id", {"lt": 7}, False),
        ("id", {"le": 7}, True),
        ("id", {"le": 6}, False),
        ("id", {"gt": 6}, True),
        ("id", {"gt": 7}, False),
        ("id", {"ge": 7}, True),
        ("id", {"ge": 8}, False),
        ("id", {"gt": 1, "lt": 10}, True),
        ("id", {"gt": 1, "lt": 5}, False),
        ("score", {"gt": 2}, True),
        ("score", {"lt": 2.5}, False),
        # text compares lexicographically: ISO times order correctly, a longer string sorts after its prefix
        ("due_at", {"lt": "2026-03-06"}, True),
        ("due_at", {"ge": "2026-03-06"}, False),
        ("due_at", {"gt": "2026-03-05"}, True),
        ("due_at", {"le": "2026-03-05"}, False),
    ],
)
def test_ordering_operators(column: str, condition: dict[str, Any], expected: bool) -> None:
    assert matches(ROW, {column: condition}) is expected


@pytest.mark.parametrize(
    ("column", "condition", "expected"),
    [
        ("title", {"contains": "Order 1182"}, True),
        ("title", {"contains": "order 1182"}, False),
        ("title", {"contains": 1182}, True),
        ("id", {"contains": "7"}, True),
        ("title", {"icontains": "order 1182"}, True),
        ("title", {"icontains": "REFUND"}, True),
        ("title", {"icontains": "refunds"}, False),
        ("title", {"like": "Refund%"}, True),
        ("title", {"like": "refund%"}, True),
        ("title", {"like": "%1182"}, True),
        ("title", {"like": "Refund for Order 118_"}, True),
        ("title", {"like": "Refund_for%"}, True),
        ("title", {"like": "Refund"}, False),
        ("title", {"like": "%118_2"}, False),
        # regex characters in a pattern are literal
        ("title", {"like": "Refund.for%"}, False),
        ("title", {"like": ".*"}, False),
    ],
)
def test_text_operators(column: str, condition: dict[str, Any], expected: bool) -> None:
    assert matches(ROW, {column: condition}) is expected


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (None, True),
        ({"eq": None}, True),
        ({"ne": None}, False),
        ({"is_null": True}, True),
        ({"is_null": False}, False),
        ({"in": [None, "ana@acme.example"]}, True),
        ({"not_in": [None]}, False),
        # a NULL is not equal to a value, so ne and not_in keep it
        ({"eq": "ana@acme.example"}, False),
        ({"ne": "ana@acme.example"}, True),
        ({"not_in": ["ana@acme.example"]}, True),
        # a NULL is neither smaller nor larger than anything and contains nothing
        ({"lt": "z"}, False),
        ({"le": ""}, False),
        ({"gt": ""}, False),
        ({"ge": 0}, False),
        ({"contains": ""}, False),
        ({"icontains": ""}, False),
        ({"like": "%"}, False),
    ],
)
def test_null_values(condition: Any, expected: bool) -> None:
    assert matches(ROW, {"assignee": condition}) is expected


@pytest.mark.parametrize(
    ("stored", "condition", "expected"),
    [
        (1, True, True),
        (1, False, False),
        (0, False, True),
        (0, True, False),
        (1, 1, True),
        (0, 0, True),
        (1, {"eq": True}, True),
        (0, {"eq": True}, False),
        (0, {"ne": True}, True),
        (1, {"ne": True}, False),
        (1, {"in": [True]}, True),
        (0, {"in": [True]}, False),
        (0, {"not_in": [True]}, True),
        (None, False, False),
        (None, {"eq": True}, False),
    ],
)
def test_bools_match_the_0_and_1_sqlite_stores(stored: Any, condition: Any, expected: bool) -> None:
    assert matches({"internal": stored}, {"internal": condition}) is expected


@pytest.mark.parametrize(
    ("column", "condition"),
    [
        ("id", {"lt": "8"}),
        ("id", {"le": "7"}),
        ("id", {"gt": "1"}),
        ("id", {"ge": "7"}),
        ("id", {"eq": "7"}),
        ("id", {"in": ["7"]}),
        ("due_at", {"lt": 5}),
        ("due_at", {"ge": 5}),
        ("due_at", {"lt": None}),
    ],
)
def test_a_type_mismatch_is_no_match_not_an_error(column: str, condition: dict[str, Any]) -> None:
    assert matches(ROW, {column: condition}) is False


def test_an_unknown_operator_raises_when_matched_without_validation() -> None:
    with pytest.raises(CheckSpecError) as raised:
        matches(ROW, {"id": {"between": [1, 9]}})
    assert str(raised.value) == "unknown operator 'between'"


def test_validate_where_accepts_known_columns_and_every_operator() -> None:
    assert validate_where({"id": 7, "status": {op: "open" for op in WHERE_OPERATORS}}, COLUMNS, "t") is None


def test_validate_where_names_an_unknown_column_and_the_valid_ones() -> None:
    with pytest.raises(CheckSpecError) as raised:
        validate_where({"state": "open"}, {"id", "status", "title"}, "tickets_tickets")
    assert str(raised.value) == "table tickets_tickets has no column 'state'; columns are: id, status, title"


def test_validate_where_names_an_unknown_operator_and_the_valid_ones() -> None:
    with pytest.raises(CheckSpecError) as raised:
        validate_where({"id": {"gt": 1, "between": [1, 9]}}, COLUMNS, "tickets_tickets")
    assert str(raised.value) == (
        "unknown operator 'between' for tickets_tickets.id; operators are: "
        "eq, ne, lt, le, gt, ge, in, not_in, contains, icontains, like, is_null"
    )


async def test_filters_apply_to_stored_rows_bools_and_nulls_included() -> None:
    ws = create_workspace(["directory"], clock_start=START, user_email="me@acme.example")
    apply_world_operation(ws, "directory", "add_person", {"email": "ana@acme.example", "name": "Ana Ruiz"})
    apply_world_operation(
        ws,
        "directory",
        "add_person",
        {"email": "cara@customer.example", "name": "Cara Moss", "internal": False, "team": None},
    )
    checks = [
        {
            "type": "count",
            "id": "external",
            "table": "directory_people",
            "where": {"internal": False},
            "value": 1,
        },
        {
            "type": "count",
            "id": "internal",
            "table": "directory_people",
            "where": {"internal": True},
            "value": 1,
        },
        {"type": "count", "id": "no-team", "table": "directory_people", "where": {"team": None}, "value": 2},
        {
            "type": "count",
            "id": "like",
            "table": "directory_people",
            "where": {"email": {"like": "%@ACME.example"}, "name": {"icontains": "ruiz"}},
            "value": 1,
        },
        {
            "type": "count",
            "id": "mismatch",
            "table": "directory_people",
            "where": {"internal": {"gt": "0"}},
            "value": 0,
        },
    ]
    results = await evaluate_checks(
        [TypeAdapter(Check).validate_python(c) for c in checks],
        Evidence(ws, ws, [], "me@acme.example"),
    )
    assert [(r.id, r.passed, r.message, r.error) for r in results] == [
        ("external", True, "count 1, expected eq 1", None),
        ("internal", True, "count 1, expected eq 1", None),
        ("no-team", True, "count 2, expected eq 2", None),
        ("like", True, "count 1, expected eq 1", None),
        ("mismatch", True, "count 0, expected eq 0", None),
    ]


async def test_an_unknown_operator_in_a_check_fails_it_with_the_error() -> None:
    ws = create_workspace(["directory"], clock_start=START)
    check = TypeAdapter(Check).validate_python(
        {"type": "row_absent", "id": "c1", "table": "directory_people", "where": {"email": {"endswith": "x"}}}
    )
    (result,) = await evaluate_checks([check], Evidence(ws, ws, [], "me@acme.example"))
    assert (result.passed, result.message, result.error) == (
        False,
        "the check could not be evaluated",
        "CheckSpecError: unknown operator 'endswith' for directory_people.email; operators are: "
        "eq, ne, lt, le, gt, ge, in, not_in, contains, icontains, like, is_null",
    )


@pytest.mark.parametrize(
    ("value", "pattern", "expected"),
    [
        ("abc", "a_c", True),
        ("abc", "%b%", True),
        ("abc", "%%", True),
        ("", "%", True),
        ("", "", True),
        ("a", "", False),
        ("abc", "abc%c", False),
        ("aXbXc", "a%x%C", True),
        ("aab", "a%ab", True),
        ("ab", "a%ab", False),
        ("line one\nline two", "%one_line%", True),
        # SQLite folds case for ASCII letters only
        ("ÄRGER", "ärger", False),
        ("Ärger", "Ärger", True),
    ],
)
def test_like_follows_sqlite(value: str, pattern: str, expected: bool) -> None:
    assert matches({"title": value}, {"title": {"like": pattern}}) is expected


def test_like_with_many_wildcards_against_a_long_non_matching_value_completes() -> None:
    """A backtracking matcher takes exponential time here; this one scans once per piece."""
    assert matches({"title": "e" * 20_000}, {"title": {"like": "%e" * 25 + "x"}}) is False
    assert matches({"title": "e" * 20_000 + "x"}, {"title": {"like": "%e" * 25 + "%x"}}) is True
