"""What is wrong with a task, told to its author: every bad seed operation, every solution
step whose arguments do not fit its tool, and for a failure that names an object, the
objects there are to choose from.

Validation (`synth.validation.validation`) stops a run at a failure; these helpers look further, so
one report lists every problem that can be found before anything runs, and each message
says where (the JSON path), what is wrong and what to choose instead."""

from __future__ import annotations

import ast
import difflib
import re
from typing import Any

from coworkenv.rollout.episodes.seeding import seed_workspace
from coworkenv.servers import current_user, get_service
from coworkenv.state import Workspace
from coworkenv.state.tables import content_tables
from coworkenv.task import Task

#: Arguments and parameters that name a row by id, and the table that holds it.
ID_TABLES = {
    "ticket_id": "tickets_tickets",
    "other_ticket_id": "tickets_tickets",
    "message_id": "mail_messages",
    "in_reply_to": "mail_messages",
    "forwarded_from": "mail_messages",
    "draft_id": "mail_messages",
    "event_id": "calendar_events",
    "account_id": "crm_accounts",
    "contact_id": "crm_contacts",
    "keep_contact_id": "crm_contacts",
    "duplicate_contact_id": "crm_contacts",
    "deal_id": "crm_deals",
    "page_id": "notes_pages",
    "parent_id": "notes_pages",
    "database_id": "notes_databases",
    "row_id": "notes_rows",
    "spreadsheet_id": "sheets_spreadsheets",
}
#: The table of a world operation's bare `id` parameter, by service.
SERVICE_TABLES = {"mail": "mail_messages", "tickets": "tickets_tickets", "calendar": "calendar_events"}
#: Arguments and parameters that name people by address.
PERSON_KEYS = (
    "requester",
    "assignee",
    "organizer_email",
    "calendar_email",
    "lead_email",
    "manager_email",
    "colleague",
    "attendees",
    "add_attendees",
    "to",
    "cc",
    "owner",
)
_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def seed_problems(task: Task) -> tuple[list[str], Workspace]:
    """Every problem of the seed (each table of rows, each operation, all tried), and the
    workspace the parts that did load make, so later static stages can still look at it."""
    bare = task.model_copy(update={"seed": task.seed.model_copy(update={"rows": {}, "operations": []})})
    ws = seed_workspace(bare)
    tables = set(content_tables(ws.conn))
    problems = []
    for table, rows in task.seed.rows.items():
        if table not in tables:
            problems.append(
                f"seed.rows: no table {table!r} among the task's services; tables are: {', '.join(sorted(tables))}"
            )
            continue
        try:
            with ws.transaction():
                ws.db[table].insert_all(rows)  # type: ignore[union-attr]
        except Exception as exc:  # any database refusal of the rows is the author's to fix
            problems.append(f"seed.rows.{table}: {type(exc).__name__}: {exc}")
    for i, call in enumerate(task.seed.operations):
        where = f"seed.operations[{i}] ({call.service}.{call.operation})"
        if call.service not in task.services:
            problems.append(
                f"{where}: service {call.service!r} is not in the task's services: add it to services"
            )
            continue
        try:
            get_service(call.service).world.run(ws, call.operation, call.params)
        except (KeyError, ValueError) as exc:
            problems.append(f"{where}: {with_hints(_plain(exc), ws, call.params, call.service)}")
    return problems, ws


def solution_problems(task: Task) -> list[str]:
    """Solution steps whose tool is unknown or whose arguments do not fit the tool's schema:
    unknown names (with the closest valid one), missing required arguments."""
    schemas = {
        tool.name: tool.parameters
        for service in task.services
        for tool in get_service(service).tools.mcp_tools(f"{service}_")
    }
    problems = []
    for i, turn in enumerate(task.turns):
        for j, step in enumerate(turn.solution):
            where = f"turns[{i}].solution[{j}]"
            schema = schemas.get(step.tool)
            if schema is None:
                close = difflib.get_close_matches(step.tool, list(schemas), n=1)
                problems.append(
                    f"{where}: no tool {step.tool!r} among the task's services"
                    + (f" (did you mean {close[0]!r}?)" if close else "")
                )
                continue
            names = list(schema.get("properties", {}))
            for name in step.arguments:
                if name not in names:
                    close = difflib.get_close_matches(name, names, n=1)
                    problems.append(
                        f"{where} ({step.tool}): unknown argument {name!r}"
                        + (f" (did you mean {close[0]!r}?)" if close else "")
                        + f"; its arguments are: {', '.join(names) or 'none'}"
                    )
            for name in schema.get("required", []):
                if name not in step.arguments:
                    problems.append(f"{where} ({step.tool}): missing required argument {name!r}")
    return problems


