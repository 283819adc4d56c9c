"""The tickets service's read-only tools through a real in-memory MCP client."""

from typing import Any

import pytest

from coworkenv.state import Workspace
from tests.servers.test_tickets import ANN, BO, CY, DEE, call, error, seeded_workspace


@pytest.fixture
def ws() -> Workspace:
    return seeded_workspace()


async def ids(ws: Workspace, **args: Any) -> list[int]:
    result = await call(ws, "search_tickets", args)
    assert not isinstance(result, tuple), result
    return [t["id"] for t in result["tickets"]]


async def test_search_tickets_lists_newest_first_with_exact_summaries(ws: Workspace) -> None:
    result = await call(ws, "search_tickets", {"limit": 2})
    assert result == {
        "total": 5,
        "tickets": [
            {
                "id": 5,
                "number": "#5",
                "title": "Order NW-1 missing",
                "status": "pending",
                "priority": "normal",
                "queue": "Support",
                "requester": CY,
                "assignee": None,
                "tags": [],
                "due_at": None,
                "created_at": "2026-02-28T10:00:00+00:00",
                "updated_at": "2026-02-28T10:00:00+00:00",
            },
            {
                "id": 3,
                "number": "#3",
                "title": "Portal login fails",
                "status": "resolved",
                "priority": "normal",
                "queue": "Support",
                "requester": DEE,
                "assignee": BO,
                "tags": [],
                "due_at": None,
                "created_at": "2026-02-26T10:00:00+00:00",
                "updated_at": "2026-02-27T10:00:00+00:00",
            },
        ],
    }


async def test_search_tickets_pages_and_sorts(ws: Workspace) -> None:
    page = await call(ws, "search_tickets", {"limit": 2, "offset": 1})
    assert (page["total"], [t["id"] for t in page["tickets"]]) == (5, [3, 2])
    assert await ids(ws, sort="oldest") == [4, 1, 2, 3, 5]
    assert await ids(ws, sort="priority") == [2, 1, 5, 3, 4]
    assert await ids(ws, sort="due") == [2, 1, 3, 4, 5]
    assert await ids(ws, offset=5) == []


async def test_search_tickets_matches_every_word_of_the_query(ws: Workspace) -> None:
    assert await ids(ws, query="order") == [5, 1]
    assert await ids(ws, query="ORDER mail") == [5]
    assert await ids(ws, query="reset") == [3]
    assert await ids(ws, query="100%") == []
    assert await ids(ws, query="NW_1") == []


async def test_search_tickets_filters_by_status_and_priority_one_or_several(ws: Workspace) -> None:
    assert await ids(ws, status="open") == [1]
    assert await ids(ws, status=["open", "pending"]) == [5, 1]
    assert await ids(ws, priority=["urgent", "low"]) == [2, 4]
    assert await ids(ws, status="open", priority="low") == []


async def test_search_tickets_filters_by_people_queue_and_tag(ws: Workspace) -> None:
    assert await ids(ws, assignee="unassigned") == [5, 1]
    assert await ids(ws, assignee="Ann.Lee@northwind.example") == [2, 4]
    assert await ids(ws, requester=DEE) == [3]
    assert await ids(ws, queue="billing") == [2]
    assert await ids(ws, tag="VIP") == [2]
    assert await ids(ws, requester=CY, status=["open", "in_progress"], queue="Support") == [1]


async def test_search_tickets_filters_by_due_date(ws: Workspace) -> None:
    # Ticket 2 is due 2026-03-03T00:00, ticket 1 2026-03-04T17:00; the others have no due date.
    assert await ids(ws, due_before="2026-03-04") == [2]
    assert await ids(ws, due_after="2026-03-03T00:00:00Z") == [2, 1]
    assert await ids(ws, due_after="2026-03-03T01:00:00+01:00", due_before="2026-03-05") == [2, 1]
    assert await ids(ws, due_after="2026-03-04T17:00:01Z") == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"status": []}, "status is an empty list; give at least one value or leave it out"),
        ({"assignee": "Ann"}, "assignee 'Ann' is not an email address (like name@example.com)"),
        ({"requester": "cy"}, "requester 'cy' is not an email address (like name@example.com)"),
        ({"queue": "Legal"}, "no queue named 'Legal'; queues are: Billing, Support"),
        (
            {"due_before": "next week"},
            "due_before 'next week' is not a valid date or time; use ISO 8601, e.g. 2026-03-06 or "
            "2026-03-06T17:00:00Z",
        ),
        ({"due_after": "2026-13-01"}, "due_after '2026-13-01' is not a valid date or time"),
    ],
)
async def test_search_tickets_explains_bad_filters(ws: Workspace, args: dict, message: str) -> None:
    kind, text = await call(ws, "search_tickets", args)
    assert kind == "error"
    assert text.startswith(f"Error executing tool search_tickets: {message}")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"offset": -1}, "offset"),
        ({"status": "done"}, "status"),
        ({"sort": "x"}, "sort"),
    ],
)
async def test_search_tickets_rejects_arguments_outside_the_schema(
    ws: Workspace, args: dict, field: str
) -> None:
    kind, text = await call(ws, "search_tickets", args)
    assert kind == "error"
    assert field in text and "invalid arguments" in text


