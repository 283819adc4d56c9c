"""The mail service's read tools, world operations, search index and demo, through a real
in-memory MCP client. The write tools are in test_mail_write.py."""

import random
import re
from typing import Any

import anyio
import pytest
from mcp import Client
from pydantic import ValidationError

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.servers.mail.demo import populate
from coworkenv.servers.mail.schema import SCHEMA
from coworkenv.servers.mail.store import search_index_written_at_end
from coworkenv.servers.render import northwind_workspace
from coworkenv.servers.toolkit import USER_EMAIL_KEY
from coworkenv.state import ServiceSchema, Workspace
from coworkenv.worlds import northwind
from tests.conftest import START

USER = "me@northwind.example"
ANN = "ann.lee@globex.example"
BO = "bo.chan@northwind.example"
CY = "cy.diaz@initech.example"
DEE = "dee.ray@northwind.example"
NOW = "2026-03-02T09:00:00+00:00"

# Only what mail reads of the files service: a path and whether it is a file.
FILES_SCHEMA = ServiceSchema(
    name="files",
    sql="""
CREATE TABLE files_nodes (path TEXT PRIMARY KEY, kind TEXT NOT NULL, content TEXT, size INTEGER NOT NULL);
INSERT INTO files_nodes VALUES ('/shared', 'dir', NULL, 0), ('/shared/inv-7.md', 'file', 'INV-7', 5),
    ('/shared/contract.md', 'file', 'Terms', 5);
""",
)


def add(ws: Workspace, operation: str, **params: Any) -> dict[str, Any]:
    return apply_world_operation(ws, "mail", operation, params)


def seeded_workspace(*, files: bool = True) -> Workspace:
    """Six messages in the user's mailbox (one per folder, a two-message thread) and one in Bo's."""
    ws = empty_mailbox(files=files)
    seed_messages(ws, files=files)
    return ws


def empty_mailbox(*, files: bool = True) -> Workspace:
    ws = Workspace.create([SCHEMA, FILES_SCHEMA] if files else [SCHEMA], clock_start=START)
    ws.set_meta(USER_EMAIL_KEY, USER)
    return ws


def seed_messages(ws: Workspace, *, files: bool = True) -> None:
    """The messages of `seeded_workspace`, through the world operations."""
    add(
        ws,
        "add_message",
        from_addr="Ann.Lee@Globex.example",
        to=[USER],
        cc=[BO],
        subject="Invoice INV-7 overdue",
        body="Hello,\ninvoice INV-7 is overdue.  Please pay by Friday.",
        sent_at="2026-02-20T10:00:00Z",
        labels=["Invoices"],
        attachments=["/shared/inv-7.md"] if files else [],
    )
    add(
        ws,
        "add_message",
        folder="sent",
        to=[ANN],
        subject="Re: Invoice INV-7 overdue",
        body="We paid it today.",
        sent_at="2026-02-21T08:00:00Z",
        in_reply_to=1,
    )
    add(
        ws,
        "deliver_inbound",
        from_addr=CY,
        subject="Meeting next week",
        body="Can we meet on Tuesday about the renewal?",
        sent_at="2026-02-25T12:00:00Z",
        is_flagged=True,
    )
    add(ws, "update_message", id=3, is_read=True)
    add(
        ws,
        "add_message",
        from_addr="news@digest.example",
        folder="trash",
        to=[USER],
        subject="Weekly digest",
        body="Top stories of the week",
        sent_at="2026-02-26T07:00:00Z",
    )
    add(
        ws,
        "add_message",
        folder="drafts",
        to=[CY],
        subject="Agenda",
        body="Draft agenda",
        sent_at="2026-03-01T18:00:00Z",
    )
    add(
        ws,
        "add_message",
        from_addr=BO,
        folder="archive",
        to=[USER, DEE],
        subject="Refund policy",
        body="Archived note about refunds",
        sent_at="2026-01-10T09:00:00Z",
        is_read=True,
    )
    add(
        ws, "add_message", owner=BO, from_addr=ANN, to=[BO], subject="Private to Bo", body="Only Bo sees this"
    )


@pytest.fixture
def ws() -> Workspace:
    return seeded_workspace()


