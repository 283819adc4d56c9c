"""The goal footprint: what a task's reference solution changes, derived by running it.

The collateral guard explains every change an agent made by this footprint (or by a
harmless action or an allowance). It is derived, never hand-written: the reference
solution is played on a fresh fork (events included), and the row diff against the seed
says which rows and columns the goal changes, which rows it removes, which kinds of rows
it adds (see `state.TableRules.match`) and what each added row holds in the columns an
agent's row must agree on (see `created`).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from coworkenv.state import TableRules, WorkspaceDiff
from coworkenv.state.tables import primary_key

from .created import CreatedRow, quotations, specified

NEW = "<new>"
"""How a signature writes a reference to a row that did not exist in the seed."""


def row_key(key: dict[str, Any]) -> str:
    """A primary key as one comparable string."""
    return json.dumps([key[k] for k in sorted(key)], default=str)


def key_of(conn: sqlite3.Connection, table: str, row: dict[str, Any], pk_cache: dict[str, list[str]]) -> str:
    if table not in pk_cache:
        pk_cache[table] = primary_key(conn, table)
    pk = pk_cache[table]
    return row_key({k: row.get(k) for k in pk})


class Signatures:
    """Computes the signature of an added row: its `match` columns, with references to
    rows that are new (absent from the seed) written as `NEW`."""

    def __init__(self, initial: sqlite3.Connection, rules: dict[str, TableRules]) -> None:
        self.initial = initial
        self.rules = rules
        self._exists: dict[tuple[str, Any], bool] = {}
        self.alias: dict[tuple[str, Any], Any] = {}
        """(table, key) of a row that stands for another (a follow-up ticket) -> that row's key."""

    def parent_value(self, table: str, row: dict[str, Any]) -> Any:
        """The key of the row's parent, or of the row that parent stands for."""
        rule = self.rules.get(table)
        if rule is None or rule.parent is None:
            return None
        column, parent = rule.parent
        value = row.get(column)
        return self.alias.get((parent, value), value)

    def follows_new_parent(self, table: str, row: dict[str, Any], final: sqlite3.Connection) -> bool:
        """Whether the row is judged with its parent: the table follows its parent and the
        parent is a new row that is still there."""
        rule = self.rules.get(table)
        if rule is None or rule.parent is None or not rule.follows_parent:
            return False
        column, parent = rule.parent
        if not self.parent_is_new(table, row):
            return False
        pk = primary_key(final, parent)
        found = final.execute(f'SELECT 1 FROM "{parent}" WHERE "{pk[0]}" = ?', (row.get(column),)).fetchone()
        return found is not None

    def children(self, table: str, row: dict[str, Any], final: sqlite3.Connection) -> set[str]:
        """The `fan_out` child values of a row (the addresses a sent mail went to), lower case."""
        rule = self.rules.get(table)
        if rule is None or rule.fan_out is None:
            return set()
        child, parent_column, value_column = rule.fan_out
        key = row.get(primary_key(final, table)[0])
        return {
            str(v).casefold()
            for (v,) in final.execute(
                f'SELECT "{value_column}" FROM "{child}" WHERE "{parent_column}" = ?', (key,)
            )
        }

    def parent_is_new(self, table: str, row: dict[str, Any]) -> bool:
        rule = self.rules.get(table)
        if rule is None or rule.parent is None:
            return False
        return not self.existed(rule.parent[1], self.parent_value(table, row))

    def existed(self, table: str, key_value: Any) -> bool:
        """Whether the seed has a row of `table` whose single-column primary key is `key_value`."""
        cache_key = (table, key_value)
        if cache_key not in self._exists:
            pk = primary_key(self.initial, table)
            found = self.initial.execute(
                f'SELECT 1 FROM "{table}" WHERE "{pk[0]}" = ? LIMIT 1', (key_value,)
            ).fetchone()
            self._exists[cache_key] = found is not None
        return self._exists[cache_key]

    def of(self, table: str, row: dict[str, Any]) -> str:
        rule = self.rules.get(table, TableRules())
        parent_column = rule.parent[0] if rule.parent else None
        values = []
        for column in rule.match:
            value = row.get(column)
            if column == parent_column:
                value = NEW if self.parent_is_new(table, row) else self.parent_value(table, row)
            values.append(value.casefold() if isinstance(value, str) else value)
        return json.dumps(values, default=str)


class Footprint(BaseModel):
    """Rows and columns the goal changes (by table and primary key), rows it removes, the
    signatures of rows it adds (with counts) and their specified values, the outside
    addresses it mails and what those mails carry, and the ids of turn checks whose outcome
    still holds at the end of the reference run."""

    changed: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    removed: dict[str, list[str]] = Field(default_factory=dict)
    added: dict[str, dict[str, int]] = Field(default_factory=dict)
    recipients: list[str] = Field(default_factory=list)
    fanned: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Child values of the added rows of fan-out tables and how many rows have each "
        "(who the goal mails, how often)",
    )
    lasting: list[str] = Field(default_factory=list)
    created: dict[str, list[CreatedRow]] = Field(
        default_factory=dict,
        description="By table, each added row's signature and the values of its specified columns "
        "(a footprint stored before this field existed holds none, and judges no column)",
    )
    outgoing: list[str] = Field(
        default_factory=list,
        description="What each mail the goal sends to an outside address carries (subject, body, "
        "attached files): internal text it quotes is text the task lets out",
    )
    turn_writes: list[list[str]] = Field(
        default_factory=list,
        description="Per turn of a multi-turn task, the write calls the reference makes in it "
        "(`verifiers.ahead.write_signature`): a later turn's write done earlier was done before it was asked",
    )
    error: str | None = Field(default=None, description="Why no footprint could be derived")

    def changes_column(self, table: str, key: str, column: str) -> bool:
        return column in self.changed.get(table, {}).get(key, ())

    def touches(self, table: str, key: str) -> bool:
        """Whether the goal changes or removes this row."""
        return key in self.changed.get(table, {}) or key in self.removed.get(table, ())


def derive_footprint(
    diff: WorkspaceDiff,
    initial: sqlite3.Connection,
    final: sqlite3.Connection,
    rules: dict[str, TableRules],
    messages: Iterable[str] = (),
) -> Footprint:
    """The footprint of a reference run, from its diff against the seed. `messages` are the
    user's messages: free text they quote must be kept as quoted (`TableRules.free_text`)."""
    signatures = Signatures(initial, rules)
    quoted = quotations(messages)
    pk_cache: dict[str, list[str]] = {}
    fp = Footprint()
    for table, td in diff.tables.items():
        if td.changed:
            fp.changed[table] = {row_key(c.key): sorted(c.columns) for c in td.changed}
        if td.removed:
            fp.removed[table] = sorted(key_of(initial, table, r, pk_cache) for r in td.removed)
        added = [r for r in td.added if not signatures.follows_new_parent(table, r, final)]
        if added:
            fp.added[table] = dict(Counter(signatures.of(table, r) for r in added))
            rule, pk = rules.get(table, TableRules()), primary_key(final, table)
            created = [
                CreatedRow(signature=signatures.of(table, r), values=values)
                for r in added
                if (values := specified(rule, r, pk, quoted))
            ]
            if created:
                fp.created[table] = created
        fanned = Counter(c for r in td.added for c in signatures.children(table, r, final))
        if fanned:
            fp.fanned[table] = dict(sorted(fanned.items()))
    return fp
