"""What the spreadsheet families share: reading a seeded spreadsheet, naming its cells in
checks, amounts as people write them, and the checks of a text that states a figure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coworkenv.checks import Fact, MailSent
from coworkenv.state import Workspace

SPREADSHEET_TOOLS_READ = ("sheets_list_spreadsheets", "sheets_read_range", "sheets_find_cells")


def spreadsheet_id(ws: Workspace, title: str) -> int:
    """The id of the spreadsheet titled `title` in a seeded workspace."""
    rows = ws.rows("sheets_spreadsheets", "title = ?", [title])
    if not rows:
        raise ValueError(f"the seed has no spreadsheet titled {title!r}")
    return int(rows[0]["id"])


def sheet_rows(ws: Workspace, spreadsheet: int, sheet: str) -> dict[int, dict[int, Any]]:
    """The shown values of a sheet: {row: {col: value}}."""
    out: dict[int, dict[int, Any]] = {}
    for r in ws.conn.execute(
        "SELECT row, col, value FROM sheets_cells WHERE spreadsheet_id = ? AND sheet = ? ORDER BY row, col",
        (spreadsheet, sheet),
    ):
        out.setdefault(r[0], {})[r[1]] = r[2]
    return out


def cell_input(ws: Workspace, spreadsheet: int, sheet: str, row: int, col: int) -> str:
    """What was typed into a cell (its formula, for a formula cell)."""
    found = ws.conn.execute(
        "SELECT input FROM sheets_cells WHERE spreadsheet_id = ? AND sheet = ? AND row = ? AND col = ?",
        (spreadsheet, sheet, row, col),
    ).fetchone()
    if found is None:
        raise ValueError(f"{sheet} row {row} column {col} of spreadsheet {spreadsheet} is empty")
    return str(found[0])


def cell_value(ws: Workspace, spreadsheet: int, sheet: str, row: int, col: int) -> Any:
    found = ws.conn.execute(
        "SELECT value FROM sheets_cells WHERE spreadsheet_id = ? AND sheet = ? AND row = ? AND col = ?",
        (spreadsheet, sheet, row, col),
    ).fetchone()
    return None if found is None else found[0]


def cell(spreadsheet: int, sheet: str, row: int, col: int) -> dict[str, Any]:
    """The `where` of one cell in sheets_cells."""
    return {"spreadsheet_id": spreadsheet, "sheet": sheet, "row": row, "col": col}


def a1(sheet: str, row: int, col: int) -> str:
    """'Prices!D5' (a sheet name with a space is quoted)."""
    name = f"'{sheet}'" if " " in sheet else sheet
    return f"{name}!{chr(ord('A') + col - 1)}{row}"


def money(currency: str, amount: int | float) -> str:
    """'EUR 4,800' or 'EUR 1,234.50'."""
    if isinstance(amount, float) and not amount.is_integer():
        return f"{currency} {amount:,.2f}"
    return f"{currency} {int(amount):,}"


def with_context(check: MailSent, context: Sequence[Fact]) -> MailSent:
    """`check` with values the mail may also state beside its facts (source figures)."""
    return MailSent.model_validate({**check.model_dump(exclude_defaults=True), "context": list(context)})


def distinct(values: Sequence[int | float]) -> list[int | float]:
    """`values` without repeats, in order."""
    return list(dict.fromkeys(values))
