"""Mail tools that change the mailbox: send, reply, forward, drafts, folders, flags, labels."""

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from coworkenv.state import Workspace

from ..toolkit import ServiceError, ToolList, workspace_of
from . import store
from .schema import Folder, Message
from .tools_read import MessageId

TOOLS = ToolList()

Addresses = Annotated[
    list[Annotated[str, Field(max_length=320)]],
    Field(max_length=50, description="Bare email addresses, e.g. ann.lee@example.com"),
]
Paths = Annotated[
    list[Annotated[str, Field(max_length=1000)]],
    Field(
        max_length=20, description="Absolute paths of files in the files service, e.g. /shared/q1-report.md"
    ),
]
Subject = Annotated[str, Field(max_length=500)]
Body = Annotated[str, Field(max_length=100_000)]


def _recipients(to: list[str], cc: list[str], bcc: list[str]) -> tuple[list[str], list[str], list[str]]:
    to = store.normalize_addresses(to, "to")
    cc = store.normalize_addresses(cc, "cc", skip=to)
    bcc = store.normalize_addresses(bcc, "bcc", skip=to + cc)
    return to, cc, bcc


def _check_recipients(to: list[str], cc: list[str], bcc: list[str]) -> None:
    if not (to or cc or bcc):
        raise ServiceError("a message needs at least one recipient in to, cc or bcc")


def _check_sendable(to: list[str], cc: list[str], bcc: list[str], subject: str, body: str) -> None:
    _check_recipients(to, cc, bcc)
    if not (subject.strip() or body.strip()):
        raise ServiceError("a message needs a subject or a body; write one before sending")


def _not_a_draft(row: dict[str, Any], action: str) -> None:
    if row["folder"] == "drafts":
        raise ServiceError(
            f"message {row['id']} is a draft, so you cannot {action} it; "
            "change it with save_draft and send it with send_draft"
        )


def _send(ws: Workspace, **fields: Any) -> Message:
    owner = store.mailbox(ws)
    message_id = store.insert_message(
        ws, owner=owner, folder="sent", from_addr=owner, sent_at=ws.clock.now_text(), is_read=True, **fields
    )
    store.record_delivery(ws, message_id)
    return store.get_message(ws, owner, message_id)


@TOOLS.tool(read_only=False)
async def send_message(
    ctx: Context,
    to: Addresses,
    subject: Subject,
    body: Body,
    cc: Addresses | None = None,
    bcc: Addresses | None = None,
    attachments: Paths | None = None,
) -> Message:
    """Send a new message (a new thread) from your address; a copy lands in sent.

    To answer a message use reply instead, so it stays in its thread. Attachments are paths
    of existing files in the files service. Returns the sent message.
    """
    ws = workspace_of(ctx)
    to, cc, bcc = _recipients(to, cc or [], bcc or [])
    subject, body = store.clean(subject), store.clean(body)
    _check_sendable(to, cc, bcc, subject, body)
    files = store.resolve_attachments(ws, attachments or [])
    return _send(ws, to=to, cc=cc, bcc=bcc, subject=subject, body=body, attachments=files)


def _reply_recipients(
    row: dict[str, Any], original: Message, user: str, reply_all: bool
) -> tuple[list[str], list[str]]:
    if row["from_addr"].lower() == user:
        # Replying to your own message continues the conversation with its recipients.
        to, cc = list(original.to), list(original.cc) if reply_all else []
    else:
        to = [row["from_addr"]]
        cc = [a for a in original.to + original.cc if a.lower() not in (user, row["from_addr"].lower())]
        cc = cc if reply_all else []
    to = store.normalize_addresses(to, "to")
    return to, store.normalize_addresses(cc, "cc", skip=[*to, user])


@TOOLS.tool(read_only=False)
async def reply(
    ctx: Context,
    message_id: MessageId,
    body: Body,
    reply_all: Annotated[
        bool, Field(description="Also send to everyone else in the original's to and cc (not yourself)")
    ] = False,
    attachments: Paths | None = None,
) -> Message:
    """Reply to a message: it goes to the original sender (replying to your own sent
    message goes to its recipients), with subject "Re: ...", in the same thread.

    With reply_all, the other to and cc recipients of the original are copied (cc), minus
    you. Only `body` is yours to write; the original is not quoted. Returns the sent reply.
    """
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    row = store.message_row(ws, user, message_id)
    _not_a_draft(row, "reply to")
    original = store.get_message(ws, user, message_id)
    to, cc = _reply_recipients(row, original, user, reply_all)
    if not to:
        raise ServiceError(f"message {message_id} has no recipient to reply to; use send_message instead")
    body = store.clean(body)
    if not body.strip():
        raise ServiceError("a reply needs a body; write what you want to say")
    files = store.resolve_attachments(ws, attachments or [])
    return _send(
        ws,
        to=to,
        cc=cc,
        bcc=[],
        subject=store.reply_subject(row["subject"]),
        body=body,
        in_reply_to=message_id,
        thread_id=row["thread_id"],
        attachments=files,
    )


