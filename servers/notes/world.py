"""Notes world operations: pages, databases and rows for seeds; colleagues editing pages
and rows as events."""

from typing import Annotated, Any

from pydantic import BaseModel, Field

from coworkenv.state import Workspace

from ..toolkit import ServiceError, WorldOperations
from . import store
from .schema import PageKind, PropertyType

WORLD = WorldOperations("notes")

RowRef = Annotated[int, Field(ge=1, le=2**31 - 1)]


class AddPage(BaseModel):
    title: str = Field(min_length=1)
    body: str = ""
    parent_id: RowRef | None = None
    kind: PageKind = "page"
    author: str
    created_at: str | None = Field(default=None, description="Default: now")
    updated_at: str | None = Field(default=None, description="Default: created_at")
    last_editor: str | None = Field(default=None, description="Default: the author")


class SeedProperty(BaseModel):
    name: str = Field(min_length=1)
    type: PropertyType
    options: list[str] = Field(default_factory=list)
    target_database_id: RowRef | None = None


class AddDatabase(BaseModel):
    title: str = Field(min_length=1)
    description: str = ""
    parent_id: RowRef | None = None
    properties: list[SeedProperty] = Field(default_factory=list)
    created_at: str | None = Field(default=None, description="Default: now")


class AddRow(BaseModel):
    database_id: RowRef
    title: str = Field(min_length=1)
    properties: dict[str, Any] = Field(default_factory=dict)
    author: str
    created_at: str | None = Field(default=None, description="Default: now")


class EditPage(BaseModel):
    """A colleague edits a page: a new title or body, or text appended."""

    page_id: RowRef
    editor: str
    title: str | None = None
    body: str | None = None
    append: str | None = None


class EditRow(BaseModel):
    """A colleague changes a database row's title or properties."""

    row_id: RowRef
    editor: str
    title: str | None = None
    properties: dict[str, Any] = Field(default_factory=dict)


@WORLD.operation(AddPage)
def add_page(ws: Workspace, p: AddPage) -> dict[str, Any]:
    """A page or knowledge-base article exists."""
    created = p.created_at or ws.clock.now_text()
    page_id = store.insert_page(ws, p.title, p.body, p.parent_id, p.kind, p.author, created)
    if p.updated_at is not None or p.last_editor is not None:
        ws.conn.execute(
            "UPDATE notes_pages SET updated_at = ?, last_editor = ? WHERE id = ?",
            (p.updated_at or created, p.last_editor or p.author, page_id),
        )
    return {"page_id": page_id}


@WORLD.operation(AddDatabase)
def add_database(ws: Workspace, p: AddDatabase) -> dict[str, Any]:
    """A database exists, with its properties."""
    props = [(q.name, q.type, q.options, q.target_database_id) for q in p.properties]
    database_id = store.add_database(
        ws, p.title, p.description, p.parent_id, props, p.created_at or ws.clock.now_text()
    )
    return {"database_id": database_id}


@WORLD.operation(AddRow)
def add_row(ws: Workspace, p: AddRow) -> dict[str, Any]:
    """A database row exists."""
    row_id = store.insert_row(
        ws, p.database_id, p.title, p.properties, p.author, p.created_at or ws.clock.now_text()
    )
    return {"row_id": row_id}


@WORLD.operation(EditPage)
def edit_page(ws: Workspace, p: EditPage) -> dict[str, Any]:
    """A colleague edits a page (an article updated, a plan revised)."""
    row = store.page_row(ws, p.page_id)
    changes: dict[str, Any] = {}
    if p.title is not None:
        changes["title"] = store.text(p.title, "title")
    if p.body is not None and p.append is not None:
        raise ServiceError("give either body or append, not both")
    if p.body is not None:
        changes["body"] = p.body
    if p.append is not None:
        changes["body"] = row["body"].rstrip("\n") + "\n" + p.append
    if not changes:
        raise ServiceError("edit_page needs a title, body or append")
    store.edit_page(ws, p.page_id, changes, p.editor, ws.clock.now_text())
    return {"page_id": p.page_id, "changed": sorted(changes)}


@WORLD.operation(EditRow)
def edit_row(ws: Workspace, p: EditRow) -> dict[str, Any]:
    """A colleague changes a database row (a task's status, its owner)."""
    store.update_row(ws, p.row_id, p.title, p.properties, p.editor, ws.clock.now_text())
    return {"row_id": p.row_id, "changed": sorted([*p.properties, *(["title"] if p.title else [])])}
