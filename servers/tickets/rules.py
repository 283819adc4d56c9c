"""The rules of the tickets service: status transitions, link kinds, and input validation.

Every check raises `TicketRuleError` (a `ValueError`) with a message written for whoever
reads it next: tools turn it into a `ToolError` for the model, world operations let it out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from coworkenv.state import Workspace, format_time, parse_time

from .schema import Status

#: The statuses a ticket may move to from each status. Closed is final.
TRANSITIONS: dict[str, tuple[Status, ...]] = {
    "open": ("in_progress", "pending", "resolved", "closed"),
    "in_progress": ("open", "pending", "resolved"),
    "pending": ("open", "in_progress", "resolved"),
    "resolved": ("open", "closed"),
    "closed": (),
}

#: A link kind as given by a caller -> (stored kind, whether the two tickets swap places).
LINK_KINDS: dict[str, tuple[str, bool]] = {
    "relates_to": ("relates_to", False),
    "duplicates": ("duplicates", False),
    "duplicated_by": ("duplicates", True),
    "blocks": ("blocks", False),
    "blocked_by": ("blocks", True),
}

UNASSIGNED = "unassigned"
NO_DUE = "none"
TIME_FORMAT_HINT = "use ISO 8601, e.g. 2026-03-06 or 2026-03-06T17:00:00Z"

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_TAG = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")


class TicketRuleError(ValueError):
    """Input that breaks a rule of the tickets service; the message says what to do instead."""


def ticket_row(ws: Workspace, ticket_id: int) -> dict[str, Any]:
    """The stored row of a ticket, or an error naming where valid ids come from."""
    rows = ws.rows("tickets_tickets", "id = ?", [ticket_id])
    if not rows:
        raise TicketRuleError(f"no ticket with id {ticket_id}; search_tickets returns valid ids")
    return rows[0]


def check_not_closed(row: dict[str, Any]) -> None:
    """Closed tickets are final: nothing about them changes any more."""
    if row["status"] == "closed":
        raise TicketRuleError(
            f"ticket #{row['id']} is closed and cannot change; create a new ticket and link it to "
            f"#{row['id']} with link_tickets (kind relates_to)"
        )


def check_transition(ticket_id: int, current: str, new: str) -> None:
    """A status change must follow `TRANSITIONS`; staying in the same status is allowed."""
    if new == current:
        return
    allowed = TRANSITIONS[current]
    if new not in allowed:
        raise TicketRuleError(
            f"ticket #{ticket_id} cannot go from {current} to {new}; allowed next statuses: {', '.join(allowed)}"
        )


def text(value: str, field: str) -> str:
    """Strip a text field and reject one that is blank."""
    stripped = value.strip()
    if not stripped:
        raise TicketRuleError(f"{field} must not be blank")
    return stripped


def email(value: str, field: str) -> str:
    """A syntactically valid email address, lowercased."""
    normalized = value.strip().lower()
    if not _EMAIL.match(normalized):
        raise TicketRuleError(f"{field} {value!r} is not an email address (like name@example.com)")
    return normalized


def has_directory(ws: Workspace) -> bool:
    row = ws.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'directory_people'"
    ).fetchone()
    return row is not None


def assignee(ws: Workspace, value: str) -> str:
    """A valid assignee email; when the workspace has a directory, a colleague listed in it."""
    address = email(value, "assignee")
    if not has_directory(ws):
        return address
    row = ws.conn.execute(
        "SELECT email, internal FROM directory_people WHERE lower(email) = ?", (address,)
    ).fetchone()
    if row is None:
        raise TicketRuleError(
            f"no colleague with email {address!r} in the directory; find the right address with the "
            "directory's search_people"
        )
    if not row[1]:
        raise TicketRuleError(
            f"{address} is an external contact; tickets are assigned to colleagues (find them with the "
            "directory's search_people)"
        )
    return str(row[0])


def queue(ws: Workspace, name: str) -> str:
    """The stored name of an existing queue (matched case-insensitively)."""
    row = ws.conn.execute(
        "SELECT name FROM tickets_queues WHERE lower(name) = lower(?)", (name.strip(),)
    ).fetchone()
    if row is None:
        names = [r[0] for r in ws.conn.execute("SELECT name FROM tickets_queues ORDER BY name")]
        raise TicketRuleError(f"no queue named {name!r}; queues are: {', '.join(names) or '(none)'}")
    return str(row[0])


def when(value: str, field: str) -> str:
    """An ISO 8601 date or time as canonical UTC text; a date alone means 00:00 UTC."""
    try:
        return format_time(parse_time(value.strip()))
    except (ValueError, OverflowError):
        raise TicketRuleError(f"{field} {value!r} is not a valid date or time; {TIME_FORMAT_HINT}") from None


def tags(values: Iterable[str]) -> list[str]:
    """Tags lowercased, de-duplicated and sorted; each is one word of letters, digits, -, _ or ."""
    out: set[str] = set()
    for value in values:
        tag = value.strip().lower()
        if not _TAG.match(tag):
            raise TicketRuleError(
                f"tag {value!r} is not valid; a tag is one word of up to 40 letters, digits, '-', '_' or '.'"
            )
        out.add(tag)
    return sorted(out)


def link(ticket_id: int, kind: str, other_id: int) -> tuple[int, str, int]:
    """The stored form (source, kind, target) of a link given from `ticket_id`'s point of view."""
    if ticket_id == other_id:
        raise TicketRuleError(f"a ticket cannot be linked to itself (#{ticket_id}); give two different ids")
    if kind not in LINK_KINDS:
        raise TicketRuleError(f"unknown link kind {kind!r}; kinds are: {', '.join(LINK_KINDS)}")
    stored, swap = LINK_KINDS[kind]
    source, target = (other_id, ticket_id) if swap else (ticket_id, other_id)
    if stored == "relates_to":
        # relates_to reads the same both ways: store it once, from the lower id.
        source, target = min(source, target), max(source, target)
    return source, stored, target
