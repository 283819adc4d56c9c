"""Tickets tools that change state: create, update, comment, link."""

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from coworkenv.state import Workspace

from ..toolkit import ServiceError, ToolList, current_user, workspace_of
from . import store
from .schema import Comment, LinkKind, LinkResult, Priority, Status, Ticket, Visibility
from .tools_read import TicketId

TOOLS = ToolList()

Title = Annotated[str, Field(min_length=1, max_length=200, description="A short summary of the request")]
Body = Annotated[str, Field(min_length=1, max_length=10000)]
TagList = Annotated[list[str], Field(max_length=20)]


@TOOLS.tool(read_only=False)
async def create_ticket(
    ctx: Context,
    title: Title,
    queue: Annotated[str, Field(description="The queue to file it in, as list_queues shows it")],
    description: Annotated[str, Field(max_length=10000, description="The details of the request")] = "",
    priority: Priority = "normal",
    requester: Annotated[
        str | None, Field(description="Email of the person asking; defaults to the user you work for")
    ] = None,
    assignee: Annotated[
        str | None, Field(description="Email of the colleague to work on it; default nobody")
    ] = None,
    tags: Annotated[TagList | None, Field(description="Tags, one word each, e.g. ['refund', 'vip']")] = None,
    due_at: Annotated[str | None, Field(description="Due date or time, ISO 8601, e.g. 2026-03-06")] = None,
) -> Ticket:
    """Create a ticket in a queue. It starts in status open; the full ticket (with its new
    id) comes back. A date alone as `due_at` means 00:00 UTC that day."""
    ws = workspace_of(ctx)
    now = ws.clock.now_text()
    fields = {
        "title": store.text(title, "title"),
        "description": description.strip(),
        "status": "open",
        "priority": priority,
        "queue": store.queue(ws, queue),
        "requester": store.email(current_user(ws) if requester is None else requester, "requester"),
        "assignee": None if assignee is None else store.assignee(ws, assignee),
        "due_at": None if due_at is None else store.when(due_at, "due_at"),
        "created_at": now,
        "updated_at": now,
    }
    ticket_id = store.insert_ticket(ws, fields, store.tags(tags or []))
    return store.load_ticket(ws, ticket_id)


@TOOLS.tool(read_only=False)
async def update_ticket(
    ctx: Context,
    ticket_id: TicketId,
    status: Annotated[
        Status | None, Field(description="New status; only the moves in the tool description are allowed")
    ] = None,
    priority: Priority | None = None,
    assignee: Annotated[str | None, Field(description="Colleague's email, or 'unassigned' to clear")] = None,
    queue: Annotated[str | None, Field(description="Move to this queue, as list_queues shows it")] = None,
    title: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
    due_at: Annotated[str | None, Field(description="ISO 8601 date or time, or 'none' to clear")] = None,
    tags: Annotated[TagList | None, Field(description="Replace all tags with these ([] removes all)")] = None,
    add_tags: Annotated[TagList | None, Field(description="Tags to add, keeping the others")] = None,
    remove_tags: Annotated[TagList | None, Field(description="Tags to remove, keeping the others")] = None,
) -> Ticket:
    """Change a ticket: only the fields you give change, and its updated_at moves to now.

    Status moves allowed (get_ticket shows them as next_statuses):
    open -> in_progress, pending, resolved, closed;
    in_progress -> open, pending, resolved;
    pending -> open, in_progress, resolved;
    resolved -> open (reopen) or closed;
    closed is final: a closed ticket cannot be changed at all (create a new ticket and link it).
    Give `tags` to replace every tag, or `add_tags` / `remove_tags` to edit them (not both ways).
    Returns the whole ticket after the change.
    """
    ws = workspace_of(ctx)
    given = {
        k: v
        for k, v in {
            "status": status,
            "priority": priority,
            "assignee": assignee,
            "queue": queue,
            "title": title,
            "due_at": due_at,
            "tags": tags,
            "add_tags": add_tags,
            "remove_tags": remove_tags,
        }.items()
        if v is not None
    }
    if not given:
        raise ServiceError("nothing to change: give at least one field (status, priority, assignee, ...)")
    row = store.ticket_row(ws, ticket_id)
    store.check_not_closed(row)
    changes: dict[str, Any] = {}
    if status is not None:
        store.check_transition(ticket_id, row["status"], status)
        changes["status"] = status
    if priority is not None:
        changes["priority"] = priority
    if assignee is not None:
        unassign = assignee.strip().lower() == store.UNASSIGNED
        changes["assignee"] = None if unassign else store.assignee(ws, assignee)
    if queue is not None:
        changes["queue"] = store.queue(ws, queue)
    if title is not None:
        changes["title"] = store.text(title, "title")
    if due_at is not None:
        clear = due_at.strip().lower() == store.NO_DUE
        changes["due_at"] = None if clear else store.when(due_at, "due_at")
    new_tags = _new_tags(ws, ticket_id, tags, add_tags, remove_tags)
    store.update_ticket(ws, ticket_id, changes, ws.clock.now_text())
    if new_tags is not None:
        store.set_tags(ws, ticket_id, new_tags)
    return store.load_ticket(ws, ticket_id)


