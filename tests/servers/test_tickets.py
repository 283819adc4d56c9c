"""The tickets service: the seeded workspace the tickets tests share, its world operations and
its demo data. The tools are tested in test_tickets_read.py and test_tickets_write.py."""

import re
from collections import Counter
from datetime import timedelta
from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.servers.render import northwind_workspace
from coworkenv.state import Workspace, format_time
from coworkenv.worlds import northwind
from tests.conftest import START

ANN = "ann.lee@northwind.example"  # Support, the user the agent works for
BO = "bo.chan@northwind.example"  # Engineering
CY = "cy.diaz@globex.example"  # an external contact
DEE = "dee.ng@initech.example"  # a requester who is not in the directory


def seeded_workspace(services: tuple[str, ...] = ("directory", "tickets")) -> Workspace:
    """Two queues and five tickets (one of each status), with comments and one link.

    Ticket 1 open, 2 in_progress, 3 resolved, 4 closed, 5 pending (5 duplicates 1).
    The clock stands at START (2026-03-02T09:00:00+00:00).
    """
    ws = create_workspace(services, clock_start=START, user_email=ANN)
    if "directory" in services:
        for team in ("Support", "Engineering"):
            apply_world_operation(ws, "directory", "add_team", {"name": team})
        for email, name, team, internal in [
            (ANN, "Ann Lee", "Support", True),
            (BO, "Bo Chan", "Engineering", True),
            (CY, "Cy Diaz", None, False),
        ]:
            apply_world_operation(
                ws,
                "directory",
                "add_person",
                {"email": email, "name": name, "team": team, "internal": internal},
            )
    world = "tickets"
    apply_world_operation(ws, world, "add_queue", {"name": "Support", "description": "Customer questions"})
    apply_world_operation(ws, world, "add_queue", {"name": "Billing", "description": "Invoices and refunds"})
    tickets: list[dict[str, Any]] = [
        {
            "title": "Order NW-1 has not arrived",
            "description": "Tracking is stuck since Monday.",
            "status": "open",
            "priority": "high",
            "queue": "Support",
            "requester": CY,
            "tags": ["delivery"],
            "due_at": "2026-03-04T17:00:00Z",
            "created_at": "2026-02-20T10:00:00Z",
            "comments": [
                {
                    "author": ANN,
                    "body": "We are checking with the carrier.",
                    "created_at": "2026-02-20T11:00:00Z",
                },
                {
                    "author": BO,
                    "body": "Carrier API shows the parcel in Hamburg.",
                    "visibility": "internal",
                    "created_at": "2026-02-21T09:00:00Z",
                },
                {"author": CY, "body": "Any news?", "created_at": "2026-02-22T08:00:00Z"},
            ],
        },
        {
            "title": "Refund for invoice INV-7",
            "description": "We were charged twice.",
            "status": "in_progress",
            "priority": "urgent",
            "queue": "Billing",
            "requester": CY,
            "assignee": ANN,
            "tags": ["refund", "vip"],
            "due_at": "2026-03-03",
            "created_at": "2026-02-25T10:00:00Z",
        },
        {
            "title": "Portal login fails",
            "description": "The password reset mail never arrives.",
            "status": "resolved",
            "queue": "Support",
            "requester": DEE,
            "assignee": BO,
            "created_at": "2026-02-26T10:00:00Z",
            "updated_at": "2026-02-27T10:00:00Z",
        },
        {
            "title": "Printer jammed",
            "status": "closed",
            "priority": "low",
            "queue": "Support",
            "requester": ANN,
            "assignee": ANN,
            "created_at": "2026-01-10T10:00:00Z",
            "updated_at": "2026-01-12T10:00:00Z",
        },
        {
            "title": "Order NW-1 missing",
            "description": "Second mail about the same order.",
            "status": "pending",
            "queue": "Support",
            "requester": CY,
            "created_at": "2026-02-28T10:00:00Z",
        },
    ]
    for ticket in tickets:
        apply_world_operation(ws, world, "add_ticket", ticket)
    apply_world_operation(
        ws,
        world,
        "add_link",
        {"ticket_id": 5, "kind": "duplicates", "other_ticket_id": 1, "created_at": "2026-02-28T10:00:00Z"},
    )
    return ws


