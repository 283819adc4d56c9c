"""The mail service's write tools through a real in-memory MCP client: sending, replying,
forwarding, drafts, folders, flags, labels and deleting. Fixtures are in test_mail.py."""

from typing import Any

import pytest

from coworkenv.state import Workspace
from tests.servers.test_mail import ANN, BO, CY, DEE, MESSAGE_1, NOW, USER, add, call, error, seeded_workspace

LATER = "2026-03-02T09:01:00+00:00"


@pytest.fixture
def ws() -> Workspace:
    return seeded_workspace()


def count(ws: Workspace) -> int:
    return ws.conn.execute("SELECT count(*) FROM mail_messages").fetchone()[0]


def sent(**fields: Any) -> dict[str, Any]:
    """A message the user sent now, with the given fields."""
    base = {
        "id": 8,
        "thread_id": 8,
        "folder": "sent",
        "from_addr": USER,
        "to": [],
        "cc": [],
        "bcc": [],
        "subject": "",
        "body": "",
        "sent_at": NOW,
        "is_read": True,
        "is_flagged": False,
        "in_reply_to": None,
        "forwarded_from": None,
        "labels": [],
        "attachments": [],
    }
    return {**base, **fields}


INV_7 = {"path": "/shared/inv-7.md", "name": "inv-7.md"}
CONTRACT = {"path": "/shared/contract.md", "name": "contract.md"}

# -- send_message ----------------------------------------------------------------------------


async def test_send_message_normalizes_recipients_and_lands_in_sent(ws: Workspace) -> None:
    result = await call(
        ws,
        "send_message",
        {
            "to": [" Dee.Ray@Northwind.example", DEE],
            "cc": [BO, DEE],
            "bcc": [CY, BO],
            "subject": "Q1 numbers",
            "body": "See attached.",
            "attachments": ["//shared/./inv-7.md", "/shared/inv-7.md", "/shared/contract.md"],
        },
    )
    assert result == sent(
        to=[DEE], cc=[BO], bcc=[CY], subject="Q1 numbers", body="See attached.", attachments=[CONTRACT, INV_7]
    )
    assert ws.clock.now_text() == LATER
    assert [r["address"] for r in ws.rows("mail_recipients", "message_id = 8 ORDER BY kind, position")] == [
        CY,
        BO,
        DEE,
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"to": ["Ann <ann@x.com>"]},
            "to has an invalid email address 'Ann <ann@x.com>'; give bare addresses like ann.lee@example.com",
        ),
        (
            {"to": [DEE], "cc": ["bo@"]},
            "cc has an invalid email address 'bo@'; give bare addresses like ann.lee@example.com",
        ),
        ({"to": []}, "a message needs at least one recipient in to, cc or bcc"),
        (
            {"to": [DEE], "subject": " ", "body": "\n"},
            "a message needs a subject or a body; write one before sending",
        ),
        (
            {"to": [DEE], "attachments": ["/shared/nope.md"]},
            "no file at '/shared/nope.md'; attachments must be paths of existing files (see the files tools)",
        ),
        (
            {"to": [DEE], "attachments": ["/shared/"]},
            "'/shared' is a folder, not a file; attach the files inside it one by one",
        ),
        (
            {"to": [DEE], "attachments": ["inv-7.md"]},
            "attachment path 'inv-7.md' must be absolute, like /shared/report.md",
        ),
    ],
)
async def test_send_message_explains_bad_input_and_writes_nothing(
    ws: Workspace, args: dict[str, Any], message: str
) -> None:
    before = ws.content_hash()
    assert await call(ws, "send_message", {"subject": "S", "body": "B", **args}) == error(
        "send_message", message
    )
    assert ws.content_hash() == before


async def test_send_message_with_attachments_needs_the_files_service() -> None:
    ws = seeded_workspace(files=False)
    assert await call(
        ws, "send_message", {"to": [DEE], "subject": "S", "body": "B", "attachments": ["/shared/inv-7.md"]}
    ) == error(
        "send_message",
        "attachments need the files service, which is not enabled in this workspace; "
        "send the message without attachments",
    )
    assert (await call(ws, "send_message", {"to": [DEE], "subject": "S", "body": "B"}))["id"] == 8


