"""Notes tools that write: create and edit pages, add and update database rows."""

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ServiceError, ToolList, current_user, workspace_of
from . import store
from .schema import Page, Row
from .tools_read import DatabaseId, PageId, RowId

TOOLS = ToolList()

Body = Annotated[str, Field(max_length=50_000, description="Markdown")]
Values = Annotated[
    dict[str, Any],
    Field(
        description="Property name -> value: text; a number; true/false for a checkbox; an option "
        "for a select; a list of options for a multi_select; YYYY-MM-DD for a date; an email for a "
        "person; a list of row ids for a relation; null clears the property"
    ),
]


@TOOLS.tool(read_only=False)
async def create_page(
    ctx: Context,
    title: Annotated[str, Field(min_length=1, max_length=200)],
    body: Body = "",
    parent_id: Annotated[
        int | None, Field(ge=1, le=2**31 - 1, description="The page to put it under; default: top level")
    ] = None,
) -> Page:
    """Create a page (markdown body) under a parent page, as the user you work for.
    Returns the new page with its id."""
    ws = workspace_of(ctx)
    now = ws.clock.now_text()
    page_id = store.insert_page(ws, title, body, parent_id, "page", current_user(ws), now)
    return store.load_page(ws, page_id)


@TOOLS.tool(read_only=False, destructive=True)
async def update_page(
    ctx: Context,
    page_id: PageId,
    title: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
    body: Annotated[
        str | None, Field(max_length=50_000, description="Replaces the whole body (markdown)")
    ] = None,
    append: Annotated[
        str | None,
        Field(max_length=50_000, description="Markdown added at the end of the body, on a new line"),
    ] = None,
    parent_id: Annotated[
        int | None, Field(ge=1, le=2**31 - 1, description="Move the page under this page")
    ] = None,
) -> Page:
    """Edit a page: a new title, a new body (replacing it all) or text appended to the
    body, or a new parent. Give `append` to add to a page without rewriting it; give
    either body or append, not both. Archived pages cannot change."""
    ws = workspace_of(ctx)
    row = store.page_row(ws, page_id)
    store.check_not_archived(row)
    if body is not None and append is not None:
        raise ServiceError("give either body (replace) or append (add at the end), not both")
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = store.text(title, "title")
    if body is not None:
        changes["body"] = body
    if append is not None:
        changes["body"] = row["body"].rstrip("\n") + ("\n" if row["body"].strip() else "") + append
    if parent_id is not None:
        store.check_parent(ws, parent_id, page_id)
        changes["parent_id"] = parent_id
    if not changes:
        raise ServiceError("nothing to change: give title, body, append or parent_id")
    store.edit_page(ws, page_id, changes, current_user(ws), ws.clock.now_text())
    return store.load_page(ws, page_id)


@TOOLS.tool(read_only=False)
async def add_database_row(
    ctx: Context,
    database_id: DatabaseId,
    title: Annotated[str, Field(min_length=1, max_length=200)],
    properties: Values = {},  # noqa: B006 - the SDK copies arguments; the default is never mutated
) -> Row:
    """Add a row to a database (a task to a tracker, a meeting to the meeting notes), with
    the properties you give; list_databases shows each property's type and options. A
    value that does not fit its property is refused, naming what fits."""
    ws = workspace_of(ctx)
    row_id = store.insert_row(ws, database_id, title, properties, current_user(ws), ws.clock.now_text())
    return store.load_row(ws, row_id)


@TOOLS.tool(read_only=False)
async def update_database_row(
    ctx: Context,
    row_id: RowId,
    title: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
    properties: Values = {},  # noqa: B006 - the SDK copies arguments; the default is never mutated
) -> Row:
    """Change a database row: a new title and/or the properties you give (others stay as
    they are; null clears one). Returns the row after the change."""
    ws = workspace_of(ctx)
    store.update_row(ws, row_id, title, properties, current_user(ws), ws.clock.now_text())
    return store.load_row(ws, row_id)