async def call(ws: Workspace, tool: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(5):
        async with Client(build_server(ws, "mail")) as client:
            result = await client.call_tool(tool, args)
    if result.is_error:
        return ("error", result.content[0].text)
    return result.structured_content


def error(tool: str, message: str) -> tuple[str, str]:
    return ("error", f"Error executing tool {tool}: {message}")


async def ids(ws: Workspace, **args: Any) -> list[int]:
    return [m["id"] for m in (await call(ws, "search_messages", args))["messages"]]


MESSAGE_1 = {
    "id": 1,
    "thread_id": 1,
    "folder": "inbox",
    "from_addr": ANN,
    "to": [USER],
    "cc": [BO],
    "bcc": [],
    "subject": "Invoice INV-7 overdue",
    "body": "Hello,\ninvoice INV-7 is overdue.  Please pay by Friday.",
    "sent_at": "2026-02-20T10:00:00+00:00",
    "is_read": False,
    "is_flagged": False,
    "in_reply_to": None,
    "forwarded_from": None,
    "labels": ["invoices"],
    "attachments": [{"path": "/shared/inv-7.md", "name": "inv-7.md"}],
}

# -- search_messages -------------------------------------------------------------------------


async def test_search_without_arguments_lists_every_folder_but_trash_newest_first(ws: Workspace) -> None:
    result = await call(ws, "search_messages", {})
    assert result["total"] == 5
    assert [m["id"] for m in result["messages"]] == [5, 3, 2, 1, 6]
    assert result["messages"][3] == {
        "id": 1,
        "thread_id": 1,
        "folder": "inbox",
        "from_addr": ANN,
        "to": [USER],
        "subject": "Invoice INV-7 overdue",
        "snippet": "Hello, invoice INV-7 is overdue. Please pay by Friday.",
        "sent_at": "2026-02-20T10:00:00+00:00",
        "is_read": False,
        "is_flagged": False,
        "labels": ["invoices"],
        "has_attachments": True,
    }


async def test_search_query_matches_words_prefixes_recipients_and_attachment_names(ws: Workspace) -> None:
    assert await ids(ws, query="invoice") == [2, 1]
    assert await ids(ws, query="INVO overdue") == [2, 1]
    assert await ids(ws, query="invoice friday") == [1]
    assert await ids(ws, query=DEE) == [6]
    assert await ids(ws, query="inv-7.md") == [1]
    assert await ids(ws, query="refund") == [6]
    assert await ids(ws, query="digest") == []
    assert await ids(ws, query="digest", folder="trash") == [4]


@pytest.mark.parametrize(
    "query", ['"', "*", "NEAR(a b)", "invoice AND", "(", "subject:x", "'", "a\x00b", "-", '"invoice', "x OR"]
)
async def test_search_accepts_any_text_as_a_query(ws: Workspace, query: str) -> None:
    result = await call(ws, "search_messages", {"query": query})
    assert isinstance(result, dict), result


async def test_search_quotes_operators_and_punctuation_as_plain_words(ws: Workspace) -> None:
    assert await ids(ws, query='"invoice') == [2, 1]
    assert await ids(ws, query="invoice)") == [2, 1]
    assert await ids(ws, query="invoice OR refund") == []
    assert await ids(ws, query="!!!") == []


async def test_search_filters(ws: Workspace) -> None:
    assert await ids(ws, folder="inbox") == [3, 1]
    assert await ids(ws, sender="GLOBEX") == [1]
    assert await ids(ws, recipient="ann.lee@") == [2]
    assert await ids(ws, recipient="dee.ray") == [6]
    assert await ids(ws, unread=True) == [1]
    assert await ids(ws, unread=False) == [5, 3, 2, 6]
    assert await ids(ws, flagged=True) == [3]
    assert await ids(ws, label=" INVOICES ") == [1]
    assert await ids(ws, label="nope") == []
    assert await ids(ws, has_attachments=True) == [1]
    assert await ids(ws, has_attachments=False) == [5, 3, 2, 6]
    assert await ids(ws, after="2026-02-21", before="2026-02-26T00:00:00+01:00") == [3, 2]
    assert await ids(ws, after="2026-02-21T08:00:00Z") == [5, 3, 2]
    assert await ids(ws, sender="100%_") == []


async def test_search_pages_with_total_of_all_matches(ws: Workspace) -> None:
    page = await call(ws, "search_messages", {"limit": 2, "offset": 1})
    assert page["total"] == 5
    assert [m["id"] for m in page["messages"]] == [3, 2]


async def test_search_never_shows_another_mailbox(ws: Workspace) -> None:
    assert await ids(ws, query="private") == []
    assert await ids(ws, sender=ANN) == [1]


async def test_search_snippet_is_cut_at_140_characters(ws: Workspace) -> None:
    add(ws, "deliver_inbound", from_addr=CY, subject="Long", body="word " * 50)
    result = await call(ws, "search_messages", {"query": "long"})
    assert result["messages"][0]["snippet"] == "word " * 27 + "wo..."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"after": "yesterday"},
            "after must be an ISO 8601 date or time, like 2026-03-01 or 2026-03-01T14:30:00Z; got 'yesterday'",
        ),
        (
            {"before": "2026-02-30"},
            "before must be an ISO 8601 date or time, like 2026-03-01 or 2026-03-01T14:30:00Z; got '2026-02-30'",
        ),
        (
            {"after": "0001-01-01T00:00:00+05:00"},
            "after must be an ISO 8601 date or time, like 2026-03-01 or 2026-03-01T14:30:00Z; "
            "got '0001-01-01T00:00:00+05:00'",
        ),
        (
            {"after": "2026-03-01", "before": "2026-02-01"},
            "after (2026-03-01T00:00:00+00:00) must be earlier than before (2026-02-01T00:00:00+00:00); "
            "swap or widen the range",
        ),
        ({"label": "  "}, "label must not be empty; give a word such as 'follow-up'"),
    ],
)
async def test_search_explains_bad_filters(ws: Workspace, args: dict[str, Any], message: str) -> None:
    assert await call(ws, "search_messages", args) == error("search_messages", message)