async def test_send_message_rejects_too_many_recipients(ws: Workspace) -> None:
    kind, text = await call(
        ws, "send_message", {"to": [f"p{i}@x.example" for i in range(51)], "subject": "S", "body": "B"}
    )
    assert kind == "error" and "to" in text and "at most 50" in text


# -- reply -----------------------------------------------------------------------------------


async def test_reply_goes_to_the_sender_in_the_same_thread(ws: Workspace) -> None:
    result = await call(ws, "reply", {"message_id": 1, "body": "Paid today."})
    assert result == sent(
        thread_id=1, to=[ANN], subject="Re: Invoice INV-7 overdue", body="Paid today.", in_reply_to=1
    )


async def test_reply_all_copies_the_other_recipients_but_not_you(ws: Workspace) -> None:
    result = await call(ws, "reply", {"message_id": 1, "body": "Paid.", "reply_all": True})
    assert (result["to"], result["cc"]) == ([ANN], [BO])
    result = await call(ws, "reply", {"message_id": 6, "body": "Noted.", "reply_all": True})
    assert (result["to"], result["cc"], result["subject"], result["thread_id"]) == (
        [BO],
        [DEE],
        "Re: Refund policy",
        6,
    )


async def test_reply_to_your_own_message_goes_to_its_recipients_and_keeps_one_re(ws: Workspace) -> None:
    result = await call(
        ws, "reply", {"message_id": 2, "body": "Reminder.", "attachments": ["/shared/contract.md"]}
    )
    assert result == sent(
        thread_id=1,
        to=[ANN],
        subject="Re: Invoice INV-7 overdue",
        body="Reminder.",
        in_reply_to=2,
        attachments=[CONTRACT],
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"message_id": 99, "body": "x"},
            "no message with id 99 in your mailbox; search_messages returns valid ids",
        ),
        (
            {"message_id": 7, "body": "x"},
            "no message with id 7 in your mailbox; search_messages returns valid ids",
        ),
        (
            {"message_id": 5, "body": "x"},
            "message 5 is a draft, so you cannot reply to it; change it with save_draft and send it with send_draft",
        ),
        ({"message_id": 1, "body": "  "}, "a reply needs a body; write what you want to say"),
        (
            {"message_id": 1, "body": "x", "attachments": ["/nope"]},
            "no file at '/nope'; attachments must be paths of existing files (see the files tools)",
        ),
    ],
)
async def test_reply_explains_bad_input(ws: Workspace, args: dict[str, Any], message: str) -> None:
    before = ws.content_hash()
    assert await call(ws, "reply", args) == error("reply", message)
    assert ws.content_hash() == before


async def test_reply_to_your_own_message_without_recipients_is_refused(ws: Workspace) -> None:
    add(ws, "add_message", folder="sent", bcc=[DEE], subject="Blind", body="b")
    assert await call(ws, "reply", {"message_id": 8, "body": "x"}) == error(
        "reply", "message 8 has no recipient to reply to; use send_message instead"
    )


# -- forward ---------------------------------------------------------------------------------


async def test_forward_keeps_attachments_and_quotes_the_original(ws: Workspace) -> None:
    result = await call(
        ws,
        "forward",
        {"message_id": 1, "to": [DEE], "note": "FYI, please pay.", "attachments": ["/shared/contract.md"]},
    )
    assert result == sent(
        thread_id=1,
        to=[DEE],
        subject="Fwd: Invoice INV-7 overdue",
        body=(
            "FYI, please pay.\n\n---------- Forwarded message ----------\n"
            f"From: {ANN}\nDate: 2026-02-20T10:00:00+00:00\nSubject: Invoice INV-7 overdue\n"
            f"To: {USER}\nCc: {BO}\n\nHello,\ninvoice INV-7 is overdue.  Please pay by Friday."
        ),
        forwarded_from=1,
        attachments=[CONTRACT, INV_7],
    )


