"""The tickets service's write tools through a real in-memory MCP client."""

import pytest

from coworkenv.state import Workspace
from tests.servers.test_tickets import ANN, BO, CY, DEE, call, error, seeded_workspace

NOW = "2026-03-02T09:00:00+00:00"  # the seeded clock; each write call then moves it by a minute
LATER = "2026-03-02T09:01:00+00:00"


@pytest.fixture
def ws() -> Workspace:
    return seeded_workspace()


async def assert_refused(ws: Workspace, tool: str, args: dict, message: str) -> None:
    """The call fails with exactly `message` and changes nothing, not even the clock."""
    before = ws.content_hash()
    assert await call(ws, tool, args) == error(tool, message)
    assert ws.content_hash() == before


# -- create_ticket ------------------------------------------------------------------------------


async def test_create_ticket_files_an_open_ticket_for_the_user_by_default(ws: Workspace) -> None:
    ticket = await call(ws, "create_ticket", {"title": " Replace my monitor ", "queue": "support"})
    assert ticket == {
        "id": 6,
        "number": "#6",
        "title": "Replace my monitor",
        "description": "",
        "status": "open",
        "next_statuses": ["in_progress", "pending", "resolved", "closed"],
        "priority": "normal",
        "queue": "Support",
        "requester": ANN,
        "assignee": None,
        "tags": [],
        "due_at": None,
        "created_at": NOW,
        "updated_at": NOW,
        "comment_count": 0,
        "links": [],
    }
    assert ws.clock.now_text() == LATER
    assert ws.rows("tickets_tickets", "id = 6")[0]["requester"] == ANN


async def test_create_ticket_sets_every_field_given(ws: Workspace) -> None:
    ticket = await call(
        ws,
        "create_ticket",
        {
            "title": "VAT wrong on INV-9",
            "queue": "Billing",
            "description": "Uses 19% instead of 7%.",
            "priority": "high",
            "requester": "Dee.Ng@Initech.example",
            "assignee": "BO.CHAN@northwind.example",
            "tags": ["VAT", "invoice", "vat"],
            "due_at": "2026-03-06T17:00:00+01:00",
        },
    )
    assert {
        k: ticket[k] for k in ("id", "description", "priority", "requester", "assignee", "tags", "due_at")
    } == {
        "id": 6,
        "description": "Uses 19% instead of 7%.",
        "priority": "high",
        "requester": DEE,
        "assignee": BO,
        "tags": ["invoice", "vat"],
        "due_at": "2026-03-06T16:00:00+00:00",
    }
    assert ws.rows("tickets_tags", "ticket_id = 6") == [
        {"ticket_id": 6, "tag": "invoice"},
        {"ticket_id": 6, "tag": "vat"},
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"queue": "Legal"}, "no queue named 'Legal'; queues are: Billing, Support"),
        ({"title": "   "}, "title must not be blank"),
        (
            {"requester": "dee at initech"},
            "requester 'dee at initech' is not an email address (like name@example.com)",
        ),
        (
            {"assignee": "zed@northwind.example"},
            "no colleague with email 'zed@northwind.example' in the directory; find the right address with the "
            "directory's search_people",
        ),
        (
            {"assignee": CY},
            "cy.diaz@globex.example is an external contact; tickets are assigned to colleagues (find them with "
            "the directory's search_people)",
        ),
        (
            {"due_at": "Friday"},
            "due_at 'Friday' is not a valid date or time; use ISO 8601, e.g. 2026-03-06 or 2026-03-06T17:00:00Z",
        ),
        (
            {"tags": ["ok", "not ok"]},
            "tag 'not ok' is not valid; a tag is one word of up to 40 letters, digits, '-', '_' or '.'",
        ),
    ],
)
async def test_create_ticket_explains_bad_input_and_writes_nothing(
    ws: Workspace, args: dict, message: str
) -> None:
    await assert_refused(ws, "create_ticket", {"title": "T", "queue": "Support", **args}, message)


async def test_create_ticket_rejects_arguments_outside_the_schema(ws: Workspace) -> None:
    for args, field in [({"title": "", "queue": "Support"}, "title"), ({"title": "T"}, "queue")]:
        kind, text = await call(ws, "create_ticket", args)
        assert kind == "error" and field in text and "invalid arguments" in text
    kind, text = await call(ws, "create_ticket", {"title": "T", "queue": "Support", "priority": "asap"})
    assert kind == "error" and "'low', 'normal', 'high' or 'urgent'" in text