async def test_get_ticket_returns_the_whole_ticket_with_links_and_next_statuses(ws: Workspace) -> None:
    assert await call(ws, "get_ticket", {"ticket_id": 1}) == {
        "id": 1,
        "number": "#1",
        "title": "Order NW-1 has not arrived",
        "description": "Tracking is stuck since Monday.",
        "status": "open",
        "next_statuses": ["in_progress", "pending", "resolved", "closed"],
        "priority": "high",
        "queue": "Support",
        "requester": CY,
        "assignee": None,
        "tags": ["delivery"],
        "due_at": "2026-03-04T17:00:00+00:00",
        "created_at": "2026-02-20T10:00:00+00:00",
        "updated_at": "2026-02-28T10:00:00+00:00",
        "comment_count": 3,
        "links": [
            {"kind": "duplicated_by", "ticket_id": 5, "title": "Order NW-1 missing", "status": "pending"}
        ],
    }
    five = await call(ws, "get_ticket", {"ticket_id": 5})
    assert five["links"] == [
        {"kind": "duplicates", "ticket_id": 1, "title": "Order NW-1 has not arrived", "status": "open"}
    ]
    assert (five["next_statuses"], five["comment_count"]) == (["open", "in_progress", "resolved"], 0)


@pytest.mark.parametrize(
    ("ticket_id", "next_statuses"),
    [(2, ["open", "pending", "resolved"]), (3, ["open", "closed"]), (4, [])],
)
async def test_get_ticket_shows_the_allowed_status_moves(
    ws: Workspace, ticket_id: int, next_statuses: list
) -> None:
    assert (await call(ws, "get_ticket", {"ticket_id": ticket_id}))["next_statuses"] == next_statuses


async def test_get_ticket_explains_a_missing_id(ws: Workspace) -> None:
    assert await call(ws, "get_ticket", {"ticket_id": 99}) == error(
        "get_ticket", "no ticket with id 99; search_tickets returns valid ids"
    )
    kind, text = await call(ws, "get_ticket", {"ticket_id": 0})
    assert kind == "error" and "greater than or equal to 1" in text


async def test_list_comments_lists_oldest_first_and_filters_by_visibility(ws: Workspace) -> None:
    assert await call(ws, "list_comments", {"ticket_id": 1}) == {
        "ticket_id": 1,
        "total": 3,
        "comments": [
            {
                "id": 1,
                "ticket_id": 1,
                "author": ANN,
                "body": "We are checking with the carrier.",
                "visibility": "public",
                "created_at": "2026-02-20T11:00:00+00:00",
            },
            {
                "id": 2,
                "ticket_id": 1,
                "author": BO,
                "body": "Carrier API shows the parcel in Hamburg.",
                "visibility": "internal",
                "created_at": "2026-02-21T09:00:00+00:00",
            },
            {
                "id": 3,
                "ticket_id": 1,
                "author": CY,
                "body": "Any news?",
                "visibility": "public",
                "created_at": "2026-02-22T08:00:00+00:00",
            },
        ],
    }
    internal = await call(ws, "list_comments", {"ticket_id": 1, "visibility": "internal"})
    assert (internal["total"], [c["id"] for c in internal["comments"]]) == (1, [2])
    public = await call(
        ws, "list_comments", {"ticket_id": 1, "visibility": "public", "limit": 1, "offset": 1}
    )
    assert (public["total"], [c["id"] for c in public["comments"]]) == (2, [3])
    assert await call(ws, "list_comments", {"ticket_id": 2}) == {"ticket_id": 2, "total": 0, "comments": []}


async def test_list_comments_explains_a_missing_ticket(ws: Workspace) -> None:
    assert await call(ws, "list_comments", {"ticket_id": 42}) == error(
        "list_comments", "no ticket with id 42; search_tickets returns valid ids"
    )


async def test_list_queues_counts_open_and_all_tickets(ws: Workspace) -> None:
    assert await call(ws, "list_queues", {}) == {
        "queues": [
            {"name": "Billing", "description": "Invoices and refunds", "open_tickets": 1, "total_tickets": 1},
            {"name": "Support", "description": "Customer questions", "open_tickets": 2, "total_tickets": 4},
        ]
    }


async def test_read_only_tools_leave_state_and_clock_alone(ws: Workspace) -> None:
    before = ws.content_hash()
    await call(ws, "search_tickets", {"query": "order"})
    await call(ws, "get_ticket", {"ticket_id": 1})
    await call(ws, "list_comments", {"ticket_id": 99})
    await call(ws, "list_queues", {})
    assert ws.content_hash() == before
    assert [(e.tool, e.is_error) for e in ws.audit.entries(actor="agent")] == [
        ("search_tickets", False),
        ("get_ticket", False),
        ("list_comments", True),
        ("list_queues", False),
    ]
