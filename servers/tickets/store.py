"""Reading and writing ticket rows, shared by the tools and the world operations.

Callers validate their input with `rules` first; the writers here assume valid values.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from coworkenv.state import Workspace

from . import rules
from .schema import Comment, Ticket, TicketLink, TicketSummary

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
    row = rules.ticket_row(ws, ticket_id)
    count = ws.conn.execute(
        "SELECT COUNT(*) FROM tickets_comments WHERE ticket_id = ?", (ticket_id,)
    ).fetchone()[0]
    return Ticket(
        **_summary_fields(row, tags_of(ws, [ticket_id])[ticket_id]),
        description=row["description"],
        next_statuses=list(rules.TRANSITIONS[row["status"]]),
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
        raise rules.TicketRuleError(f"a ticket with id {ticket_id} already exists")
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
    rules.ticket_row(ws, ticket_id)
    rules.ticket_row(ws, other_id)
    source, stored, target = rules.link(ticket_id, kind, other_id)
    if ws.rows("tickets_links", "source_id = ? AND kind = ? AND target_id = ?", [source, stored, target]):
        return False
    if stored != "relates_to":
        loop = ws.conn.execute(
            "WITH RECURSIVE reach(id) AS (SELECT ? UNION SELECT l.target_id FROM tickets_links l "
            "JOIN reach r ON l.source_id = r.id WHERE l.kind = ?) SELECT 1 FROM reach WHERE id = ?",
            (target, stored, source),
        ).fetchone()
        if loop:
            raise rules.TicketRuleError(
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