async def call(ws: Workspace, tool: str, args: dict[str, Any]) -> Any:
    """Call a tickets tool through a real in-memory client: structured content, or ("error", text)."""
    with anyio.fail_after(5):
        async with Client(build_server(ws, "tickets")) as client:
            result = await client.call_tool(tool, args)
    if result.is_error:
        return ("error", result.content[0].text)
    return result.structured_content


def error(tool: str, message: str) -> tuple[str, str]:
    """What `call` returns for a ToolError."""
    return ("error", f"Error executing tool {tool}: {message}")


def apply(ws: Workspace, operation: str, params: dict[str, Any]) -> Any:
    return apply_world_operation(ws, "tickets", operation, params)


@pytest.fixture
def ws() -> Workspace:
    return seeded_workspace()


# -- world operations ----------------------------------------------------------------------------


def test_the_seed_stores_exact_rows(ws: Workspace) -> None:
    assert ws.rows("tickets_tickets", "id = 1")[0] == {
        "id": 1,
        "title": "Order NW-1 has not arrived",
        "description": "Tracking is stuck since Monday.",
        "status": "open",
        "priority": "high",
        "queue": "Support",
        "requester": CY,
        "assignee": None,
        "due_at": "2026-03-04T17:00:00+00:00",
        "created_at": "2026-02-20T10:00:00+00:00",
        # moved by its last comment, then by the link from ticket 5
        "updated_at": "2026-02-28T10:00:00+00:00",
    }
    assert ws.rows("tickets_tags", "1 ORDER BY ticket_id, tag") == [
        {"ticket_id": 1, "tag": "delivery"},
        {"ticket_id": 2, "tag": "refund"},
        {"ticket_id": 2, "tag": "vip"},
    ]
    assert ws.rows("tickets_links") == [
        {"source_id": 5, "kind": "duplicates", "target_id": 1, "created_at": "2026-02-28T10:00:00+00:00"}
    ]
    assert [(c["ticket_id"], c["author"], c["visibility"]) for c in ws.rows("tickets_comments")] == [
        (1, ANN, "public"),
        (1, BO, "internal"),
        (1, CY, "public"),
    ]


def test_add_ticket_takes_an_explicit_id_and_defaults_times_to_now(ws: Workspace) -> None:
    result = apply(ws, "add_ticket", {"id": 100, "title": "Seeded", "queue": "billing", "requester": DEE})
    assert result == {"ticket_id": 100, "comment_ids": []}
    row = ws.rows("tickets_tickets", "id = 100")[0]
    assert (row["queue"], row["status"], row["priority"], row["created_at"], row["updated_at"]) == (
        "Billing",
        "open",
        "normal",
        "2026-03-02T09:00:00+00:00",
        "2026-03-02T09:00:00+00:00",
    )
    last = ws.audit.entries()[-1]
    assert (last.actor, last.tool, last.is_error, last.result) == ("event", "add_ticket", False, result)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"id": 1}, "a ticket with id 1 already exists"),
        ({"queue": "Legal"}, "no queue named 'Legal'; queues are: Billing, Support"),
        ({"requester": "dee"}, "requester 'dee' is not an email address"),
        ({"assignee": CY}, "cy.diaz@globex.example is an external contact"),
        ({"assignee": "zed@northwind.example"}, "no colleague with email 'zed@northwind.example'"),
        (
            {"created_at": "2026-03-03T00:00:00Z"},
            "created_at 2026-03-03T00:00:00+00:00 is after the workspace clock",
        ),
        ({"created_at": "yesterday"}, "created_at 'yesterday' is not a valid date or time"),
        (
            {"created_at": "2026-02-02", "updated_at": "2026-02-01"},
            "updated_at 2026-02-01T00:00:00+00:00 is before created_at 2026-02-02T00:00:00+00:00",
        ),
        (
            {
                "created_at": "2026-02-02",
                "comments": [{"author": CY, "body": "hi", "created_at": "2026-02-01"}],
            },
            "comment created_at 2026-02-01T00:00:00+00:00 is before the ticket's created_at",
        ),
        ({"tags": ["two words"]}, "tag 'two words' is not valid"),
        ({"status": "done"}, "Input should be 'open', 'pending', 'in_progress', 'resolved' or 'closed'"),
    ],
)
def test_add_ticket_rejects_bad_input_and_writes_nothing(ws: Workspace, params: dict, message: str) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError, match=re.escape(message)):
        apply(ws, "add_ticket", {"title": "T", "queue": "Support", "requester": DEE, **params})
    assert ws.content_hash() == before
    last = ws.audit.entries()[-1]
    assert (last.actor, last.tool, last.is_error) == ("event", "add_ticket", True)


