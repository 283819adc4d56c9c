"""Reading and writing spreadsheets, shared by the tools and the world operations.

Every write goes through `write_cells`, which stores the inputs and then recomputes the
spreadsheet's formulas (`recalculate`), so values always follow inputs. Broken rules raise
`ServiceError` with a message that says what to do instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from coworkenv.state import Workspace

from ..toolkit import ServiceError
from .a1 import MAX_COL, MAX_ROW, AddressError, CellRange, cell_name, column_letters, parse_cell, parse_range
from .formulas import ERRORS, CellError, FormulaError, Sheets, Value, evaluate, normal, parse_formula
from .schema import CellChange, CellFormula, CellMatch, CellValue, RangeValues, SheetInfo, Spreadsheet

#: The most cells one read returns; a larger range is refused with a hint to narrow it.
MAX_READ_CELLS = 2000
#: The most rows and columns one write or append takes.
MAX_WRITE_ROWS = 200
MAX_WRITE_COLUMNS = 26

#: What a caller may put in a cell: a number, text (a formula starts with '='), a boolean, or null to clear it.
Input = int | float | str | bool | None


def spreadsheet_row(ws: Workspace, spreadsheet_id: int) -> dict[str, Any]:
    rows = ws.rows("sheets_spreadsheets", "id = ?", [spreadsheet_id])
    if not rows:
        raise ServiceError(f"no spreadsheet with id {spreadsheet_id}; list_spreadsheets returns valid ids")
    return rows[0]


def sheet_names(ws: Workspace, spreadsheet_id: int) -> list[str]:
    return [
        name
        for (name,) in ws.conn.execute(
            "SELECT name FROM sheets_sheets WHERE spreadsheet_id = ? ORDER BY position", (spreadsheet_id,)
        )
    ]


def sheet_name(ws: Workspace, spreadsheet_id: int, wanted: str | None) -> str:
    """The stored name of a sheet given in any case; None means the first sheet."""
    names = sheet_names(ws, spreadsheet_id)
    if wanted is None:
        return names[0]
    for name in names:
        if name.lower() == wanted.strip().lower():
            return name
    raise ServiceError(
        f"spreadsheet {spreadsheet_id} has no sheet named {wanted!r}; its sheets are: {', '.join(names)}"
    )


def cell_range(text: str) -> CellRange:
    try:
        return parse_range(text)
    except AddressError as exc:
        raise ServiceError(str(exc)) from None


def used_area(ws: Workspace, spreadsheet_id: int, sheet: str) -> tuple[int, int]:
    """The last used row and column of a sheet (0, 0 when empty)."""
    rows, cols = ws.conn.execute(
        "SELECT COALESCE(MAX(row), 0), COALESCE(MAX(col), 0) FROM sheets_cells WHERE spreadsheet_id = ? AND sheet = ?",
        (spreadsheet_id, sheet),
    ).fetchone()
    return int(rows), int(cols)


def load_spreadsheet(ws: Workspace, spreadsheet_id: int) -> Spreadsheet:
    row = spreadsheet_row(ws, spreadsheet_id)
    sheets = []
    for name in sheet_names(ws, spreadsheet_id):
        rows, cols = used_area(ws, spreadsheet_id, name)
        used = f"A1:{cell_name(rows, cols)}" if rows else ""
        sheets.append(SheetInfo(name=name, rows=rows, columns=cols, used_range=used))
    return Spreadsheet(
        id=row["id"],
        title=row["title"],
        owner=row["owner"],
        sheets=sheets,
        updated_at=row["updated_at"],
        last_editor=row["last_editor"],
    )


def read_range(ws: Workspace, spreadsheet_id: int, text: str) -> RangeValues:
    spreadsheet_row(ws, spreadsheet_id)
    wanted = cell_range(text)
    sheet = sheet_name(ws, spreadsheet_id, wanted.sheet)
    last_row, _ = used_area(ws, spreadsheet_id, sheet)
    area = wanted.bounded(last_row)
    assert area.last_row is not None
    count = (area.last_row - area.first_row + 1) * (area.last_col - area.first_col + 1)
    if count > MAX_READ_CELLS:
        raise ServiceError(
            f"{text} holds {count} cells, more than the {MAX_READ_CELLS} one read returns; "
            "read a smaller range (fewer rows or columns) and page through the sheet"
        )
    grid: list[list[CellValue]] = [
        [None] * (area.last_col - area.first_col + 1) for _ in range(area.last_row - area.first_row + 1)
    ]
    formulas: list[CellFormula] = []
    for row, col, typed, value in ws.conn.execute(
        "SELECT row, col, input, value FROM sheets_cells WHERE spreadsheet_id = ? AND sheet = ? "
        "AND row BETWEEN ? AND ? AND col BETWEEN ? AND ? ORDER BY row, col",
        (spreadsheet_id, sheet, area.first_row, area.last_row, area.first_col, area.last_col),
    ):
        grid[row - area.first_row][col - area.first_col] = value
        if typed.startswith("="):
            formulas.append(CellFormula(cell=cell_name(row, col), formula=typed, value=value))
    shown = CellRange(sheet, area.first_row, area.first_col, area.last_row, area.last_col)
    return RangeValues(spreadsheet_id=spreadsheet_id, range=shown.a1, values=grid, formulas=formulas)


def find_cells(
    ws: Workspace, spreadsheet_id: int, text: str, limit: int, offset: int
) -> tuple[int, list[CellMatch]]:
    """Cells whose value or formula contains `text` (ignoring case), in sheet order."""
    spreadsheet_row(ws, spreadsheet_id)
    wanted = text.strip()
    if not wanted:
        raise ServiceError("text must not be blank: give the word or number to look for")
    where = (
        "c.spreadsheet_id = ? AND (instr(lower(CAST(c.value AS TEXT)), lower(?)) > 0 "
        "OR (substr(c.input, 1, 1) = '=' AND instr(lower(c.input), lower(?)) > 0))"
    )
    params: list[Any] = [spreadsheet_id, wanted, wanted]
    join = (
        "FROM sheets_cells c JOIN sheets_sheets s ON s.spreadsheet_id = c.spreadsheet_id AND s.name = c.sheet"
    )
    total = ws.conn.execute(f"SELECT COUNT(*) {join} WHERE {where}", params).fetchone()[0]
    rows = ws.conn.execute(
        f"SELECT c.sheet, c.row, c.col, c.value, c.input {join} WHERE {where} "
        "ORDER BY s.position, c.row, c.col LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    matches = [
        CellMatch(
            sheet=sheet,
            cell=cell_name(row, col),
            value=value,
            formula=typed if typed.startswith("=") else None,
        )
        for sheet, row, col, value, typed in rows
    ]
    return total, matches


# ---------------------------------------------------------------- writing


def typed_input(value: Input, where: str) -> str | None:
    """The stored input for a value given by a caller (None clears the cell). Text that reads
    as a number is a number, as in any spreadsheet; a formula is checked before it is stored."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise ServiceError(f"{where}: {value} is not a number a cell can hold")
        return _number_text(value)
    text = value.strip()
    if text.startswith("="):
        try:
            parse_formula(text[1:])
        except FormulaError as exc:
            raise ServiceError(f"{where}: {exc}") from None
        return text
    if text == "":
        return None
    number = _as_number(text)
    return _number_text(number) if number is not None else value