async def test_forward_without_a_note_and_of_a_forward_keeps_one_fwd(ws: Workspace) -> None:
    first = await call(ws, "forward", {"message_id": 3, "to": [DEE], "cc": [BO]})
    assert first["body"] == (
        "---------- Forwarded message ----------\n"
        f"From: {CY}\nDate: 2026-02-25T12:00:00+00:00\nSubject: Meeting next week\nTo: {USER}\n\n"
        "Can we meet on Tuesday about the renewal?"
    )
    assert (first["to"], first["cc"], first["thread_id"]) == ([DEE], [BO], 3)
    second = await call(ws, "forward", {"message_id": first["id"], "to": [ANN]})
    assert second["subject"] == "Fwd: Meeting next week"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"message_id": 99, "to": [DEE]},
            "no message with id 99 in your mailbox; search_messages returns valid ids",
        ),
        (
            {"message_id": 5, "to": [DEE]},
            "message 5 is a draft, so you cannot forward it; change it with save_draft and send it with send_draft",
        ),
        ({"message_id": 1, "to": []}, "a message needs at least one recipient in to, cc or bcc"),
        (
            {"message_id": 1, "to": ["dee"]},
            "to has an invalid email address 'dee'; give bare addresses like ann.lee@example.com",
        ),
        (
            {"message_id": 1, "to": [DEE], "attachments": ["/shared"]},
            "'/shared' is a folder, not a file; attach the files inside it one by one",
        ),
    ],
)
async def test_forward_explains_bad_input(ws: Workspace, args: dict[str, Any], message: str) -> None:
    before = ws.content_hash()
    assert await call(ws, "forward", args) == error("forward", message)
    assert ws.content_hash() == before


# -- drafts ----------------------------------------------------------------------------------


async def test_save_draft_starts_a_new_draft(ws: Workspace) -> None:
    result = await call(
        ws, "save_draft", {"to": [DEE], "subject": "Plan", "attachments": ["/shared/inv-7.md"]}
    )
    assert result == sent(folder="drafts", to=[DEE], subject="Plan", attachments=[INV_7])
    assert await call(ws, "save_draft", {}) == sent(id=9, thread_id=9, folder="drafts", sent_at=LATER)


async def test_save_draft_answering_a_message_joins_its_thread(ws: Workspace) -> None:
    result = await call(ws, "save_draft", {"in_reply_to": 3, "to": [CY], "body": "Tuesday works."})
    assert result == sent(
        folder="drafts",
        thread_id=3,
        to=[CY],
        subject="Re: Meeting next week",
        body="Tuesday works.",
        in_reply_to=3,
    )


async def test_save_draft_updates_only_the_fields_given(ws: Workspace) -> None:
    result = await call(ws, "save_draft", {"draft_id": 5, "body": "Agenda: renewal", "cc": [BO]})
    assert result == sent(
        id=5, thread_id=5, folder="drafts", to=[CY], cc=[BO], subject="Agenda", body="Agenda: renewal"
    )
    result = await call(
        ws, "save_draft", {"draft_id": 5, "to": [DEE], "cc": [], "attachments": ["/shared/contract.md"]}
    )
    assert (result["to"], result["cc"], result["attachments"], result["sent_at"]) == (
        [DEE],
        [],
        [CONTRACT],
        LATER,
    )
    assert [m["id"] for m in (await call(ws, "search_messages", {"query": CY}))["messages"]] == [3]
    assert [m["id"] for m in (await call(ws, "search_messages", {"query": "renewal"}))["messages"]] == [5, 3]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"draft_id": 99}, "no message with id 99 in your mailbox; search_messages returns valid ids"),
        (
            {"draft_id": 1, "body": "x"},
            "message 1 is not a draft (it is in inbox); call save_draft without draft_id to start a new draft",
        ),
        (
            {"draft_id": 5, "in_reply_to": 1},
            "in_reply_to can only be given for a new draft; leave it out when updating one",
        ),
        (
            {"in_reply_to": 5},
            "message 5 is a draft, so you cannot answer it; change it with save_draft and send it with send_draft",
        ),
        ({"in_reply_to": 7}, "no message with id 7 in your mailbox; search_messages returns valid ids"),
        (
            {"draft_id": 5, "bcc": ["x@"]},
            "bcc has an invalid email address 'x@'; give bare addresses like ann.lee@example.com",
        ),
        (
            {"attachments": ["/missing.md"]},
            "no file at '/missing.md'; attachments must be paths of existing files (see the files tools)",
        ),
    ],
)
async def test_save_draft_explains_bad_input(ws: Workspace, args: dict[str, Any], message: str) -> None:
    before = ws.content_hash()
    assert await call(ws, "save_draft", args) == error("save_draft", message)
    assert ws.content_hash() == before


