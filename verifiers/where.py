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


# SQLite's LIKE folds case for ASCII letters only.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _like(value: str, pattern: str) -> bool:
    """SQL LIKE: % any run, _ one character, case-insensitive for ASCII letters as in SQLite.

    The pieces between `%` must occur in order, and the leftmost place for each is always the
    best one, so the value is scanned once per piece: no backtracking, whatever the pattern.
    """
    value, pattern = value.translate(_ASCII_LOWER), pattern.translate(_ASCII_LOWER)
    first, *middle = pattern.split("%")
    if not middle:
        return len(value) == len(first) and _fits(value, 0, first)
    last = middle.pop()
    end = len(value) - len(last)
    if end < len(first) or not (_fits(value, 0, first) and _fits(value, end, last)):
        return False
    position = len(first)
    for piece in middle:
        found = _find(value, piece, position, end)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def _fits(value: str, start: int, piece: str) -> bool:
    """Whether `piece` (with `_` for any one character) matches `value` at `start`."""
    if start + len(piece) > len(value):
        return False
    return all(p == "_" or p == v for p, v in zip(piece, value[start : start + len(piece)], strict=True))


def _find(value: str, piece: str, start: int, end: int) -> int:
    """The first index in [start, end - len(piece)] where `piece` fits, or -1."""
    if "_" not in piece:
        return value.find(piece, start, end)
    for index in range(start, end - len(piece) + 1):
        if _fits(value, index, piece):
            return index
    return -1
