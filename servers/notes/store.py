"""Reading and writing pages and databases, shared by the tools and the world operations.
Broken rules raise `ServiceError` with a message that says what to do instead."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from coworkenv.state import Workspace

from ..toolkit import ServiceError
from .schema import (
    Database,
    DatabaseSummary,
    Filter,
    Page,
    PageHit,
    PageSummary,
    Property,
    PropertyValue,
    Row,
)

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
#: The most rows a database query reads before filtering (databases are team-sized).
MAX_DATABASE_ROWS = 5000


def text(value: str, field: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ServiceError(f"{field} must not be blank")
    return stripped


# ---------------------------------------------------------------- pages


def page_row(ws: Workspace, page_id: int) -> dict[str, Any]:
    rows = ws.rows("notes_pages", "id = ?", [page_id])
    if not rows:
        raise ServiceError(f"no page with id {page_id}; search_pages returns valid ids")
    return rows[0]


def check_not_archived(row: dict[str, Any]) -> None:
    if row["archived"]:
        raise ServiceError(f"page {row['id']} is archived; create a new page instead")


def summary(row: dict[str, Any]) -> PageSummary:
    return PageSummary(**{k: row[k] for k in PageSummary.model_fields})


def path_of(ws: Workspace, row: dict[str, Any]) -> list[str]:
    titles, parent, seen = [row["title"]], row["parent_id"], {row["id"]}
    while parent is not None and parent not in seen:
        seen.add(parent)
        above = ws.conn.execute("SELECT title, parent_id FROM notes_pages WHERE id = ?", (parent,)).fetchone()
        if above is None:
            break
        titles.append(above[0])
        parent = above[1]
    return titles[::-1]


def load_page(ws: Workspace, page_id: int) -> Page:
    row = page_row(ws, page_id)
    children = ws.rows("notes_pages", "parent_id = ? AND archived = 0 ORDER BY title, id", [page_id])
    databases = [
        DatabaseSummary(id=i, title=t, row_count=n)
        for i, t, n in ws.conn.execute(
            "SELECT d.id, d.title, (SELECT COUNT(*) FROM notes_rows r WHERE r.database_id = d.id) "
            "FROM notes_databases d WHERE d.parent_id = ? ORDER BY d.title",
            (page_id,),
        )
    ]
    return Page(
        **summary(row).model_dump(),
        body=row["body"],
        path=path_of(ws, row),
        created_by=row["created_by"],
        created_at=row["created_at"],
        archived=bool(row["archived"]),
        children=[summary(c) for c in children],
        databases=databases,
    )


def search_pages(
    ws: Workspace, query: str, kind: str | None, parent_id: int | None, limit: int, offset: int
) -> tuple[int, list[PageHit]]:
    """Pages (not archived) with every word of `query` in the title or body; titles that
    match come first, then the most recently updated."""
    where, params = ["archived = 0"], []
    words = query.split()
    for word in words:
        where.append("(title LIKE ? OR body LIKE ?)")
        params += [f"%{word}%"] * 2
    if kind is not None:
        where.append("kind = ?")
        params.append(kind)
    if parent_id is not None:
        where.append("parent_id = ?")
        params.append(str(parent_id))
    clause = " AND ".join(where)
    in_title = " + ".join(["(title LIKE ?)"] * len(words))
    order = f"({in_title}) DESC, " if words else ""
    total = ws.conn.execute(f"SELECT COUNT(*) FROM notes_pages WHERE {clause}", params).fetchone()[0]
    rows = ws.rows(
        "notes_pages",
        f"{clause} ORDER BY {order}updated_at DESC, id LIMIT ? OFFSET ?",
        [*params, *[f"%{w}%" for w in words], limit, offset],
    )
    return total, [PageHit(**summary(r).model_dump(), snippet=_snippet(r["body"], words)) for r in rows]


def _snippet(body: str, words: list[str]) -> str:
    lines = [line for line in body.splitlines() if line.strip()]
    lowered = [w.lower() for w in words]
    hits = [line for line in lines if any(w in line.lower() for w in lowered)] or lines
    return "\n".join(hits[:2])[:300]


def check_parent(ws: Workspace, parent_id: int | None, page_id: int | None = None) -> None:
    """A parent must exist, not be archived, and not be the page itself or below it."""
    if parent_id is None:
        return
    parent = page_row(ws, parent_id)
    check_not_archived(parent)
    at: int | None = parent_id
    while page_id is not None and at is not None:
        if at == page_id:
            raise ServiceError(f"page {page_id} cannot move under itself or one of its own sub-pages")
        found = ws.conn.execute("SELECT parent_id FROM notes_pages WHERE id = ?", (at,)).fetchone()
        at = found[0] if found else None


def insert_page(
    ws: Workspace, title: str, body: str, parent_id: int | None, kind: str, author: str, at: str
) -> int:
    check_parent(ws, parent_id)
    cur = ws.conn.execute(
        "INSERT INTO notes_pages (title, body, parent_id, kind, created_by, last_editor, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (text(title, "title"), body, parent_id, kind, author, author, at, at),
    )
    return int(cur.lastrowid or 0)


def edit_page(ws: Workspace, page_id: int, changes: dict[str, Any], editor: str, at: str) -> None:
    sets = ", ".join(f"{k} = ?" for k in changes)
    ws.conn.execute(
        f"UPDATE notes_pages SET {sets}, last_editor = ?, updated_at = ? WHERE id = ?",
        (*changes.values(), editor, at, page_id),
    )


# ---------------------------------------------------------------- databases


def database_row(ws: Workspace, database_id: int) -> dict[str, Any]:
    rows = ws.rows("notes_databases", "id = ?", [database_id])
    if not rows:
        raise ServiceError(f"no database with id {database_id}; list_databases returns valid ids")
    return rows[0]


def properties_of(ws: Workspace, database_id: int) -> list[Property]:
    return [
        Property(name=n, type=t, options=json.loads(o), target_database_id=target)
        for n, t, o, target in ws.conn.execute(
            "SELECT name, type, options, target_database_id FROM notes_properties WHERE database_id = ? ORDER BY position",
            (database_id,),
        )
    ]


def load_database(ws: Workspace, database_id: int) -> Database:
    row = database_row(ws, database_id)
    count = ws.conn.execute(
        "SELECT COUNT(*) FROM notes_rows WHERE database_id = ?", (database_id,)
    ).fetchone()[0]
    return Database(
        id=row["id"],
        title=row["title"],
        description=row["description"],
        parent_id=row["parent_id"],
        properties=properties_of(ws, database_id),
        row_count=count,
    )


def row_record(ws: Workspace, row_id: int) -> dict[str, Any]:
    rows = ws.rows("notes_rows", "id = ?", [row_id])
    if not rows:
        raise ServiceError(f"no database row with id {row_id}; query_database returns valid row ids")
    return rows[0]


def _shown(kind: str, value: Any) -> PropertyValue:
    if kind == "checkbox":
        return bool(value)
    if kind in ("multi_select", "relation"):
        return json.loads(value)
    return value


def rows_of(ws: Workspace, database_id: int, records: list[dict[str, Any]]) -> list[Row]:
    props = properties_of(ws, database_id)
    kinds = {p.name: p.type for p in props}
    values: dict[int, dict[str, PropertyValue]] = {r["id"]: dict.fromkeys(kinds) for r in records}
    ids = list(values)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for row_id, name, value in ws.conn.execute(
            f"SELECT row_id, property, value FROM notes_values WHERE row_id IN ({marks})", chunk
        ):
            if name in kinds:
                values[row_id][name] = _shown(kinds[name], value)
    return [
        Row(
            id=r["id"],
            database_id=r["database_id"],
            title=r["title"],
            properties=values[r["id"]],
            created_by=r["created_by"],
            last_editor=r["last_editor"],
            updated_at=r["updated_at"],
        )
        for r in records
    ]


def load_row(ws: Workspace, row_id: int) -> Row:
    record = row_record(ws, row_id)
    return rows_of(ws, record["database_id"], [record])[0]


def _property(props: list[Property], name: str, database_id: int) -> Property:
    for prop in props:
        if prop.name.lower() == name.strip().lower():
            return prop
    names = ", ".join(f"{p.name} ({p.type})" for p in props)
    raise ServiceError(f"database {database_id} has no property {name!r}; its properties are: {names}")


def stored_value(ws: Workspace, prop: Property, value: Any) -> Any:
    """The stored form of a value given for `prop`, checked against its type; None clears it."""
    if value is None:
        return None
    kind, name = prop.type, prop.name
    if kind == "checkbox":
        if not isinstance(value, bool):
            raise ServiceError(f"{name} is a checkbox: give true or false, not {value!r}")
        return int(value)
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ServiceError(f"{name} is a number property: give a number, not {value!r}")
        return value
    if kind in ("multi_select", "relation"):
        items = value if isinstance(value, list) else [value]
        if kind == "multi_select":
            return json.dumps(sorted({_option(prop, item) for item in items}))
        ids = sorted({_related(ws, prop, item) for item in items})
        return json.dumps(ids)
    if not isinstance(value, str):
        raise ServiceError(f"{name} is a {kind} property: give text, not {value!r}")
    if kind == "select":
        return _option(prop, value)
    if kind == "date":
        try:
            return date.fromisoformat(value.strip()[:10]).isoformat()
        except ValueError:
            raise ServiceError(f"{name} is a date: give YYYY-MM-DD, not {value!r}") from None
    if kind == "person":
        address = value.strip().lower()
        if not _EMAIL.match(address):
            raise ServiceError(f"{name} is a person: give their email address, not {value!r}")
        return address
    return value.strip() or None


def _option(prop: Property, value: Any) -> str:
    if not isinstance(value, str):
        raise ServiceError(f"{prop.name} takes options as text, not {value!r}")
    for option in prop.options:
        if option.lower() == value.strip().lower():
            return option
    raise ServiceError(
        f"{value!r} is not an option of {prop.name}; its options are: {', '.join(prop.options)}"
    )


def _related(ws: Workspace, prop: Property, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ServiceError(
            f"{prop.name} is a relation: give row ids (numbers) of its database, not {value!r}"
        )
    found = ws.conn.execute(
        "SELECT 1 FROM notes_rows WHERE id = ? AND database_id = ?", (value, prop.target_database_id)
    ).fetchone()
    if found is None:
        raise ServiceError(
            f"{prop.name} points to rows of database {prop.target_database_id}; row {value} is not one of them "
            f"(query_database {prop.target_database_id} lists them)"
        )
    return value


def set_values(ws: Workspace, database_id: int, row_id: int, given: Mapping[str, Any]) -> None:
    props = properties_of(ws, database_id)
    checked: list[tuple[str, Any]] = []
    for name, value in given.items():
        prop = _property(props, name, database_id)
        checked.append((prop.name, stored_value(ws, prop, value)))
    for name, value in checked:
        if value is None:
            ws.conn.execute("DELETE FROM notes_values WHERE row_id = ? AND property = ?", (row_id, name))
            continue
        updated = ws.conn.execute(
            "UPDATE notes_values SET value = ? WHERE row_id = ? AND property = ? AND value IS NOT ?",
            (value, row_id, name, value),
        ).rowcount
        if not updated:
            ws.conn.execute(
                "INSERT OR IGNORE INTO notes_values (row_id, property, value) VALUES (?, ?, ?)",
                (row_id, name, value),
            )


def insert_row(
    ws: Workspace, database_id: int, title: str, values: Mapping[str, Any], author: str, at: str
) -> int:
    database_row(ws, database_id)
    cur = ws.conn.execute(
        "INSERT INTO notes_rows (database_id, title, created_by, last_editor, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (database_id, text(title, "title"), author, author, at, at),
    )
    row_id = int(cur.lastrowid or 0)
    set_values(ws, database_id, row_id, values)
    return row_id


def update_row(
    ws: Workspace, row_id: int, title: str | None, values: Mapping[str, Any], editor: str, at: str
) -> None:
    record = row_record(ws, row_id)
    if title is None and not values:
        raise ServiceError("nothing to change: give a title or properties")
    if title is not None:
        ws.conn.execute("UPDATE notes_rows SET title = ? WHERE id = ?", (text(title, "title"), row_id))
    set_values(ws, record["database_id"], row_id, values)
    ws.conn.execute(
        "UPDATE notes_rows SET last_editor = ?, updated_at = ? WHERE id = ?", (editor, at, row_id)
    )


def query_rows(
    ws: Workspace,
    database_id: int,
    filters: list[Filter],
    sort_by: str | None,
    descending: bool,
) -> list[Row]:
    """Every row of the database that passes all filters, sorted (unset values last)."""
    database_row(ws, database_id)
    props = properties_of(ws, database_id)
    checks = [
        (f, None if f.property.lower() == "title" else _property(props, f.property, database_id))
        for f in filters
    ]
    records = ws.rows("notes_rows", "database_id = ? ORDER BY id LIMIT ?", [database_id, MAX_DATABASE_ROWS])
    rows = [r for r in rows_of(ws, database_id, records) if all(_passes(ws, r, f, p) for f, p in checks)]
    if sort_by is not None:
        key_prop = None if sort_by.strip().lower() == "title" else _property(props, sort_by, database_id)

        def key(row: Row) -> tuple[int, Any]:
            value = row.title if key_prop is None else row.properties.get(key_prop.name)
            if value is None:
                return (1, "")
            if isinstance(value, list):
                value = ",".join(map(str, value))
            return (0, value.lower() if isinstance(value, str) else value)

        present = [r for r in rows if key(r)[0] == 0]
        missing = [r for r in rows if key(r)[0] == 1]
        rows = sorted(present, key=key, reverse=descending) + missing
    return rows


def _passes(ws: Workspace, row: Row, f: Filter, prop: Property | None) -> bool:
    value = row.title if prop is None else row.properties.get(prop.name)
    if f.op == "is_empty":
        return value is None or value == []
    if f.op == "is_not_empty":
        return not (value is None or value == [])
    if f.value is None:
        raise ServiceError(f"filter {f.op} on {f.property} needs a value")
    wanted = f.value if prop is None else _comparable(ws, prop, f)
    if f.op in ("equals", "not_equals"):
        same = _same(value, wanted)
        return same if f.op == "equals" else not same
    if value is None:
        return False
    if f.op == "contains":
        if isinstance(value, list):
            return any(_same(item, wanted) for item in value)
        return isinstance(value, str) and str(wanted).lower() in value.lower()
    if f.op in ("greater_than", "less_than", "on_or_after", "on_or_before"):
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (value, wanted))
        texts = isinstance(value, str) and isinstance(wanted, str)
        if not (numbers or texts):
            raise ServiceError(
                f"filter {f.op} compares numbers or dates; {f.property} holds {value!r}, compared with {wanted!r}"
            )
        return {
            "greater_than": value > wanted,
            "less_than": value < wanted,
            "on_or_after": value >= wanted,
            "on_or_before": value <= wanted,
        }[f.op]
    return False


def _comparable(ws: Workspace, prop: Property, f: Filter) -> Any:
    """The filter's value as the property stores it (a select option in its stored case, a
    date in ISO form); for contains on a list property, one item."""
    if prop.type in ("multi_select", "relation") and f.op in ("contains", "equals", "not_equals"):
        if f.op == "contains":
            return _option(prop, f.value) if prop.type == "multi_select" else f.value
        return json.loads(stored_value(ws, prop, f.value))
    if prop.type in ("select", "date", "person", "checkbox", "number"):
        value = stored_value(ws, prop, f.value)
        return bool(value) if prop.type == "checkbox" else value
    return f.value


def _same(value: Any, wanted: Any) -> bool:
    if isinstance(value, str) and isinstance(wanted, str):
        return value.lower() == wanted.strip().lower()
    return bool(value == wanted)


def add_database(
    ws: Workspace,
    title: str,
    description: str,
    parent_id: int | None,
    properties: Sequence[tuple[str, str, list[str], int | None]],
    at: str,
) -> int:
    name = text(title, "title")
    if ws.rows("notes_databases", "lower(title) = lower(?)", [name]):
        raise ServiceError(f"a database titled {name!r} already exists")
    check_parent(ws, parent_id)
    cur = ws.conn.execute(
        "INSERT INTO notes_databases (title, description, parent_id, created_at) VALUES (?, ?, ?, ?)",
        (name, description, parent_id, at),
    )
    database_id = int(cur.lastrowid or 0)
    for position, (prop, kind, options, target) in enumerate(properties):
        if kind == "relation" and target is None:
            target = database_id  # a relation without a target points within its own database
        ws.conn.execute(
            "INSERT INTO notes_properties (database_id, name, type, options, target_database_id, position) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (database_id, text(prop, "property name"), kind, json.dumps(options), target, position),
        )
    return database_id
