"""`where` filters of row checks: column -> value (equality) or column -> {operator: value}."""

from __future__ import annotations

from typing import Any

from coworkenv.checks import WHERE_OPERATORS, Where


class CheckSpecError(ValueError):
    """A check that cannot be evaluated as written (unknown table, column or operator)."""


def validate_where(where: Where, columns: set[str], table: str) -> None:
    """Raise CheckSpecError for unknown columns or operators."""
    for column, condition in where.items():
        if column not in columns:
            raise CheckSpecError(
                f"table {table} has no column {column!r}; columns are: {', '.join(sorted(columns))}"
            )
        if isinstance(condition, dict):
            for op in condition:
                if op not in WHERE_OPERATORS:
                    raise CheckSpecError(
                        f"unknown operator {op!r} for {table}.{column}; operators are: {', '.join(WHERE_OPERATORS)}"
                    )


def matches(row: dict[str, Any], where: Where) -> bool:
    """Whether a row satisfies every condition of `where`."""
    for column, condition in where.items():
        value = row.get(column)
        if isinstance(condition, dict):
            if not all(_apply(op, value, expected) for op, expected in condition.items()):
                return False
        elif not _equal(value, condition):
            return False
    return True


def _equal(value: Any, expected: Any) -> bool:
    if isinstance(expected, bool) and isinstance(value, int):
        return bool(value) == expected
    return bool(value == expected)


def _apply(op: str, value: Any, expected: Any) -> bool:
    try:
        if op == "eq":
            return _equal(value, expected)
        if op == "ne":
            return not _equal(value, expected)
        if op == "is_null":
            return (value is None) == bool(expected)
        if op == "in":
            return any(_equal(value, e) for e in expected)
        if op == "not_in":
            return not any(_equal(value, e) for e in expected)
        if value is None:
            return False
        if op == "contains":
            return str(expected) in str(value)
        if op == "icontains":
            return str(expected).casefold() in str(value).casefold()
        if op == "like":
            return _like(str(value), str(expected))
        if op == "lt":
            return bool(value < expected)
        if op == "le":
            return bool(value <= expected)
        if op == "gt":
            return bool(value > expected)
        if op == "ge":
            return bool(value >= expected)
    except TypeError:
        return False
    raise CheckSpecError(f"unknown operator {op!r}")


def _like(value: str, pattern: str) -> bool:
    """SQL LIKE: % any run, _ one character, case-insensitive."""
    import re

    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, flags=re.IGNORECASE | re.DOTALL) is not None
