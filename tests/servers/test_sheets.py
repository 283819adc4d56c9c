"""The sheets service through a real in-memory MCP client."""

from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.servers.render import render_workspace
from coworkenv.state import Workspace
from coworkenv.worlds import PROFILES, northwind, world
from tests.conftest import START

ME = "me@northwind.example"


@pytest.fixture
def ws() -> Workspace:
    ws = create_workspace(["sheets"], clock_start=START)
    prices = [
        ["SKU", "Product", "Price", "With tax"],
        ["NW-1", "Sensor", 140, "=ROUND(C2*(1+Settings!B1),2)"],
        ["NW-2", "Controller", 1200, "=ROUND(C3*(1+Settings!B1),2)"],
        [None, "Total", "=SUM(C2:C3)", "=SUM(D2:D3)"],
    ]
    apply_world_operation(
        ws,
        "sheets",
        "add_spreadsheet",
        {
            "title": "Price list",
            "owner": "ann@northwind.example",
            "sheets": [{"name": "Prices", "rows": prices}, {"name": "Settings", "rows": [["Tax", 0.2]]}],
        },
    )
    return ws


async def call(ws: Workspace, tool: str, args: dict[str, Any]) -> Any:
    with anyio.fail_after(5):
        async with Client(build_server(ws, "sheets")) as client:
            result = await client.call_tool(tool, args)
    if result.is_error:
        return ("error", result.content[0].text)
    return result.structured_content


async def test_list_spreadsheets_shows_sheets_and_their_used_ranges(ws: Workspace) -> None:
    assert await call(ws, "list_spreadsheets", {"query": "price"}) == {
        "total": 1,
        "spreadsheets": [
            {
                "id": 1,
                "title": "Price list",
                "owner": "ann@northwind.example",
                "sheets": [
                    {"name": "Prices", "rows": 4, "columns": 4, "used_range": "A1:D4"},
                    {"name": "Settings", "rows": 1, "columns": 2, "used_range": "A1:B1"},
                ],
                "updated_at": "2026-03-02T09:00:00+00:00",
                "last_editor": "ann@northwind.example",
            }
        ],
    }
    assert (await call(ws, "list_spreadsheets", {"query": "budget"}))["total"] == 0


async def test_read_range_gives_values_and_the_formulas_behind_them(ws: Workspace) -> None:
    assert await call(ws, "read_range", {"spreadsheet_id": 1, "range": "prices!C2:D4"}) == {
        "spreadsheet_id": 1,
        "range": "Prices!C2:D4",
        "values": [[140, 168], [1200, 1440], [1340, 1608]],
        "formulas": [
            {"cell": "D2", "formula": "=ROUND(C2*(1+Settings!B1),2)", "value": 168},
            {"cell": "D3", "formula": "=ROUND(C3*(1+Settings!B1),2)", "value": 1440},
            {"cell": "C4", "formula": "=SUM(C2:C3)", "value": 1340},
            {"cell": "D4", "formula": "=SUM(D2:D3)", "value": 1608},
        ],
    }
    whole = await call(ws, "read_range", {"spreadsheet_id": 1, "range": "A:B"})
    assert whole["range"] == "Prices!A1:B4"
    assert whole["values"][3] == [None, "Total"]


async def test_a_write_recomputes_the_formulas_that_read_it(ws: Workspace) -> None:
    result = await call(
        ws, "write_range", {"spreadsheet_id": 1, "start": "Settings!B1", "values": [["0.25"]]}
    )
    assert result == {
        "spreadsheet_id": 1,
        "range": "Settings!B1",
        "cells_written": 1,
        "recalculated": [
            {"cell": "Prices!D2", "value": 175},
            {"cell": "Prices!D3", "value": 1500},
            {"cell": "Prices!D4", "value": 1675},
        ],
    }
    cell = ws.rows("sheets_cells", "sheet = 'Settings' AND row = 1 AND col = 2")[0]
    assert (cell["input"], cell["value"]) == ("0.25", 0.25)
    spreadsheet = ws.rows("sheets_spreadsheets", "id = 1")[0]
    assert (spreadsheet["last_editor"], spreadsheet["updated_at"]) == (ME, "2026-03-02T09:00:00+00:00")


async def test_append_rows_writes_below_the_last_row(ws: Workspace) -> None:
    result = await call(
        ws, "append_rows", {"spreadsheet_id": 1, "sheet": "Prices", "rows": [["NW-3", "Cable", 9.5, "=C5*2"]]}
    )
    assert result == {"spreadsheet_id": 1, "range": "Prices!A5:D5", "cells_written": 4, "recalculated": []}
    values = await call(ws, "read_range", {"spreadsheet_id": 1, "range": "Prices!A5:D5"})
    assert values["values"] == [["NW-3", "Cable", 9.5, 19]]


async def test_find_cells_matches_values_and_formulas(ws: Workspace) -> None:
    found = await call(ws, "find_cells", {"spreadsheet_id": 1, "text": "nw-2"})
    assert found == {
        "spreadsheet_id": 1,
        "total": 1,
        "matches": [{"sheet": "Prices", "cell": "A3", "value": "NW-2", "formula": None}],
    }
    assert (await call(ws, "find_cells", {"spreadsheet_id": 1, "text": "settings!"}))["total"] == 2


async def test_a_null_clears_a_cell_and_a_sum_skips_it(ws: Workspace) -> None:
    result = await call(ws, "write_range", {"spreadsheet_id": 1, "start": "C2", "values": [[None]]})
    assert result["recalculated"] == [
        {"cell": "Prices!D2", "value": 0},
        {"cell": "Prices!C4", "value": 1200},
        {"cell": "Prices!D4", "value": 1440},
    ]
    assert ws.rows("sheets_cells", "sheet = 'Prices' AND row = 2 AND col = 3") == []