async def test_search_rejects_unknown_folders_and_limits_out_of_range(ws: Workspace) -> None:
    kind, text = await call(ws, "search_messages", {"folder": "spam"})
    assert kind == "error" and "folder" in text and "'inbox'" in text
    kind, text = await call(ws, "search_messages", {"limit": 101})
    assert kind == "error" and "less than or equal to 100" in text


# -- get_message, get_thread, list_folders ---------------------------------------------------


async def test_get_message_returns_everything_and_does_not_mark_it_read(ws: Workspace) -> None:
    before = ws.content_hash()
    assert await call(ws, "get_message", {"message_id": 1}) == MESSAGE_1
    assert ws.content_hash() == before


@pytest.mark.parametrize("message_id", [99, 7])
async def test_get_message_explains_a_miss_including_other_mailboxes(ws: Workspace, message_id: int) -> None:
    assert await call(ws, "get_message", {"message_id": message_id}) == error(
        "get_message", f"no message with id {message_id} in your mailbox; search_messages returns valid ids"
    )


async def test_get_message_rejects_ids_out_of_range(ws: Workspace) -> None:
    kind, text = await call(ws, "get_message", {"message_id": 2**63})
    assert kind == "error" and "less than or equal to" in text


async def test_get_thread_lists_the_conversation_oldest_first(ws: Workspace) -> None:
    thread = await call(ws, "get_thread", {"thread_id": 1})
    assert thread["thread_id"] == 1
    assert thread["subject"] == "Invoice INV-7 overdue"
    assert thread["messages"][0] == MESSAGE_1
    assert thread["messages"][1] == {
        "id": 2,
        "thread_id": 1,
        "folder": "sent",
        "from_addr": USER,
        "to": [ANN],
        "cc": [],
        "bcc": [],
        "subject": "Re: Invoice INV-7 overdue",
        "body": "We paid it today.",
        "sent_at": "2026-02-21T08:00:00+00:00",
        "is_read": True,
        "is_flagged": False,
        "in_reply_to": 1,
        "forwarded_from": None,
        "labels": [],
        "attachments": [],
    }


