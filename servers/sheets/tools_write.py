"""Sheets tools that write: write a range, append rows, create a spreadsheet."""

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ServiceError, ToolList, current_user, workspace_of
from . import store
from .schema import Spreadsheet, WriteResult
from .tools_read import SpreadsheetId

TOOLS = ToolList()

#: Whole numbers a cell takes exactly (beyond, a float keeps the magnitude).
Whole = Annotated[int, Field(ge=-(2**53), le=2**53)]
Rows = Annotated[
    list[
        Annotated[
            list[Whole | float | str | bool | None], Field(min_length=1, max_length=store.MAX_WRITE_COLUMNS)
        ]
    ],
    Field(
        min_length=1,
        max_length=store.MAX_WRITE_ROWS,
        description="Rows of cell values, left to right: numbers, text, true/false, a formula "
        "as text starting with '=' (e.g. '=SUM(B2:B9)'), or null to clear a cell",
    ),
]


@TOOLS.tool(read_only=False, destructive=True)
async def write_range(
    ctx: Context,
    spreadsheet_id: SpreadsheetId,
    start: Annotated[
        str,
        Field(
            min_length=1,
            max_length=100,
            description="The top-left cell to write from, with its sheet, e.g. 'Price list'!D5 "
            "(without a sheet, the first sheet)",
        ),
    ],
    values: Rows,
) -> WriteResult:
    """Write values into cells starting at `start`, overwriting what is there; every formula
    of the spreadsheet is then recomputed. Formulas may use SUM, AVERAGE, MIN, MAX, COUNT,
    COUNTA, COUNTIF, SUMIF, IF, IFERROR, AND, OR, NOT, ROUND, ABS, CONCAT, VLOOKUP and
    XLOOKUP, cell references (B7, $B$7, Budget!B7, 'Price list'!A2:D9) and + - * / ^ & %.
    Text that reads as a number is stored as a number. Returns the range written and the
    formula cells elsewhere whose values changed (check that totals came out as expected)."""
    ws = workspace_of(ctx)
    store.spreadsheet_row(ws, spreadsheet_id)
    named, row, col = store.start_cell(start)
    sheet = store.sheet_name(ws, spreadsheet_id, named)
    area, written, changed = store.write_cells(ws, spreadsheet_id, sheet, row, col, values, current_user(ws))
    return WriteResult(
        spreadsheet_id=spreadsheet_id, range=area.a1, cells_written=written, recalculated=changed
    )


@TOOLS.tool(read_only=False)
async def append_rows(
    ctx: Context,
    spreadsheet_id: SpreadsheetId,
    sheet: Annotated[str, Field(min_length=1, max_length=100, description="The sheet's name, e.g. Ledger")],
    rows: Rows,
) -> WriteResult:
    """Add rows below the last used row of a sheet, starting in column A (a new ledger
    line, a new product). Formulas are recomputed; formulas over whole columns (A:A)
    include the new rows, formulas over fixed ranges (A2:A9) do not: widen those with
    write_range if they must count the new rows."""
    ws = workspace_of(ctx)
    store.spreadsheet_row(ws, spreadsheet_id)
    name = store.sheet_name(ws, spreadsheet_id, sheet)
    area, written, changed = store.append_rows(ws, spreadsheet_id, name, rows, current_user(ws))
    return WriteResult(
        spreadsheet_id=spreadsheet_id, range=area.a1, cells_written=written, recalculated=changed
    )


@TOOLS.tool(read_only=False)
async def create_spreadsheet(
    ctx: Context,
    title: Annotated[str, Field(min_length=1, max_length=200)],
    sheets: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=100)]],
        Field(
            min_length=1, max_length=20, description="Sheet (tab) names in order, e.g. ['Summary', 'Data']"
        ),
    ],
) -> Spreadsheet:
    """Create an empty spreadsheet owned by the user you work for, with the named sheets.
    Titles are unique: open the existing one (list_spreadsheets) rather than making a copy.
    Fill it with write_range or append_rows."""
    ws = workspace_of(ctx)
    if len(title.strip()) == 0:
        raise ServiceError("title must not be blank")
    spreadsheet_id = store.create_spreadsheet(ws, title, sheets, current_user(ws), ws.clock.now_text())
    return store.load_spreadsheet(ws, spreadsheet_id)