def _forwarded_text(original: Message, note: str) -> str:
    header = [
        "---------- Forwarded message ----------",
        f"From: {original.from_addr}",
        f"Date: {original.sent_at}",
        f"Subject: {original.subject}",
        f"To: {', '.join(original.to)}",
    ]
    if original.cc:
        header.append(f"Cc: {', '.join(original.cc)}")
    text = "\n".join(header) + "\n\n" + original.body
    return f"{note}\n\n{text}" if note.strip() else text


@TOOLS.tool(read_only=False)
async def forward(
    ctx: Context,
    message_id: MessageId,
    to: Addresses,
    note: Annotated[str, Field(max_length=100_000, description="Your text above the forwarded message")] = "",
    cc: Addresses | None = None,
    attachments: Paths | None = None,
) -> Message:
    """Forward a message to new recipients, with its attachments and your optional note
    above the original (subject "Fwd: ..."). The forward joins the original's thread.

    `attachments` adds more files to those of the original. Returns the sent message.
    """
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    row = store.message_row(ws, user, message_id)
    _not_a_draft(row, "forward")
    original = store.get_message(ws, user, message_id)
    to, cc, _ = _recipients(to, cc or [], [])
    _check_recipients(to, cc, [])
    extra = store.resolve_attachments(ws, attachments or [])
    files = list(original.attachments) + [
        a for a in extra if all(a.path != o.path for o in original.attachments)
    ]
    return _send(
        ws,
        to=to,
        cc=cc,
        bcc=[],
        subject=store.forward_subject(original.subject),
        body=_forwarded_text(original, store.clean(note)),
        forwarded_from=message_id,
        thread_id=row["thread_id"],
        attachments=files,
    )


def _draft_row(ws: Workspace, user: str, draft_id: int) -> dict[str, Any]:
    row = store.message_row(ws, user, draft_id)
    if row["folder"] != "drafts":
        raise ServiceError(
            f"message {draft_id} is not a draft (it is in {row['folder']}); "
            "call save_draft without draft_id to start a new draft"
        )
    return row


@TOOLS.tool(read_only=False)
async def save_draft(
    ctx: Context,
    draft_id: Annotated[
        int | None, Field(ge=1, le=2**53, description="Update this draft; leave empty to start a new draft")
    ] = None,
    to: Addresses | None = None,
    cc: Addresses | None = None,
    bcc: Addresses | None = None,
    subject: Subject | None = None,
    body: Body | None = None,
    attachments: Paths | None = None,
    in_reply_to: Annotated[
        int | None,
        Field(
            ge=1, le=2**53, description="New drafts only: the message this draft answers (joins its thread)"
        ),
    ] = None,
) -> Message:
    """Save a draft without sending it: start a new one, or update one by `draft_id`.

    When updating, only the fields you give change (a list you give replaces the old one).
    A new draft answering a message (`in_reply_to`) joins its thread and gets subject
    "Re: ..." unless you give one. Send it later with send_draft. Returns the draft.
    """
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    if draft_id is not None:
        if in_reply_to is not None:
            raise ServiceError(
                "in_reply_to can only be given for a new draft; leave it out when updating one"
            )
        _draft_row(ws, user, draft_id)
        old = store.get_message(ws, user, draft_id)
        new_to, new_cc, new_bcc = _recipients(
            old.to if to is None else to, old.cc if cc is None else cc, old.bcc if bcc is None else bcc
        )
        files = old.attachments if attachments is None else store.resolve_attachments(ws, attachments)
        ws.conn.execute(
            "UPDATE mail_messages SET subject = ?, body = ?, sent_at = ? WHERE id = ?",
            (
                old.subject if subject is None else store.clean(subject),
                old.body if body is None else store.clean(body),
                ws.clock.now_text(),
                draft_id,
            ),
        )
        store.set_recipients(ws, draft_id, new_to, new_cc, new_bcc)
        store.set_attachments(ws, draft_id, files)
        return store.get_message(ws, user, draft_id)
    thread_id = None
    default_subject = ""
    if in_reply_to is not None:
        parent = store.message_row(ws, user, in_reply_to)
        _not_a_draft(parent, "answer")
        thread_id = parent["thread_id"]
        default_subject = store.reply_subject(parent["subject"])
    new_to, new_cc, new_bcc = _recipients(to or [], cc or [], bcc or [])
    message_id = store.insert_message(
        ws,
        owner=user,
        folder="drafts",
        from_addr=user,
        to=new_to,
        cc=new_cc,
        bcc=new_bcc,
        subject=default_subject if subject is None else store.clean(subject),
        body="" if body is None else store.clean(body),
        sent_at=ws.clock.now_text(),
        is_read=True,
        in_reply_to=in_reply_to,
        thread_id=thread_id,
        attachments=store.resolve_attachments(ws, attachments or []),
    )
    return store.get_message(ws, user, message_id)


