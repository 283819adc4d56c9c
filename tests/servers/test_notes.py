"""The notes service through a real in-memory MCP client."""

from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.servers.render import render_workspace
from coworkenv.state import Workspace
from coworkenv.worlds import PROFILES, world
from tests.conftest import START

ME = "me@northwind.example"
ANN = "ann@northwind.example"


@pytest.fixture
def ws() -> Workspace:
    ws = create_workspace(["notes"], clock_start=START)
    at = "2026-01-05T09:00:00+00:00"
    apply_world_operation(
        ws, "notes", "add_page", {"title": "Knowledge base", "author": ANN, "created_at": at}
    )
    apply_world_operation(ws, "notes", "add_page", {"title": "Refund policy", "body": "# Refunds\n\nRefunds above EUR 500 go to Finance.\nOthers: approve.", "parent_id": 1, "kind": "article", "author": ANN, "created_at": at})  # fmt: skip
    apply_world_operation(ws, "notes", "add_page", {"title": "Lunch menu", "body": "Soup on refunds day", "author": ANN, "created_at": at})  # fmt: skip
    apply_world_operation(ws, "notes", "add_database", {"title": "Projects", "parent_id": 1, "created_at": at, "properties": [
        {"name": "Status", "type": "select", "options": ["Not started", "In progress", "Done"]},
        {"name": "Owner", "type": "person"},
        {"name": "Due", "type": "date"},
        {"name": "Points", "type": "number"},
        {"name": "Tags", "type": "multi_select", "options": ["ops", "web"]},
        {"name": "Shipped", "type": "checkbox"},
        {"name": "Depends on", "type": "relation"},
    ]})  # fmt: skip
    for title, values in [
        (
            "Portal",
            {"Status": "In progress", "Owner": ANN, "Due": "2026-03-10", "Points": 5, "Tags": ["web"]},
        ),
        ("Billing", {"Status": "Done", "Due": "2026-02-01", "Points": 3, "Shipped": True}),
        ("Search", {"Status": "Not started", "Points": 8, "Tags": ["web", "ops"], "Depends on": [1]}),
    ]:
        apply_world_operation(ws, "notes", "add_row", {"database_id": 1, "title": title, "properties": values, "author": ANN, "created_at": at})  # fmt: skip
    return ws


