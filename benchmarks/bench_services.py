"""The crm, notes and sheets services: seeding the demo world with them against seeding it
with the first five services (target <= 1.5x), and a tool call of each through the direct
call_tool path against a bare MCPServer tool running the same store code (the SDK's own
floor, target 1.3x as for the other services). A sheet write, which recomputes every
formula of its spreadsheet, is shown against a directory search through our own path."""

from typing import Annotated, Any

import anyio
from mcp.server import MCPServer
from pydantic import Field

from coworkenv.servers import build_server
from coworkenv.servers.crm import store as crm_store
from coworkenv.servers.crm.schema import AccountList
from coworkenv.servers.notes import store as notes_store
from coworkenv.servers.notes.schema import PageList
from coworkenv.servers.render import northwind_workspace
from coworkenv.servers.sheets import store as sheets_store
from coworkenv.servers.sheets.schema import RangeValues
from coworkenv.state import Workspace

from .timing import interleaved_medians_us_async, median_us, report

FIRST_FIVE = ("mail", "tickets", "calendar", "files", "directory")
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "crm": ("search_accounts", {"query": "e", "limit": 10}),
    "notes": ("search_pages", {"query": "how", "limit": 10}),
    "sheets": ("read_range", {"spreadsheet_id": 2, "range": "Invoices!A1:F17"}),
}


def bare_server(ws: Workspace) -> MCPServer:
    """The floor: each measured tool with the same parameters, store code and output model
    in a plain MCPServer over the same workspace: no audit, no transaction, no clock."""
    server = MCPServer(name="bare", log_level="WARNING")

    @server.tool()
    async def search_accounts(
        query: str = "", limit: Annotated[int, Field(ge=1, le=100)] = 20, offset: int = 0
    ) -> AccountList:
        """Search accounts."""
        where = (
            " AND ".join("(name LIKE ? OR domain LIKE ? OR industry LIKE ?)" for _ in query.split()) or "1"
        )
        params = [f"%{w}%" for w in query.split() for _ in range(3)]
        total = ws.conn.execute(f"SELECT COUNT(*) FROM crm_accounts WHERE {where}", params).fetchone()[0]
        rows = ws.rows(
            "crm_accounts", f"{where} ORDER BY name, id LIMIT ? OFFSET ?", [*params, limit, offset]
        )
        return AccountList(total=total, accounts=crm_store.summaries_from_rows(ws, rows))

    @server.tool()
    async def search_pages(
        query: str = "", limit: Annotated[int, Field(ge=1, le=50)] = 10, offset: int = 0
    ) -> PageList:
        """Search pages."""
        total, pages = notes_store.search_pages(ws, query, None, None, limit, offset)
        return PageList(total=total, pages=pages)

    @server.tool()
    async def read_range(spreadsheet_id: int, range: str) -> RangeValues:
        """Read a range."""
        return sheets_store.read_range(ws, spreadsheet_id, range)

    return server


async def measure() -> list[dict]:
    ws = northwind_workspace(seed=0)
    results = []
    bare = bare_server(ws.fork())
    for service, (tool, args) in CALLS.items():
        ours = build_server(ws, service)
        ours_us, bare_us = await interleaved_medians_us_async(
            [
                lambda ours=ours, tool=tool, args=args: ours.call_tool(tool, args),
                lambda tool=tool, args=args: bare.call_tool(tool, args),
            ]
        )
        results.append(
            report(
                f"{service} {tool}, direct call_tool()", ours_us, bare_us, "bare MCPServer.call_tool()", 1.3
            )
        )
    sheets = build_server(ws, "sheets")
    directory = build_server(ws, "directory")
    write = {"spreadsheet_id": 2, "start": "Invoices!E2", "values": [[1200]]}
    write_us, search_us = await interleaved_medians_us_async(
        [
            lambda: sheets.call_tool("write_range", write),
            lambda: directory.call_tool("search_people", {"query": "a", "limit": 10}),
        ]
    )
    results.append(
        report(
            "sheets write_range (recomputes the ledger)",
            write_us,
            search_us,
            "directory search_people, same path",
        )
    )
    return results


def run() -> list[dict]:
    five = median_us(lambda: northwind_workspace(seed=0, services=FIRST_FIVE), repeat=7, warmup=1)
    eight = median_us(lambda: northwind_workspace(seed=0), repeat=7, warmup=1)
    results = [report("seed the demo world, all eight services", eight, five, "the first five services", 1.5)]
    return results + anyio.run(measure)


if __name__ == "__main__":
    run()