@TOOLS.tool(read_only=False)
async def send_draft(
    ctx: Context,
    draft_id: Annotated[int, Field(ge=1, le=2**53, description="The draft's message id")],
) -> Message:
    """Send a saved draft as it is: it moves to sent with the current time. It needs at
    least one recipient and a subject or body (fix it first with save_draft)."""
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    _draft_row(ws, user, draft_id)
    draft = store.get_message(ws, user, draft_id)
    _check_sendable(draft.to, draft.cc, draft.bcc, draft.subject, draft.body)
    store.resolve_attachments(ws, [a.path for a in draft.attachments])
    ws.conn.execute(
        "UPDATE mail_messages SET folder = 'sent', sent_at = ?, is_read = 1 WHERE id = ?",
        (ws.clock.now_text(), draft_id),
    )
    store.record_delivery(ws, draft_id)
    return store.get_message(ws, user, draft_id)


@TOOLS.tool(read_only=False, idempotent=True)
async def move_message(
    ctx: Context,
    message_id: MessageId,
    folder: Annotated[
        Folder, Field(description="inbox, sent, archive or trash (drafts come from save_draft)")
    ],
) -> Message:
    """Move a message to another folder: archive it, restore it from trash to inbox, ...

    Received mail can go to inbox, archive or trash; mail you sent to sent, archive or
    trash. Drafts can only be deleted (delete_message) or sent (send_draft).
    """
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    row = store.message_row(ws, user, message_id)
    if folder == "drafts" and row["folder"] != "drafts":
        raise ServiceError("messages cannot be moved into drafts; use save_draft to write a new draft")
    if row["folder"] == "drafts" and folder != "drafts":
        raise ServiceError(
            f"message {message_id} is a draft; send it with send_draft or discard it with delete_message"
        )
    if folder == "sent" and row["from_addr"].lower() != user:
        raise ServiceError(
            f"message {message_id} was not sent by you, so it cannot go to sent; choose inbox, archive or trash"
        )
    ws.conn.execute("UPDATE mail_messages SET folder = ? WHERE id = ?", (folder, message_id))
    return store.get_message(ws, user, message_id)


@TOOLS.tool(read_only=False, idempotent=True)
async def mark_message(
    ctx: Context,
    message_id: MessageId,
    status: Annotated[Literal["read", "unread", "flagged", "unflagged"], Field(description="What to mark")],
) -> Message:
    """Mark a message as read or unread, or flag or unflag it (a flag means "needs action")."""
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    store.message_row(ws, user, message_id)
    column, value = {
        "read": ("is_read", 1),
        "unread": ("is_read", 0),
        "flagged": ("is_flagged", 1),
        "unflagged": ("is_flagged", 0),
    }[status]
    ws.conn.execute(f"UPDATE mail_messages SET {column} = ? WHERE id = ?", (value, message_id))
    return store.get_message(ws, user, message_id)


Label = Annotated[str, Field(max_length=100, description="A label such as 'follow-up' (case-insensitive)")]


@TOOLS.tool(read_only=False, idempotent=True)
async def add_label(ctx: Context, message_id: MessageId, label: Label) -> Message:
    """Put a label on a message (labels are free-form, lower-case; a message can have many)."""
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    store.message_row(ws, user, message_id)
    ws.conn.execute(
        "INSERT OR IGNORE INTO mail_labels (message_id, label) VALUES (?, ?)",
        (message_id, store.normalize_label(label)),
    )
    return store.get_message(ws, user, message_id)


@TOOLS.tool(read_only=False)
async def remove_label(ctx: Context, message_id: MessageId, label: Label) -> Message:
    """Take a label off a message (labels are case-insensitive; see list_folders for those in use)."""
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    store.message_row(ws, user, message_id)
    name = store.normalize_label(label)
    cursor = ws.conn.execute("DELETE FROM mail_labels WHERE message_id = ? AND label = ?", (message_id, name))
    if cursor.rowcount == 0:
        labels = store.get_message(ws, user, message_id).labels
        has = f"its labels are: {', '.join(labels)}" if labels else "it has no labels"
        raise ServiceError(f"message {message_id} has no label {name!r}; {has}")
    return store.get_message(ws, user, message_id)


@TOOLS.tool(read_only=False, destructive=True)
async def delete_message(ctx: Context, message_id: MessageId) -> Message:
    """Delete a message (or discard a draft) by moving it to trash; move_message can restore it."""
    ws = workspace_of(ctx)
    user = store.mailbox(ws)
    row = store.message_row(ws, user, message_id)
    if row["folder"] == "trash":
        raise ServiceError(
            f"message {message_id} is already in trash; messages in trash are already deleted "
            "(move_message to inbox restores one)"
        )
    ws.conn.execute("UPDATE mail_messages SET folder = 'trash' WHERE id = ?", (message_id,))
    return store.get_message(ws, user, message_id)