@pytest.mark.parametrize("thread_id", [99, 7])
async def test_get_thread_explains_a_miss(ws: Workspace, thread_id: int) -> None:
    assert await call(ws, "get_thread", {"thread_id": thread_id}) == error(
        "get_thread",
        f"no thread with id {thread_id} in your mailbox; search_messages shows each message's thread_id",
    )


async def test_list_folders_counts_messages_unread_and_labels(ws: Workspace) -> None:
    assert await call(ws, "list_folders", {}) == {
        "folders": [
            {"name": "inbox", "total": 2, "unread": 1},
            {"name": "sent", "total": 1, "unread": 0},
            {"name": "drafts", "total": 1, "unread": 0},
            {"name": "archive", "total": 1, "unread": 0},
            {"name": "trash", "total": 1, "unread": 1},
        ],
        "labels": [{"label": "invoices", "total": 1, "unread": 1}],
    }


async def test_list_folders_of_an_empty_mailbox() -> None:
    empty = create_workspace(["mail"], clock_start=START)
    result = await call(empty, "list_folders", {})
    assert [(f["name"], f["total"], f["unread"]) for f in result["folders"]] == [
        ("inbox", 0, 0),
        ("sent", 0, 0),
        ("drafts", 0, 0),
        ("archive", 0, 0),
        ("trash", 0, 0),
    ]
    assert result["labels"] == []


async def test_read_only_tools_leave_state_and_clock_alone(ws: Workspace) -> None:
    before = ws.content_hash()
    await call(ws, "search_messages", {"query": "invoice"})
    await call(ws, "get_thread", {"thread_id": 1})
    await call(ws, "list_folders", {})
    await call(ws, "get_message", {"message_id": 99})
    assert ws.content_hash() == before
    assert ws.clock.now_text() == NOW
    assert [(e.tool, e.is_error) for e in ws.audit.entries(actor="agent")] == [
        ("search_messages", False),
        ("get_thread", False),
        ("list_folders", False),
        ("get_message", True),
    ]


async def test_the_mailbox_owner_is_the_user_email_in_lower_case(ws: Workspace) -> None:
    ws.set_meta(USER_EMAIL_KEY, " ME@Northwind.example ")
    assert await ids(ws, folder="inbox") == [3, 1]
    ws.set_meta(USER_EMAIL_KEY, BO)
    assert await ids(ws) == [7]


# -- the full-text index ---------------------------------------------------------------------


def search_ids(ws: Workspace, match: str) -> list[int]:
    rows = ws.conn.execute("SELECT rowid FROM mail_search WHERE mail_search MATCH ? ORDER BY rowid", (match,))
    return [r[0] for r in rows]


def test_search_index_follows_inserts_updates_and_deletes(ws: Workspace) -> None:
    ws.conn.execute("UPDATE mail_messages SET subject = 'Quarterly plan' WHERE id = 5")
    assert search_ids(ws, "quarterly") == [5]
    assert search_ids(ws, "agenda") == [5]
    ws.conn.execute("DELETE FROM mail_recipients WHERE message_id = 6 AND address = ?", (DEE,))
    assert search_ids(ws, '"dee.ray"') == []
    ws.conn.execute("DELETE FROM mail_attachments WHERE message_id = 1")
    assert search_ids(ws, '"inv-7.md"') == []
    ws.conn.execute("DELETE FROM mail_messages WHERE id = 4")
    assert search_ids(ws, "digest") == []
    count = ws.conn.execute("SELECT count(*) FROM mail_messages").fetchone()[0]
    assert ws.conn.execute("SELECT count(*) FROM mail_search").fetchone()[0] == count
    ws.conn.execute("INSERT INTO mail_search (mail_search) VALUES ('integrity-check')")


def search_rows(ws: Workspace) -> list[tuple[Any, ...]]:
    return ws.conn.execute(
        "SELECT rowid, subject, body, from_addr, recipients, attachments FROM mail_search ORDER BY rowid"
    ).fetchall()


def triggers(ws: Workspace) -> set[tuple[str, str]]:
    return set(ws.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall())


