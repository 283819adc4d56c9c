"""compact_json: the audit log's and the transcript's JSON text."""

import json
from datetime import date

from coworkenv.state.jsontext import compact_json


def test_compact_json_keeps_order_and_non_ascii() -> None:
    assert (
        compact_json({"b": [1, 2.5, None, True], "a": "café 😀"}) == '{"b":[1,2.5,null,true],"a":"café 😀"}'
    )


def test_compact_json_matches_the_standard_library_on_json_values() -> None:
    value = {"total": 3, "people": [{"name": "Zoë", "score": 0.1, "neg": -0.0, "ok": True}], "x": {}}
    assert compact_json(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    # A float in exponent form is written "1e20" or "1e+20" depending on the pydantic-core
    # release: the same number either way.
    assert json.loads(compact_json({"big": 1e20, "small": 1e-7})) == {"big": 1e20, "small": 1e-7}


class Opaque:
    def __str__(self) -> str:
        return "opaque"


def test_values_json_has_no_type_for_are_written_as_pydantic_does_else_as_text() -> None:
    assert compact_json({"due": date(2026, 3, 2)}) == '{"due":"2026-03-02"}'
    assert compact_json({"kind": frozenset()}) == '{"kind":[]}'
    assert compact_json([Opaque()]) == '["opaque"]'


def test_a_lone_surrogate_is_escaped_not_an_error() -> None:
    text = compact_json({"content": "a\ud800b"})
    assert text == '{"content":"a\\ud800b"}'
    assert json.loads(text) == {"content": "a\ud800b"}