async def test_create_ticket_accepts_any_assignee_email_without_a_directory() -> None:
    ws = seeded_workspace(("tickets",))
    ticket = await call(
        ws, "create_ticket", {"title": "T", "queue": "Support", "assignee": "zed@northwind.example"}
    )
    assert ticket["assignee"] == "zed@northwind.example"
    assert await call(ws, "create_ticket", {"title": "T", "queue": "Support", "assignee": "zed"}) == error(
        "create_ticket", "assignee 'zed' is not an email address (like name@example.com)"
    )


# -- update_ticket ------------------------------------------------------------------------------


async def test_update_ticket_changes_only_the_fields_given(ws: Workspace) -> None:
    before = ws.rows("tickets_tickets", "id = 1")[0]
    ticket = await call(ws, "update_ticket", {"ticket_id": 1, "status": "in_progress", "assignee": BO})
    assert (ticket["status"], ticket["next_statuses"], ticket["assignee"]) == (
        "in_progress",
        ["open", "pending", "resolved"],
        BO,
    )
    after = ws.rows("tickets_tickets", "id = 1")[0]
    assert {k for k in after if after[k] != before[k]} == {"status", "assignee", "updated_at"}
    assert after["updated_at"] == NOW
    assert ws.clock.now_text() == LATER


async def test_update_ticket_sets_priority_queue_title_and_due_and_clears_with_sentinels(
    ws: Workspace,
) -> None:
    ticket = await call(
        ws,
        "update_ticket",
        {
            "ticket_id": 2,
            "priority": "low",
            "queue": "support",
            "title": "Refund INV-7",
            "due_at": "2026-03-10",
        },
    )
    assert (ticket["priority"], ticket["queue"], ticket["title"], ticket["due_at"]) == (
        "low",
        "Support",
        "Refund INV-7",
        "2026-03-10T00:00:00+00:00",
    )
    cleared = await call(ws, "update_ticket", {"ticket_id": 2, "assignee": "Unassigned", "due_at": "none"})
    assert (cleared["assignee"], cleared["due_at"], cleared["updated_at"]) == (None, None, LATER)


async def test_update_ticket_may_keep_the_same_status(ws: Workspace) -> None:
    ticket = await call(ws, "update_ticket", {"ticket_id": 5, "status": "pending"})
    assert (ticket["status"], ticket["updated_at"]) == ("pending", NOW)


@pytest.mark.parametrize(
    ("ticket_id", "status"),
    [(1, "closed"), (2, "pending"), (5, "resolved"), (3, "open"), (3, "closed")],
)
async def test_update_ticket_follows_the_allowed_moves(ws: Workspace, ticket_id: int, status: str) -> None:
    assert (await call(ws, "update_ticket", {"ticket_id": ticket_id, "status": status}))["status"] == status


@pytest.mark.parametrize(
    ("ticket_id", "status", "message"),
    [
        (
            3,
            "in_progress",
            "ticket #3 cannot go from resolved to in_progress; allowed next statuses: open, closed",
        ),
        (
            2,
            "closed",
            "ticket #2 cannot go from in_progress to closed; allowed next statuses: open, pending, resolved",
        ),
        (
            5,
            "closed",
            "ticket #5 cannot go from pending to closed; allowed next statuses: open, in_progress, resolved",
        ),
    ],
)
async def test_update_ticket_refuses_other_moves_and_lists_the_allowed_ones(
    ws: Workspace, ticket_id: int, status: str, message: str
) -> None:
    await assert_refused(ws, "update_ticket", {"ticket_id": ticket_id, "status": status}, message)