def test_add_ticket_accepts_any_assignee_email_without_a_directory() -> None:
    ws = seeded_workspace(("tickets",))
    result = apply(
        ws, "add_ticket", {"title": "T", "queue": "Support", "requester": DEE, "assignee": "X@Y.example"}
    )
    assert ws.rows("tickets_tickets", "id = ?", [result["ticket_id"]])[0]["assignee"] == "x@y.example"


def test_add_queue_rejects_a_taken_or_blank_name(ws: Workspace) -> None:
    assert apply(ws, "add_queue", {"name": " IT ", "description": "Laptops"}) == {"name": "IT"}
    assert ws.rows("tickets_queues", "name = 'IT'") == [{"name": "IT", "description": "Laptops"}]
    with pytest.raises(ValueError, match="a queue named 'billing' already exists"):
        apply(ws, "add_queue", {"name": "billing"})
    with pytest.raises(ValueError, match="name must not be blank"):
        apply(ws, "add_queue", {"name": "  "})


def test_customer_comment_adds_a_public_comment_by_the_requester(ws: Workspace) -> None:
    ws.clock.advance(minutes=5)
    assert apply(ws, "customer_comment", {"ticket_id": 2, "body": "Any update?"}) == {
        "ticket_id": 2,
        "comment_id": 4,
        "status": "in_progress",
    }
    assert ws.rows("tickets_comments", "id = 4") == [
        {
            "id": 4,
            "ticket_id": 2,
            "author": CY,
            "body": "Any update?",
            "visibility": "public",
            "created_at": "2026-03-02T09:05:00+00:00",
        }
    ]
    assert ws.rows("tickets_tickets", "id = 2")[0]["updated_at"] == "2026-03-02T09:05:00+00:00"


def test_customer_comment_can_reopen_a_resolved_ticket(ws: Workspace) -> None:
    result = apply(ws, "customer_comment", {"ticket_id": 3, "body": "Still broken.", "reopen": True})
    assert result == {"ticket_id": 3, "comment_id": 4, "status": "open"}
    row = ws.rows("tickets_tickets", "id = 3")[0]
    assert (row["status"], row["updated_at"]) == ("open", "2026-03-02T09:00:00+00:00")
    assert ws.rows("tickets_comments", "id = 4")[0]["author"] == DEE


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"ticket_id": 2, "reopen": True}, "ticket #2 is in_progress, not resolved; it cannot be reopened"),
        ({"ticket_id": 4}, "ticket #4 is closed and cannot change"),
        ({"ticket_id": 99}, "no ticket with id 99"),
        ({"ticket_id": 1, "body": " "}, "body must not be blank"),
    ],
)
def test_customer_comment_rejects_bad_input(ws: Workspace, params: dict, message: str) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError, match=message):
        apply(ws, "customer_comment", {"body": "Hello", **params})
    assert ws.content_hash() == before


def test_update_ticket_fields_sets_any_status_and_clears_with_null(ws: Workspace) -> None:
    result = apply(
        ws,
        "update_ticket_fields",
        {"ticket_id": 4, "status": "open", "assignee": None, "due_at": "2026-03-09", "tags": ["Printer"]},
    )
    assert result == {"ticket_id": 4, "changed": ["assignee", "due_at", "status", "tags"]}
    row = ws.rows("tickets_tickets", "id = 4")[0]
    assert (row["status"], row["assignee"], row["due_at"], row["updated_at"]) == (
        "open",
        None,
        "2026-03-09T00:00:00+00:00",
        "2026-03-02T09:00:00+00:00",
    )
    assert ws.rows("tickets_tags", "ticket_id = 4") == [{"ticket_id": 4, "tag": "printer"}]
    apply(
        ws,
        "update_ticket_fields",
        {"ticket_id": 2, "queue": "support", "title": " Refund ", "priority": "low"},
    )
    row = ws.rows("tickets_tickets", "id = 2")[0]
    assert (row["queue"], row["title"], row["priority"]) == ("Support", "Refund", "low")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"ticket_id": 1}, "update_ticket_fields needs at least one field to change"),
        ({"ticket_id": 1, "title": None}, "title cannot be null"),
        ({"ticket_id": 1, "queue": "Legal"}, "no queue named 'Legal'"),
        ({"ticket_id": 1, "assignee": CY}, "is an external contact"),
        ({"ticket_id": 1, "due_at": "soon"}, "due_at 'soon' is not a valid date or time"),
        ({"ticket_id": 99, "priority": "low"}, "no ticket with id 99"),
        ({"ticket_id": 0, "priority": "low"}, "greater than or equal to 1"),
    ],
)
def test_update_ticket_fields_rejects_bad_input(ws: Workspace, params: dict, message: str) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError, match=message):
        apply(ws, "update_ticket_fields", params)
    assert ws.content_hash() == before