def _as_number(text: str) -> float | int | None:
    try:
        number = float(text.replace(",", "")) if text[0] in "+-.0123456789" else None
    except ValueError:
        return None
    return None if number is None or not math.isfinite(number) else number


def _number_text(number: float | int) -> str:
    shown = normal(float(number))
    return str(shown)


def constant(typed: str) -> Value:
    """The value of a typed input that is not a formula."""
    if typed.upper() in ("TRUE", "FALSE"):
        return typed.upper() == "TRUE"
    if typed in ERRORS:
        return CellError(typed)
    number = _as_number(typed)
    return normal(number) if number is not None else typed


def stored(value: Value) -> CellValue:
    """How a value is stored and shown: booleans as TRUE/FALSE text."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, CellError):
        return str(value)
    return value


def write_cells(
    ws: Workspace,
    spreadsheet_id: int,
    sheet: str,
    first_row: int,
    first_col: int,
    values: Sequence[Sequence[Input]],
    editor: str,
) -> tuple[CellRange, int, list[CellChange]]:
    """Write a block of inputs with its top-left cell at (first_row, first_col), then
    recompute. Returns the range written, how many cells it set or cleared, and the formula
    cells outside it whose values changed."""
    area, written = put_block(ws, spreadsheet_id, sheet, first_row, first_col, values)
    changed = recalculate(ws, spreadsheet_id)
    touch(ws, spreadsheet_id, editor)
    assert area.last_row is not None
    outside = [
        CellChange(cell=CellRange(s, r, c, r, c).a1, value=v)
        for (s, r, c), v in changed
        if not (s == sheet and area.first_row <= r <= area.last_row and area.first_col <= c <= area.last_col)
    ]
    return area, written, outside


def put_block(
    ws: Workspace,
    spreadsheet_id: int,
    sheet: str,
    first_row: int,
    first_col: int,
    values: Sequence[Sequence[Input]],
) -> tuple[CellRange, int]:
    """Store a block of inputs without recomputing (`recalculate` must follow)."""
    if not values or not any(len(r) for r in values):
        raise ServiceError("values is empty: give at least one row with one value, e.g. [[120]]")
    if len(values) > MAX_WRITE_ROWS or max(len(r) for r in values) > MAX_WRITE_COLUMNS:
        raise ServiceError(
            f"write at most {MAX_WRITE_ROWS} rows of {MAX_WRITE_COLUMNS} values at a time; split the write"
        )
    width = max(len(r) for r in values)
    last_row, last_col = first_row + len(values) - 1, first_col + width - 1
    if last_row > MAX_ROW or last_col > MAX_COL:
        raise ServiceError(
            f"the write would reach {cell_name(last_row, last_col)}, beyond the sheet's last cell "
            f"{column_letters(MAX_COL)}{MAX_ROW}"
        )
    cleared: list[tuple[int, str, int, int]] = []
    typed_rows: list[tuple[int, str, int, int, str]] = []
    for r, row in enumerate(values):
        for c, value in enumerate(row):
            at_row, at_col = first_row + r, first_col + c
            typed = typed_input(value, CellRange(sheet, at_row, at_col, at_row, at_col).a1)
            if typed is None:
                cleared.append((spreadsheet_id, sheet, at_row, at_col))
            else:
                typed_rows.append((spreadsheet_id, sheet, at_row, at_col, typed))
    ws.conn.executemany(
        "DELETE FROM sheets_cells WHERE spreadsheet_id = ? AND sheet = ? AND row = ? AND col = ?", cleared
    )
    # An update in place where the cell exists keeps its row (and row id); an upsert would
    # too, but its conflict policy overrides the one of the change-tracking triggers.
    for spreadsheet, name, at_row, at_col, typed in typed_rows:
        updated = ws.conn.execute(
            "UPDATE sheets_cells SET input = ? WHERE spreadsheet_id = ? AND sheet = ? AND row = ? AND col = ? "
            "AND input != ?",
            (typed, spreadsheet, name, at_row, at_col, typed),
        ).rowcount
        if not updated:
            ws.conn.execute(
                "INSERT OR IGNORE INTO sheets_cells (spreadsheet_id, sheet, row, col, input) VALUES (?, ?, ?, ?, ?)",
                (spreadsheet, name, at_row, at_col, typed),
            )
    return CellRange(sheet, first_row, first_col, last_row, last_col), len(cleared) + len(typed_rows)


def touch(ws: Workspace, spreadsheet_id: int, editor: str) -> None:
    ws.conn.execute(
        "UPDATE sheets_spreadsheets SET updated_at = ?, last_editor = ? WHERE id = ?",
        (ws.clock.now_text(), editor, spreadsheet_id),
    )


@dataclass
class _Book:
    """A spreadsheet's inputs in memory while its formulas are computed. Sheet names in
    formulas are matched without case."""

    inputs: dict[tuple[str, int, int], str]
    last_rows: dict[str, int]
    by_lower: dict[str, str]
    values: dict[tuple[str, int, int], Value] = field(default_factory=dict)
    running: set[tuple[str, int, int]] = field(default_factory=set)

    def value(self, sheet: str, row: int, col: int) -> Value:
        key = (self.by_lower.get(sheet.lower(), sheet), row, col)
        if key in self.values:
            return self.values[key]
        typed = self.inputs.get(key)
        if typed is None:
            return None
        if not typed.startswith("="):
            value = constant(typed)
        elif key in self.running:
            return CellError("#CYCLE!")  # an error flows to every formula of the loop
        else:
            self.running.add(key)
            value = evaluate(parse_formula(typed[1:]), key[0], Sheets(self.value, self.last_row))
            self.running.discard(key)
        self.values[key] = value
        return value

    def last_row(self, sheet: str) -> int | None:
        return self.last_rows.get(self.by_lower.get(sheet.lower(), sheet))


def recalculate(ws: Workspace, spreadsheet_id: int) -> list[tuple[tuple[str, int, int], CellValue]]:
    """Compute every cell's value from the inputs and store the ones that changed; returns
    the changed cells, in sheet, row, column order (a cell just written shows as changed
    when it held a value before)."""
    names = sheet_names(ws, spreadsheet_id)
    rows = ws.conn.execute(
        "SELECT sheet, row, col, input, value FROM sheets_cells WHERE spreadsheet_id = ?", (spreadsheet_id,)
    ).fetchall()
    inputs = {(s, r, c): typed for s, r, c, typed, _ in rows}
    last_rows = dict.fromkeys(names, 0)
    for s, r, _c in inputs:
        last_rows[s] = max(last_rows[s], r)
    book = _Book(inputs, last_rows, {name.lower(): name for name in names})
    changed: list[tuple[tuple[str, int, int], CellValue]] = []
    updates: list[tuple[CellValue, int, str, int, int]] = []
    for s, r, c, typed, old in rows:
        new = stored(book.value(s, r, c))
        if new != old or type(new) is not type(old):
            updates.append((new, spreadsheet_id, s, r, c))
            if typed.startswith("=") or old is not None:
                changed.append(((s, r, c), new))
    ws.conn.executemany(
        "UPDATE sheets_cells SET value = ? WHERE spreadsheet_id = ? AND sheet = ? AND row = ? AND col = ?",
        updates,
    )
    order = {name: i for i, name in enumerate(names)}
    return sorted(changed, key=lambda item: (order.get(item[0][0], 0), item[0][1], item[0][2]))


def append_rows(
    ws: Workspace, spreadsheet_id: int, sheet: str, rows: Sequence[Sequence[Input]], editor: str
) -> tuple[CellRange, int, list[CellChange]]:
    """Write `rows` below the sheet's last used row, starting in column A."""
    last_row, _ = used_area(ws, spreadsheet_id, sheet)
    return write_cells(ws, spreadsheet_id, sheet, last_row + 1, 1, rows, editor)


