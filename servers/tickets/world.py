"""Tickets world operations: queues and tickets for seeds; requesters and colleagues acting as events."""

from typing import Annotated, Any

from pydantic import BaseModel, Field

from coworkenv.state import Workspace

from ..toolkit import ServiceError, WorldOperations
from . import store
from .schema import LinkKind, Priority, Status, Visibility

WORLD = WorldOperations("tickets")

TicketRef = Annotated[int, Field(ge=1, le=2**31 - 1)]


class AddQueue(BaseModel):
    name: str = Field(min_length=1)
    description: str = ""


class SeedComment(BaseModel):
    """A comment that comes with a seeded ticket; its time defaults to now."""

    author: str
    body: str = Field(min_length=1)
    visibility: Visibility = "public"
    created_at: str | None = None


class AddTicket(BaseModel):
    """A ticket as it already stands: any status, past times, comments and all."""

    id: TicketRef | None = None
    title: str = Field(min_length=1)
    description: str = ""
    status: Status = "open"
    priority: Priority = "normal"
    queue: str
    requester: str
    assignee: str | None = None
    tags: list[str] = Field(default_factory=list)
    due_at: str | None = None
    created_at: str | None = Field(default=None, description="Default: now")
    updated_at: str | None = Field(default=None, description="Default: created_at (or the latest comment)")
    comments: list[SeedComment] = Field(default_factory=list)


class CustomerComment(BaseModel):
    ticket_id: TicketRef
    body: str = Field(min_length=1)
    reopen: bool = Field(default=False, description="Move a resolved ticket back to open")


class UpdateTicketFields(BaseModel):
    """Fields to change; `assignee` or `due_at` given as null clear them."""

    ticket_id: TicketRef
    title: str | None = None
    description: str | None = None
    status: Status | None = None
    priority: Priority | None = None
    queue: str | None = None
    assignee: str | None = None
    due_at: str | None = None
    tags: list[str] | None = None


class AddLink(BaseModel):
    ticket_id: TicketRef
    kind: LinkKind
    other_ticket_id: TicketRef
    created_at: str | None = Field(default=None, description="Default: now")


def _past(ws: Workspace, value: str | None, field: str, default: str) -> str:
    if value is None:
        return default
    text = store.when(value, field)
    if text > ws.clock.now_text():
        raise ServiceError(f"{field} {text} is after the workspace clock ({ws.clock.now_text()})")
    return text


@WORLD.operation(AddQueue)
def add_queue(ws: Workspace, p: AddQueue) -> dict[str, Any]:
    """A ticket queue is created."""
    name = store.text(p.name, "name")
    if ws.rows("tickets_queues", "lower(name) = lower(?)", [name]):
        raise ServiceError(f"a queue named {name!r} already exists")
    ws.conn.execute("INSERT INTO tickets_queues (name, description) VALUES (?, ?)", (name, p.description))
    return {"name": name}


@WORLD.operation(AddTicket)
def add_ticket(ws: Workspace, p: AddTicket) -> dict[str, Any]:
    """A ticket exists (seeds): any status, with past times and its comments so far."""
    now = ws.clock.now_text()
    created = _past(ws, p.created_at, "created_at", now)
    updated = _past(ws, p.updated_at, "updated_at", created)
    if updated < created:
        raise ServiceError(f"updated_at {updated} is before created_at {created}")
    comments = []
    for c in p.comments:
        at = _past(ws, c.created_at, "comment created_at", now)
        if at < created:
            raise ServiceError(f"comment created_at {at} is before the ticket's created_at {created}")
        comments.append(
            (store.email(c.author, "comment author"), store.text(c.body, "comment body"), c.visibility, at)
        )
    fields = {
        "title": store.text(p.title, "title"),
        "description": p.description.strip(),
        "status": p.status,
        "priority": p.priority,
        "queue": store.queue(ws, p.queue),
        "requester": store.email(p.requester, "requester"),
        "assignee": None if p.assignee is None else store.assignee(ws, p.assignee),
        "due_at": None if p.due_at is None else store.when(p.due_at, "due_at"),
        "created_at": created,
        "updated_at": updated,
    }
    ticket_id = store.insert_ticket(ws, fields, store.tags(p.tags), p.id)
    ids = [
        store.insert_comment(ws, ticket_id, author=a, body=b, visibility=v, created_at=at).id
        for a, b, v, at in comments
    ]
    return {"ticket_id": ticket_id, "comment_ids": ids}


@WORLD.operation(CustomerComment)
def customer_comment(ws: Workspace, p: CustomerComment) -> dict[str, Any]:
    """The requester replies on a ticket (a public comment), optionally reopening it if resolved."""
    row = store.ticket_row(ws, p.ticket_id)
    store.check_not_closed(row)
    if p.reopen and row["status"] != "resolved":
        raise ServiceError(f"ticket #{p.ticket_id} is {row['status']}, not resolved; it cannot be reopened")
    now = ws.clock.now_text()
    comment = store.insert_comment(
        ws,
        p.ticket_id,
        author=row["requester"],
        body=store.text(p.body, "body"),
        visibility="public",
        created_at=now,
    )
    status = "open" if p.reopen else row["status"]
    if p.reopen:
        store.update_ticket(ws, p.ticket_id, {"status": status}, now)
    return {"ticket_id": p.ticket_id, "comment_id": comment.id, "status": status}


@WORLD.operation(UpdateTicketFields)
def update_ticket_fields(ws: Workspace, p: UpdateTicketFields) -> dict[str, Any]:
    """Someone else changes a ticket. Any status may be set (no transition rules); updated_at moves to now."""
    store.ticket_row(ws, p.ticket_id)
    given = p.model_fields_set - {"ticket_id"}
    changes: dict[str, Any] = {}
    for name in ("title", "description", "status", "priority", "queue", "tags"):
        if name in given and getattr(p, name) is None:
            raise ServiceError(f"{name} cannot be null")
    for name in ("description", "status", "priority"):
        if getattr(p, name) is not None:
            changes[name] = getattr(p, name)
    if p.title is not None:
        changes["title"] = store.text(p.title, "title")
    if p.queue is not None:
        changes["queue"] = store.queue(ws, p.queue)
    if "assignee" in given:
        changes["assignee"] = None if p.assignee is None else store.assignee(ws, p.assignee)
    if "due_at" in given:
        changes["due_at"] = None if p.due_at is None else store.when(p.due_at, "due_at")
    new_tags = None if p.tags is None else store.tags(p.tags)
    if not changes and new_tags is None:
        raise ServiceError("update_ticket_fields needs at least one field to change")
    store.update_ticket(ws, p.ticket_id, changes, ws.clock.now_text())
    if new_tags is not None:
        store.set_tags(ws, p.ticket_id, new_tags)
    return {"ticket_id": p.ticket_id, "changed": sorted(changes) + (["tags"] if new_tags is not None else [])}


@WORLD.operation(AddLink)
def add_link(ws: Workspace, p: AddLink) -> dict[str, Any]:
    """Someone links two tickets (same rules as the link_tickets tool)."""
    at = _past(ws, p.created_at, "created_at", ws.clock.now_text())
    created = store.insert_link(ws, p.ticket_id, p.kind, p.other_ticket_id, at)
    return {"created": created}
