"""Wrong variants of the objects a reference solution creates: the same ticket, event or
deal, closed, cancelled or lost right after it is created, or created (like a logged CRM
activity) wrong in one column the task specifies. The collateral guard judges every column of a created row (`verifiers.created`);
these mutants hold each family to it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from coworkenv.rollout.episodes.reference import user_messages
from coworkenv.state import Workspace
from coworkenv.synth.validation.variants import Variant, replace_step, step_of, write_steps
from coworkenv.task import SolutionStep, Task
from coworkenv.verifiers import Footprint
from coworkenv.verifiers.created import quotations


def created_mutants(task: Task, seed: Workspace, footprint: Footprint) -> list[Variant]:
    """For each ticket, event, deal or CRM activity the reference solution creates, the same
    object wrong in one column the task specifies: resolved, closed, cancelled or lost right
    after it is created (`create_then_close`), or created with another priority, queue,
    assignee, requester, due date, recurrence (weekly, 12 times), time or length, with
    "Meeting" for a title the user quoted, with twice the amount, a week later close date,
    the next stage or the user as owner (a deal), or as a note instead of a call or a day
    later (an activity) (`created_column`). Left out: columns the task frees (`Guards.free`),
    values a later update of the solution sets anyway, and statuses the reference run itself
    ends in."""
    quoted = quotations(user_messages(task))
    out = []
    for i, j in write_steps(task):
        step = task.turns[i].solution[j]
        where = f"turns[{i}].solution[{j}] ({step.tool})"
        if step.tool == "tickets_create_ticket":
            table, changes = "tickets_tickets", _ticket_changes(step, task, seed)
        elif step.tool == "calendar_create_event":
            table, changes = "calendar_events", _event_changes(step, quoted)
        elif step.tool == "crm_create_deal":
            table, changes = "crm_deals", _deal_changes(step, task)
        elif step.tool == "crm_log_activity":
            table, changes = "crm_activities", _activity_changes(step)
        else:
            continue
        free = {c.split(".", 1)[1] for c in task.guards.free if c.startswith(table + ".")}
        later = _set_later(task, i, j, UPDATING.get(step.tool, ""))
        for column, arguments in changes:
            if column in free or later & set(arguments):
                continue
            changed = step.model_copy(update={"arguments": {**step.arguments, **arguments}})
            out.append(
                Variant(
                    "reject",
                    "created_column",
                    f"{where} with another {column}",
                    replace_step(task, i, j, changed),
                    (i, j),
                )
            )
        status = STATUS_COLUMNS.get(table)
        if status is None or status in free or status in later:
            continue
        ended = {row.values.get(status) for row in footprint.created.get(table, [])}
        named = step if step.id else step.model_copy(update={"id": f"created_{i}_{j}"})
        ref = {"$ref": f"{named.id}.id"}
        if table == "tickets_tickets":
            closes = [
                (s, step_of("tickets_update_ticket", ticket_id=ref, status=s)) for s in ("resolved", "closed")
            ]
        elif table == "calendar_events":
            closes = [("cancelled", step_of("calendar_cancel_event", event_id=ref))]
        else:
            closes = [("closed_lost", step_of("crm_update_deal", deal_id=ref, stage="closed_lost"))]
        for status, close in closes:
            if status in ended:
                continue
            out.append(
                Variant(
                    "reject",
                    "create_then_close",
                    f"{where}, then {status} at once",
                    replace_step(task, i, j, named, close),
                    (i, j),
                )
            )
    return out


PRIORITIES = ("low", "normal", "high", "urgent")
UPDATING = {
    "tickets_create_ticket": "tickets_update_ticket",
    "calendar_create_event": "calendar_update_event",
    "crm_create_deal": "crm_update_deal",
}
"""The tool that changes what each create tool made."""
STATUS_COLUMNS = {"tickets_tickets": "status", "calendar_events": "status", "crm_deals": "stage"}
"""The column that says whether a created object is still live (a ticket open, an event on,
a deal not lost)."""
OPEN_STAGES = ("prospecting", "qualification", "proposal", "negotiation")
ACTIVITY_KINDS = ("call", "meeting", "email", "note")


def _set_later(task: Task, i: int, j: int, update: str) -> set[str]:
    """The arguments calls of `update` after step (i, j) set: an object created wrong in
    one of them may be put right by the solution itself."""
    out: set[str] = set()
    for k, turn in enumerate(task.turns[i:], start=i):
        for m, step in enumerate(turn.solution):
            if (k, m) > (i, j) and step.tool == update:
                out |= set(step.arguments)
    return out


def _ticket_changes(step: SolutionStep, task: Task, seed: Workspace) -> list[tuple[str, dict[str, Any]]]:
    """(column, arguments that set it to another valid value) for a created ticket."""
    args = step.arguments
    out: list[tuple[str, dict[str, Any]]] = []
    priority = args.get("priority", "normal")
    if priority in PRIORITIES:
        out.append(("priority", {"priority": PRIORITIES[(PRIORITIES.index(priority) + 2) % len(PRIORITIES)]}))
    if isinstance(args.get("queue"), str):
        row = seed.conn.execute(
            "SELECT name FROM tickets_queues WHERE lower(name) != lower(?) ORDER BY name LIMIT 1",
            (args["queue"],),
        ).fetchone()
        if row is not None:
            out.append(("queue", {"queue": row[0]}))
    assignee = args.get("assignee")
    if assignee is None or isinstance(assignee, str):
        row = seed.conn.execute(
            "SELECT assignee FROM tickets_tickets WHERE assignee IS NOT NULL AND lower(assignee) != lower(?) "
            "ORDER BY assignee LIMIT 1",
            (assignee or "",),
        ).fetchone()
        if row is not None:
            out.append(("assignee", {"assignee": row[0]}))
    requester = args.get("requester")
    if isinstance(requester, str) and requester.lower() != task.user_email.lower():
        out.append(("requester", {"requester": task.user_email}))
    due = args.get("due_at")
    if isinstance(due, str):
        try:
            day = datetime.fromisoformat(due[:10]) + timedelta(days=1)
        except ValueError:
            pass
        else:
            out.append(("due_at", {"due_at": day.date().isoformat() + due[10:]}))
    return out


def _event_changes(step: SolutionStep, quoted: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """(column, arguments that set it to another valid value) for a created event."""
    args = step.arguments
    out: list[tuple[str, dict[str, Any]]] = []
    if args.get("recurrence", "none") == "none":
        out.append(("recurrence", {"recurrence": "weekly", "recurrence_count": 12}))
    start, end = args.get("start"), args.get("end")
    if isinstance(start, str) and isinstance(end, str):
        try:
            first, last = datetime.fromisoformat(start), datetime.fromisoformat(end)
        except ValueError:
            pass
        else:
            half = timedelta(minutes=(last - first) // timedelta(minutes=2))
            out.append(("duration_minutes", {"end": (first + half).isoformat()}))
            hour = timedelta(hours=1)
            out.append(("start_utc", {"start": (first + hour).isoformat(), "end": (last + hour).isoformat()}))
    title = args.get("title")
    if isinstance(title, str) and " ".join(title.split()).casefold() in quoted and title != "Meeting":
        out.append(("title", {"title": "Meeting"}))
    return out


def _later_day(text: str, days: int) -> str | None:
    """An ISO date or date-time `days` later, in the same form; None if it is neither."""
    try:
        day = datetime.fromisoformat(text[:10]) + timedelta(days=days)
    except ValueError:
        return None
    return day.date().isoformat() + text[10:]


def _deal_changes(step: SolutionStep, task: Task) -> list[tuple[str, dict[str, Any]]]:
    """(column, arguments that set it to another valid value) for a created deal."""
    args = step.arguments
    out: list[tuple[str, dict[str, Any]]] = []
    amount = args.get("amount")
    if isinstance(amount, int) and not isinstance(amount, bool) and amount > 0:
        out.append(("amount", {"amount": amount * 2}))
    close = args.get("close_date")
    if isinstance(close, str) and (later := _later_day(close, 7)) is not None:
        out.append(("close_date", {"close_date": later}))
    stage = args.get("stage")
    if stage in OPEN_STAGES:
        out.append(("stage", {"stage": OPEN_STAGES[(OPEN_STAGES.index(stage) + 1) % len(OPEN_STAGES)]}))
    owner = args.get("owner")
    if isinstance(owner, str) and owner.lower() != task.user_email.lower():
        out.append(("owner", {"owner": task.user_email}))
    return out


def _activity_changes(step: SolutionStep) -> list[tuple[str, dict[str, Any]]]:
    """(column, arguments that set it to another valid value) for a logged activity."""
    args = step.arguments
    out: list[tuple[str, dict[str, Any]]] = []
    kind = args.get("kind")
    if kind in ACTIVITY_KINDS:
        out.append(("kind", {"kind": "note" if kind != "note" else "call"}))
    when = args.get("occurred_at")
    if isinstance(when, str) and (later := _later_day(when, 1)) is not None:
        out.append(("occurred_at", {"occurred_at": later}))
    return out
