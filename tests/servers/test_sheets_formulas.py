"""Formulas of the sheets service: parsing errors that say what to fix, and the values the
common functions give, computed the way spreadsheets compute them."""

import pytest

from coworkenv.servers.sheets.a1 import AddressError, parse_range
from coworkenv.servers.sheets.formulas import FormulaError, Sheets, Value, evaluate, parse_formula

CELLS: dict[tuple[str, int, int], Value] = {
    ("Data", 1, 1): "SKU",
    ("Data", 1, 2): "Price",
    ("Data", 2, 1): "A-1",
    ("Data", 2, 2): 10,
    ("Data", 3, 1): "B-2",
    ("Data", 3, 2): 20.5,
    ("Data", 4, 1): "C-3",
    ("Data", 4, 2): 0.1,
    ("Data", 5, 2): 0.2,
    ("Other sheet", 1, 1): 4,
}
LAST_ROWS = {"Data": 5, "Other sheet": 1}
SHEETS = Sheets(lambda s, r, c: CELLS.get((s, r, c)), LAST_ROWS.get)


def value(formula: str) -> Value:
    return evaluate(parse_formula(formula), "Data", SHEETS)


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        ("SUM(B2:B4)", 30.6),
        ("SUM(B:B)", 30.8),
        ("AVERAGE(B2:B5)", 7.7),
        ("B4+B5", 0.3),
        ("MIN(B2:B5)", 0.1),
        ("MAX(B2:B5)", 20.5),
        ("COUNT(A1:B5)", 4),
        ("COUNTA(A1:A5)", 4),
        ('COUNTIF(B2:B5,">5")', 2),
        ('COUNTIF(A:A,"?-?")', 3),
        ('SUMIF(A2:A4,"<>B-2",B2:B4)', 10.1),
        ("ROUND(2.5,0)", 3),
        ("ROUND(-2.345,2)", -2.35),
        ("ROUND(B3*1.2,1)", 24.6),
        ('VLOOKUP("b-2",A2:B4,2,FALSE)', 20.5),
        ("VLOOKUP(15,B2:B3,1)", 10),
        ('XLOOKUP("C-3",A2:A4,B2:B4)', 0.1),
        ('XLOOKUP("Z",A2:A4,B2:B4,"none")', "none"),
        ('IF(B2>5,"big","small")', "big"),
        ('IF(B4>5,"big")', False),
        ("IFERROR(B2/0,-1)", -1),
        ("'Other sheet'!A1*B2", 40),
        ("2^3^2", 64),
        ("-2^2", 4),
        ("10%", 0.1),
        ('"a"&B3', "a20.5"),
        ("AND(B2>1,NOT(B4>1))", True),
        ("ABS(-B2)", 10),
        ('CONCAT(A2,"/",A3)', "A-1/B-2"),
    ],
)
def test_a_formula_gives_the_value_a_spreadsheet_gives(formula: str, expected: Value) -> None:
    assert value(formula) == expected
    assert type(value(formula)) is type(expected)


@pytest.mark.parametrize(
    ("formula", "error"),
    [
        ("B2/0", "#DIV/0!"),
        ('VLOOKUP("Z",A2:B4,2,FALSE)', "#N/A"),
        ("A1+1", "#VALUE!"),
        ("A1:B2", "#VALUE!"),
        ("Missing!A1", "#REF!"),
        ("VLOOKUP(1,A2:B4,3,FALSE)", "#REF!"),
        ("SUM(B2/0,1)", "#DIV/0!"),
    ],
)
def test_an_error_value_names_what_went_wrong(formula: str, error: str) -> None:
    assert value(formula) == error


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        ("SUM(A1", "formula =SUM(A1 ends too early; is a ')' or a value missing?"),
        (
            "FOO(1)",
            "formula =FOO(1): unknown function FOO; supported functions: ABS, AND, AVERAGE, CONCAT, COUNT, "
            "COUNTA, COUNTIF, IF, IFERROR, MAX, MIN, NOT, OR, ROUND, SUM, SUMIF, VLOOKUP, XLOOKUP",
        ),
        (
            "hello",
            "formula =hello: 'hello' is neither a cell address nor a function call; put text in double "
            'quotes ("like this")',
        ),
        ("ROUND()", "formula =ROUND(): ROUND takes 1 to 2 arguments, not 0"),
        ("1 2", "formula =1 2: unexpected '2'"),
        ("", "a formula needs something after '='"),
    ],
)
def test_a_formula_that_cannot_be_read_is_refused_saying_why(formula: str, message: str) -> None:
    with pytest.raises(FormulaError) as raised:
        parse_formula(formula)
    assert str(raised.value) == message


def test_ranges_read_in_a1_notation_with_their_sheet() -> None:
    assert parse_range("'Price list'!$b$2:D9").a1 == "'Price list'!B2:D9"
    assert parse_range("Budget!F:B").a1 == "Budget!B:F"
    assert parse_range("C7").a1 == "C7"
    with pytest.raises(AddressError, match=r"'A0' is outside a sheet \(rows 1-10000, columns A-ZZ\)"):
        parse_range("A0")
    with pytest.raises(AddressError, match="is not a cell address; use A1 notation"):
        parse_range("B2:7")
