"""The crm service through a real in-memory MCP client."""

from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.servers.render import render_workspace
from coworkenv.state import Workspace
from coworkenv.worlds import PROFILES, northwind, world
from tests.conftest import START

ANN = "ann.lee@acme.example"
BO = "bo.chan@acme.example"


@pytest.fixture
def ws() -> Workspace:
    ws = create_workspace(["directory", "crm"], clock_start=START, user_email=ANN)
    for email, name in [(ANN, "Ann Lee"), (BO, "Bo Chan")]:
        apply_world_operation(ws, "directory", "add_person", {"email": email, "name": name})
    apply_world_operation(ws, "crm", "add_account", {"name": "Globex", "domain": "globex.example", "owner": ANN, "renewal_date": "2026-03-20", "created_at": "2025-01-10T09:00:00+00:00"})  # fmt: skip
    apply_world_operation(ws, "crm", "add_account", {"name": "Initech", "owner": BO, "renewal_date": "2026-05-01", "created_at": "2025-01-10T09:00:00+00:00"})  # fmt: skip
    for name, email, phone in [
        ("Cy Diaz", "cy@globex.example", "+1 555 0101"),
        ("Cy Diaz", "cy@globex.example", ""),
    ]:
        apply_world_operation(ws, "crm", "add_contact", {"account_id": 1, "name": name, "email": email, "phone": phone, "created_at": "2025-02-01T09:00:00+00:00"})  # fmt: skip
    apply_world_operation(ws, "crm", "add_deal", {"account_id": 1, "name": "Globex: sensors", "stage": "proposal", "amount": 4200, "currency": "EUR", "close_date": "2026-03-31", "owner": ANN, "created_at": "2026-01-05T09:00:00+00:00"})  # fmt: skip
    apply_world_operation(ws, "crm", "add_activity", {"kind": "call", "subject": "Intro call", "account_id": 1, "deal_id": 1, "contact_id": 2, "author": ANN, "occurred_at": "2026-02-01T10:00:00Z"})  # fmt: skip
    return ws


async def call(ws: Workspace, tool: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(5):
        async with Client(build_server(ws, "crm")) as client:
            result = await client.call_tool(tool, args)
    if result.is_error:
        return ("error", result.content[0].text)
    return result.structured_content


async def test_search_accounts_filters_by_renewal_dates(ws: Workspace) -> None:
    result = await call(ws, "search_accounts", {"renewal_from": "2026-03-01", "renewal_to": "2026-03-31"})
    assert result == {
        "total": 1,
        "accounts": [
            {
                "id": 1,
                "name": "Globex",
                "kind": "customer",
                "domain": "globex.example",
                "industry": "",
                "owner": ANN,
                "renewal_date": "2026-03-20",
                "open_deals": 1,
            }
        ],
    }
    assert [a["name"] for a in (await call(ws, "search_accounts", {"owner": BO}))["accounts"]] == ["Initech"]


async def test_get_account_shows_contacts_deals_and_activities(ws: Workspace) -> None:
    account = await call(ws, "get_account", {"account_id": 1})
    assert [c["id"] for c in account["contacts"]] == [1, 2]
    assert [d["name"] for d in account["deals"]] == ["Globex: sensors"]
    assert account["recent_activities"] == [
        {
            "id": 1,
            "kind": "call",
            "subject": "Intro call",
            "body": "",
            "account_id": 1,
            "deal_id": 1,
            "contact_id": 2,
            "author": ANN,
            "occurred_at": "2026-02-01T10:00:00+00:00",
        }
    ]


async def test_moving_a_deal_and_logging_the_call(ws: Workspace) -> None:
    deal = await call(ws, "update_deal", {"deal_id": 1, "stage": "negotiation", "next_step": "Send contract"})
    assert (deal["stage"], deal["next_step"], deal["updated_at"]) == (
        "negotiation",
        "Send contract",
        "2026-03-02T09:00:00+00:00",
    )
    logged = await call(
        ws, "log_activity", {"kind": "call", "subject": "Pricing call", "deal_id": 1, "contact_id": 1}
    )
    assert logged == {
        "id": 2,
        "kind": "call",
        "subject": "Pricing call",
        "body": "",
        "account_id": 1,
        "deal_id": 1,
        "contact_id": 1,
        "author": ANN,
        "occurred_at": "2026-03-02T09:01:00+00:00",
    }


async def test_a_closed_deal_is_final(ws: Workspace) -> None:
    assert (await call(ws, "update_deal", {"deal_id": 1, "stage": "closed_won"}))["stage"] == "closed_won"
    assert await call(ws, "update_deal", {"deal_id": 1, "amount": 1}) == (
        "error",
        "Error executing tool update_deal: deal 1 is closed_won and cannot change; create a new deal for new "
        "business (create_deal) and log activities on the account",
    )


async def test_merging_a_duplicate_keeps_its_history(ws: Workspace) -> None:
    result = await call(ws, "merge_contacts", {"keep_contact_id": 1, "duplicate_contact_id": 2})
    assert result["activities_moved"] == 1
    assert (result["merged"]["status"], result["merged"]["merged_into"]) == ("merged", 1)
    assert ws.rows("crm_activities", "id = 1")[0]["contact_id"] == 1
    assert (await call(ws, "search_contacts", {"query": "cy"}))["total"] == 1
    assert (await call(ws, "search_contacts", {"query": "cy", "include_merged": True}))["total"] == 2
    assert await call(ws, "update_contact", {"contact_id": 2, "phone": "1"}) == (
        "error",
        "Error executing tool update_contact: contact 2 was merged into contact 1; use contact 1",
    )


async def test_create_deal_defaults_to_the_user_and_checks_the_owner(ws: Workspace) -> None:
    deal = await call(
        ws,
        "create_deal",
        {"account_id": 2, "name": "Initech renewal", "amount": 900, "close_date": "2026-04-30"},
    )
    assert (deal["id"], deal["owner"], deal["currency"], deal["stage"]) == (2, ANN, "EUR", "prospecting")
    assert await call(ws, "create_deal", {"account_id": 2, "name": "X", "amount": 1, "close_date": "2026-04-30", "owner": "cy@globex.example"}) == (
        "error",
        "Error executing tool create_deal: owner 'cy@globex.example' is not a colleague in the directory; find "
        "the right address with the directory's search_people",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("get_account", {"account_id": 7}, "no account with id 7; search_accounts returns valid ids"),
        ("get_deal", {"deal_id": 7}, "no deal with id 7; search_deals returns valid ids"),
        ("update_deal", {"deal_id": 1}, "nothing to change: give stage, amount, close_date, owner, next_step or name"),
        ("update_deal", {"deal_id": 1, "close_date": "next week"}, "close_date 'next week' is not a date; use YYYY-MM-DD, e.g. 2026-03-31"),
        ("log_activity", {"kind": "note", "subject": "x"}, "give account_id or deal_id: an activity belongs to an account"),
        ("log_activity", {"kind": "note", "subject": "x", "account_id": 2, "deal_id": 1}, "deal 1 belongs to account 1, not 2; leave account_id out to log on the deal's account"),
        ("merge_contacts", {"keep_contact_id": 1, "duplicate_contact_id": 1}, "a contact cannot be merged into itself; give two different contact ids"),
        ("create_contact", {"account_id": 1, "name": "Cy", "email": "CY@globex.example"}, "contact 1 at this account already has email cy@globex.example; update it with update_contact"),
    ],
)  # fmt: skip
async def test_bad_input_is_an_error_that_says_what_to_do(
    ws: Workspace, tool: str, args: dict[str, Any], message: str
) -> None:
    before = ws.content_hash()
    assert await call(ws, tool, args) == ("error", f"Error executing tool {tool}: {message}")
    assert ws.content_hash() == before