def hints(ws: Workspace, params: dict[str, Any], service: str = "") -> list[str]:
    """For each id, address, queue or team in `params` that the workspace does not hold,
    what it does hold (for the author to choose from, or to plant first)."""
    out = []
    tables = set(content_tables(ws.conn))
    for key, value in params.items():
        table = ID_TABLES.get(key) or (SERVICE_TABLES.get(service) if key == "id" else None)
        is_id = table in tables and isinstance(value, int) and not isinstance(value, bool)
        if is_id and ws.conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (value,)).fetchone() is None:
            low, high = ws.conn.execute(f"SELECT min(id), max(id) FROM {table}").fetchone()
            out.append(
                f"{key}={value} is not in the seed, whose {table} holds ids {low}..{high}: use one of "
                "them, or plant the row with a seed operation first"
            )
        if key in PERSON_KEYS and "directory_people" in tables:
            values = value if isinstance(value, list) else [value]
            for address in [a for v in values if isinstance(v, str) for a in _ADDRESS.findall(v)]:
                out += _person_hint(ws, key, address)
        if key == "queue" and "tickets_queues" in tables and isinstance(value, str):
            queues = [r[0] for r in ws.conn.execute("SELECT name FROM tickets_queues")]
            if value not in queues:
                out.append(f"queue {value!r} does not exist; queues are: {', '.join(queues)}")
        if key == "team" and "directory_teams" in tables and isinstance(value, str):
            teams = [r[0] for r in ws.conn.execute("SELECT name FROM directory_teams")]
            if value not in teams:
                out.append(f"team {value!r} does not exist; teams are: {', '.join(teams)}")
    return out


def with_hints(message: str, ws: Workspace, params: dict[str, Any], service: str = "") -> str:
    """A tool's or operation's error, for the author: with hints (see `hints`), the advice the
    message gives an agent after its first clause ("search_tickets returns valid ids") gives
    way to what the seed holds."""
    found = hints(ws, params, service)
    if not found:
        return message
    return message.split("; ", 1)[0].rstrip(".") + ": " + "; ".join(found)


def constant_checks(task: Task) -> list[str]:
    """Python checks whose `check` returns a constant: they test nothing."""
    out = []
    for check in task.all_checks():
        code = getattr(check, "code", None)
        if not isinstance(code, str):
            continue
        try:
            tree = ast.parse(code)
        except SyntaxError:
            continue  # reported by the static checks
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == "check":
                values = [n.value for n in ast.walk(node) if isinstance(n, ast.Return)]
                constants = [v for v in values if isinstance(v, ast.Constant)]
                if values and len(constants) == len(values):
                    out.append(
                        f"check {check.id!r}: check() always returns {constants[0].value!r}, whatever the "
                        "agent does: compute the result from initial, final and audit, or remove the check"
                    )
    return out


def _person_hint(ws: Workspace, key: str, address: str) -> list[str]:
    row = ws.conn.execute("SELECT 1 FROM directory_people WHERE email = ?", (address.lower(),)).fetchone()
    domain = address.rsplit("@", 1)[-1].lower()
    people = [r[0] for r in ws.conn.execute("SELECT email FROM directory_people WHERE internal = 1")]
    user = current_user(ws)
    internal = {p.rsplit("@", 1)[-1] for p in people} | {user.rsplit("@", 1)[-1]}
    if row is not None or domain not in internal:
        return []
    if not people:
        return [
            f"{key} {address!r} is nobody in the directory, which is empty: add them with directory.add_person"
        ]
    close = difflib.get_close_matches(address.lower(), people, n=1)
    return [
        f"{key} {address!r} is nobody in the directory"
        + (f" (did you mean {close[0]!r}?)" if close else "")
        + f"; people are: {', '.join(people[:30])} (or add them with directory.add_person)"
    ]


def parameter_problems(task: Task) -> tuple[list[str], list[str]]:
    """World-operation parameters that the operation does not take (they would be dropped
    without a word), in the seed and in the events: (seed problems, event problems)."""

    def unknown(call: Any, where: str) -> list[str]:
        try:
            op = get_service(call.service).world.get(call.operation)
        except (KeyError, ValueError):
            return []  # an unknown operation is reported when the seed or the event runs
        names = list(op.params.model_fields)
        out = []
        for name in call.params:
            if name not in names:
                close = difflib.get_close_matches(name, names, n=1)
                out.append(
                    f"{where} ({call.service}.{call.operation}): unknown parameter {name!r}"
                    + (f" (did you mean {close[0]!r}?)" if close else "")
                    + f"; its parameters are: {', '.join(names)}"
                )
        return out

    seed = [p for i, c in enumerate(task.seed.operations) for p in unknown(c, f"seed.operations[{i}]")]
    events = [
        p
        for i, turn in enumerate(task.turns)
        for k, event in enumerate(turn.events)
        for p in unknown(event, f"turns[{i}].events[{k}]")
    ]
    return seed, events


def _plain(exc: BaseException) -> str:
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)


__all__ = [
    "constant_checks",
    "hints",
    "parameter_problems",
    "seed_problems",
    "solution_problems",
    "with_hints",
]
