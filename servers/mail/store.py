"""Reading and writing mailboxes: what the mail tools and world operations share.

Bad input raises `ServiceError` with a message for whoever reads it next: the model, or
the caller of a world operation or seed.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from coworkenv.state import Workspace, format_time, parse_time

from ..toolkit import ServiceError, current_user
from .schema import INSERT_SEARCH_TRIGGERS, SEARCH_ROWS_SQL, Attachment, Message, MessageSummary

ADDRESS = re.compile(r"[a-z0-9._%+'-]+@[a-z0-9-]+(\.[a-z0-9-]+)+")
SNIPPET_CHARS = 140
MAX_LABEL_CHARS = 50


def mailbox(ws: Workspace) -> str:
    """The owner of the mailbox the tools act on: the workspace's user, lower-case."""
    return current_user(ws).strip().lower()


def clean(text: str) -> str:
    """`text` without unpaired surrogates (SQLite cannot store them) or NUL characters."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", " ")


def normalize_address(value: str, field: str) -> str:
    """A bare, lower-case email address, or a `ServiceError` naming the field."""
    address = clean(value).strip().lower()
    if not ADDRESS.fullmatch(address):
        raise ServiceError(
            f"{field} has an invalid email address {value!r}; give bare addresses like ann.lee@example.com"
        )
    return address


def normalize_addresses(values: Iterable[str], field: str, *, skip: Iterable[str] = ()) -> list[str]:
    """Valid, lower-case addresses without duplicates (and without any in `skip`), in order."""
    seen = set(skip)
    result = []
    for value in values:
        address = normalize_address(value, field)
        if address not in seen:
            seen.add(address)
            result.append(address)
    return result


def normalize_label(value: str) -> str:
    """Labels are case-insensitive: stored trimmed and lower-case."""
    label = " ".join(clean(value).split()).lower()
    if not label:
        raise ServiceError("label must not be empty; give a word such as 'follow-up'")
    if len(label) > MAX_LABEL_CHARS:
        raise ServiceError(f"label is too long ({len(label)} characters); keep it under {MAX_LABEL_CHARS}")
    return label


def time_arg(value: str, field: str) -> str:
    """Parse an ISO 8601 date or time given by the model into the canonical UTC text."""
    try:
        return format_time(parse_time(clean(value).strip()))
    except (ValueError, OverflowError):
        raise ServiceError(
            f"{field} must be an ISO 8601 date or time, like 2026-03-01 or 2026-03-01T14:30:00Z; got {value!r}"
        ) from None


def fts_query(text: str) -> str | None:
    """Any text as a valid FTS5 query: every word a quoted prefix phrase, all words required."""
    words = clean(text).split()
    if not words:
        return None
    return " ".join('"' + word.replace('"', '""') + '"*' for word in words)


def like_pattern(text: str) -> str:
    """A LIKE pattern (with ESCAPE '\\') matching `text` anywhere."""
    escaped = clean(text).strip().lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def reply_subject(subject: str) -> str:
    return subject if re.match(r"(?i)\s*re:", subject) else f"Re: {subject}"


def forward_subject(subject: str) -> str:
    return subject if re.match(r"(?i)\s*(fwd?|fw):", subject) else f"Fwd: {subject}"


# -- reading ---------------------------------------------------------------------------------


def message_row(ws: Workspace, owner: str, message_id: int) -> dict[str, Any]:
    """The row of a message in `owner`'s mailbox, or a `ServiceError`."""
    rows = ws.rows("mail_messages", "id = ? AND owner = ?", [message_id, owner])
    if not rows:
        raise ServiceError(
            f"no message with id {message_id} in your mailbox; search_messages returns valid ids"
        )
    return rows[0]


def _details(ws: Workspace, ids: list[int]) -> dict[int, dict[str, list[Any]]]:
    details: dict[int, dict[str, list[Any]]] = {
        i: {"to": [], "cc": [], "bcc": [], "labels": [], "attachments": []} for i in ids
    }
    selected = "IN (SELECT value FROM json_each(?))"
    param = (json.dumps(ids),)
    for message_id, kind, address in ws.conn.execute(
        f"SELECT message_id, kind, address FROM mail_recipients WHERE message_id {selected} "
        "ORDER BY message_id, kind, position",
        param,
    ):
        details[message_id][kind].append(address)
    for message_id, label in ws.conn.execute(
        f"SELECT message_id, label FROM mail_labels WHERE message_id {selected} ORDER BY message_id, label",
        param,
    ):
        details[message_id]["labels"].append(label)
    for message_id, path, name in ws.conn.execute(
        f"SELECT message_id, path, name FROM mail_attachments WHERE message_id {selected} "
        "ORDER BY message_id, path",
        param,
    ):
        details[message_id]["attachments"].append(Attachment(path=path, name=name))
    return details


