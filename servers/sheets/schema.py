"""Sheets tables (spreadsheets, their named sheets, their cells) and the models its tools return.

A cell keeps what was typed into it (`input`: a number, text, TRUE/FALSE, or a formula
starting with `=`) and what it shows (`value`: the number, text or error the formula gives).
Values follow inputs: every write recomputes the spreadsheet's formulas.
"""

from pydantic import BaseModel, Field

from coworkenv.state import ServiceSchema, TableRules

SCHEMA = ServiceSchema(
    name="sheets",
    sql="""
CREATE TABLE sheets_spreadsheets (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_editor TEXT NOT NULL
);
CREATE TABLE sheets_sheets (
    spreadsheet_id INTEGER NOT NULL REFERENCES sheets_spreadsheets(id),
    name TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (spreadsheet_id, name)
);
CREATE TABLE sheets_cells (
    spreadsheet_id INTEGER NOT NULL,
    sheet TEXT NOT NULL,
    row INTEGER NOT NULL CHECK (row >= 1),
    col INTEGER NOT NULL CHECK (col >= 1),
    input TEXT NOT NULL,
    value,
    PRIMARY KEY (spreadsheet_id, sheet, row, col),
    FOREIGN KEY (spreadsheet_id, sheet) REFERENCES sheets_sheets(spreadsheet_id, name)
);
""",
    changes={
        "sheets_spreadsheets": TableRules(
            bookkeeping=("updated_at", "last_editor"),
            free=("created_at",),
            free_text=("title",),
        ),
        "sheets_sheets": TableRules(
            match=("spreadsheet_id", "name"),
            parent=("spreadsheet_id", "sheets_spreadsheets"),
            harmless_columns=("position",),
        ),
        # A value follows its cell's input and the inputs its formula reads: a changed value
        # is explained by the input change that caused it, which is judged on its own.
        "sheets_cells": TableRules(
            match=("spreadsheet_id", "sheet", "row", "col"),
            parent=("spreadsheet_id", "sheets_spreadsheets"),
            harmless_columns=("value",),
        ),
    },
)

#: What a cell shows: a number, text (TRUE/FALSE and errors such as #DIV/0! are text), or nothing.
CellValue = int | float | str | None


class SheetInfo(BaseModel):
    """A named sheet (tab) of a spreadsheet and the size of its used area."""

    name: str
    rows: int = Field(description="The last used row (0 when the sheet is empty)")
    columns: int = Field(description="The last used column as a number (A=1)")
    used_range: str = Field(description="The used area in A1 notation, e.g. A1:E12 ('' when empty)")


class Spreadsheet(BaseModel):
    """A spreadsheet with its sheets in tab order."""

    id: int
    title: str
    owner: str
    sheets: list[SheetInfo]
    updated_at: str
    last_editor: str


class SpreadsheetList(BaseModel):
    """One page of spreadsheets, by title. `total` counts every match."""

    total: int
    spreadsheets: list[Spreadsheet]


class CellFormula(BaseModel):
    """A cell of the range that holds a formula, and what it computes."""

    cell: str = Field(description="A1 address, e.g. E7")
    formula: str = Field(description="The formula as typed, starting with '='")
    value: CellValue


class RangeValues(BaseModel):
    """The values of a range, row by row (empty cells are null), and its formulas."""

    spreadsheet_id: int
    range: str = Field(description="The range read, with its sheet, e.g. 'Price list'!A1:E12")
    values: list[list[CellValue]]
    formulas: list[CellFormula] = Field(description="The cells of the range that hold formulas")


class CellChange(BaseModel):
    """A cell whose shown value is different after a write."""

    cell: str = Field(description="Sheet and A1 address, e.g. Budget!D9")
    value: CellValue


class WriteResult(BaseModel):
    """What a write did: the range written and every formula cell whose value changed."""

    spreadsheet_id: int
    range: str
    cells_written: int
    recalculated: list[CellChange] = Field(
        description="Formula cells elsewhere in the spreadsheet whose values changed because of the write"
    )


class CellMatch(BaseModel):
    """A cell whose value (or formula) contains the text searched for."""

    sheet: str
    cell: str
    value: CellValue
    formula: str | None


class FindResult(BaseModel):
    """Matching cells in sheet, row, column order. `total` counts every match."""

    spreadsheet_id: int
    total: int
    matches: list[CellMatch]
