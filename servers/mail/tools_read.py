"""Mail tools that read: search the mailbox, open messages and threads, count folders."""

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ServiceError, ToolList, workspace_of
from . import store
from .schema import FOLDERS, Folder, FolderCount, FolderList, LabelCount, Message, MessageList, Thread

TOOLS = ToolList()

MessageId = Annotated[int, Field(ge=1, le=2**53, description="A message id, as search_messages returns it")]


@TOOLS.tool(read_only=True)
async def search_messages(
    ctx: Context,
    query: Annotated[
        str,
        Field(max_length=500, description="Words to find in subject, body, addresses or attachment names"),
    ] = "",
    folder: Annotated[
        Folder | None, Field(description="Only this folder; default: every folder but trash")
    ] = None,
    sender: Annotated[
        str | None,
        Field(max_length=200, description="Only mail from this address or part of it (e.g. a domain)"),
    ] = None,
    recipient: Annotated[
        str | None, Field(max_length=200, description="Only mail to, cc or bcc this address or part of it")
    ] = None,
    unread: Annotated[bool | None, Field(description="True: unread only; False: read only")] = None,
    flagged: Annotated[bool | None, Field(description="True: flagged only; False: unflagged only")] = None,
    label: Annotated[str | None, Field(max_length=100, description="Only messages with this label")] = None,
    has_attachments: Annotated[bool | None, Field(description="True: only mail with attachments")] = None,
    after: Annotated[
        str | None, Field(max_length=40, description="Sent at or after this ISO 8601 date or time")
    ] = None,
    before: Annotated[
        str | None, Field(max_length=40, description="Sent before this ISO 8601 date or time")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0,
) -> MessageList:
    """Search your mailbox; returns message summaries, newest first.

    Every word of `query` must appear (a word also matches longer words that start with
    it: "invoice" finds "invoices"). Combine it with filters, or leave it empty to list a
    folder (e.g. folder="inbox", unread=true). Without `folder`, every folder except trash
    is searched. `total` is the number of matches; page with `offset` when it exceeds
    `limit`. Use get_message for the full body and get_thread for the whole conversation.
    """
    ws = workspace_of(ctx)
    where = ["owner = ?"]
    params: list[Any] = [store.mailbox(ws)]
    match = store.fts_query(query)
    if match is not None:
        where.append("id IN (SELECT rowid FROM mail_search WHERE mail_search MATCH ?)")
        params.append(match)
    if folder is None:
        where.append("folder != 'trash'")
    else:
        where.append("folder = ?")
        params.append(folder)
    if sender is not None and sender.strip():
        where.append("lower(from_addr) LIKE ? ESCAPE '\\'")
        params.append(store.like_pattern(sender))
    if recipient is not None and recipient.strip():
        where.append(
            "EXISTS (SELECT 1 FROM mail_recipients r WHERE r.message_id = mail_messages.id "
            "AND lower(r.address) LIKE ? ESCAPE '\\')"
        )
        params.append(store.like_pattern(recipient))
    if unread is not None:
        where.append("is_read = ?")
        params.append(int(not unread))
    if flagged is not None:
        where.append("is_flagged = ?")
        params.append(int(flagged))
    if label is not None:
        where.append(
            "EXISTS (SELECT 1 FROM mail_labels l WHERE l.message_id = mail_messages.id AND l.label = ?)"
        )
        params.append(store.normalize_label(label))
    if has_attachments is not None:
        exists = "EXISTS (SELECT 1 FROM mail_attachments a WHERE a.message_id = mail_messages.id)"
        where.append(exists if has_attachments else f"NOT {exists}")
    start = store.time_arg(after, "after") if after is not None else None
    end = store.time_arg(before, "before") if before is not None else None
    if start is not None and end is not None and start >= end:
        raise ServiceError(f"after ({start}) must be earlier than before ({end}); swap or widen the range")
    if start is not None:
        where.append("sent_at >= ?")
        params.append(start)
    if end is not None:
        where.append("sent_at < ?")
        params.append(end)
    clause = " AND ".join(where)
    total = ws.conn.execute(f"SELECT count(*) FROM mail_messages WHERE {clause}", params).fetchone()[0]
    rows = ws.rows(
        "mail_messages", f"{clause} ORDER BY sent_at DESC, id DESC LIMIT ? OFFSET ?", [*params, limit, offset]
    )
    return MessageList(total=total, messages=store.summaries_from_rows(ws, rows))


@TOOLS.tool(read_only=True)
async def get_message(ctx: Context, message_id: MessageId) -> Message:
    """Get one message in full: recipients, body, labels, attachments, and its thread_id.

    Reading does not mark the message as read; use mark_message for that.
    """
    ws = workspace_of(ctx)
    return store.get_message(ws, store.mailbox(ws), message_id)


@TOOLS.tool(read_only=True)
async def get_thread(
    ctx: Context,
    thread_id: Annotated[
        int, Field(ge=1, le=2**53, description="A thread id, as search_messages or get_message show it")
    ],
) -> Thread:
    """Get a whole conversation: every message of the thread in your mailbox, oldest first,
    in full (including your replies in sent, drafts and anything in trash)."""
    ws = workspace_of(ctx)
    rows = ws.rows(
        "mail_messages", "thread_id = ? AND owner = ? ORDER BY sent_at, id", [thread_id, store.mailbox(ws)]
    )
    if not rows:
        raise ServiceError(
            f"no thread with id {thread_id} in your mailbox; search_messages shows each message's thread_id"
        )
    return Thread(
        thread_id=thread_id, subject=rows[0]["subject"], messages=store.messages_from_rows(ws, rows)
    )


@TOOLS.tool(read_only=True)
async def list_folders(ctx: Context) -> FolderList:
    """List the folders (inbox, sent, drafts, archive, trash) with their total and unread
    counts, and every label in use with its counts. Labels are lower-case."""
    ws = workspace_of(ctx)
    owner = store.mailbox(ws)
    counts = {
        folder: (total, unread)
        for folder, total, unread in ws.conn.execute(
            "SELECT folder, count(*), sum(is_read = 0) FROM mail_messages WHERE owner = ? GROUP BY folder",
            (owner,),
        )
    }
    labels = ws.conn.execute(
        "SELECT l.label, count(*), sum(m.is_read = 0) FROM mail_labels l JOIN mail_messages m ON m.id = l.message_id "
        "WHERE m.owner = ? GROUP BY l.label ORDER BY l.label",
        (owner,),
    ).fetchall()
    return FolderList(
        folders=[
            FolderCount(name=f, total=counts.get(f, (0, 0))[0], unread=counts.get(f, (0, 0))[1])
            for f in FOLDERS
        ],
        labels=[LabelCount(label=label, total=total, unread=unread) for label, total, unread in labels],
    )