def test_an_index_written_at_the_end_is_the_one_the_triggers_write(ws: Workspace) -> None:
    """Seeding inside `search_index_written_at_end` (updates and a delete included) leaves the
    same index rows and matches as the triggers, one row at a time; then the triggers are
    back as they were and index what comes next."""
    at_end = empty_mailbox()
    before = triggers(at_end)
    with search_index_written_at_end(at_end):
        seed_messages(at_end)
        assert at_end.conn.execute("SELECT count(*) FROM mail_search").fetchone()[0] == 0
        for each in (ws, at_end):
            each.conn.execute("DELETE FROM mail_messages WHERE id = 4")
            each.conn.execute("UPDATE mail_messages SET subject = 'Quarterly plan' WHERE id = 5")
    assert search_rows(at_end) == search_rows(ws)
    # Recipients as the index keys them: cc before to.
    assert [r[4] for r in search_rows(at_end)][:2] == [f"{BO} {USER}", ANN]
    for match in ('"dee.ray"', '"inv-7.md"', "quarterly", "digest", "globex", "refund*"):
        assert search_ids(at_end, match) == search_ids(ws, match), match
    assert triggers(at_end) == before
    add(at_end, "add_message", from_addr=CY, to=[USER, "zed.moor@initech.example"], subject="Later")
    assert search_ids(at_end, '"zed.moor"') == [8]
    at_end.conn.execute("INSERT INTO mail_search (mail_search) VALUES ('integrity-check')")


def test_an_index_written_at_the_end_is_all_or_nothing(ws: Workspace) -> None:
    before, rows = triggers(ws), search_rows(ws)
    with pytest.raises(RuntimeError, match="stop"), search_index_written_at_end(ws):
        add(ws, "add_message", from_addr=CY, to=[USER], subject="Lost")
        raise RuntimeError("stop")
    assert ws.conn.execute("SELECT count(*) FROM mail_messages").fetchone()[0] == 7
    assert (triggers(ws), search_rows(ws)) == (before, rows)


def test_search_index_is_left_out_of_hashes_and_diffs(ws: Workspace) -> None:
    other = ws.fork()
    other.conn.execute("INSERT INTO mail_search (mail_search) VALUES ('optimize')")
    assert other.content_hash() == ws.content_hash()
    assert ws.diff(other).is_empty


# -- world operations ------------------------------------------------------------------------


def test_deliver_inbound_arrives_unread_in_the_inbox(ws: Workspace) -> None:
    assert add(ws, "deliver_inbound", from_addr=DEE, subject="Hello", body="Hi there") == {
        "id": 8,
        "thread_id": 8,
    }
    row = ws.rows("mail_messages", "id = 8")[0]
    assert row == {
        "id": 8,
        "owner": USER,
        "thread_id": 8,
        "folder": "inbox",
        "from_addr": DEE,
        "subject": "Hello",
        "body": "Hi there",
        "sent_at": NOW,
        "is_read": 0,
        "is_flagged": 0,
        "in_reply_to": None,
        "forwarded_from": None,
    }
    assert ws.rows("mail_recipients", "message_id = 8") == [
        {"message_id": 8, "kind": "to", "position": 0, "address": USER}
    ]
    last = ws.audit.entries()[-1]
    assert (last.actor, last.tool, last.result) == ("event", "deliver_inbound", {"id": 8, "thread_id": 8})


def test_deliver_inbound_as_a_reply_joins_the_thread(ws: Workspace) -> None:
    result = add(
        ws, "deliver_inbound", from_addr=ANN, body="Received, thanks.", in_reply_to=2, cc=[BO, USER.upper()]
    )
    assert result == {"id": 8, "thread_id": 1}
    row = ws.rows("mail_messages", "id = 8")[0]
    assert (row["subject"], row["in_reply_to"], row["thread_id"]) == ("Re: Invoice INV-7 overdue", 2, 1)
    assert [
        (r["kind"], r["address"]) for r in ws.rows("mail_recipients", "message_id = 8 ORDER BY kind")
    ] == [
        ("cc", BO),
        ("to", USER),
    ]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"from_addr": "not an address"}, "from_addr has an invalid email address 'not an address'"),
        (
            {"from_addr": ANN, "in_reply_to": 99},
            f"in_reply_to: no message with id 99 in the mailbox of {USER}",
        ),
        ({"from_addr": ANN, "in_reply_to": 7}, f"in_reply_to: no message with id 7 in the mailbox of {USER}"),
        ({"from_addr": ANN, "attachments": ["/shared/nope.md"]}, "no file at '/shared/nope.md'"),
        ({"from_addr": ANN, "sent_at": "soon"}, "sent_at must be an ISO 8601 date or time"),
        ({"from_addr": ANN, "colour": "red"}, "Extra inputs are not permitted"),
        ({"from_addr": ANN, "in_reply_to": 0}, "greater than or equal to 1"),
    ],
)
def test_deliver_inbound_rejects_bad_input_and_writes_nothing(
    ws: Workspace, params: dict[str, Any], message: str
) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError, match=re.escape(message)):
        add(ws, "deliver_inbound", **params)
    assert ws.content_hash() == before
    last = ws.audit.entries()[-1]
    assert (last.actor, last.tool, last.is_error) == ("event", "deliver_inbound", True)