async def test_send_draft_moves_it_to_sent_now(ws: Workspace) -> None:
    result = await call(ws, "send_draft", {"draft_id": 5})
    assert result == sent(id=5, thread_id=5, to=[CY], subject="Agenda", body="Draft agenda")


async def test_send_draft_explains_what_is_missing(ws: Workspace) -> None:
    assert await call(ws, "send_draft", {"draft_id": 2}) == error(
        "send_draft",
        "message 2 is not a draft (it is in sent); call save_draft without draft_id to start a new draft",
    )
    await call(ws, "save_draft", {"subject": "No one"})
    assert await call(ws, "send_draft", {"draft_id": 8}) == error(
        "send_draft", "a message needs at least one recipient in to, cc or bcc"
    )
    await call(ws, "save_draft", {"to": [DEE]})
    assert await call(ws, "send_draft", {"draft_id": 9}) == error(
        "send_draft", "a message needs a subject or a body; write one before sending"
    )
    await call(ws, "save_draft", {"to": [DEE], "body": "x", "attachments": ["/shared/contract.md"]})
    ws.conn.execute("DELETE FROM files_nodes WHERE path = '/shared/contract.md'")
    assert await call(ws, "send_draft", {"draft_id": 10}) == error(
        "send_draft",
        "no file at '/shared/contract.md'; attachments must be paths of existing files (see the files tools)",
    )
    assert [r["folder"] for r in ws.rows("mail_messages", "id >= 8")] == ["drafts", "drafts", "drafts"]


# -- move, mark, labels, delete --------------------------------------------------------------


async def test_move_message_archives_and_restores(ws: Workspace) -> None:
    assert await call(ws, "move_message", {"message_id": 1, "folder": "archive"}) == {
        **MESSAGE_1,
        "folder": "archive",
    }
    assert (await call(ws, "move_message", {"message_id": 4, "folder": "inbox"}))["folder"] == "inbox"
    assert (await call(ws, "move_message", {"message_id": 2, "folder": "sent"}))["folder"] == "sent"
    assert [r["folder"] for r in ws.rows("mail_messages", "id IN (1, 2, 4) ORDER BY id")] == [
        "archive",
        "sent",
        "inbox",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"message_id": 1, "folder": "drafts"},
            "messages cannot be moved into drafts; use save_draft to write a new draft",
        ),
        (
            {"message_id": 5, "folder": "inbox"},
            "message 5 is a draft; send it with send_draft or discard it with delete_message",
        ),
        (
            {"message_id": 1, "folder": "sent"},
            "message 1 was not sent by you, so it cannot go to sent; choose inbox, archive or trash",
        ),
        (
            {"message_id": 7, "folder": "inbox"},
            "no message with id 7 in your mailbox; search_messages returns valid ids",
        ),
    ],
)
async def test_move_message_explains_bad_moves(ws: Workspace, args: dict[str, Any], message: str) -> None:
    before = ws.content_hash()
    assert await call(ws, "move_message", args) == error("move_message", message)
    assert ws.content_hash() == before


async def test_move_message_rejects_unknown_folders(ws: Workspace) -> None:
    kind, text = await call(ws, "move_message", {"message_id": 1, "folder": "spam"})
    assert kind == "error" and "folder" in text and "'archive'" in text


async def test_mark_message_sets_read_and_flag(ws: Workspace) -> None:
    marked = await call(ws, "mark_message", {"message_id": 1, "status": "read"})
    assert marked == {**MESSAGE_1, "is_read": True}
    assert (await call(ws, "mark_message", {"message_id": 1, "status": "flagged"}))["is_flagged"] is True
    assert (await call(ws, "mark_message", {"message_id": 3, "status": "unread"}))["is_read"] is False
    assert (await call(ws, "mark_message", {"message_id": 3, "status": "unflagged"}))["is_flagged"] is False
    rows = ws.rows("mail_messages", "id IN (1, 3) ORDER BY id")
    assert [(r["is_read"], r["is_flagged"]) for r in rows] == [(1, 1), (0, 0)]