def messages_from_rows(ws: Workspace, rows: list[dict[str, Any]]) -> list[Message]:
    """Full messages for rows of `mail_messages`, in the same order."""
    details = _details(ws, [r["id"] for r in rows])
    return [
        Message.model_validate({**{k: v for k, v in row.items() if k != "owner"}, **details[row["id"]]})
        for row in rows
    ]


def summaries_from_rows(ws: Workspace, rows: list[dict[str, Any]]) -> list[MessageSummary]:
    """Search-result summaries for rows of `mail_messages`, in the same order."""
    details = _details(ws, [r["id"] for r in rows])
    result = []
    for row in rows:
        body = " ".join(row["body"].split())
        snippet = body if len(body) <= SNIPPET_CHARS else body[: SNIPPET_CHARS - 3].rstrip() + "..."
        d = details[row["id"]]
        result.append(
            MessageSummary(
                id=row["id"],
                thread_id=row["thread_id"],
                folder=row["folder"],
                from_addr=row["from_addr"],
                to=d["to"],
                subject=row["subject"],
                snippet=snippet,
                sent_at=row["sent_at"],
                is_read=row["is_read"],
                is_flagged=row["is_flagged"],
                labels=d["labels"],
                has_attachments=bool(d["attachments"]),
            )
        )
    return result


def get_message(ws: Workspace, owner: str, message_id: int) -> Message:
    return messages_from_rows(ws, [message_row(ws, owner, message_id)])[0]


# -- attachments -----------------------------------------------------------------------------


def files_enabled(ws: Workspace) -> bool:
    """Whether the files service's table exists in this workspace."""
    row = ws.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'files_nodes'"
    ).fetchone()
    return row is not None


def normalize_path(value: str) -> str:
    path = clean(value).strip()
    if not path.startswith("/"):
        raise ServiceError(f"attachment path {value!r} must be absolute, like /shared/report.md")
    return posixpath.normpath(re.sub("/+", "/", path))


def resolve_attachments(ws: Workspace, paths: Iterable[str]) -> list[Attachment]:
    """Check that each path is an existing file of the files service; dedupe, keep order."""
    paths = list(paths)
    if not paths:
        return []
    if not files_enabled(ws):
        raise ServiceError(
            "attachments need the files service, which is not enabled in this workspace; "
            "send the message without attachments"
        )
    result: list[Attachment] = []
    for value in paths:
        path = normalize_path(value)
        row = ws.conn.execute("SELECT kind FROM files_nodes WHERE path = ?", (path,)).fetchone()
        if row is None:
            raise ServiceError(
                f"no file at {path!r}; attachments must be paths of existing files (see the files tools)"
            )
        if row[0] != "file":
            raise ServiceError(f"{path!r} is a folder, not a file; attach the files inside it one by one")
        if all(a.path != path for a in result):
            result.append(Attachment(path=path, name=posixpath.basename(path)))
    return result


# -- writing ---------------------------------------------------------------------------------


def insert_message(
    ws: Workspace,
    *,
    owner: str,
    folder: str,
    from_addr: str,
    to: list[str],
    cc: list[str],
    bcc: list[str],
    subject: str,
    body: str,
    sent_at: str,
    is_read: bool,
    is_flagged: bool = False,
    in_reply_to: int | None = None,
    forwarded_from: int | None = None,
    thread_id: int | None = None,
    labels: Iterable[str] = (),
    attachments: Iterable[Attachment] = (),
) -> int:
    """Insert a message (a new thread unless `thread_id` is given) and return its id."""
    message_id = int(ws.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM mail_messages").fetchone()[0])
    ws.conn.execute(
        "INSERT INTO mail_messages (id, owner, thread_id, folder, from_addr, subject, body, sent_at, is_read, "
        "is_flagged, in_reply_to, forwarded_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            message_id,
            owner,
            message_id if thread_id is None else thread_id,
            folder,
            from_addr,
            subject,
            body,
            sent_at,
            int(is_read),
            int(is_flagged),
            in_reply_to,
            forwarded_from,
        ),
    )
    set_recipients(ws, message_id, to, cc, bcc)
    ws.conn.executemany(
        "INSERT OR IGNORE INTO mail_labels (message_id, label) VALUES (?, ?)",
        [(message_id, x) for x in labels],
    )
    set_attachments(ws, message_id, attachments)
    return message_id


