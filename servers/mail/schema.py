"""Mail tables (messages, recipients, labels, attachments, a full-text index) and the
models the mail tools return.

Every message belongs to one mailbox (`owner`, an email address), so several people's
mailboxes can live side by side; the tools act on the mailbox of the workspace's user.
`mail_search` is an FTS5 index over subject, body, sender, recipients and attachment
names, kept in sync by triggers (a mailbox seeded whole writes it once, at the end:
`store.search_index_written_at_end`). It is a derived table: content hashes and diffs skip it.
"""

from typing import Literal

from pydantic import BaseModel, Field

from coworkenv.state import ServiceSchema, TableRules

Folder = Literal["inbox", "sent", "drafts", "archive", "trash"]
FOLDERS: tuple[Folder, ...] = ("inbox", "sent", "drafts", "archive", "trash")

#: The triggers that write `mail_search` as messages, recipients and attachments are
#: inserted: a message's row is written on its insert, then again for each of its recipients
#: and attachments. Seeding a whole mailbox writes the index once instead
#: (`store.search_index_written_at_end`).
INSERT_SEARCH_TRIGGERS = (
    "mail_messages_search_insert",
    "mail_recipients_search_insert",
    "mail_recipients_search_delete",
    "mail_attachments_search_insert",
    "mail_attachments_search_delete",
)
#: Every message's row of `mail_search`, as those triggers leave it.
SEARCH_ROWS_SQL = """
INSERT INTO mail_search (rowid, subject, body, from_addr, recipients, attachments)
SELECT m.id, m.subject, m.body, m.from_addr,
    coalesce((SELECT group_concat(address, ' ') FROM mail_recipients WHERE message_id = m.id), ''),
    coalesce((SELECT group_concat(name, ' ') FROM mail_attachments WHERE message_id = m.id), '')
FROM mail_messages AS m ORDER BY m.id
"""

