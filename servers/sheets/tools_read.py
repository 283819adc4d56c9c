"""Sheets tools that read: find spreadsheets, read ranges, find cells."""

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ToolList, workspace_of
from . import store
from .schema import FindResult, RangeValues, Spreadsheet, SpreadsheetList

TOOLS = ToolList()

#: The largest offset accepted: the schema refuses what SQLite could not hold.
MAX_OFFSET = 1_000_000

SpreadsheetId = Annotated[
    int, Field(ge=1, le=2**31 - 1, description="The spreadsheet's id, as list_spreadsheets shows it")
]


@TOOLS.tool(read_only=True)
async def list_spreadsheets(
    ctx: Context,
    query: Annotated[str, Field(description="Words matched against the title; empty lists all")] = "",
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> SpreadsheetList:
    """List spreadsheets (ledgers, budgets, price lists, rotas...) by title, each with its
    sheets (tabs) and their used ranges, so you know what to read next with read_range.
    Every word of `query` must appear in the title. `total` counts every match."""
    ws = workspace_of(ctx)
    where, params = [], []
    for word in query.split():
        where.append("title LIKE ?")
        params.append(f"%{word}%")
    clause = " AND ".join(where) or "1"
    total = ws.conn.execute(f"SELECT COUNT(*) FROM sheets_spreadsheets WHERE {clause}", params).fetchone()[0]
    ids = [
        r[0]
        for r in ws.conn.execute(
            f"SELECT id FROM sheets_spreadsheets WHERE {clause} ORDER BY title, id LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
    ]
    return SpreadsheetList(total=total, spreadsheets=[store.load_spreadsheet(ws, i) for i in ids])


@TOOLS.tool(read_only=True)
async def get_spreadsheet(ctx: Context, spreadsheet_id: SpreadsheetId) -> Spreadsheet:
    """Get one spreadsheet's title, owner, last editor and its sheets with their used ranges."""
    return store.load_spreadsheet(workspace_of(ctx), spreadsheet_id)


@TOOLS.tool(read_only=True)
async def read_range(
    ctx: Context,
    spreadsheet_id: SpreadsheetId,
    range: Annotated[
        str,
        Field(
            min_length=1,
            max_length=100,
            description="A1 range with its sheet, e.g. 'Price list'!A1:E20, Budget!B2:F9 or Ledger!A:F "
            "(whole columns, to the last used row); without a sheet, the first sheet",
        ),
    ],
) -> RangeValues:
    """Read the values of a range, row by row; empty cells are null. Formula cells show
    their computed value in `values`, and each is listed in `formulas` with its formula,
    so you can see how a total is computed. At most 2000 cells per read."""
    return store.read_range(workspace_of(ctx), spreadsheet_id, range)


@TOOLS.tool(read_only=True)
async def find_cells(
    ctx: Context,
    spreadsheet_id: SpreadsheetId,
    text: Annotated[str, Field(min_length=1, max_length=200, description="Text or number to look for")],
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> FindResult:
    """Find the cells of a spreadsheet whose value or formula contains `text` (ignoring
    case), in every sheet. Use it to find the row of an invoice number, a SKU or a name
    before reading or writing around it. `total` counts every match."""
    ws = workspace_of(ctx)
    total, matches = store.find_cells(ws, spreadsheet_id, text, limit, offset)
    return FindResult(spreadsheet_id=spreadsheet_id, total=total, matches=matches)
