"""compact_json: the audit log's and the transcript's JSON text; copy_json: their copies."""

import copy
import json
from datetime import date

from coworkenv.state.jsontext import compact_json, copy_json


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


def test_a_json_copy_is_a_deep_copy_of_the_containers_and_shares_the_rest() -> None:
    original = {"a": [1, {"b": "text", "c": None}], "d": 2.5, "e": True}
    copied = copy_json(original)
    assert copied == original == copy.deepcopy(original)
    copied["a"][1]["b"] = "changed"
    copied["a"].append(3)
    assert original == {"a": [1, {"b": "text", "c": None}], "d": 2.5, "e": True}
    assert copied["a"] is not original["a"] and copied["a"][1] is not original["a"][1]
