"""The tickets service's rules and its reading and writing of ticket rows, shared by the
tools and the world operations.

The rules (status transitions, link kinds, input validation) raise `ServiceError` with a
message written for whoever reads it next. The writers assume values the rules accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from coworkenv.state import Workspace, format_time, parse_time

from ..toolkit import ServiceError
from .schema import Comment, Status, Ticket, TicketLink, TicketSummary

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


def ticket_row(ws: Workspace, ticket_id: int) -> dict[str, Any]:
    """The stored row of a ticket, or an error naming where valid ids come from."""
    rows = ws.rows("tickets_tickets", "id = ?", [ticket_id])
    if not rows:
        raise ServiceError(f"no ticket with id {ticket_id}; search_tickets returns valid ids")
    return rows[0]


def check_not_closed(row: dict[str, Any]) -> None:
    """Closed tickets are final: nothing about them changes any more."""
    if row["status"] == "closed":
        raise ServiceError(
            f"ticket #{row['id']} is closed and cannot change; create a new ticket and link it to "
            f"#{row['id']} with link_tickets (kind relates_to)"
        )


def check_transition(ticket_id: int, current: str, new: str) -> None:
    """A status change must follow `TRANSITIONS`; staying in the same status is allowed."""
    if new == current:
        return
    allowed = TRANSITIONS[current]
    if new not in allowed:
        raise ServiceError(
            f"ticket #{ticket_id} cannot go from {current} to {new}; allowed next statuses: {', '.join(allowed)}"
        )


def text(value: str, field: str) -> str:
    """Strip a text field and reject one that is blank."""
    stripped = value.strip()
    if not stripped:
        raise ServiceError(f"{field} must not be blank")
    return stripped


def email(value: str, field: str) -> str:
    """A syntactically valid email address, lowercased."""
    normalized = value.strip().lower()
    if not _EMAIL.match(normalized):
        raise ServiceError(f"{field} {value!r} is not an email address (like name@example.com)")
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
        raise ServiceError(
            f"no colleague with email {address!r} in the directory; find the right address with the "
            "directory's search_people"
        )
    if not row[1]:
        raise ServiceError(
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
        raise ServiceError(f"no queue named {name!r}; queues are: {', '.join(names) or '(none)'}")
    return str(row[0])


def when(value: str, field: str) -> str:
    """An ISO 8601 date or time as canonical UTC text; a date alone means 00:00 UTC."""
    try:
        return format_time(parse_time(value.strip()))
    except (ValueError, OverflowError):
        raise ServiceError(f"{field} {value!r} is not a valid date or time; {TIME_FORMAT_HINT}") from None


def tags(values: Iterable[str]) -> list[str]:
    """Tags lowercased, de-duplicated and sorted; each is one word of letters, digits, -, _ or ."""
    out: set[str] = set()
    for value in values:
        tag = value.strip().lower()
        if not _TAG.match(tag):
            raise ServiceError(
                f"tag {value!r} is not valid; a tag is one word of up to 40 letters, digits, '-', '_' or '.'"
            )
        out.add(tag)
    return sorted(out)


def link(ticket_id: int, kind: str, other_id: int) -> tuple[int, str, int]:
    """The stored form (source, kind, target) of a link given from `ticket_id`'s point of view."""
    if ticket_id == other_id:
        raise ServiceError(f"a ticket cannot be linked to itself (#{ticket_id}); give two different ids")
    if kind not in LINK_KINDS:
        raise ServiceError(f"unknown link kind {kind!r}; kinds are: {', '.join(LINK_KINDS)}")
    stored, swap = LINK_KINDS[kind]
    source, target = (other_id, ticket_id) if swap else (ticket_id, other_id)
    if stored == "relates_to":
        # relates_to reads the same both ways: store it once, from the lower id.
        source, target = min(source, target), max(source, target)
    return source, stored, target


# -- rows ------------------------------------------------------------------------------------


#: The ticket columns that updates may set (column names are never taken from input).
UPDATABLE = ("title", "description", "status", "priority", "queue", "assignee", "due_at")

#: How a stored link kind reads from its target ticket.
_INVERSE = {"relates_to": "relates_to", "duplicates": "duplicated_by", "blocks": "blocked_by"}


def tags_of(ws: Workspace, ticket_ids: Iterable[int]) -> dict[int, list[str]]:
    """The sorted tags of each ticket."""
    ids = list(ticket_ids)
    out: dict[int, list[str]] = {i: [] for i in ids}
    if not ids:
        return out
    marks = ", ".join("?" * len(ids))
    for ticket_id, tag in ws.conn.execute(
        f"SELECT ticket_id, tag FROM tickets_tags WHERE ticket_id IN ({marks}) ORDER BY ticket_id, tag", ids
    ):
        out[ticket_id].append(tag)
    return out


def summary_from_row(row: dict[str, Any], tags: list[str]) -> TicketSummary:
    return TicketSummary(**_summary_fields(row, tags))


def _summary_fields(row: dict[str, Any], tags: list[str]) -> dict[str, Any]:
    fields = {name: row[name] for name in TicketSummary.model_fields if name in row}
    return {**fields, "number": f"#{row['id']}", "tags": tags}


