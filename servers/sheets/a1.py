"""A1 notation: cell addresses (`B7`), ranges (`A1:C10`, whole columns `A:C`) and the
sheet they may name (`Budget!A1:C4`, `'Price list'!A:D`). Rows and columns count from 1."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The largest row and column a sheet holds (column ZZ); addresses beyond are refused.
MAX_ROW = 10_000
MAX_COL = 702

_CELL = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]{1,6})$")
_COLUMN = re.compile(r"^\$?([A-Za-z]{1,3})$")
A1_HINT = "use A1 notation such as B7, A1:C10, A:C or 'Price list'!A1:D20"


class AddressError(ValueError):
    """A cell or range address that is not valid A1 notation; the message shows valid forms."""


def column_number(letters: str) -> int:
    """`A` -> 1, `Z` -> 26, `AA` -> 27."""
    n = 0
    for ch in letters.upper():
        n = n * 26 + ord(ch) - 64
    return n


def column_letters(number: int) -> str:
    """1 -> `A`, 27 -> `AA`."""
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def cell_name(row: int, col: int) -> str:
    return f"{column_letters(col)}{row}"


@dataclass(frozen=True)
class CellRange:
    """A rectangle of cells on one sheet (None: the sheet the caller means). A whole-column
    range (`A:C`) has `last_row` None: it reaches the last used row."""

    sheet: str | None
    first_row: int
    first_col: int
    last_row: int | None
    last_col: int

    @property
    def a1(self) -> str:
        start = cell_name(self.first_row, self.first_col)
        end = (
            column_letters(self.last_col)
            if self.last_row is None
            else cell_name(self.last_row, self.last_col)
        )
        if self.last_row is None:
            start = column_letters(self.first_col)
        text = start if start == end else f"{start}:{end}"
        if self.sheet is None:
            return text
        quoted = self.sheet if re.fullmatch(r"[A-Za-z0-9_]+", self.sheet) else f"'{self.sheet}'"
        return f"{quoted}!{text}"

    def bounded(self, last_used_row: int) -> CellRange:
        """The range with a whole-column end replaced by the sheet's last used row."""
        if self.last_row is not None:
            return self
        return CellRange(self.sheet, self.first_row, self.first_col, max(last_used_row, 1), self.last_col)


def split_sheet(text: str) -> tuple[str | None, str]:
    """`'Price list'!A1:B2` -> ("Price list", "A1:B2"); no `!` -> (None, text)."""
    if "!" not in text:
        return None, text
    sheet, _, rest = text.rpartition("!")
    sheet = sheet.strip()
    if len(sheet) >= 2 and sheet[0] == sheet[-1] == "'":
        sheet = sheet[1:-1].replace("''", "'")
    if not sheet:
        raise AddressError(f"{text!r} names no sheet before '!'; {A1_HINT}")
    return sheet, rest.strip()


def parse_cell(text: str) -> tuple[int, int]:
    """`B7` -> (7, 2)."""
    match = _CELL.match(text.strip())
    if not match:
        raise AddressError(f"{text!r} is not a cell address; {A1_HINT}")
    row, col = int(match.group(2)), column_number(match.group(1))
    _check_bounds(text, row, col)
    return row, col


def parse_range(text: str) -> CellRange:
    """A cell, a rectangle or whole columns, with the sheet if it names one."""
    sheet, rest = split_sheet(text.strip())
    first, _, last = rest.partition(":")
    if not last:
        row, col = parse_cell(first)
        return CellRange(sheet, row, col, row, col)
    start_col, end_col = _COLUMN.match(first.strip()), _COLUMN.match(last.strip())
    if start_col and end_col:
        a, b = column_number(start_col.group(1)), column_number(end_col.group(1))
        _check_bounds(text, 1, max(a, b))
        return CellRange(sheet, 1, min(a, b), None, max(a, b))
    (r1, c1), (r2, c2) = parse_cell(first), parse_cell(last)
    return CellRange(sheet, min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2))


def _check_bounds(text: str, row: int, col: int) -> None:
    if row < 1 or row > MAX_ROW or col > MAX_COL:
        raise AddressError(
            f"{text!r} is outside a sheet (rows 1-{MAX_ROW}, columns A-{column_letters(MAX_COL)})"
        )