def start_cell(text: str) -> tuple[str | None, int, int]:
    """The sheet (if named) and top-left cell of a write's start address (`Budget!B7`, or `B7:D9`)."""
    try:
        wanted = parse_range(text)
    except AddressError as exc:
        raise ServiceError(str(exc)) from None
    if wanted.last_row is None:
        raise ServiceError(f"{text!r} is whole columns; a write starts at one cell, e.g. B7")
    return wanted.sheet, wanted.first_row, wanted.first_col


def create_spreadsheet(ws: Workspace, title: str, sheets: Sequence[str], owner: str, created_at: str) -> int:
    name = title.strip()
    if not name:
        raise ServiceError("title must not be blank")
    if ws.rows("sheets_spreadsheets", "lower(title) = lower(?)", [name]):
        raise ServiceError(
            f"a spreadsheet titled {name!r} already exists; open it (list_spreadsheets) or choose another title"
        )
    tabs = [s.strip() for s in sheets]
    if not tabs or any(not s for s in tabs):
        raise ServiceError("give at least one sheet name, none blank, e.g. ['Sheet1']")
    if len({s.lower() for s in tabs}) != len(tabs):
        raise ServiceError(f"sheet names must differ (ignoring case): {tabs}")
    bad = [s for s in tabs if any(ch in s for ch in "!'[]*?/\\:")]
    if bad:
        raise ServiceError(f"sheet names cannot hold ! ' [ ] * ? / \\ or : ({bad})")
    cur = ws.conn.execute(
        "INSERT INTO sheets_spreadsheets (title, owner, created_at, updated_at, last_editor) VALUES (?, ?, ?, ?, ?)",
        (name, owner, created_at, created_at, owner),
    )
    spreadsheet_id = int(cur.lastrowid or 0)
    ws.conn.executemany(
        "INSERT INTO sheets_sheets (spreadsheet_id, name, position) VALUES (?, ?, ?)",
        [(spreadsheet_id, s, i) for i, s in enumerate(tabs)],
    )
    return spreadsheet_id


def address(text: str) -> tuple[int, int]:
    try:
        return parse_cell(text)
    except AddressError as exc:
        raise ServiceError(str(exc)) from None
