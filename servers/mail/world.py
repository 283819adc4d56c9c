"""Mail world operations: messages arrive from others (events), raw messages for seeds,
and changes made outside the agent's tools (the user reads or files a message)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from coworkenv.state import Workspace

from ..toolkit import ServiceError, WorldOperations
from . import store
from .schema import Attachment, Folder

WORLD = WorldOperations("mail")

Id = Annotated[int, Field(ge=1, le=2**53)]


class DeliverInbound(BaseModel):
    """A message from someone else arriving in a mailbox's inbox, unread."""

    model_config = ConfigDict(extra="forbid")

    from_addr: str
    subject: str | None = None
    body: str = ""
    to: list[str] | None = None
    cc: list[str] = []
    in_reply_to: Id | None = None
    attachments: list[str] = []
    labels: list[str] = []
    is_flagged: bool = False
    sent_at: str | None = None
    owner: str | None = None


class AddMessage(BaseModel):
    """A raw message in any folder of a mailbox, for seeds."""

    model_config = ConfigDict(extra="forbid")

    from_addr: str | None = None
    folder: Folder = "inbox"
    to: list[str] = []
    cc: list[str] = []
    bcc: list[str] = []
    subject: str = ""
    body: str = ""
    sent_at: str | None = None
    is_read: bool | None = None
    is_flagged: bool = False
    in_reply_to: Id | None = None
    forwarded_from: Id | None = None
    thread_id: Id | None = None
    labels: list[str] = []
    attachments: list[str] = []
    owner: str | None = None


class UpdateMessage(BaseModel):
    """A change made outside the agent's tools: the user reads, flags, files or labels a message."""

    model_config = ConfigDict(extra="forbid")

    id: Id
    folder: Folder | None = None
    is_read: bool | None = None
    is_flagged: bool | None = None
    add_labels: list[str] = []
    remove_labels: list[str] = []


def _owner(ws: Workspace, owner: str | None) -> str:
    return store.normalize_address(owner, "owner") if owner is not None else store.mailbox(ws)


def _row(ws: Workspace, owner: str, message_id: int, field: str) -> dict[str, Any]:
    rows = ws.rows("mail_messages", "id = ? AND owner = ?", [message_id, owner])
    if not rows:
        raise ServiceError(f"{field}: no message with id {message_id} in the mailbox of {owner}")
    return rows[0]


def _attachments(ws: Workspace, paths: list[str]) -> list[Attachment]:
    """Existing files when the files service is enabled; otherwise any absolute path."""
    if store.files_enabled(ws):
        return store.resolve_attachments(ws, paths)
    result: list[Attachment] = []
    for path in dict.fromkeys(store.normalize_path(p) for p in paths):
        result.append(Attachment(path=path, name=path.rsplit("/", 1)[-1]))
    return result


@WORLD.operation(DeliverInbound)
def deliver_inbound(ws: Workspace, p: DeliverInbound) -> dict[str, Any]:
    """A mail from someone else arrives, unread, in the inbox (of the workspace's user unless
    `owner` is given); with `in_reply_to` it joins that message's thread as "Re: ..."."""
    owner = _owner(ws, p.owner)
    sender = store.normalize_address(p.from_addr, "from_addr")
    thread_id, subject = None, p.subject or ""
    if p.in_reply_to is not None:
        parent = _row(ws, owner, p.in_reply_to, "in_reply_to")
        thread_id = parent["thread_id"]
        subject = p.subject if p.subject is not None else store.reply_subject(parent["subject"])
    to = store.normalize_addresses([owner] if p.to is None else p.to, "to")
    message_id = store.insert_message(
        ws,
        owner=owner,
        folder="inbox",
        from_addr=sender,
        to=to,
        cc=store.normalize_addresses(p.cc, "cc", skip=to),
        bcc=[],
        subject=store.clean(subject),
        body=store.clean(p.body),
        sent_at=store.time_arg(p.sent_at, "sent_at") if p.sent_at is not None else ws.clock.now_text(),
        is_read=False,
        is_flagged=p.is_flagged,
        in_reply_to=p.in_reply_to,
        thread_id=thread_id,
        labels=[store.normalize_label(x) for x in p.labels],
        attachments=_attachments(ws, p.attachments),
    )
    return {"id": message_id, "thread_id": thread_id or message_id}


