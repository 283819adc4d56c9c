"""Sheets world operations: spreadsheets for seeds; a colleague editing cells as an event."""

from typing import Any

from pydantic import BaseModel, Field

from coworkenv.state import Workspace

from ..toolkit import ServiceError, WorldOperations
from . import store

WORLD = WorldOperations("sheets")

Cell = int | float | str | bool | None


class SeedSheet(BaseModel):
    """A sheet as it already stands: its rows from A1 down (formulas as text starting with '=')."""

    name: str = Field(min_length=1)
    rows: list[list[Cell]] = Field(default_factory=list)


class AddSpreadsheet(BaseModel):
    title: str = Field(min_length=1)
    owner: str
    sheets: list[SeedSheet] = Field(min_length=1)
    created_at: str | None = Field(default=None, description="Default: now")
    last_editor: str | None = Field(default=None, description="Default: the owner")


class EditCells(BaseModel):
    """Someone writes cells of a spreadsheet (found by its title), e.g. corrects a row."""

    spreadsheet: str = Field(min_length=1, description="The spreadsheet's title")
    start: str = Field(min_length=1, description="Top-left cell with its sheet, e.g. Ledger!D7")
    values: list[list[Cell]] = Field(min_length=1)
    editor: str


def spreadsheet_id(ws: Workspace, title: str) -> int:
    """The id of the spreadsheet with `title` (ignoring case)."""
    rows = ws.rows("sheets_spreadsheets", "lower(title) = lower(?)", [title.strip()])
    if not rows:
        raise ServiceError(f"no spreadsheet titled {title!r}")
    return int(rows[0]["id"])


@WORLD.operation(AddSpreadsheet)
def add_spreadsheet(ws: Workspace, p: AddSpreadsheet) -> dict[str, Any]:
    """A spreadsheet exists (seeds): its sheets and their rows, formulas computed once."""
    created = p.created_at or ws.clock.now_text()
    new_id = store.create_spreadsheet(ws, p.title, [s.name for s in p.sheets], p.owner, created)
    for sheet in p.sheets:
        if sheet.rows:
            store.put_block(ws, new_id, sheet.name.strip(), 1, 1, sheet.rows)
    store.recalculate(ws, new_id)
    if p.last_editor is not None:
        ws.conn.execute(
            "UPDATE sheets_spreadsheets SET last_editor = ? WHERE id = ?", (p.last_editor, new_id)
        )
    return {"spreadsheet_id": new_id}


@WORLD.operation(EditCells)
def edit_cells(ws: Workspace, p: EditCells) -> dict[str, Any]:
    """A colleague edits cells (corrects a ledger row, updates a price); formulas follow."""
    found = spreadsheet_id(ws, p.spreadsheet)
    named, row, col = store.start_cell(p.start)
    sheet = store.sheet_name(ws, found, named)
    area, written, changed = store.write_cells(ws, found, sheet, row, col, p.values, p.editor)
    return {
        "spreadsheet_id": found,
        "range": area.a1,
        "cells_written": written,
        "recalculated": [c.cell for c in changed],
    }


__all__ = ["WORLD", "AddSpreadsheet", "EditCells", "SeedSheet"]
