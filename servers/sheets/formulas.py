"""Spreadsheet formulas: parsing (`parse_formula`) and deterministic evaluation (`evaluate`).

A formula is the text after `=` in a cell: numbers, "text", TRUE/FALSE, cell references
(`B7`, `$B$7`, `Budget!B7`, `'Price list'!A2:D9`, whole columns `A:A`), the operators
`+ - * / ^ & = <> < > <= >=` and `%`, and the functions in `FUNCTIONS`. The values and
errors follow the spreadsheet conventions people know: an empty cell counts as 0 in
arithmetic and is skipped by SUM and AVERAGE, text compares without case, ROUND rounds
halves away from zero, and errors (`#DIV/0!`, `#N/A`, `#VALUE!`, `#REF!`, `#CYCLE!`)
flow through to every formula that uses them.

Evaluation is exact and the same on every machine: sums are computed with `math.fsum`
and every result is rounded to 10 decimal places, so `0.1 + 0.2` is `0.3`.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from typing import Any

from .a1 import AddressError, CellRange, parse_range

#: Digits kept after the decimal point in every result (hides binary noise like 0.30000000000000004).
DECIMALS = 10

ERRORS = ("#DIV/0!", "#N/A", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#CYCLE!")


class FormulaError(ValueError):
    """A formula that cannot be parsed; the message says what is wrong and what is allowed."""


class CellError(str):
    """An error value (`#DIV/0!`, ...) a formula produced; stored and shown as its text."""

    __slots__ = ()


Value = float | int | str | bool | None
#: A value or the 2-D rows of a range.
Result = Value | list[list[Value]]


# ---------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<string>"(?:[^"]|"")*")
  | (?P<ref>(?:'(?:[^']|'')+'!|[A-Za-z_][A-Za-z0-9_.]*!)?
        (?:\$?[A-Za-z]{1,3}\$?[0-9]+(?::\$?[A-Za-z]{1,3}\$?[0-9]+)?|\$?[A-Za-z]{1,3}:\$?[A-Za-z]{1,3})
        (?![A-Za-z0-9_(]))
  | (?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+)
  | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<op><>|<=|>=|[-+*/^&=<>%(),:])
)""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Node:
    """One node of a parsed formula: `kind` is num, str, bool, ref, call, unary, binary or percent."""

    kind: str
    value: Any = None
    args: tuple[Node, ...] = ()


@dataclass(frozen=True)
class Formula:
    """A parsed formula and the ranges it reads."""

    text: str
    root: Node

    @property
    def references(self) -> list[CellRange]:
        return list(_refs(self.root))


def _refs(node: Node) -> Iterator[CellRange]:
    if node.kind == "ref":
        yield node.value
    for arg in node.args:
        yield from _refs(arg)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise FormulaError(f"formula ={text} cannot be read at {text[at:].strip()[:20]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        at = match.end()
    return out


_BINARY = {
    "=": 1,
    "<>": 1,
    "<": 1,
    ">": 1,
    "<=": 1,
    ">=": 1,
    "&": 2,
    "+": 3,
    "-": 3,
    "*": 4,
    "/": 4,
    "^": 5,
}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise FormulaError(f"formula ={self.text} ends too early; is a ')' or a value missing?")
        self.at += 1
        return token

    def expect(self, op: str) -> None:
        kind, value = self.take()
        if (kind, value) != ("op", op):
            raise FormulaError(f"formula ={self.text}: expected {op!r} but found {value!r}")

    def parse(self) -> Node:
        if not self.tokens:
            raise FormulaError("a formula needs something after '='")
        node = self.expression(0)
        left = self.peek()
        if left is not None:
            raise FormulaError(f"formula ={self.text}: unexpected {left[1]!r}")
        return node

    def expression(self, level: int) -> Node:
        left = self.unary()
        while True:
            token = self.peek()
            if token is None or token[0] != "op" or token[1] not in _BINARY:
                return left
            power = _BINARY[token[1]]
            if power <= level:
                return left
            self.take()
            # Every operator is left-associative, ^ included, as spreadsheets read 2^3^2 as 64.
            right = self.expression(power)
            left = Node("binary", token[1], (left, right))

    def unary(self) -> Node:
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in "+-":
            self.take()
            return Node("unary", token[1], (self.unary(),))
        node = self.primary()
        while (token := self.peek()) is not None and token == ("op", "%"):
            self.take()
            node = Node("percent", None, (node,))
        return node

    def primary(self) -> Node:
        kind, value = self.take()
        if kind == "number":
            number = float(value)
            return Node("num", int(number) if number.is_integer() and "e" not in value.lower() else number)
        if kind == "string":
            return Node("str", value[1:-1].replace('""', '"'))
        if kind == "ref":
            try:
                return Node("ref", parse_range(value))
            except AddressError as exc:
                raise FormulaError(f"formula ={self.text}: {exc}") from None
        if kind == "name":
            upper = value.upper()
            if self.peek() == ("op", "("):
                self.take()
                if upper not in FUNCTIONS:
                    raise FormulaError(
                        f"formula ={self.text}: unknown function {value}; "
                        f"supported functions: {', '.join(sorted(FUNCTIONS))}"
                    )
                args: list[Node] = []
                if self.peek() != ("op", ")"):
                    args.append(self.expression(0))
                    while self.peek() == ("op", ","):
                        self.take()
                        args.append(self.expression(0))
                self.expect(")")
                low, high = FUNCTIONS[upper].arity
                if not low <= len(args) <= high:
                    wanted = str(low) if low == high else f"{low} to {high if high < 99 else 'any'}"
                    raise FormulaError(
                        f"formula ={self.text}: {upper} takes {wanted} arguments, not {len(args)}"
                    )
                return Node("call", upper, tuple(args))
            if upper in ("TRUE", "FALSE"):
                return Node("bool", upper == "TRUE")
            raise FormulaError(
                f"formula ={self.text}: {value!r} is neither a cell address nor a function call; "
                'put text in double quotes ("like this")'
            )
        if (kind, value) == ("op", "("):
            node = self.expression(0)
            self.expect(")")
            return node
        raise FormulaError(f"formula ={self.text}: unexpected {value!r}")


@lru_cache(maxsize=4096)
def parse_formula(text: str) -> Formula:
    """Parse the text of a formula (without its leading `=`). Raises `FormulaError`."""
    return Formula(text, _Parser(text).parse())


# ---------------------------------------------------------------- evaluation


class Sheets:
    """What evaluation reads: a cell's value on a sheet, and a sheet's last used row."""

    def __init__(
        self,
        value: Callable[[str, int, int], Value],
        last_row: Callable[[str], int | None],
    ) -> None:
        self.value = value
        self.last_row = last_row


def evaluate(formula: Formula, sheet: str, sheets: Sheets) -> Value:
    """The value of `formula` in a cell of `sheet` (references without a sheet name mean it)."""
    try:
        result = _eval(formula.root, sheet, sheets)
    except _Raised as raised:
        return raised.error
    if isinstance(result, list):
        if len(result) == 1 and len(result[0]) == 1:
            result = result[0][0]
        else:
            return CellError("#VALUE!")
    return normal(result)


def normal(value: Value) -> Value:
    """A number rounded to `DECIMALS` places, integral floats as ints; anything else as is."""
    if isinstance(value, bool) or not isinstance(value, float):
        return value
    if not math.isfinite(value):
        return CellError("#NUM!")
    rounded = round(value, DECIMALS)
    return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded


class _Raised(Exception):
    def __init__(self, error: str) -> None:
        self.error = CellError(error)


def _fail(error: str) -> Any:
    raise _Raised(error)


def _eval(node: Node, sheet: str, sheets: Sheets) -> Result:
    kind = node.kind
    if kind in ("num", "str", "bool"):
        return node.value
    if kind == "ref":
        return _read(node.value, sheet, sheets)
    if kind == "unary":
        number = _number(_single(_eval(node.args[0], sheet, sheets)))
        return -number if node.value == "-" else number
    if kind == "percent":
        return _number(_single(_eval(node.args[0], sheet, sheets))) / 100
    if kind == "binary":
        left = _single(_eval(node.args[0], sheet, sheets))
        right = _single(_eval(node.args[1], sheet, sheets))
        return _binary(node.value, left, right)
    function = FUNCTIONS[node.value]
    if function.lazy:
        return function.fn(lambda i: _eval(node.args[i], sheet, sheets), len(node.args))
    return function.fn(*[_eval(arg, sheet, sheets) for arg in node.args])


def _read(ref: CellRange, sheet: str, sheets: Sheets) -> Result:
    name = ref.sheet or sheet
    last = sheets.last_row(name)
    if last is None:
        _fail("#REF!")
    bounded = ref.bounded(last or 1)
    assert bounded.last_row is not None
    if bounded.first_row == bounded.last_row and bounded.first_col == bounded.last_col:
        return _checked(sheets.value(name, bounded.first_row, bounded.first_col))
    return [
        [_checked(sheets.value(name, r, c)) for c in range(bounded.first_col, bounded.last_col + 1)]
        for r in range(bounded.first_row, bounded.last_row + 1)
    ]


def _checked(value: Value) -> Value:
    if isinstance(value, str) and value in ERRORS:
        return CellError(value)
    return value


def _single(value: Result) -> Value:
    if isinstance(value, list):
        if len(value) != 1 or len(value[0]) != 1:
            raise _Raised("#VALUE!")
        value = value[0][0]
    if isinstance(value, CellError):
        raise _Raised(value)
    return value


def _number(value: Value) -> float | int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    try:
        return float(str(value).strip().replace(",", ""))
    except ValueError:
        return _fail("#VALUE!")


def _text(value: Value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        value = normal(value)
    return str(value)


def _binary(op: str, left: Value, right: Value) -> Value:
    if op == "&":
        return _text(left) + _text(right)
    if op in ("=", "<>", "<", ">", "<=", ">="):
        order = _compare(left, right)
        return {
            "=": order == 0,
            "<>": order != 0,
            "<": order < 0,
            ">": order > 0,
            "<=": order <= 0,
            ">=": order >= 0,
        }[op]
    a, b = _number(left), _number(right)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b if b != 0 else _fail("#DIV/0!")
    try:
        return float(a) ** float(b)
    except (OverflowError, ZeroDivisionError):
        return _fail("#NUM!")


def _rank(value: Value) -> int:
    if isinstance(value, bool):
        return 2
    if isinstance(value, str):
        return 1
    return 0


def _compare(left: Value, right: Value) -> int:
    """-1, 0 or 1; numbers sort before text, text before booleans; text ignores case; an
    empty cell equals 0 and the empty text."""
    if left is None:
        left = "" if isinstance(right, str) else 0
    if right is None:
        right = "" if isinstance(left, str) else 0
    if _rank(left) != _rank(right):
        return -1 if _rank(left) < _rank(right) else 1
    a: Any = left.lower() if isinstance(left, str) else left
    b: Any = right.lower() if isinstance(right, str) else right
    return (a > b) - (a < b)


def _cells(args: tuple[Result, ...]) -> Iterator[tuple[Value, bool]]:
    """Every value of the arguments, each with whether it came from a range (a cell)."""
    for arg in args:
        if isinstance(arg, list):
            for row in arg:
                for value in row:
                    yield value, True
        else:
            yield arg, False


def _numbers(args: tuple[Result, ...]) -> list[float | int]:
    """The numbers SUM and AVERAGE count: numbers in ranges (text and empty cells skipped),
    and every direct argument read as a number."""
    out: list[float | int] = []
    for value, in_range in _cells(args):
        if isinstance(value, CellError):
            raise _Raised(value)
        if in_range:
            if isinstance(value, int | float) and not isinstance(value, bool):
                out.append(value)
        else:
            out.append(_number(value))
    return out


def _sum(*args: Result) -> Value:
    return math.fsum(_numbers(args))


def _average(*args: Result) -> Value:
    numbers = _numbers(args)
    return math.fsum(numbers) / len(numbers) if numbers else _fail("#DIV/0!")


def _min(*args: Result) -> Value:
    return min(_numbers(args), default=0)


def _max(*args: Result) -> Value:
    return max(_numbers(args), default=0)


def _count(*args: Result) -> Value:
    return sum(
        1 for value, _ in _cells(args) if isinstance(value, int | float) and not isinstance(value, bool)
    )


def _counta(*args: Result) -> Value:
    return sum(1 for value, _ in _cells(args) if value is not None and value != "")


def _grid(value: Result) -> list[list[Value]]:
    return value if isinstance(value, list) else [[value]]


def _criterion(criterion: Result) -> Callable[[Value], bool]:
    """A COUNTIF/SUMIF criterion: a value (equal to it), or text starting with an operator
    (`">100"`, `"<>closed"`); text may use the wildcards * and ?."""
    wanted = _single(criterion)
    op = "="
    if isinstance(wanted, str):
        match = re.match(r"^(<>|<=|>=|=|<|>)(.*)$", wanted, re.DOTALL)
        if match:
            op, rest = match.group(1), match.group(2)
            try:
                wanted = float(rest) if rest.strip() else rest
            except ValueError:
                wanted = rest
        else:
            with contextlib.suppress(ValueError):
                wanted = float(wanted)
    if isinstance(wanted, str) and op in ("=", "<>") and any(ch in wanted for ch in "*?"):
        pattern = re.compile(
            "^" + "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in wanted) + "$",
            re.IGNORECASE | re.DOTALL,
        )

        def wildcard(value: Value) -> bool:
            found = isinstance(value, str) and pattern.match(value) is not None
            return found if op == "=" else not found

        return wildcard

    def test(value: Value) -> bool:
        if isinstance(wanted, int | float) and not isinstance(wanted, bool) and isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                return op == "<>"
        if op in ("<", ">", "<=", ">=") and (value is None or _rank(value) != _rank(wanted)):
            return False
        if op == "=" and value is None:
            return wanted == ""
        return _binary(op, value, wanted) is True

    return test


def _countif(cells: Result, criterion: Result) -> Value:
    test = _criterion(criterion)
    return sum(1 for row in _grid(cells) for value in row if test(value))


def _sumif(cells: Result, criterion: Result, summed: Result = None) -> Value:
    test = _criterion(criterion)
    tested = _grid(cells)
    values = _grid(summed) if summed is not None else tested
    total: list[float] = []
    for r, row in enumerate(tested):
        for c, value in enumerate(row):
            if test(value) and r < len(values) and c < len(values[r]):
                picked = values[r][c]
                if isinstance(picked, CellError):
                    raise _Raised(picked)
                if isinstance(picked, int | float) and not isinstance(picked, bool):
                    total.append(picked)
    return math.fsum(total)


def _round(value: Result, digits: Result = 0) -> Value:
    number = _number(_single(value))
    places = int(_number(_single(digits)))
    exponent = Decimal(1).scaleb(-places)
    rounded = Decimal(repr(float(number))).quantize(exponent, rounding=ROUND_HALF_UP)
    return float(rounded)


def _abs(value: Result) -> Value:
    return abs(_number(_single(value)))


def _truth(value: Value) -> bool:
    if isinstance(value, str):
        if value.upper() in ("TRUE", "FALSE"):
            return value.upper() == "TRUE"
        return _fail("#VALUE!")
    return bool(_number(value))


def _if(arg: Callable[[int], Result], count: int) -> Result:
    if _truth(_single(arg(0))):
        return arg(1)
    return arg(2) if count > 2 else False


def _iferror(arg: Callable[[int], Result], count: int) -> Result:
    try:
        value = arg(0)
        if isinstance(value, CellError):
            return arg(1)
        return value
    except _Raised:
        return arg(1)


def _and(*args: Result) -> Value:
    return all(_truth(v) for v, _ in _cells(args) if v is not None)


def _or(*args: Result) -> Value:
    return any(_truth(v) for v, _ in _cells(args) if v is not None)


def _not(value: Result) -> Value:
    return not _truth(_single(value))


def _concat(*args: Result) -> Value:
    return "".join(_text(_single(v) if not in_range else v) for v, in_range in _cells(args))


def _vlookup(wanted: Result, table: Result, column: Result, approximate: Result = True) -> Value:
    key = _single(wanted)
    rows = _grid(table)
    index = int(_number(_single(column)))
    if index < 1 or index > len(rows[0]):
        return _fail("#REF!")
    if _truth(_single(approximate)):
        found = None
        for row in rows:  # the first column is sorted ascending: the last row not above the key
            if row[0] is None or _rank(row[0]) != _rank(key):
                continue
            if _compare(row[0], key) > 0:
                break
            found = row
        return found[index - 1] if found is not None else _fail("#N/A")
    for row in rows:
        if row[0] is not None and _compare(row[0], key) == 0:
            return row[index - 1]
    return _fail("#N/A")


def _xlookup(wanted: Result, looked: Result, returned: Result, if_missing: Result = None) -> Value:
    key = _single(wanted)
    keys = [v for row in _grid(looked) for v in row]
    values = [v for row in _grid(returned) for v in row]
    if len(keys) != len(values):
        return _fail("#VALUE!")
    for k, v in zip(keys, values, strict=True):
        if k is not None and _compare(k, key) == 0:
            return v
    if if_missing is not None:
        return _single(if_missing)
    return _fail("#N/A")


@dataclass(frozen=True)
class Function:
    fn: Callable[..., Any]
    arity: tuple[int, int]
    lazy: bool = False
    """Lazy functions get their arguments as thunks (IF evaluates only the branch taken)."""


FUNCTIONS: dict[str, Function] = {
    "SUM": Function(_sum, (1, 255)),
    "AVERAGE": Function(_average, (1, 255)),
    "MIN": Function(_min, (1, 255)),
    "MAX": Function(_max, (1, 255)),
    "COUNT": Function(_count, (1, 255)),
    "COUNTA": Function(_counta, (1, 255)),
    "COUNTIF": Function(_countif, (2, 2)),
    "SUMIF": Function(_sumif, (2, 3)),
    "ROUND": Function(_round, (1, 2)),
    "ABS": Function(_abs, (1, 1)),
    "IF": Function(_if, (2, 3), lazy=True),
    "IFERROR": Function(_iferror, (2, 2), lazy=True),
    "AND": Function(_and, (1, 255)),
    "OR": Function(_or, (1, 255)),
    "NOT": Function(_not, (1, 1)),
    "CONCAT": Function(_concat, (1, 255)),
    "VLOOKUP": Function(_vlookup, (3, 4)),
    "XLOOKUP": Function(_xlookup, (3, 4)),
}