@WORLD.operation(AddMessage)
def add_message(ws: Workspace, p: AddMessage) -> dict[str, Any]:
    """A message in any folder with any fields (seeds). The sender defaults to the mailbox
    owner; `is_read` defaults to true in sent and drafts, false elsewhere."""
    owner = _owner(ws, p.owner)
    sender = store.normalize_address(p.from_addr, "from_addr") if p.from_addr is not None else owner
    thread_id = p.thread_id
    if p.in_reply_to is not None:
        parent = _row(ws, owner, p.in_reply_to, "in_reply_to")
        if thread_id is not None and thread_id != parent["thread_id"]:
            raise ServiceError(
                f"thread_id {thread_id} differs from the thread {parent['thread_id']} of in_reply_to {p.in_reply_to}"
            )
        thread_id = parent["thread_id"]
    elif thread_id is not None and not ws.rows(
        "mail_messages", "thread_id = ? AND owner = ?", [thread_id, owner]
    ):
        raise ServiceError(
            f"thread_id: no thread {thread_id} in the mailbox of {owner}; leave it out to start one"
        )
    if p.forwarded_from is not None:
        _row(ws, owner, p.forwarded_from, "forwarded_from")
    to = store.normalize_addresses(p.to, "to")
    cc = store.normalize_addresses(p.cc, "cc", skip=to)
    message_id = store.insert_message(
        ws,
        owner=owner,
        folder=p.folder,
        from_addr=sender,
        to=to,
        cc=cc,
        bcc=store.normalize_addresses(p.bcc, "bcc", skip=to + cc),
        subject=store.clean(p.subject),
        body=store.clean(p.body),
        sent_at=store.time_arg(p.sent_at, "sent_at") if p.sent_at is not None else ws.clock.now_text(),
        is_read=p.is_read if p.is_read is not None else p.folder in ("sent", "drafts"),
        is_flagged=p.is_flagged,
        in_reply_to=p.in_reply_to,
        forwarded_from=p.forwarded_from,
        thread_id=thread_id,
        labels=[store.normalize_label(x) for x in p.labels],
        attachments=_attachments(ws, p.attachments),
    )
    return {"id": message_id, "thread_id": thread_id or message_id}


@WORLD.operation(UpdateMessage)
def update_message(ws: Workspace, p: UpdateMessage) -> dict[str, Any]:
    """A message changes outside the agent's tools (in any mailbox): the user reads or flags
    it on their phone, files it in another folder, or labels it."""
    if not ws.rows("mail_messages", "id = ?", [p.id]):
        raise ServiceError(f"no message with id {p.id}")
    changes = {
        k: int(v) if isinstance(v, bool) else v
        for k, v in p.model_dump(include={"folder", "is_read", "is_flagged"}).items()
        if v is not None
    }
    if not (changes or p.add_labels or p.remove_labels):
        raise ServiceError("update_message needs at least one change: folder, is_read, is_flagged or labels")
    for column in sorted(changes):
        ws.conn.execute(f"UPDATE mail_messages SET {column} = ? WHERE id = ?", (changes[column], p.id))
    ws.conn.executemany(
        "INSERT OR IGNORE INTO mail_labels (message_id, label) VALUES (?, ?)",
        [(p.id, store.normalize_label(x)) for x in p.add_labels],
    )
    ws.conn.executemany(
        "DELETE FROM mail_labels WHERE message_id = ? AND label = ?",
        [(p.id, store.normalize_label(x)) for x in p.remove_labels],
    )
    return {"id": p.id, "changed": sorted(changes) + (["labels"] if p.add_labels or p.remove_labels else [])}