def test_add_message_defaults_sender_and_read_state_from_the_folder(ws: Workspace) -> None:
    result = add(ws, "add_message", folder="sent", to=[DEE], subject="S", thread_id=1, labels=["x"])
    assert result == {"id": 8, "thread_id": 1}
    row = ws.rows("mail_messages", "id = 8")[0]
    assert (row["from_addr"], row["is_read"], row["thread_id"], row["sent_at"]) == (USER, 1, 1, NOW)
    assert ws.rows("mail_labels", "message_id = 8") == [{"message_id": 8, "label": "x"}]
    add(ws, "add_message", folder="archive", from_addr=DEE, forwarded_from=1)
    assert ws.rows("mail_messages", "id = 9")[0]["is_read"] == 0


def test_add_message_without_files_service_keeps_any_absolute_path() -> None:
    ws = seeded_workspace(files=False)
    add(ws, "add_message", from_addr=ANN, attachments=["/a//b/../c.pdf", "/a/c.pdf"])
    assert ws.rows("mail_attachments", "message_id = 8") == [
        {"message_id": 8, "path": "/a/c.pdf", "name": "c.pdf"}
    ]
    with pytest.raises(ValueError, match=re.escape("attachment path 'c.pdf' must be absolute")):
        add(ws, "add_message", from_addr=ANN, attachments=["c.pdf"])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"thread_id": 42}, f"thread_id: no thread 42 in the mailbox of {USER}; leave it out to start one"),
        ({"thread_id": 3, "in_reply_to": 1}, "thread_id 3 differs from the thread 1 of in_reply_to 1"),
        ({"forwarded_from": 7}, f"forwarded_from: no message with id 7 in the mailbox of {USER}"),
        ({"folder": "spam"}, "folder"),
        ({"to": ["x"]}, "to has an invalid email address 'x'"),
        ({"owner": "bo"}, "owner has an invalid email address 'bo'"),
        ({"labels": [" "]}, "label must not be empty"),
    ],
)
def test_add_message_rejects_bad_input(ws: Workspace, params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        add(ws, "add_message", **params)
    assert ws.conn.execute("SELECT count(*) FROM mail_messages").fetchone()[0] == 7


def test_update_message_changes_any_mailbox_and_labels(ws: Workspace) -> None:
    result = add(ws, "update_message", id=7, folder="archive", is_flagged=True, add_labels=["Bo", "x"])
    assert result == {"id": 7, "changed": ["folder", "is_flagged", "labels"]}
    row = ws.rows("mail_messages", "id = 7")[0]
    assert (row["folder"], row["is_flagged"], row["is_read"]) == ("archive", 1, 0)
    add(ws, "update_message", id=7, remove_labels=["X"])
    assert ws.rows("mail_labels", "message_id = 7") == [{"message_id": 7, "label": "bo"}]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"id": 99, "is_read": True}, "no message with id 99"),
        ({"id": 1}, "update_message needs at least one change: folder, is_read, is_flagged or labels"),
        ({"id": 1, "folder": "spam"}, "folder"),
    ],
)
def test_update_message_rejects_bad_input(ws: Workspace, params: dict[str, Any], message: str) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError, match=re.escape(message)):
        add(ws, "update_message", **params)
    assert ws.content_hash() == before


