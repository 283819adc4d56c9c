"""Evidence.matching gives exactly the rows `matches` accepts, whether SQLite prefilters them
(equality and `in` on numbers and text) or not (booleans, NULL, other operators)."""

from typing import Any

import pytest

from coworkenv.verifiers import Evidence
from coworkenv.verifiers.where import matches
from tests.verifiers.test_checks import ME, SEED


@pytest.mark.parametrize(
    "where",
    [
        {"id": 1},
        {"id": {"eq": 2}},
        {"id": {"in": [1, 3, 99]}},
        {"status": "open"},
        {"status": {"in": ["open", "resolved"]}, "priority": "high"},
        {"id": 1.0},
        {"id": "1"},  # text never equals a number, in SQLite's prefilter or in matches
        {"assignee": None},
        {"id": True},  # booleans compare as truth values: not pushed to SQLite
        {"title": {"icontains": "LOGIN"}},
        {},
    ],
)
def test_matching_is_the_rows_matches_accepts(where: dict[str, Any]) -> None:
    ws = SEED.fork()
    ev = Evidence(ws, ws, [], ME)
    expected = [r for r in ws.rows("tickets_tickets") if matches(r, where)]
    assert ev.matching("tickets_tickets", where) == expected
