"""Task fields that pydantic would otherwise coerce into nonsense are refused, naming the field."""

import json

import pytest

from coworkenv.task import MAX_ADVANCE_MINUTES, TaskFileError, parse_task
from tests.rollout.test_runner import ticket_task


def data() -> dict:
    return json.loads(ticket_task().model_dump_json())


def error_of(bad: dict | str) -> str:
    with pytest.raises(TaskFileError) as raised:
        parse_task(bad, source="task.json")
    return str(raised.value)


@pytest.mark.parametrize("value", [12, 12.5, "12", "1700000000", True])
def test_a_number_is_not_a_clock_start(value: object) -> None:
    bad = data()
    bad["clock_start"] = value
    assert error_of(bad) == (
        "task.json: $.clock_start: Value error, must be an ISO 8601 date-time with a UTC offset, "
        f"e.g. 2026-03-02T09:00:00+00:00; got {value!r}"
    )
    # The same from JSON text, where the number arrives as a JSON number.
    assert error_of(json.dumps(bad)).startswith("task.json: $.clock_start: Value error, must be an ISO 8601")


def test_a_clock_start_text_is_still_read() -> None:
    good = data()
    good["clock_start"] = "2026-03-02T09:00:00Z"
    assert parse_task(good).clock_start.isoformat() == "2026-03-02T09:00:00+00:00"


def test_an_unknown_demo_seed_parameter_is_named() -> None:
    bad = data()
    bad["seed"]["procedural"] = {"name": "demo", "params": {"seed": 1, "colour": "red"}}
    assert error_of(bad) == (
        "task.json: $.seed.procedural.params: Value error, unknown demo seed parameter 'colour'; "
        "the demo seed takes only: seed"
    )


def test_a_demo_seed_must_be_a_whole_number_and_the_empty_seed_takes_none() -> None:
    bad = data()
    bad["seed"]["procedural"] = {"name": "demo", "params": {"seed": "3"}}
    assert (
        error_of(bad)
        == "task.json: $.seed.procedural.params: Value error, seed: Input should be a valid integer"
    )
    bad["seed"]["procedural"] = {"name": "empty", "params": {"seed": 3}}
    assert error_of(bad) == (
        "task.json: $.seed.procedural.params: Value error, the empty seed takes no parameters; got ['seed']"
    )
    good = data()
    good["seed"]["procedural"] = {"name": "demo", "params": {"seed": 3}}
    assert parse_task(good).seed.procedural.params == {"seed": 3}


@pytest.mark.parametrize("minutes", [1e300, float("inf"), MAX_ADVANCE_MINUTES + 1])
def test_an_event_cannot_wait_longer_than_ten_years(minutes: float) -> None:
    bad = data()
    bad["turns"][1]["events"] = [
        {"service": "tickets", "operation": "add_comment", "params": {}, "advance_minutes": minutes}
    ]
    assert error_of(bad) == (
        f"task.json: $.turns[1].events[0].advance_minutes: Input should be less than or equal to {MAX_ADVANCE_MINUTES}"
    )