async def test_create_spreadsheet_makes_an_empty_one_owned_by_the_user(ws: Workspace) -> None:
    made = await call(ws, "create_spreadsheet", {"title": "Q2 plan", "sheets": ["Summary", "Data"]})
    assert made["id"] == 2
    assert made["owner"] == ME
    assert [s["name"] for s in made["sheets"]] == ["Summary", "Data"]
    assert await call(ws, "create_spreadsheet", {"title": "price LIST", "sheets": ["A"]}) == (
        "error",
        "Error executing tool create_spreadsheet: a spreadsheet titled 'price LIST' already exists; open it "
        "(list_spreadsheets) or choose another title",
    )


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("read_range", {"spreadsheet_id": 9, "range": "A1"}, "no spreadsheet with id 9; list_spreadsheets returns valid ids"),
        ("read_range", {"spreadsheet_id": 1, "range": "Budget!A1"}, "spreadsheet 1 has no sheet named 'Budget'; its sheets are: Prices, Settings"),
        ("read_range", {"spreadsheet_id": 1, "range": "A1:ZZ100"}, "A1:ZZ100 holds 70200 cells, more than the 2000 one read returns; read a smaller range (fewer rows or columns) and page through the sheet"),
        ("read_range", {"spreadsheet_id": 1, "range": "B2:7"}, "'7' is not a cell address; use A1 notation such as B7, A1:C10, A:C or 'Price list'!A1:D20"),
        ("write_range", {"spreadsheet_id": 1, "start": "A:C", "values": [[1]]}, "'A:C' is whole columns; a write starts at one cell, e.g. B7"),
        ("write_range", {"spreadsheet_id": 1, "start": "D2", "values": [["=SUMM(C2:C3)"]]}, "Prices!D2: formula =SUMM(C2:C3): unknown function SUMM; supported functions: ABS, AND, AVERAGE, CONCAT, COUNT, COUNTA, COUNTIF, IF, IFERROR, MAX, MIN, NOT, OR, ROUND, SUM, SUMIF, VLOOKUP, XLOOKUP"),
        ("find_cells", {"spreadsheet_id": 1, "text": "  "}, "text must not be blank: give the word or number to look for"),
    ],
)  # fmt: skip
async def test_bad_input_is_an_error_that_says_what_to_do(
    ws: Workspace, tool: str, args: dict[str, Any], message: str
) -> None:
    assert await call(ws, tool, args) == ("error", f"Error executing tool {tool}: {message}")


async def test_a_write_with_one_bad_formula_writes_nothing(ws: Workspace) -> None:
    before = ws.content_hash()
    result = await call(ws, "write_range", {"spreadsheet_id": 1, "start": "C2", "values": [[99, "=ROUND("]]})
    assert result[0] == "error"
    assert ws.content_hash() == before


async def test_a_colleague_correcting_a_row_is_an_audited_event(ws: Workspace) -> None:
    result = apply_world_operation(
        ws,
        "sheets",
        "edit_cells",
        {
            "spreadsheet": "price list",
            "start": "Prices!C3",
            "values": [[1150]],
            "editor": "bo@northwind.example",
        },
    )
    assert result == {
        "spreadsheet_id": 1,
        "range": "Prices!C3",
        "cells_written": 1,
        "recalculated": ["Prices!D3", "Prices!C4", "Prices!D4"],
    }
    entry = ws.audit.entries()[-1]
    assert (entry.actor, entry.service, entry.tool) == ("event", "sheets", "edit_cells")
    assert ws.rows("sheets_spreadsheets", "id = 1")[0]["last_editor"] == "bo@northwind.example"
    with pytest.raises(ValueError, match="no spreadsheet titled 'Budget'"):
        apply_world_operation(
            ws,
            "sheets",
            "edit_cells",
            {"spreadsheet": "Budget", "start": "A1", "values": [[1]], "editor": ME},
        )


def test_every_world_renders_its_spreadsheets_the_same_way_twice_with_no_formula_error() -> None:
    for profile in PROFILES:
        w = world(profile, None, 0)
        first, second = render_workspace(w, ("sheets",)), render_workspace(w, ("sheets",))
        assert first.content_hash() == second.content_hash(), profile
        errors = first.rows("sheets_cells", "value LIKE '#%'")
        assert errors == [], profile
        titles = [r["title"] for r in first.rows("sheets_spreadsheets", "1 ORDER BY id")]
        assert titles[0] == "Price list" and titles[1] == f"Invoice ledger {w.start.year}", profile


def test_the_northwind_ledger_summary_adds_up_its_invoices() -> None:
    ws = render_workspace(northwind(0), ("sheets",))
    ledger = ws.rows("sheets_spreadsheets", "title = 'Invoice ledger 2026'")[0]["id"]
    amounts = ws.rows(
        "sheets_cells", "spreadsheet_id = ? AND sheet = 'Invoices' AND col = 5 AND row > 1", [ledger]
    )
    open_amounts = [
        a["value"]
        for a in amounts
        if ws.rows("sheets_cells", "spreadsheet_id = ? AND sheet = 'Invoices' AND row = ? AND col = 6", [ledger, a["row"]])[0]["value"] == "open"
    ]  # fmt: skip
    summary = {
        r["row"]: r["value"]
        for r in ws.rows("sheets_cells", "spreadsheet_id = ? AND sheet = 'Summary' AND col = 2", [ledger])
    }
    assert summary[1] == sum(a["value"] for a in amounts)
    assert summary[2] == sum(open_amounts)
    assert summary[3] == len(open_amounts)
    assert len(amounts) == 16
