"""Tickets tables (queues, tickets, tags, comments, links) and the models its tools return."""

from typing import Literal

from pydantic import BaseModel, Field

from coworkenv.state import FollowUp, ServiceSchema, TableRules

Status = Literal["open", "pending", "in_progress", "resolved", "closed"]
Priority = Literal["low", "normal", "high", "urgent"]
Visibility = Literal["public", "internal"]
#: How a link reads from the ticket that shows it. Stored links only use the first three;
#: `duplicated_by` and `blocked_by` are the same links seen from the other ticket.
LinkKind = Literal["relates_to", "duplicates", "blocks", "duplicated_by", "blocked_by"]

STATUSES: tuple[str, ...] = ("open", "pending", "in_progress", "resolved", "closed")
PRIORITIES: tuple[str, ...] = ("low", "normal", "high", "urgent")
#: Statuses that still need work; `list_queues` counts these as open.
ACTIVE_STATUSES: tuple[str, ...] = ("open", "pending", "in_progress")

SCHEMA = ServiceSchema(
    name="tickets",
    sql="""
CREATE TABLE tickets_queues (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT ''
);
CREATE TABLE tickets_tickets (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('open', 'pending', 'in_progress', 'resolved', 'closed')),
    priority TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
    queue TEXT NOT NULL REFERENCES tickets_queues(name),
    requester TEXT NOT NULL,
    assignee TEXT,
    due_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX tickets_tickets_queue ON tickets_tickets(queue, status);
CREATE INDEX tickets_tickets_assignee ON tickets_tickets(assignee);
CREATE TABLE tickets_tags (
    ticket_id INTEGER NOT NULL REFERENCES tickets_tickets(id),
    tag TEXT NOT NULL,
    PRIMARY KEY (ticket_id, tag)
);
CREATE INDEX tickets_tags_tag ON tickets_tags(tag);
CREATE TABLE tickets_comments (
    id INTEGER PRIMARY KEY,
    ticket_id INTEGER NOT NULL REFERENCES tickets_tickets(id),
    author TEXT NOT NULL,
    body TEXT NOT NULL,
    visibility TEXT NOT NULL CHECK (visibility IN ('public', 'internal')),
    created_at TEXT NOT NULL
);
CREATE INDEX tickets_comments_ticket ON tickets_comments(ticket_id, created_at);
CREATE TABLE tickets_links (
    source_id INTEGER NOT NULL REFERENCES tickets_tickets(id),
    kind TEXT NOT NULL CHECK (kind IN ('relates_to', 'duplicates', 'blocks')),
    target_id INTEGER NOT NULL REFERENCES tickets_tickets(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (source_id, kind, target_id),
    CHECK (source_id != target_id)
);
CREATE INDEX tickets_links_target ON tickets_links(target_id);
""",
    changes={
        "tickets_tickets": TableRules(
            bookkeeping=("updated_at",),
            destructive={"status": ("resolved", "closed")},
            free=("created_at",),
            free_text=("title", "description"),
            # What check_not_closed tells the agent to do with a closed ticket.
            follow_up=FollowUp(
                final={"status": "closed"},
                link=("tickets_links", "source_id", "target_id"),
                link_where={"kind": "relates_to"},
            ),
        ),
        "tickets_tags": TableRules(
            match=("ticket_id", "tag"),
            parent=("ticket_id", "tickets_tickets"),
            harmless_added={},
            harmless_on_footprint=True,
        ),
        "tickets_comments": TableRules(
            match=("ticket_id", "visibility"),
            parent=("ticket_id", "tickets_tickets"),
            harmless_added={"visibility": "internal"},
            harmless_on_footprint=True,
            free=("created_at",),
            free_text=("body",),
        ),
        "tickets_links": TableRules(
            match=("source_id", "kind", "target_id"),
            parent=("source_id", "tickets_tickets"),
            free=("created_at",),
        ),
        "tickets_queues": TableRules(match=("name",), free_text=("description",)),
    },
)


class TicketLink(BaseModel):
    """A link from the ticket being shown to another ticket."""

    kind: LinkKind = Field(
        description="How this ticket relates to the other, e.g. blocks: this ticket blocks it"
    )
    ticket_id: int
    title: str
    status: Status


class TicketSummary(BaseModel):
    """A ticket as search results show it (no description, comments or links)."""

    id: int
    number: str = Field(description="The ticket number as people write it, e.g. #17 for id 17")
    title: str
    status: Status
    priority: Priority
    queue: str
    requester: str
    assignee: str | None
    tags: list[str]
    due_at: str | None
    created_at: str
    updated_at: str


class Ticket(TicketSummary):
    """A ticket in full: description, the statuses it may move to, comment count and links."""

    description: str
    next_statuses: list[Status] = Field(description="The statuses update_ticket may move this ticket to")
    comment_count: int
    links: list[TicketLink]


class TicketList(BaseModel):
    """One page of tickets. `total` counts every match, not just this page."""

    total: int
    tickets: list[TicketSummary]


class Comment(BaseModel):
    """A comment on a ticket: public ones are visible to the requester, internal ones only to staff."""

    id: int
    ticket_id: int
    author: str
    body: str
    visibility: Visibility
    created_at: str


class CommentList(BaseModel):
    """One page of a ticket's comments, oldest first. `total` counts every match."""

    ticket_id: int
    total: int
    comments: list[Comment]


class LinkResult(BaseModel):
    """The outcome of link_tickets: whether a new link was made, and the ticket's links now."""

    ticket_id: int
    created: bool = Field(description="False when the tickets were already linked this way (nothing changed)")
    links: list[TicketLink]


class QueueSummary(BaseModel):
    name: str
    description: str
    open_tickets: int = Field(description="Tickets in this queue that are open, pending or in_progress")
    total_tickets: int


class QueueList(BaseModel):
    queues: list[QueueSummary]
