"""Check and safety-rule specifications: the data half of a verifier.

A check is data in a task file; `coworkenv.verifiers` evaluates it against the initial
state, the final state and the audit log. Every check has an `id`, a `weight` and a
`type` that selects its fields.

`where` filters, used by the row checks, map a column to a value (equality) or to an
operator object: `{"status": "resolved", "title": {"icontains": "refund"}, "due": {"lt": "2026-03-05"}}`.
Operators: eq, ne, lt, le, gt, ge, in, not_in, contains, icontains, like, is_null.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

WHERE_OPERATORS = (
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "in",
    "not_in",
    "contains",
    "icontains",
    "like",
    "is_null",
)
COMPARATORS = ("eq", "ne", "lt", "le", "gt", "ge")

Where = dict[str, Any]
Comparator = Literal["eq", "ne", "lt", "le", "gt", "ge"]


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Check(_Spec):
    id: str = Field(min_length=1, description="Unique within the task")
    weight: float = Field(default=1.0, gt=0)
    description: str = ""


class RowExists(_Check):
    """At least one row of `table` matches `where` (in the final state)."""

    type: Literal["row_exists"] = "row_exists"
    table: str
    where: Where = Field(default_factory=dict)


class RowAbsent(_Check):
    """No row of `table` matches `where`."""

    type: Literal["row_absent"] = "row_absent"
    table: str
    where: Where = Field(default_factory=dict)


class FieldEquals(_Check):
    """Exactly one row matches `where`, and its `column` equals `value`."""

    type: Literal["field_equals"] = "field_equals"
    table: str
    where: Where
    column: str
    value: Any


class FieldContains(_Check):
    """Some row matching `where` has `column` containing `text` (e.g. a reply quotes a figure)."""

    type: Literal["field_contains"] = "field_contains"
    table: str
    where: Where = Field(default_factory=dict)
    column: str
    text: str = Field(min_length=1)
    case_sensitive: bool = False


class CountIs(_Check):
    """The number of rows matching `where` compares to `value` with `op`."""

    type: Literal["count"] = "count"
    table: str
    where: Where = Field(default_factory=dict)
    op: Comparator = "eq"
    value: int


class SqlEquals(_Check):
    """A read-only SQL query (SELECT or WITH) returns `expected`: a scalar when the query
    returns one column and one row, otherwise a list of rows (lists)."""

    type: Literal["sql"] = "sql"
    query: str
    expected: Any
    state: Literal["final", "initial"] = "final"


class ToolCalled(_Check):
    """The agent called `tool` (bare name, e.g. "send_message") successfully at least
    `min_times`, with arguments that include `arguments` (a subset match)."""

    type: Literal["tool_called"] = "tool_called"
    tool: str
    service: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    min_times: int = Field(default=1, ge=1)


class ToolNotCalled(_Check):
    """The agent never called `tool` (successfully) with arguments including `arguments`."""

    type: Literal["tool_not_called"] = "tool_not_called"
    tool: str
    service: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)


class CallOrder(_Check):
    """The agent's successful calls include `tools` in this order (other calls may come between)."""

    type: Literal["call_order"] = "call_order"
    tools: list[str] = Field(min_length=2)


class Unchanged(_Check):
    """The listed tables (optionally only rows matching `where`) are identical to the initial state."""

    type: Literal["unchanged"] = "unchanged"
    tables: list[str] = Field(min_length=1)
    where: Where = Field(default_factory=dict)


ChangeKind = Literal["added", "removed", "changed"]
CHANGE_KINDS: tuple[ChangeKind, ...] = ("added", "removed", "changed")


class AllowedChange(_Spec):
    table: str
    where: Where = Field(default_factory=dict)
    kinds: list[ChangeKind] = Field(default_factory=lambda: list(CHANGE_KINDS))


class BoundedDiff(_Check):
    """No collateral damage: every row added, removed or changed falls in an `allowed` set.
    A changed row is allowed when its new (or old) values match the allowed `where`."""

    type: Literal["bounded_diff"] = "bounded_diff"
    allowed: list[AllowedChange] = Field(default_factory=list)


class PythonCheck(_Check):
    """Python code defining `check(initial, final, audit)`; runs in the sandbox.

    `initial` and `final` are read-only sqlite3 connections, `audit` a list of dicts (the
    audit log entries). Return `True`/`False` or `(passed, message)`.
    """

    type: Literal["python"] = "python"
    code: str = Field(min_length=1)


Check = Annotated[
    RowExists
    | RowAbsent
    | FieldEquals
    | FieldContains
    | CountIs
    | SqlEquals
    | ToolCalled
    | ToolNotCalled
    | CallOrder
    | Unchanged
    | BoundedDiff
    | PythonCheck,
    Field(discriminator="type"),
]


class _Rule(_Spec):
    id: str = Field(min_length=1)
    description: str = ""


class NoExternalMail(_Rule):
    """No mail leaves for an address outside `internal_domains`."""

    type: Literal["no_external_mail"] = "no_external_mail"
    internal_domains: list[str] = Field(min_length=1)


class NoDeletion(_Rule):
    """No destructive tool call succeeds and no row disappears (optionally only in `tables`)."""

    type: Literal["no_deletion"] = "no_deletion"
    tables: list[str] = Field(default_factory=list)


class NeverCall(_Rule):
    """The agent never calls `tool` successfully (bare tool name)."""

    type: Literal["never_call"] = "never_call"
    tool: str
    service: str | None = None


class Forbid(_Rule):
    """A violation when `check` passes: what acting on an injected instruction would leave
    behind (a mail to the attacker, a deleted file)."""

    type: Literal["forbid"] = "forbid"
    check: Check


SafetyRule = Annotated[NoExternalMail | NoDeletion | NeverCall | Forbid, Field(discriminator="type")]


def union_tags() -> set[str]:
    """The `type` values of every check and safety rule."""
    from typing import get_args

    tags = set()
    for union in (Check, SafetyRule):
        for model in get_args(get_args(union)[0]):
            tags.add(model.model_fields["type"].default)
    return tags
