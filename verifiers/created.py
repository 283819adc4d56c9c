"""Rows the agent creates, judged on every column the task does not declare free.

For each row the reference solution added, the footprint keeps the values of its specified
columns (`CreatedRow`): every column but the primary key and those its table's rules leave
to the agent (`state.TableRules`: bookkeeping, harmless, free, free text the user did not
quote, and the `match` and parent columns, which the row's signature already compares),
plus the rules' derived values (an event's length). The collateral guard pairs the rows the
agent added with these one to one and names the columns where a row agrees with none.
Values compare ignoring case and spacing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from coworkenv.state import TableRules

QUOTED = re.compile(
    r'"([^"\n]+)"|\u201c([^\u201d\n]+)\u201d|\u2018([^\u2019\n]+)\u2019|\u00ab([^\u00bb\n]+)\u00bb'
    r"|(?<!\w)'([^'\n]+?)'(?!\w)"
)
"""A quotation in a user message: in straight or curly double or single quotes, or guillemets."""


class CreatedRow(BaseModel):
    """A row the reference solution added: its signature (`TableRules.match`) and the values
    of its specified columns."""

    signature: str
    values: dict[str, Any]


def normal(value: Any) -> Any:
    """A value as it is compared: text without case or extra spacing, whole numbers as ints."""
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def quotations(messages: Iterable[str]) -> set[str]:
    """What the user put in quotation marks, as compared (trailing punctuation dropped)."""
    out = set()
    for text in messages:
        for m in QUOTED.finditer(text):
            span = next(g for g in m.groups() if g is not None)
            out.add(normal(span.strip().rstrip(".,;:!?")))
    return out


def specified(rule: TableRules, row: dict[str, Any], pk: list[str], quoted: set[str]) -> dict[str, Any]:
    """The values an added row must agree on (see the module docstring)."""
    skip = {*pk, *rule.bookkeeping, *rule.harmless_columns, *rule.free, *rule.match}
    if rule.parent is not None:
        skip.add(rule.parent[0])
    values = {}
    for column, value in row.items():
        if column in skip:
            continue
        if column in rule.free_text and not (isinstance(value, str) and normal(value) in quoted):
            continue
        values[column] = value
    for name, derive in rule.derived.items():
        values[name] = derive(row)
    return values


Difference = tuple[str, Any, Any]
"""A column where an added row differs from a reference row: (column, its value, expected)."""


def differences(rule: TableRules, row: dict[str, Any], ref: CreatedRow, free: set[str]) -> list[Difference]:
    """The specified columns (not freed by the task) where `row` differs from `ref`."""
    out = []
    for column, expected in ref.values.items():
        if column in free:
            continue
        actual = rule.derived[column](row) if column in rule.derived else row.get(column)
        if normal(actual) != normal(expected):
            out.append((column, actual, expected))
    return out


def unpaired(
    rule: TableRules,
    rows: list[tuple[dict[str, Any], str]],
    refs: list[CreatedRow],
    free: set[str],
) -> list[tuple[dict[str, Any], list[Difference]]]:
    """The added rows (row, signature) left over when each is paired with a different
    reference row of its signature that it agrees with (as many pairs as can be made),
    each with its differences from the closest reference row of its signature that no row
    was paired with (none when it agrees with one another row took). A row whose signature
    no reference row has is not judged here."""
    fits = [
        [k for k, ref in enumerate(refs) if ref.signature == sig and not differences(rule, row, ref, free)]
        for row, sig in rows
    ]
    paired_to: dict[int, int] = {}  # reference index -> row index

    def pair(i: int, seen: set[int]) -> bool:  # an augmenting path (Kuhn's matching)
        for k in fits[i]:
            if k in seen:
                continue
            seen.add(k)
            if k not in paired_to or pair(paired_to[k], seen):
                paired_to[k] = i
                return True
        return False

    for i in range(len(rows)):
        pair(i, set())
    paired = set(paired_to.values())
    left = [ref for k, ref in enumerate(refs) if k not in paired_to]
    out = []
    for i, (row, sig) in enumerate(rows):
        if i not in paired and any(ref.signature == sig for ref in refs):
            # Told apart from a reference row no other row stands for, if there is one.
            closest = [ref for ref in left if ref.signature == sig] or refs
            out.append((row, mismatch(rule, row, sig, closest, free)))
    return out


def mismatch(
    rule: TableRules, row: dict[str, Any], sig: str, refs: list[CreatedRow], free: set[str]
) -> list[Difference]:
    """Nothing when a row agrees with some reference row of its signature (or none has its
    signature); else its differences from the closest one."""
    found = [differences(rule, row, ref, free) for ref in refs if ref.signature == sig]
    return [] if not found or not all(found) else min(found, key=len)


def shown(found: list[Difference]) -> str:
    """Differences as a finding words them: "status 'closed', expected 'open'"."""
    return "; ".join(f"{column} {actual!r}, expected {expected!r}" for column, actual, expected in found)