SCHEMA = ServiceSchema(
    name="mail",
    sql="""
CREATE TABLE mail_messages (
    id INTEGER PRIMARY KEY,
    owner TEXT NOT NULL,
    thread_id INTEGER NOT NULL,
    folder TEXT NOT NULL CHECK (folder IN ('inbox', 'sent', 'drafts', 'archive', 'trash')),
    from_addr TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL DEFAULT '',
    sent_at TEXT NOT NULL,
    is_read INTEGER NOT NULL DEFAULT 0,
    is_flagged INTEGER NOT NULL DEFAULT 0,
    in_reply_to INTEGER REFERENCES mail_messages(id),
    forwarded_from INTEGER REFERENCES mail_messages(id)
);
CREATE INDEX mail_messages_owner_folder ON mail_messages(owner, folder, sent_at);
CREATE INDEX mail_messages_thread ON mail_messages(thread_id);

CREATE TABLE mail_recipients (
    message_id INTEGER NOT NULL REFERENCES mail_messages(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('to', 'cc', 'bcc')),
    position INTEGER NOT NULL,
    address TEXT NOT NULL,
    PRIMARY KEY (message_id, kind, position)
);
CREATE INDEX mail_recipients_address ON mail_recipients(address);

CREATE TABLE mail_labels (
    message_id INTEGER NOT NULL REFERENCES mail_messages(id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    PRIMARY KEY (message_id, label)
);
CREATE INDEX mail_labels_label ON mail_labels(label);

CREATE TABLE mail_attachments (
    message_id INTEGER NOT NULL REFERENCES mail_messages(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (message_id, path)
);

-- What left the mailbox, as it left: one row per message sent, with the recipients and the
-- attachments' content at that moment (JSON: path, name, content). No tool reads or deletes it: it is the outgoing
-- mail server's log, so a verifier sees a sent mail even after it was deleted or its
-- attached file changed.
CREATE TABLE mail_deliveries (
    id INTEGER PRIMARY KEY,
    message_id INTEGER NOT NULL,
    sent_at TEXT NOT NULL,
    from_addr TEXT NOT NULL,
    recipients TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    attachments TEXT NOT NULL
);

CREATE VIRTUAL TABLE mail_search USING fts5(
    subject, body, from_addr, recipients, attachments,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER mail_messages_search_insert AFTER INSERT ON mail_messages BEGIN
    INSERT INTO mail_search (rowid, subject, body, from_addr, recipients, attachments)
    VALUES (new.id, new.subject, new.body, new.from_addr, '', '');
END;
CREATE TRIGGER mail_messages_search_update AFTER UPDATE OF subject, body, from_addr ON mail_messages BEGIN
    UPDATE mail_search SET subject = new.subject, body = new.body, from_addr = new.from_addr
    WHERE rowid = new.id;
END;
CREATE TRIGGER mail_messages_search_delete AFTER DELETE ON mail_messages BEGIN
    DELETE FROM mail_search WHERE rowid = old.id;
END;
CREATE TRIGGER mail_recipients_search_insert AFTER INSERT ON mail_recipients BEGIN
    UPDATE mail_search SET recipients = (
        SELECT group_concat(address, ' ') FROM mail_recipients WHERE message_id = new.message_id
    ) WHERE rowid = new.message_id;
END;
CREATE TRIGGER mail_recipients_search_delete AFTER DELETE ON mail_recipients BEGIN
    UPDATE mail_search SET recipients = coalesce((
        SELECT group_concat(address, ' ') FROM mail_recipients WHERE message_id = old.message_id
    ), '') WHERE rowid = old.message_id;
END;
CREATE TRIGGER mail_attachments_search_insert AFTER INSERT ON mail_attachments BEGIN
    UPDATE mail_search SET attachments = (
        SELECT group_concat(name, ' ') FROM mail_attachments WHERE message_id = new.message_id
    ) WHERE rowid = new.message_id;
END;
CREATE TRIGGER mail_attachments_search_delete AFTER DELETE ON mail_attachments BEGIN
    UPDATE mail_search SET attachments = coalesce((
        SELECT group_concat(name, ' ') FROM mail_attachments WHERE message_id = old.message_id
    ), '') WHERE rowid = old.message_id;
END;
""",
    changes={
        "mail_messages": TableRules(
            match=("owner", "folder"),
            harmless_columns=("is_read", "is_flagged"),
            harmless_added={"folder": "drafts"},
            destructive={"folder": ("trash",)},
            fan_out=("mail_recipients", "message_id", "address"),
            # A reply, a new mail and a forward deliver the same message (see MailSent).
            free=("thread_id", "sent_at", "in_reply_to", "forwarded_from"),
            free_text=("subject", "body"),
        ),
        "mail_recipients": TableRules(
            match=("message_id", "kind", "address"),
            parent=("message_id", "mail_messages"),
            follows_parent=True,
        ),
        "mail_attachments": TableRules(
            match=("message_id", "path"),
            parent=("message_id", "mail_messages"),
            follows_parent=True,
            free_text=("name",),
        ),
        "mail_labels": TableRules(match=("message_id", "label"), parent=("message_id", "mail_messages")),
        "mail_deliveries": TableRules(parent=("message_id", "mail_messages"), follows_parent=True),
    },
)


class Attachment(BaseModel):
    """A file attached to a message: a path in the files service and its file name."""

    path: str
    name: str


class Message(BaseModel):
    """One message in full."""

    id: int
    thread_id: int = Field(description="Messages of one conversation share a thread_id; see get_thread")
    folder: Folder
    from_addr: str
    to: list[str]
    cc: list[str]
    bcc: list[str]
    subject: str
    body: str
    sent_at: str = Field(description="ISO 8601 UTC; for a draft, when it was last saved")
    is_read: bool
    is_flagged: bool
    in_reply_to: int | None = Field(description="Id of the message this one answers")
    forwarded_from: int | None = Field(description="Id of the message this one forwards")
    labels: list[str]
    attachments: list[Attachment]


class MessageSummary(BaseModel):
    """A message as search results list it: use get_message for the whole body."""

    id: int
    thread_id: int
    folder: Folder
    from_addr: str
    to: list[str]
    subject: str
    snippet: str = Field(description="The start of the body")
    sent_at: str
    is_read: bool
    is_flagged: bool
    labels: list[str]
    has_attachments: bool


class MessageList(BaseModel):
    """One page of messages, newest first. `total` counts every match, not just this page."""

    total: int
    messages: list[MessageSummary]


class Thread(BaseModel):
    """A conversation: every message of the thread in your mailbox, oldest first."""

    thread_id: int
    subject: str
    messages: list[Message]


class FolderCount(BaseModel):
    name: Folder
    total: int
    unread: int


class LabelCount(BaseModel):
    label: str
    total: int
    unread: int


class FolderList(BaseModel):
    """Every folder and every label in use, with message and unread counts."""

    folders: list[FolderCount]
    labels: list[LabelCount]
