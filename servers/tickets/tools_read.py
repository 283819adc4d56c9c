"""Tickets tools that read: search tickets, read one with its comments, list the queues."""

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ServiceError, ToolList, workspace_of
from . import store
from .schema import (
    ACTIVE_STATUSES,
    PRIORITIES,
    CommentList,
    Priority,
    QueueList,
    QueueSummary,
    Status,
    Ticket,
    TicketList,
)

TOOLS = ToolList()

#: Bounds that keep ids and offsets inside SQLite's 64-bit integers.
MAX_ID = 2**31 - 1
MAX_OFFSET = 1_000_000

TicketId = Annotated[
    int, Field(ge=1, le=MAX_ID, description="The ticket's id: the number without '#', e.g. 17 for #17")
]


def _one_or_many(value: Any) -> list[Any]:
    return [value] if isinstance(value, str) else list(value)


@TOOLS.tool(read_only=True)
async def search_tickets(
    ctx: Context,
    query: Annotated[str, Field(description="Words that must all appear in the title or description")] = "",
    status: Annotated[
        Status | list[Status] | None, Field(description="Only tickets in this status, or in any of these")
    ] = None,
    priority: Annotated[
        Priority | list[Priority] | None,
        Field(description="Only tickets with this priority, or any of these"),
    ] = None,
    assignee: Annotated[str | None, Field(description="Assignee email, or 'unassigned'")] = None,
    requester: Annotated[str | None, Field(description="Requester email")] = None,
    queue: Annotated[str | None, Field(description="Queue name, as list_queues shows it")] = None,
    tag: Annotated[str | None, Field(description="Only tickets carrying this tag")] = None,
    due_before: Annotated[
        str | None, Field(description="Due strictly before this ISO 8601 date or time")
    ] = None,
    due_after: Annotated[str | None, Field(description="Due at or after this ISO 8601 date or time")] = None,
    sort: Annotated[
        Literal["newest", "oldest", "priority", "due"],
        Field(description="newest/oldest created first; priority: urgent first; due: soonest due first"),
    ] = "newest",
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> TicketList:
    """Search tickets by words and filters; every filter given must match.

    Use it to find a ticket's id, or to list work: e.g. status ["open", "in_progress"] with
    assignee "unassigned" and sort "priority" lists untaken work, most urgent first. Filters
    on a due date leave out tickets without one. Results are summaries (no description,
    comments or links: use get_ticket for those); `total` counts every match, so page with
    `offset` when it exceeds `limit`.
    """
    ws = workspace_of(ctx)
    where: list[str] = []
    params: list[Any] = []
    for word in query.split():
        where.append("(title LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\')")
        params += [f"%{_like_escape(word)}%"] * 2
    for column, values in (("status", status), ("priority", priority)):
        if values is not None:
            chosen = _one_or_many(values)
            if not chosen:
                raise ServiceError(f"{column} is an empty list; give at least one value or leave it out")
            where.append(f"{column} IN ({', '.join('?' * len(chosen))})")
            params += chosen
    if assignee is not None:
        if assignee.strip().lower() == store.UNASSIGNED:
            where.append("assignee IS NULL")
        else:
            where.append("lower(assignee) = ?")
            params.append(store.email(assignee, "assignee"))
    if requester is not None:
        where.append("lower(requester) = ?")
        params.append(store.email(requester, "requester"))
    if queue is not None:
        where.append("queue = ?")
        params.append(store.queue(ws, queue))
    if tag is not None:
        where.append("id IN (SELECT ticket_id FROM tickets_tags WHERE tag = ?)")
        params.append(tag.strip().lower())
    if due_before is not None:
        where.append("due_at < ?")
        params.append(store.when(due_before, "due_before"))
    if due_after is not None:
        where.append("due_at >= ?")
        params.append(store.when(due_after, "due_after"))
    clause = " AND ".join(where) or "1"
    order = {
        "newest": "created_at DESC, id DESC",
        "oldest": "created_at, id",
        "priority": f"{_priority_rank()}, created_at DESC, id DESC",
        "due": "due_at IS NULL, due_at, id",
    }[sort]
    total = ws.conn.execute(f"SELECT COUNT(*) FROM tickets_tickets WHERE {clause}", params).fetchone()[0]
    rows = ws.rows("tickets_tickets", f"{clause} ORDER BY {order} LIMIT ? OFFSET ?", [*params, limit, offset])
    tags = store.tags_of(ws, [r["id"] for r in rows])
    return TicketList(total=total, tickets=[store.summary_from_row(r, tags[r["id"]]) for r in rows])


def _like_escape(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _priority_rank() -> str:
    cases = " ".join(f"WHEN '{p}' THEN {rank}" for rank, p in enumerate(reversed(PRIORITIES)))
    return f"CASE priority {cases} END"


@TOOLS.tool(read_only=True)
async def get_ticket(ctx: Context, ticket_id: TicketId) -> Ticket:
    """Get one ticket in full: description, status and the statuses it may move to next,
    priority, queue, requester, assignee, tags, due date, comment count and links to other
    tickets. Read the comments themselves with list_comments."""
    return store.load_ticket(workspace_of(ctx), ticket_id)


@TOOLS.tool(read_only=True)
async def list_comments(
    ctx: Context,
    ticket_id: TicketId,
    visibility: Annotated[
        Literal["all", "public", "internal"],
        Field(description="public: seen by the requester; internal: staff-only notes; all: both"),
    ] = "all",
    limit: Annotated[int, Field(ge=1, le=100)] = 50,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> CommentList:
    """List a ticket's comments, oldest first, with author, visibility and time.

    `total` counts every matching comment, so page with `offset` when it exceeds `limit`.
    """
    ws = workspace_of(ctx)
    store.ticket_row(ws, ticket_id)
    where = "ticket_id = ?"
    params: list[Any] = [ticket_id]
    if visibility != "all":
        where += " AND visibility = ?"
        params.append(visibility)
    total = ws.conn.execute(f"SELECT COUNT(*) FROM tickets_comments WHERE {where}", params).fetchone()[0]
    rows = ws.rows(
        "tickets_comments", f"{where} ORDER BY created_at, id LIMIT ? OFFSET ?", [*params, limit, offset]
    )
    return CommentList(ticket_id=ticket_id, total=total, comments=[store.comment_from_row(r) for r in rows])


@TOOLS.tool(read_only=True)
async def list_queues(ctx: Context) -> QueueList:
    """List every ticket queue with its description, how many of its tickets are still open
    (open, pending or in_progress) and how many it holds in all. Tickets must be filed in
    one of these queues."""
    rows = (
        workspace_of(ctx)
        .conn.execute(
            "SELECT q.name, q.description, "
            f"COUNT(CASE WHEN t.status IN ({', '.join('?' * len(ACTIVE_STATUSES))}) THEN 1 END), COUNT(t.id) "
            "FROM tickets_queues q LEFT JOIN tickets_tickets t ON t.queue = q.name GROUP BY q.name ORDER BY q.name",
            ACTIVE_STATUSES,
        )
        .fetchall()
    )
    return QueueList(
        queues=[QueueSummary(name=n, description=d, open_tickets=o, total_tickets=c) for n, d, o, c in rows]
    )