async def test_mark_message_explains_bad_input(ws: Workspace) -> None:
    assert await call(ws, "mark_message", {"message_id": 99, "status": "read"}) == error(
        "mark_message", "no message with id 99 in your mailbox; search_messages returns valid ids"
    )
    kind, text = await call(ws, "mark_message", {"message_id": 1, "status": "important"})
    assert kind == "error" and "status" in text and "'unflagged'" in text


async def test_add_and_remove_labels(ws: Workspace) -> None:
    result = await call(ws, "add_label", {"message_id": 1, "label": "  Follow-Up  Now "})
    assert result == {**MESSAGE_1, "labels": ["follow-up now", "invoices"]}
    assert (await call(ws, "add_label", {"message_id": 1, "label": "FOLLOW-UP now"}))["labels"] == [
        "follow-up now",
        "invoices",
    ]
    assert (await call(ws, "remove_label", {"message_id": 1, "label": "Invoices"}))["labels"] == [
        "follow-up now"
    ]
    assert ws.rows("mail_labels") == [{"message_id": 1, "label": "follow-up now"}]


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        (
            "add_label",
            {"message_id": 1, "label": " "},
            "label must not be empty; give a word such as 'follow-up'",
        ),
        (
            "add_label",
            {"message_id": 1, "label": "x" * 51},
            "label is too long (51 characters); keep it under 50",
        ),
        (
            "add_label",
            {"message_id": 99, "label": "x"},
            "no message with id 99 in your mailbox; search_messages returns valid ids",
        ),
        (
            "remove_label",
            {"message_id": 1, "label": "urgent"},
            "message 1 has no label 'urgent'; its labels are: invoices",
        ),
        (
            "remove_label",
            {"message_id": 3, "label": "urgent"},
            "message 3 has no label 'urgent'; it has no labels",
        ),
    ],
)
async def test_labels_explain_bad_input(ws: Workspace, tool: str, args: dict[str, Any], message: str) -> None:
    before = ws.content_hash()
    assert await call(ws, tool, args) == error(tool, message)
    assert ws.content_hash() == before


async def test_delete_message_moves_it_to_trash_once(ws: Workspace) -> None:
    assert await call(ws, "delete_message", {"message_id": 1}) == {**MESSAGE_1, "folder": "trash"}
    assert (await call(ws, "delete_message", {"message_id": 5}))["folder"] == "trash"
    assert await call(ws, "delete_message", {"message_id": 1}) == error(
        "delete_message",
        "message 1 is already in trash; messages in trash are already deleted (move_message to inbox restores one)",
    )
    assert count(ws) == 7
    assert [m["id"] for m in (await call(ws, "search_messages", {"folder": "trash"}))["messages"]] == [
        5,
        4,
        1,
    ]


async def test_write_tools_are_audited_and_advance_the_clock(ws: Workspace) -> None:
    await call(ws, "mark_message", {"message_id": 1, "status": "read"})
    await call(ws, "mark_message", {"message_id": 99, "status": "read"})
    await call(ws, "delete_message", {"message_id": 1})
    assert ws.clock.now_text() == "2026-03-02T09:02:00+00:00"
    assert [(e.tool, e.is_error, e.time) for e in ws.audit.entries(actor="agent")] == [
        ("mark_message", False, NOW),
        ("mark_message", True, LATER),
        ("delete_message", False, LATER),
    ]


async def test_tools_are_annotated_for_clients(ws: Workspace) -> None:
    import anyio
    from mcp import Client

    from coworkenv.servers import build_server

    with anyio.fail_after(5):
        async with Client(build_server(ws, "mail")) as client:
            tools = {t.name: t.annotations for t in (await client.list_tools()).tools}
    read_only = sorted(n for n, a in tools.items() if a.read_only_hint)
    destructive = sorted(n for n, a in tools.items() if a.destructive_hint)
    assert read_only == ["get_message", "get_thread", "list_folders", "search_messages"]
    assert destructive == ["delete_message"]
    assert len(tools) == 14
