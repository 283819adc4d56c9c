"""Notes tools that read: search and read pages and knowledge-base articles, list and query databases."""

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ToolList, workspace_of
from . import store
from .schema import DatabaseList, Filter, Page, PageKind, PageList, RowList

TOOLS = ToolList()

#: The largest offset accepted: the schema refuses what SQLite could not hold.
MAX_OFFSET = 1_000_000

PageId = Annotated[int, Field(ge=1, le=2**31 - 1, description="The page's id, as search_pages shows it")]
DatabaseId = Annotated[
    int, Field(ge=1, le=2**31 - 1, description="The database's id, as list_databases shows it")
]
RowId = Annotated[int, Field(ge=1, le=2**31 - 1, description="The row's id, as query_database shows it")]


@TOOLS.tool(read_only=True)
async def search_pages(
    ctx: Context,
    query: Annotated[
        str, Field(description="Words to find in titles and bodies; every word must match")
    ] = "",
    kind: Annotated[
        PageKind | None,
        Field(description="article: only knowledge-base how-tos and policies; page: only other pages"),
    ] = None,
    parent_id: Annotated[
        int | None, Field(ge=1, le=2**31 - 1, description="Only the pages right under this page")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> PageList:
    """Search the notes workspace: pages, and the knowledge base's how-to and policy
    articles. Pages whose title matches come first, then the most recently updated. Each
    result has a snippet; read the whole page with get_page before you rely on it.
    `total` counts every match."""
    ws = workspace_of(ctx)
    total, pages = store.search_pages(ws, query, kind, parent_id, limit, offset)
    return PageList(total=total, pages=pages)


@TOOLS.tool(read_only=True)
async def get_page(ctx: Context, page_id: PageId) -> Page:
    """Read one page in full: its markdown body, where it sits (path), who edited it last,
    its sub-pages and the databases under it."""
    return store.load_page(workspace_of(ctx), page_id)


@TOOLS.tool(read_only=True)
async def list_databases(ctx: Context) -> DatabaseList:
    """List every database (project trackers, to-do lists, meeting notes...) with its
    properties: each property's name, type and, for select properties, its options."""
    ws = workspace_of(ctx)
    ids = [r[0] for r in ws.conn.execute("SELECT id FROM notes_databases ORDER BY title, id")]
    return DatabaseList(databases=[store.load_database(ws, i) for i in ids])


@TOOLS.tool(read_only=True)
async def query_database(
    ctx: Context,
    database_id: DatabaseId,
    filters: Annotated[
        list[Filter],
        Field(
            max_length=10,
            description="Conditions that must all hold, e.g. [{'property': 'Status', 'op': 'equals', 'value': 'Done'}]",
        ),
    ] = [],  # noqa: B006 - the SDK copies arguments; the default is never mutated
    sort_by: Annotated[str | None, Field(description="A property name (or 'title') to sort by")] = None,
    descending: bool = False,
    limit: Annotated[int, Field(ge=1, le=100)] = 25,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> RowList:
    """Query a database's rows: filter them by their properties, sort, and page. Each row
    shows its title and every property (null when unset); dates are YYYY-MM-DD, people are
    email addresses, relations are row ids. `total` counts every match."""
    ws = workspace_of(ctx)
    rows = store.query_rows(ws, database_id, filters, sort_by, descending)
    return RowList(database_id=database_id, total=len(rows), rows=rows[offset : offset + limit])