def _new_tags(
    ws: Workspace, ticket_id: int, tags: list[str] | None, add: list[str] | None, remove: list[str] | None
) -> list[str] | None:
    """The ticket's tags after the update, or None when the update leaves them alone."""
    if tags is not None:
        if add is not None or remove is not None:
            raise ServiceError("give either tags (replace all) or add_tags/remove_tags (edit), not both")
        return store.tags(tags)
    if add is None and remove is None:
        return None
    current = store.tags_of(ws, [ticket_id])[ticket_id]
    added, removed = store.tags(add or []), store.tags(remove or [])
    both = sorted(set(added) & set(removed))
    if both:
        raise ServiceError(f"tags {both} are both added and removed; give each tag in one list only")
    missing = [t for t in removed if t not in current]
    if missing:
        raise ServiceError(
            f"ticket #{ticket_id} has no tags {missing}; its tags are: {', '.join(current) or '(none)'}"
        )
    return sorted((set(current) | set(added)) - set(removed))


@TOOLS.tool(read_only=False)
async def add_comment(
    ctx: Context,
    ticket_id: TicketId,
    body: Body,
    visibility: Annotated[
        Visibility,
        Field(description="public: the requester sees it (a reply); internal: a note for staff only"),
    ],
) -> Comment:
    """Comment on a ticket as the user you work for. Choose visibility with care: a public
    comment is a reply the requester reads, an internal one is a note only colleagues see.
    Closed tickets take no comments. The ticket's updated_at moves to now."""
    ws = workspace_of(ctx)
    row = store.ticket_row(ws, ticket_id)
    store.check_not_closed(row)
    return store.insert_comment(
        ws,
        ticket_id,
        author=current_user(ws),
        body=store.text(body, "body"),
        visibility=visibility,
        created_at=ws.clock.now_text(),
    )


@TOOLS.tool(read_only=False, idempotent=True)
async def link_tickets(
    ctx: Context,
    ticket_id: TicketId,
    kind: Annotated[
        LinkKind,
        Field(
            description="How ticket_id relates to other_ticket_id, e.g. duplicates: it duplicates the other"
        ),
    ],
    other_ticket_id: TicketId,
) -> LinkResult:
    """Link two tickets: relates_to (both ways), duplicates / duplicated_by, blocks / blocked_by.

    "A blocked_by B" is the same link as "B blocks A". Linking again the same way changes
    nothing (created is false). Loops are refused: if B already duplicates or blocks A
    (directly or through other tickets), A cannot do the same to B. Closed tickets can be
    linked. Returns every link of ticket_id afterwards.
    """
    ws = workspace_of(ctx)
    created = store.insert_link(ws, ticket_id, kind, other_ticket_id, ws.clock.now_text())
    return LinkResult(ticket_id=ticket_id, created=created, links=store.links_of(ws, ticket_id))
