"""The directory service through a real in-memory MCP client."""

from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.state import Workspace
from tests.conftest import START


@pytest.fixture
def ws() -> Workspace:
    ws = create_workspace(["directory"], clock_start=START)
    apply_world_operation(
        ws, "directory", "add_team", {"name": "Sales", "lead_email": "ann.lee@acme.example"}
    )
    apply_world_operation(ws, "directory", "add_team", {"name": "Support"})
    for email, name, title, team, internal in [
        ("ann.lee@acme.example", "Ann Lee", "Head of Sales", "Sales", True),
        ("bo.chan@acme.example", "Bo Chan", "Account Executive", "Sales", True),
        ("cy.diaz@globex.example", "Cy Diaz", "Buyer", None, False),
    ]:
        apply_world_operation(
            ws,
            "directory",
            "add_person",
            {
                "email": email,
                "name": name,
                "title": title,
                "team": team,
                "internal": internal,
                "time_zone": "UTC",
            },
        )
    return ws


async def call(ws: Workspace, tool: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(5):
        async with Client(build_server(ws, "directory")) as client:
            result = await client.call_tool(tool, args)
    if result.is_error:
        return ("error", result.content[0].text)
    return result.structured_content


async def test_search_people_matches_every_word_and_pages(ws: Workspace) -> None:
    result = await call(ws, "search_people", {"query": "sales"})
    assert result["total"] == 1
    assert [p["email"] for p in result["people"]] == ["ann.lee@acme.example"]
    page = await call(ws, "search_people", {"limit": 1, "offset": 1})
    assert page["total"] == 3
    assert [p["name"] for p in page["people"]] == ["Bo Chan"]


async def test_search_people_filters_by_team_and_internal(ws: Workspace) -> None:
    team = await call(ws, "search_people", {"team": "Sales"})
    assert [p["email"] for p in team["people"]] == ["ann.lee@acme.example", "bo.chan@acme.example"]
    external = await call(ws, "search_people", {"internal": False})
    assert external["people"] == [
        {
            "email": "cy.diaz@globex.example",
            "name": "Cy Diaz",
            "title": "Buyer",
            "team": None,
            "manager_email": None,
            "time_zone": "UTC",
            "internal": False,
            "company": "",
            "phone": "",
        }
    ]


async def test_search_people_rejects_a_limit_out_of_range(ws: Workspace) -> None:
    kind, text = await call(ws, "search_people", {"limit": 500})
    assert kind == "error"
    assert "limit" in text and "less than or equal to 100" in text


async def test_get_person_is_case_insensitive_and_explains_a_miss(ws: Workspace) -> None:
    person = await call(ws, "get_person", {"email": "BO.CHAN@acme.example"})
    assert person["title"] == "Account Executive"
    assert await call(ws, "get_person", {"email": "nobody@acme.example"}) == (
        "error",
        "Error executing tool get_person: no person with email 'nobody@acme.example'; "
        "use search_people to find the right address",
    )


async def test_list_teams_counts_members(ws: Workspace) -> None:
    result = await call(ws, "list_teams", {})
    assert result["teams"] == [
        {"name": "Sales", "description": "", "lead_email": "ann.lee@acme.example", "member_count": 2},
        {"name": "Support", "description": "", "lead_email": None, "member_count": 0},
    ]


async def test_list_team_lists_members_and_names_valid_teams_on_a_miss(ws: Workspace) -> None:
    team = await call(ws, "list_team", {"team": "sales"})
    assert [m["name"] for m in team["members"]] == ["Ann Lee", "Bo Chan"]
    assert await call(ws, "list_team", {"team": "Legal"}) == (
        "error",
        "Error executing tool list_team: no team named 'Legal'; teams are: Sales, Support",
    )


async def test_read_only_tools_leave_state_and_clock_alone(ws: Workspace) -> None:
    before = ws.content_hash()
    await call(ws, "search_people", {"query": "a"})
    await call(ws, "get_person", {"email": "missing@x"})
    assert ws.content_hash() == before
    assert [(e.tool, e.is_error) for e in ws.audit.entries(actor="agent")] == [
        ("search_people", False),
        ("get_person", True),
    ]


def test_update_person_world_operation_changes_one_row_and_rejects_unknown_people(ws: Workspace) -> None:
    apply_world_operation(
        ws, "directory", "update_person", {"email": "bo.chan@acme.example", "team": "Support"}
    )
    assert ws.rows("directory_people", "email = ?", ["bo.chan@acme.example"])[0]["team"] == "Support"
    with pytest.raises(ValueError, match="no person with email 'x@y'"):
        apply_world_operation(ws, "directory", "update_person", {"email": "x@y", "team": "Support"})
    last = ws.audit.entries()[-1]
    assert (last.actor, last.tool, last.is_error) == ("event", "update_person", True)