async def test_update_ticket_edits_tags_by_replacing_adding_or_removing(ws: Workspace) -> None:
    added = await call(
        ws, "update_ticket", {"ticket_id": 2, "add_tags": ["Escalated", "vip"], "remove_tags": ["refund"]}
    )
    assert added["tags"] == ["escalated", "vip"]
    replaced = await call(ws, "update_ticket", {"ticket_id": 2, "tags": ["billing"]})
    assert replaced["tags"] == ["billing"]
    emptied = await call(ws, "update_ticket", {"ticket_id": 2, "tags": []})
    assert emptied["tags"] == []
    assert ws.rows("tickets_tags", "ticket_id = 2") == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"ticket_id": 1}, "nothing to change: give at least one field (status, priority, assignee, ...)"),
        ({"ticket_id": 99, "priority": "low"}, "no ticket with id 99; search_tickets returns valid ids"),
        (
            {"ticket_id": 4, "priority": "high"},
            "ticket #4 is closed and cannot change; create a new ticket and link it to #4 with link_tickets "
            "(kind relates_to)",
        ),
        (
            {"ticket_id": 4, "status": "open"},
            "ticket #4 is closed and cannot change; create a new ticket and link it to #4 with link_tickets "
            "(kind relates_to)",
        ),
        (
            {"ticket_id": 1, "status": "in_progress", "queue": "Legal"},
            "no queue named 'Legal'; queues are: Billing, Support",
        ),
        ({"ticket_id": 1, "assignee": CY}, "cy.diaz@globex.example is an external contact"),
        ({"ticket_id": 1, "title": " "}, "title must not be blank"),
        ({"ticket_id": 1, "due_at": "tomorrow"}, "due_at 'tomorrow' is not a valid date or time"),
        (
            {"ticket_id": 2, "tags": ["a"], "add_tags": ["b"]},
            "give either tags (replace all) or add_tags/remove_tags (edit), not both",
        ),
        (
            {"ticket_id": 2, "remove_tags": ["urgent"]},
            "ticket #2 has no tags ['urgent']; its tags are: refund, vip",
        ),
        ({"ticket_id": 5, "remove_tags": ["x"]}, "ticket #5 has no tags ['x']; its tags are: (none)"),
        (
            {"ticket_id": 2, "add_tags": ["x"], "remove_tags": ["X"]},
            "tags ['x'] are both added and removed; give each tag in one list only",
        ),
        ({"ticket_id": 2, "add_tags": ["a b"]}, "tag 'a b' is not valid"),
    ],
)
async def test_update_ticket_explains_bad_input_and_writes_nothing(
    ws: Workspace, args: dict, message: str
) -> None:
    before = ws.content_hash()
    kind, text = await call(ws, "update_ticket", args)
    assert kind == "error"
    assert text.startswith(f"Error executing tool update_ticket: {message}")
    assert ws.content_hash() == before


# -- add_comment --------------------------------------------------------------------------------


async def test_add_comment_comments_as_the_user_and_moves_updated_at(ws: Workspace) -> None:
    comment = await call(
        ws, "add_comment", {"ticket_id": 2, "body": " Refund sent today. ", "visibility": "public"}
    )
    assert comment == {
        "id": 4,
        "ticket_id": 2,
        "author": ANN,
        "body": "Refund sent today.",
        "visibility": "public",
        "created_at": NOW,
    }
    note = await call(
        ws, "add_comment", {"ticket_id": 2, "body": "Checked with Finance.", "visibility": "internal"}
    )
    assert (note["id"], note["visibility"], note["created_at"]) == (5, "internal", LATER)
    ticket = await call(ws, "get_ticket", {"ticket_id": 2})
    assert (ticket["comment_count"], ticket["updated_at"]) == (2, LATER)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"ticket_id": 99}, "no ticket with id 99; search_tickets returns valid ids"),
        ({"ticket_id": 4}, "ticket #4 is closed and cannot change"),
        ({"ticket_id": 1, "body": "   "}, "body must not be blank"),
    ],
)
async def test_add_comment_explains_bad_input_and_writes_nothing(
    ws: Workspace, args: dict, message: str
) -> None:
    before = ws.content_hash()
    kind, text = await call(ws, "add_comment", {"body": "Hi", "visibility": "public", **args})
    assert kind == "error"
    assert text.startswith(f"Error executing tool add_comment: {message}")
    assert ws.content_hash() == before


async def test_add_comment_needs_an_explicit_visibility(ws: Workspace) -> None:
    kind, text = await call(ws, "add_comment", {"ticket_id": 1, "body": "Hi"})
    assert kind == "error" and "visibility" in text and "Field required" in text
    kind, text = await call(ws, "add_comment", {"ticket_id": 1, "body": "Hi", "visibility": "private"})
    assert kind == "error" and "'public' or 'internal'" in text


# -- link_tickets -------------------------------------------------------------------------------


