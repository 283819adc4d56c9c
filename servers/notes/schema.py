"""Notes tables (pages in a tree, knowledge-base articles among them, and databases of typed
rows) and the models its tools return.

A page has a title, a markdown body and a parent page; `kind` article marks the how-to and
policy articles of the knowledge base. A database (a project tracker, a to-do list, meeting
notes) has typed properties; each row has a title and one value per property it sets.
"""

from typing import Any, Literal

from pydantic import BaseModel, Field

from coworkenv.state import ServiceSchema, TableRules

PageKind = Literal["page", "article"]
PropertyType = Literal["text", "number", "select", "multi_select", "date", "person", "checkbox", "relation"]
PROPERTY_TYPES: tuple[str, ...] = (
    "text",
    "number",
    "select",
    "multi_select",
    "date",
    "person",
    "checkbox",
    "relation",
)

SCHEMA = ServiceSchema(
    name="notes",
    sql="""
CREATE TABLE notes_pages (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    parent_id INTEGER REFERENCES notes_pages(id),
    kind TEXT NOT NULL CHECK (kind IN ('page', 'article')),
    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    created_by TEXT NOT NULL,
    last_editor TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX notes_pages_parent ON notes_pages(parent_id);
CREATE TABLE notes_databases (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    parent_id INTEGER REFERENCES notes_pages(id),
    created_at TEXT NOT NULL
);
CREATE TABLE notes_properties (
    database_id INTEGER NOT NULL REFERENCES notes_databases(id),
    name TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('text', 'number', 'select', 'multi_select', 'date', 'person', 'checkbox', 'relation')),
    options TEXT NOT NULL DEFAULT '[]',
    target_database_id INTEGER REFERENCES notes_databases(id),
    position INTEGER NOT NULL,
    PRIMARY KEY (database_id, name)
);
CREATE TABLE notes_rows (
    id INTEGER PRIMARY KEY,
    database_id INTEGER NOT NULL REFERENCES notes_databases(id),
    title TEXT NOT NULL,
    created_by TEXT NOT NULL,
    last_editor TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX notes_rows_database ON notes_rows(database_id);
CREATE TABLE notes_values (
    row_id INTEGER NOT NULL REFERENCES notes_rows(id),
    property TEXT NOT NULL,
    value NOT NULL,
    PRIMARY KEY (row_id, property)
);
""",
    changes={
        "notes_pages": TableRules(
            bookkeeping=("updated_at", "last_editor"),
            destructive={"archived": (1,)},
            free=("created_at",),
            free_text=("title", "body"),
        ),
        "notes_databases": TableRules(free=("created_at",), free_text=("title", "description")),
        "notes_properties": TableRules(
            match=("database_id", "name"),
            parent=("database_id", "notes_databases"),
            harmless_columns=("position",),
        ),
        "notes_rows": TableRules(
            match=("database_id",),
            parent=("database_id", "notes_databases"),
            bookkeeping=("updated_at", "last_editor"),
            free=("created_at",),
            free_text=("title",),
        ),
        "notes_values": TableRules(match=("row_id", "property"), parent=("row_id", "notes_rows")),
    },
)

#: A property's value as tools show it: text (select, date, person and text properties),
#: a number, a checkbox, a list of options (multi_select) or of row ids (relation), or null.
PropertyValue = str | int | float | bool | list[str] | list[int] | None


class PageSummary(BaseModel):
    """A page as search results and page trees show it (no body)."""

    id: int
    title: str
    kind: PageKind = Field(description="article: a knowledge-base how-to or policy; page: any other page")
    parent_id: int | None
    last_editor: str
    updated_at: str


class PageHit(PageSummary):
    """A search result: the page and the lines of its body that matched."""

    snippet: str = Field(description="The first lines of the body that contain a searched word")


class PageList(BaseModel):
    """One page of search results. `total` counts every match."""

    total: int
    pages: list[PageHit]


class DatabaseSummary(BaseModel):
    id: int
    title: str
    row_count: int


class Page(PageSummary):
    """A page in full: its markdown body, its path from the top, its child pages and databases."""

    body: str
    path: list[str] = Field(description="Titles from the top-level page down to this one")
    created_by: str
    created_at: str
    archived: bool
    children: list[PageSummary]
    databases: list[DatabaseSummary]


class Property(BaseModel):
    """A property (column) of a database."""

    name: str
    type: PropertyType
    options: list[str] = Field(description="The choices of a select or multi_select property")
    target_database_id: int | None = Field(description="For a relation: the database its rows point to")


class Database(BaseModel):
    """A database with its properties in order and how many rows it holds."""

    id: int
    title: str
    description: str
    parent_id: int | None
    properties: list[Property]
    row_count: int


class DatabaseList(BaseModel):
    databases: list[Database]


class Row(BaseModel):
    """A database row: its title and the value of every property (null when unset)."""

    id: int
    database_id: int
    title: str
    properties: dict[str, PropertyValue]
    created_by: str
    last_editor: str
    updated_at: str


class RowList(BaseModel):
    """One page of rows matching a query. `total` counts every match."""

    database_id: int
    total: int
    rows: list[Row]


FilterOp = Literal[
    "equals",
    "not_equals",
    "contains",
    "greater_than",
    "less_than",
    "on_or_after",
    "on_or_before",
    "is_empty",
    "is_not_empty",
]


class Filter(BaseModel):
    """One condition on a property; a query's filters must all hold."""

    property: str = Field(min_length=1, description="A property name, or 'title'")
    op: FilterOp = Field(
        description="equals / not_equals (any type), contains (text in text, option in multi_select, "
        "row id in relation), greater_than / less_than (numbers), on_or_after / on_or_before "
        "(dates), is_empty / is_not_empty (no value needed)"
    )
    value: Any = Field(
        default=None, description="What to compare with; leave out for is_empty / is_not_empty"
    )
