"""Static validation of a task's checks against the tables of its seeded workspace, before any run."""

from __future__ import annotations

import ast
import sqlite3

from coworkenv.checks import (
    BoundedDiff,
    CallOrder,
    Check,
    FieldContains,
    FieldEquals,
    Forbid,
    NeverCall,
    NoDeletion,
    PythonCheck,
    SqlEquals,
    ToolCalled,
    ToolNotCalled,
    Unchanged,
)
from coworkenv.state import Workspace
from coworkenv.state.tables import columns, content_tables
from coworkenv.task import Task

from .sql_query import refuse_writes
from .where import CheckSpecError, validate_where


def check_problems(task: Task, workspace: Workspace, tool_names: set[str]) -> list[str]:
    """Every problem found in the task's checks and safety rules: unknown tables, columns,
    operators or tools, SQL that does not compile or writes, Python that does not parse or
    defines no `check` function. Bare tool names (`send_message`) are expected in `tool_names`."""
    tables = {t: set(columns(workspace.conn, t)) for t in content_tables(workspace.conn)}
    problems: list[str] = []
    checks: list[Check] = task.all_checks() + [r.check for r in task.safety if isinstance(r, Forbid)]
    for check in checks:
        try:
            _check_one(check, tables, tool_names, workspace.conn)
        except CheckSpecError as exc:
            problems.append(f"check {check.id!r}: {exc}")
    for rule in task.safety:
        try:
            if isinstance(rule, NeverCall) and rule.tool not in tool_names:
                raise CheckSpecError(f"no tool named {rule.tool!r} (use bare names such as 'send_message')")
            if isinstance(rule, NoDeletion):
                for name in rule.tables:
                    _table(tables, name)
        except CheckSpecError as exc:
            problems.append(f"rule {rule.id!r}: {exc}")
    return problems


def _table(tables: dict[str, set[str]], name: str) -> set[str]:
    if name not in tables:
        raise CheckSpecError(f"no table {name!r}; tables are: {', '.join(sorted(tables))}")
    return tables[name]


def _check_one(check: Check, tables: dict[str, set[str]], tools: set[str], conn: sqlite3.Connection) -> None:
    table = getattr(check, "table", None)
    if table is not None:
        cols = _table(tables, table)
        validate_where(getattr(check, "where", {}), cols, table)
        if isinstance(check, FieldEquals | FieldContains) and check.column not in cols:
            raise CheckSpecError(
                f"table {table} has no column {check.column!r}; columns are: {', '.join(sorted(cols))}"
            )
    if isinstance(check, Unchanged):
        for name in check.tables:
            validate_where(check.where, _table(tables, name), name)
    if isinstance(check, BoundedDiff):
        for allowed in check.allowed:
            validate_where(allowed.where, _table(tables, allowed.table), allowed.table)
    if isinstance(check, ToolCalled | ToolNotCalled) and check.tool not in tools:
        raise CheckSpecError(f"no tool named {check.tool!r} (use bare names such as 'send_message')")
    if isinstance(check, CallOrder):
        for tool in check.tools:
            if tool not in tools:
                raise CheckSpecError(f"no tool named {tool!r} (use bare names such as 'send_message')")
    if isinstance(check, SqlEquals):
        try:
            refuse_writes(conn, check.query, compiled=True)  # the guard the check runs behind
        except sqlite3.Error as exc:
            raise CheckSpecError(f"the query does not compile: {exc}") from None
    if isinstance(check, PythonCheck):
        try:
            tree = ast.parse(check.code)
        except SyntaxError as exc:
            raise CheckSpecError(f"the code does not parse: {exc.msg} (line {exc.lineno})") from None
        if not any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body):
            raise CheckSpecError("the code must define a function check(initial, final, audit)")