@contextmanager
def search_index_written_at_end(ws: Workspace) -> Iterator[None]:
    """Write the search index once, when the block ends, for the messages inserted in it.

    The index's triggers write a message's row when the message is inserted, and again for
    each recipient and attachment (an FTS5 update reads the whole row twice): seeding a
    mailbox that way costs about half of it. Inside the block those triggers are gone;
    afterwards every message's row is written as they would have left it, and they are back
    as they were. Updates and deletes keep their triggers throughout. It is one transaction:
    an exception inside undoes the block's writes, and the triggers stay."""
    with ws.transaction():
        placeholders = ", ".join("?" * len(INSERT_SEARCH_TRIGGERS))
        triggers = ws.conn.execute(
            f"SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name IN ({placeholders}) ORDER BY name",
            INSERT_SEARCH_TRIGGERS,
        ).fetchall()
        for name in INSERT_SEARCH_TRIGGERS:
            ws.conn.execute(f"DROP TRIGGER {name}")
        yield
        ws.conn.execute("DELETE FROM mail_search")
        ws.conn.execute(SEARCH_ROWS_SQL)
        for (sql,) in triggers:
            ws.conn.execute(sql)


def set_recipients(ws: Workspace, message_id: int, to: list[str], cc: list[str], bcc: list[str]) -> None:
    """Replace a message's recipients."""
    ws.conn.execute("DELETE FROM mail_recipients WHERE message_id = ?", (message_id,))
    ws.conn.executemany(
        "INSERT INTO mail_recipients (message_id, kind, position, address) VALUES (?, ?, ?, ?)",
        [
            (message_id, kind, i, a)
            for kind, addresses in (("to", to), ("cc", cc), ("bcc", bcc))
            for i, a in enumerate(addresses)
        ],
    )


def set_attachments(ws: Workspace, message_id: int, attachments: Iterable[Attachment]) -> None:
    """Replace a message's attachments."""
    ws.conn.execute("DELETE FROM mail_attachments WHERE message_id = ?", (message_id,))
    ws.conn.executemany(
        "INSERT OR IGNORE INTO mail_attachments (message_id, path, name) VALUES (?, ?, ?)",
        [(message_id, a.path, a.name) for a in attachments],
    )


def record_delivery(ws: Workspace, message_id: int) -> None:
    """Log a message as it leaves the mailbox (`mail_deliveries`): recipients as space-separated
    addresses, attachments as a JSON list of each file's path, name and content at this moment."""
    row = ws.conn.execute(
        "SELECT from_addr, subject, body FROM mail_messages WHERE id = ?", (message_id,)
    ).fetchone()
    recipients = [
        r[0]
        for r in ws.conn.execute(
            "SELECT address FROM mail_recipients WHERE message_id = ? ORDER BY kind, position", (message_id,)
        )
    ]
    files: list[dict[str, str]] = []
    if files_enabled(ws):
        files = [
            _delivered_file(path, name, content)
            for path, name, content in ws.conn.execute(
                "SELECT a.path, a.name, coalesce(f.content, '') FROM mail_attachments a "
                "LEFT JOIN files_nodes f ON f.path = a.path WHERE a.message_id = ? ORDER BY a.path",
                (message_id,),
            )
        ]
    ws.conn.execute(
        "INSERT INTO mail_deliveries (message_id, sent_at, from_addr, recipients, subject, body, attachments) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (message_id, ws.clock.now_text(), row[0], " ".join(recipients), row[1], row[2], json.dumps(files)),
    )


def _delivered_file(path: str, name: str, content: str | bytes) -> dict[str, str]:
    """An attached file as the delivery log keeps it: a text file's text; for a document (a
    PDF or image, whose content is bytes) no text, and the SHA-256 of its bytes instead."""
    if isinstance(content, bytes):
        return {"path": path, "name": name, "content": "", "sha256": hashlib.sha256(content).hexdigest()}
    return {"path": path, "name": name, "content": content}