def test_world_operations_raise_value_errors_when_called_directly(ws: Workspace) -> None:
    from coworkenv.servers.mail.world import DeliverInbound, deliver_inbound

    with pytest.raises(ValueError, match="no file at '/x'"):
        deliver_inbound(ws, DeliverInbound(from_addr=ANN, attachments=["/x"]))
    with pytest.raises(ValidationError):
        DeliverInbound(from_addr=ANN, in_reply_to=2**63)


# -- the demo --------------------------------------------------------------------------------


def test_demo_is_deterministic_per_seed() -> None:
    services = ("directory", "mail")
    first = northwind_workspace(seed=0, services=services)
    assert northwind_workspace(seed=0, services=services).content_hash() == first.content_hash()
    assert northwind_workspace(seed=1, services=services).content_hash() != first.content_hash()


def test_demo_mailbox_has_200_believable_messages() -> None:
    ws = northwind_workspace(seed=0, services=("directory", "mail"))
    company = northwind(0)
    rows = ws.rows("mail_messages")
    assert len(rows) == 200
    assert {r["owner"] for r in rows} == {company.user}
    folders = {
        f: sum(r["folder"] == f for r in rows) for f in ("inbox", "sent", "drafts", "archive", "trash")
    }
    assert folders["drafts"] == 4 and all(n > 0 for n in folders.values()), folders
    assert 5 < sum(not r["is_read"] for r in rows) < 100
    assert 3 < sum(r["is_flagged"] for r in rows) < 50
    assert max(r["sent_at"] for r in rows) < NOW
    assert min(r["sent_at"] for r in rows) >= "2026-01-19"
    threads: dict[int, int] = {}
    for r in rows:
        threads[r["thread_id"]] = threads.get(r["thread_id"], 0) + 1
    assert sum(n > 1 for n in threads.values()) >= 30
    assert [r["sent_at"] for r in rows] == sorted(r["sent_at"] for r in rows), "ids follow arrival"
    by_id = {r["id"]: r for r in rows}
    for r in rows:
        if r["in_reply_to"] is not None:
            assert r["in_reply_to"] < r["id"]
            assert by_id[r["in_reply_to"]]["thread_id"] == r["thread_id"]
            assert by_id[r["in_reply_to"]]["sent_at"] <= r["sent_at"]
    labels = {r[0] for r in ws.conn.execute("SELECT DISTINCT label FROM mail_labels")}
    assert {"customers", "invoices", "meetings", "newsletters"} <= labels
    assert not ws.rows("mail_attachments")
    assert ws.integrity_check() == "ok"


def test_demo_attaches_files_of_the_files_service_when_it_is_there() -> None:
    world = northwind(0)
    ws = Workspace.create([SCHEMA, FILES_SCHEMA], clock_start=world.start)
    populate(ws, world, random.Random("0:mail"))
    attachments = ws.rows("mail_attachments")
    assert len(attachments) >= 3
    assert {a["path"] for a in attachments} <= {"/shared/inv-7.md", "/shared/contract.md"}


def test_the_demo_mailbox_is_searchable_by_sender_recipient_and_attachment() -> None:
    """The seed writes the search index once, at the end: every message is found by its
    sender, each of its recipients and its attachments' names, and by nothing of another's."""
    world = northwind(0)
    ws = Workspace.create([SCHEMA, FILES_SCHEMA], clock_start=world.start)
    populate(ws, world, random.Random("0:mail"))
    assert ws.conn.execute("SELECT count(*) FROM mail_search").fetchone()[0] == 200
    ws.conn.execute("INSERT INTO mail_search (mail_search) VALUES ('integrity-check')")
    for message in ws.rows("mail_messages", "id % 17 = 0"):
        found = search_ids(ws, f'from_addr : "{message["from_addr"]}"')
        assert message["id"] in found
        for (address,) in ws.conn.execute(
            "SELECT address FROM mail_recipients WHERE message_id = ?", (message["id"],)
        ):
            assert message["id"] in search_ids(ws, f'recipients : "{address}"'), address
    for attachment in ws.rows("mail_attachments"):
        assert attachment["message_id"] in search_ids(ws, f'attachments : "{attachment["name"]}"')
    assert search_ids(ws, 'recipients : "nobody.at.all"') == []