def test_add_link_links_two_tickets_and_refuses_self_links(ws: Workspace) -> None:
    assert apply(ws, "add_link", {"ticket_id": 2, "kind": "blocked_by", "other_ticket_id": 3}) == {
        "created": True
    }
    assert ws.rows("tickets_links", "kind = 'blocks'") == [
        {"source_id": 3, "kind": "blocks", "target_id": 2, "created_at": "2026-03-02T09:00:00+00:00"}
    ]
    assert apply(ws, "add_link", {"ticket_id": 3, "kind": "blocks", "other_ticket_id": 2}) == {
        "created": False
    }
    with pytest.raises(ValueError, match=r"a ticket cannot be linked to itself \(#2\)"):
        apply(ws, "add_link", {"ticket_id": 2, "kind": "relates_to", "other_ticket_id": 2})
    with pytest.raises(ValueError, match=r"invalid parameters for tickets\.add_link: kind: Input should be"):
        apply(ws, "add_link", {"ticket_id": 2, "kind": "causes", "other_ticket_id": 3})


# -- the demo workspace ---------------------------------------------------------------------------


def test_the_demo_is_deterministic_per_seed() -> None:
    first = northwind_workspace(seed=0, services=("directory", "tickets"))
    again = northwind_workspace(seed=0, services=("directory", "tickets"))
    other = northwind_workspace(seed=1, services=("directory", "tickets"))
    assert first.content_hash() == again.content_hash()
    assert first.content_hash() != other.content_hash()
    # Without a directory the tickets are the same: tickets draw only on their own rng.
    alone = northwind_workspace(seed=0, services=("tickets",))
    assert alone.rows("tickets_tickets") == first.rows("tickets_tickets")


def test_the_demo_has_sixty_varied_tickets_in_four_queues() -> None:
    ws = northwind_workspace(seed=0, services=("directory", "tickets"))
    company = northwind(0)
    tickets = ws.rows("tickets_tickets")
    assert [t["id"] for t in tickets] == list(range(1, 61))
    assert Counter(t["queue"] for t in tickets) == {"Support": 24, "Billing": 14, "Engineering": 12, "IT": 10}
    assert [q["name"] for q in ws.rows("tickets_queues", "1 ORDER BY name")] == [
        "Billing",
        "Engineering",
        "IT",
        "Support",
    ]
    assert set(Counter(t["status"] for t in tickets)) == {
        "open",
        "pending",
        "in_progress",
        "resolved",
        "closed",
    }
    assert set(Counter(t["priority"] for t in tickets)) == {"low", "normal", "high", "urgent"}
    external = {p.email for p in company.contacts}
    requesters = Counter(t["requester"] in external for t in tickets)
    assert requesters[True] > requesters[False] > 0
    workers = {p.email for team in ("Support", "Engineering", "Finance") for p in company.team_members(team)}
    assert {t["assignee"] for t in tickets} - workers == {None}
    assert all(t["assignee"] for t in tickets if t["status"] != "open")
    created = [t["created_at"] for t in tickets]
    assert created == sorted(created) and created[-1] < format_time(START)
    dues = [t["due_at"] for t in tickets if t["due_at"]]
    assert len(dues) >= 10
    assert all(
        format_time(START - timedelta(days=5)) <= d <= format_time(START + timedelta(days=11)) for d in dues
    )
    comments = ws.rows("tickets_comments")
    assert len({c["ticket_id"] for c in comments}) >= 30
    assert set(Counter(c["visibility"] for c in comments)) == {"public", "internal"}
    assert Counter(link["kind"] for link in ws.rows("tickets_links")) == {
        "duplicates": 2,
        "blocks": 2,
        "relates_to": 2,
    }
    assert all(t["updated_at"] >= t["created_at"] for t in tickets)