def links_of(ws: Workspace, ticket_id: int) -> list[TicketLink]:
    """Every link of a ticket, read from its side, ordered by the other ticket's id then kind."""
    rows = ws.conn.execute(
        "SELECT l.kind, t.id, t.title, t.status FROM tickets_links l JOIN tickets_tickets t ON t.id = l.target_id "
        "WHERE l.source_id = ? "
        "UNION ALL "
        "SELECT l.kind || ':inverse', t.id, t.title, t.status FROM tickets_links l "
        "JOIN tickets_tickets t ON t.id = l.source_id WHERE l.target_id = ?",
        (ticket_id, ticket_id),
    ).fetchall()
    links = []
    for kind, other, title, status in rows:
        if kind.endswith(":inverse"):
            kind = _INVERSE[kind.removesuffix(":inverse")]
        links.append(TicketLink(kind=kind, ticket_id=other, title=title, status=status))
    return sorted(links, key=lambda link: (link.ticket_id, link.kind))


def load_ticket(ws: Workspace, ticket_id: int) -> Ticket:
    """A ticket in full, as get_ticket returns it."""
    row = ticket_row(ws, ticket_id)
    count = ws.conn.execute(
        "SELECT COUNT(*) FROM tickets_comments WHERE ticket_id = ?", (ticket_id,)
    ).fetchone()[0]
    return Ticket(
        **_summary_fields(row, tags_of(ws, [ticket_id])[ticket_id]),
        description=row["description"],
        next_statuses=list(TRANSITIONS[row["status"]]),
        comment_count=count,
        links=links_of(ws, ticket_id),
    )


def comment_from_row(row: dict[str, Any]) -> Comment:
    return Comment(**row)


def insert_ticket(
    ws: Workspace, fields: dict[str, Any], tags: list[str], ticket_id: int | None = None
) -> int:
    """Insert a ticket (with the given id, or the next one) and its tags; returns the id."""
    if ticket_id is not None and ws.rows("tickets_tickets", "id = ?", [ticket_id]):
        raise ServiceError(f"a ticket with id {ticket_id} already exists")
    columns = ["id", *fields]
    cursor = ws.conn.execute(
        f"INSERT INTO tickets_tickets ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        (ticket_id, *fields.values()),
    )
    new_id = int(cursor.lastrowid or 0)
    set_tags(ws, new_id, tags)
    return new_id


def set_tags(ws: Workspace, ticket_id: int, tags: list[str]) -> None:
    """Replace a ticket's tags."""
    ws.conn.execute("DELETE FROM tickets_tags WHERE ticket_id = ?", (ticket_id,))
    ws.conn.executemany(
        "INSERT INTO tickets_tags (ticket_id, tag) VALUES (?, ?)", [(ticket_id, t) for t in tags]
    )


def update_ticket(ws: Workspace, ticket_id: int, changes: dict[str, Any], updated_at: str) -> None:
    """Set some of the `UPDATABLE` columns and move `updated_at`."""
    unknown = set(changes) - set(UPDATABLE)
    if unknown:
        raise KeyError(f"not updatable ticket columns: {sorted(unknown)}")
    sets = "".join(f"{name} = ?, " for name in changes)
    ws.conn.execute(
        f"UPDATE tickets_tickets SET {sets}updated_at = ? WHERE id = ?",
        (*changes.values(), updated_at, ticket_id),
    )


def insert_comment(
    ws: Workspace, ticket_id: int, *, author: str, body: str, visibility: str, created_at: str
) -> Comment:
    """Add a comment; the ticket's `updated_at` moves to the comment's time if that is later."""
    cursor = ws.conn.execute(
        "INSERT INTO tickets_comments (ticket_id, author, body, visibility, created_at) VALUES (?, ?, ?, ?, ?)",
        (ticket_id, author, body, visibility, created_at),
    )
    ws.conn.execute(
        "UPDATE tickets_tickets SET updated_at = max(updated_at, ?) WHERE id = ?", (created_at, ticket_id)
    )
    return comment_from_row(ws.rows("tickets_comments", "id = ?", [cursor.lastrowid])[0])


def insert_link(ws: Workspace, ticket_id: int, kind: str, other_id: int, created_at: str) -> bool:
    """Link two existing tickets; False when that link already exists (nothing changes).

    A `duplicates` or `blocks` link that would close a loop (#1 blocks #2 while #2 already
    blocks #1, directly or through other tickets) is refused.
    """
    ticket_row(ws, ticket_id)
    ticket_row(ws, other_id)
    source, stored, target = link(ticket_id, kind, other_id)
    if ws.rows("tickets_links", "source_id = ? AND kind = ? AND target_id = ?", [source, stored, target]):
        return False
    if stored != "relates_to":
        loop = ws.conn.execute(
            "WITH RECURSIVE reach(id) AS (SELECT ? UNION SELECT l.target_id FROM tickets_links l "
            "JOIN reach r ON l.source_id = r.id WHERE l.kind = ?) SELECT 1 FROM reach WHERE id = ?",
            (target, stored, source),
        ).fetchone()
        if loop:
            raise ServiceError(
                f"#{target} already {stored} #{source} (directly or through other tickets), so #{source} "
                f"cannot also {stored.removesuffix('s')} #{target}"
            )
    ws.conn.execute(
        "INSERT INTO tickets_links (source_id, kind, target_id, created_at) VALUES (?, ?, ?, ?)",
        (source, stored, target, created_at),
    )
    ws.conn.execute(
        "UPDATE tickets_tickets SET updated_at = max(updated_at, ?) WHERE id IN (?, ?)",
        (created_at, source, target),
    )
    return True