async def test_link_tickets_stores_blocked_by_as_the_inverse_blocks_link(ws: Workspace) -> None:
    result = await call(ws, "link_tickets", {"ticket_id": 2, "kind": "blocked_by", "other_ticket_id": 3})
    assert result == {
        "ticket_id": 2,
        "created": True,
        "links": [
            {"kind": "blocked_by", "ticket_id": 3, "title": "Portal login fails", "status": "resolved"}
        ],
    }
    assert ws.rows("tickets_links", "kind = 'blocks'") == [
        {"source_id": 3, "kind": "blocks", "target_id": 2, "created_at": NOW}
    ]
    assert {r["id"]: r["updated_at"] for r in ws.rows("tickets_tickets", "id IN (2, 3)")} == {2: NOW, 3: NOW}
    three = await call(ws, "get_ticket", {"ticket_id": 3})
    assert three["links"] == [
        {"kind": "blocks", "ticket_id": 2, "title": "Refund for invoice INV-7", "status": "in_progress"}
    ]


async def test_link_tickets_again_changes_nothing(ws: Workspace) -> None:
    await call(ws, "link_tickets", {"ticket_id": 3, "kind": "relates_to", "other_ticket_id": 1})
    rows = ws.rows("tickets_links")
    again = await call(ws, "link_tickets", {"ticket_id": 1, "kind": "relates_to", "other_ticket_id": 3})
    assert again == {
        "ticket_id": 1,
        "created": False,
        "links": [
            {"kind": "relates_to", "ticket_id": 3, "title": "Portal login fails", "status": "resolved"},
            {"kind": "duplicated_by", "ticket_id": 5, "title": "Order NW-1 missing", "status": "pending"},
        ],
    }
    assert ws.rows("tickets_links") == rows
    dup = await call(ws, "link_tickets", {"ticket_id": 1, "kind": "duplicated_by", "other_ticket_id": 5})
    assert dup["created"] is False


async def test_link_tickets_can_link_a_closed_ticket(ws: Workspace) -> None:
    result = await call(ws, "link_tickets", {"ticket_id": 1, "kind": "relates_to", "other_ticket_id": 4})
    assert result["created"] is True
    assert ws.rows("tickets_tickets", "id = 4")[0]["updated_at"] == NOW


async def test_link_tickets_refuses_loops(ws: Workspace) -> None:
    await assert_refused(
        ws,
        "link_tickets",
        {"ticket_id": 1, "kind": "duplicates", "other_ticket_id": 5},
        "#5 already duplicates #1 (directly or through other tickets), so #1 cannot also duplicate #5",
    )
    await call(ws, "link_tickets", {"ticket_id": 1, "kind": "blocks", "other_ticket_id": 2})
    await call(ws, "link_tickets", {"ticket_id": 2, "kind": "blocks", "other_ticket_id": 3})
    await assert_refused(
        ws,
        "link_tickets",
        {"ticket_id": 1, "kind": "blocked_by", "other_ticket_id": 3},
        "#1 already blocks #3 (directly or through other tickets), so #3 cannot also block #1",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"other_ticket_id": 1}, "a ticket cannot be linked to itself (#1); give two different ids"),
        ({"other_ticket_id": 77}, "no ticket with id 77; search_tickets returns valid ids"),
        ({"ticket_id": 77, "other_ticket_id": 2}, "no ticket with id 77; search_tickets returns valid ids"),
    ],
)
async def test_link_tickets_explains_bad_ids(ws: Workspace, args: dict, message: str) -> None:
    await assert_refused(ws, "link_tickets", {"ticket_id": 1, "kind": "relates_to", **args}, message)


async def test_link_tickets_rejects_an_unknown_kind(ws: Workspace) -> None:
    kind, text = await call(ws, "link_tickets", {"ticket_id": 1, "kind": "causes", "other_ticket_id": 2})
    assert kind == "error" and "'relates_to', 'duplicates', 'blocks', 'duplicated_by' or 'blocked_by'" in text


async def test_write_calls_are_audited_as_the_agent(ws: Workspace) -> None:
    await call(ws, "create_ticket", {"title": "T", "queue": "Support"})
    await call(ws, "update_ticket", {"ticket_id": 4, "priority": "high"})
    assert [(e.actor, e.tool, e.is_error, e.time) for e in ws.audit.entries(actor="agent")] == [
        ("agent", "create_ticket", False, NOW),
        ("agent", "update_ticket", True, LATER),
    ]