async def test_a_deal_reassigned_by_a_colleague_is_an_audited_event(ws: Workspace) -> None:
    result = apply_world_operation(ws, "crm", "update_deal_fields", {"deal_id": 1, "owner": BO})
    assert result == {"deal_id": 1, "changed": ["owner"]}
    assert (await call(ws, "get_deal", {"deal_id": 1}))["owner"] == BO
    assert ws.audit.entries()[-2].tool == "update_deal_fields"
    with pytest.raises(ValueError, match="needs at least one field"):
        apply_world_operation(ws, "crm", "update_deal_fields", {"deal_id": 1})


async def test_an_account_handed_over_or_its_renewal_moved_by_a_colleague(ws: Workspace) -> None:
    result = apply_world_operation(
        ws, "crm", "update_account_fields", {"account_id": 1, "owner": BO, "renewal_date": "2026-03-23"}
    )
    assert result == {"account_id": 1, "changed": ["owner", "renewal_date"]}
    account = await call(ws, "get_account", {"account_id": 1})
    assert (account["owner"], account["renewal_date"]) == (BO, "2026-03-23")
    with pytest.raises(ValueError, match="needs an owner or a renewal_date"):
        apply_world_operation(ws, "crm", "update_account_fields", {"account_id": 1})
    with pytest.raises(ValueError, match="is not a colleague in the directory"):
        apply_world_operation(
            ws, "crm", "update_account_fields", {"account_id": 1, "owner": "cy@globex.example"}
        )


def test_every_world_renders_its_crm_the_same_way_twice() -> None:
    for profile in PROFILES:
        w = world(profile, None, 0)
        first = render_workspace(w, ("crm",))
        assert first.content_hash() == render_workspace(w, ("crm",)).content_hash(), profile
        names = {r["name"] for r in first.rows("crm_accounts")}
        assert {o.name for o in w.organizations} <= names, profile
        contacts = {r["email"] for r in first.rows("crm_contacts")}
        assert {p.email for p in w.contacts} <= contacts, profile
        owners = {r["owner"] for r in first.rows("crm_deals")}
        assert owners <= {p.email for p in w.staff}, profile


def test_the_northwind_crm_holds_one_duplicate_contact() -> None:
    ws = render_workspace(northwind(0), ("crm",))
    duplicates = ws.conn.execute(
        "SELECT account_id, email, COUNT(*) FROM crm_contacts GROUP BY account_id, email HAVING COUNT(*) > 1"
    ).fetchall()
    assert len(duplicates) == 1 and duplicates[0][2] == 2