async def call(ws: Workspace, tool: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(5):
        async with Client(build_server(ws, "notes")) as client:
            result = await client.call_tool(tool, args)
    if result.is_error:
        return ("error", result.content[0].text)
    return result.structured_content


async def test_search_pages_puts_title_matches_first_and_filters_articles(ws: Workspace) -> None:
    result = await call(ws, "search_pages", {"query": "refund"})
    assert [(p["id"], p["title"], p["snippet"]) for p in result["pages"]] == [
        (2, "Refund policy", "# Refunds\nRefunds above EUR 500 go to Finance."),
        (3, "Lunch menu", "Soup on refunds day"),
    ]
    articles = await call(ws, "search_pages", {"query": "refund", "kind": "article"})
    assert (articles["total"], articles["pages"][0]["kind"]) == (1, "article")


async def test_get_page_shows_its_path_children_and_databases(ws: Workspace) -> None:
    page = await call(ws, "get_page", {"page_id": 1})
    assert [c["title"] for c in page["children"]] == ["Refund policy"]
    assert page["databases"] == [{"id": 1, "title": "Projects", "row_count": 3}]
    assert (await call(ws, "get_page", {"page_id": 2}))["path"] == ["Knowledge base", "Refund policy"]


async def test_update_page_appends_and_records_the_editor(ws: Workspace) -> None:
    page = await call(ws, "update_page", {"page_id": 2, "append": "Updated: ask Finance first."})
    assert (
        page["body"]
        == "# Refunds\n\nRefunds above EUR 500 go to Finance.\nOthers: approve.\nUpdated: ask Finance first."
    )
    assert (page["last_editor"], page["updated_at"]) == (ME, "2026-03-02T09:00:00+00:00")
    assert await call(ws, "update_page", {"page_id": 1, "parent_id": 2}) == (
        "error",
        "Error executing tool update_page: page 1 cannot move under itself or one of its own sub-pages",
    )


async def test_query_database_filters_and_sorts(ws: Workspace) -> None:
    result = await call(
        ws,
        "query_database",
        {"database_id": 1, "filters": [{"property": "tags", "op": "contains", "value": "WEB"}], "sort_by": "Points", "descending": True},
    )  # fmt: skip
    assert [(r["title"], r["properties"]["Points"]) for r in result["rows"]] == [("Search", 8), ("Portal", 5)]
    assert result["rows"][0]["properties"] == {
        "Status": "Not started",
        "Owner": None,
        "Due": None,
        "Points": 8,
        "Tags": ["ops", "web"],
        "Shipped": None,
        "Depends on": [1],
    }
    due = await call(ws, "query_database", {"database_id": 1, "filters": [{"property": "Due", "op": "on_or_before", "value": "2026-03-01"}]})  # fmt: skip
    assert [r["title"] for r in due["rows"]] == ["Billing"]
    empty = await call(ws, "query_database", {"database_id": 1, "filters": [{"property": "Owner", "op": "is_empty"}], "sort_by": "title"})  # fmt: skip
    assert [r["title"] for r in empty["rows"]] == ["Billing", "Search"]


async def test_add_and_update_rows_check_each_property_type(ws: Workspace) -> None:
    row = await call(ws, "add_database_row", {"database_id": 1, "title": "Audit", "properties": {"status": "done", "Shipped": False}})  # fmt: skip
    assert (row["id"], row["properties"]["Status"], row["properties"]["Shipped"], row["created_by"]) == (
        4,
        "Done",
        False,
        ME,
    )
    updated = await call(
        ws, "update_database_row", {"row_id": 1, "properties": {"Status": "Done", "Owner": None}}
    )
    assert (updated["properties"]["Status"], updated["properties"]["Owner"], updated["last_editor"]) == (
        "Done",
        None,
        ME,
    )
    assert ws.rows("notes_values", "row_id = 1 AND property = 'Owner'") == []


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("get_page", {"page_id": 9}, "no page with id 9; search_pages returns valid ids"),
        ("query_database", {"database_id": 4}, "no database with id 4; list_databases returns valid ids"),
        ("add_database_row", {"database_id": 1, "title": "X", "properties": {"Status": "Blocked"}}, "'Blocked' is not an option of Status; its options are: Not started, In progress, Done"),
        ("add_database_row", {"database_id": 1, "title": "X", "properties": {"Colour": "red"}}, "database 1 has no property 'Colour'; its properties are: Status (select), Owner (person), Due (date), Points (number), Tags (multi_select), Shipped (checkbox), Depends on (relation)"),
        ("add_database_row", {"database_id": 1, "title": "X", "properties": {"Due": "soon"}}, "Due is a date: give YYYY-MM-DD, not 'soon'"),
        ("add_database_row", {"database_id": 1, "title": "X", "properties": {"Points": "5"}}, "Points is a number property: give a number, not '5'"),
        ("add_database_row", {"database_id": 1, "title": "X", "properties": {"Depends on": [7]}}, "Depends on points to rows of database 1; row 7 is not one of them (query_database 1 lists them)"),
        ("update_database_row", {"row_id": 1}, "nothing to change: give a title or properties"),
        ("update_page", {"page_id": 2, "body": "a", "append": "b"}, "give either body (replace) or append (add at the end), not both"),
    ],
)  # fmt: skip
async def test_bad_input_is_an_error_that_says_what_to_do(
    ws: Workspace, tool: str, args: dict[str, Any], message: str
) -> None:
    before = ws.content_hash()
    assert await call(ws, tool, args) == ("error", f"Error executing tool {tool}: {message}")
    assert ws.content_hash() == before


async def test_an_article_updated_by_a_colleague_is_an_audited_event(ws: Workspace) -> None:
    result = apply_world_operation(
        ws, "notes", "edit_page", {"page_id": 2, "editor": ANN, "body": "Refunds go to Finance."}
    )
    assert result == {"page_id": 2, "changed": ["body"]}
    page = await call(ws, "get_page", {"page_id": 2})
    assert (page["body"], page["last_editor"]) == ("Refunds go to Finance.", ANN)
    assert ws.audit.entries()[-2].actor == "event"


def test_every_world_renders_its_notes_the_same_way_twice() -> None:
    for profile in PROFILES:
        w = world(profile, None, 0)
        first = render_workspace(w, ("notes",))
        assert first.content_hash() == render_workspace(w, ("notes",)).content_hash(), profile
        articles = [r["title"] for r in first.rows("notes_pages", "kind = 'article' ORDER BY id")]
        assert articles[0] == "Policy: house rules", profile
        assert f"How to handle {w.queues[0].name} requests" in articles, profile
        databases = [r["title"] for r in first.rows("notes_databases", "1 ORDER BY id")]
        assert databases == ["Projects", "Meeting notes", "To-do"], profile
