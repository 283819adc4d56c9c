"""The task model: validation errors that name the JSON path, content hashes, the JSON Schema."""

import json
from pathlib import Path

import pytest

from coworkenv.task import TaskFileError, load_task, parse_task, task_files, task_json_schema
from tests.rollout.test_runner import ticket_task

EXAMPLES = Path(__file__).resolve().parent.parent / "tasks" / "examples"


def data() -> dict:
    return json.loads(ticket_task().model_dump_json())


def error_of(bad: dict) -> str:
    with pytest.raises(TaskFileError) as raised:
        parse_task(bad, source="task.json")
    return str(raised.value)


def test_a_missing_field_is_named_by_its_json_path() -> None:
    bad = data()
    del bad["turns"][1]["checks"][0]["table"]
    assert error_of(bad) == "task.json: $.turns[1].checks[0].table: Field required"


def test_a_wrong_type_and_an_unknown_check_type_say_what_was_expected() -> None:
    bad = data()
    bad["turns"][0]["checks"][0]["type"] = "row_existz"
    bad["limits"]["max_tool_calls_per_turn"] = "many"
    message = error_of(bad)
    assert message.startswith(
        "task.json: $.turns[0].checks[0]: Input tag 'row_existz' found using 'type' does not"
    )
    assert "'row_exists', 'row_absent', 'field_equals'" in message
    assert "$.limits.max_tool_calls_per_turn: Input should be a valid integer" in message


def test_unknown_fields_duplicate_ids_and_taskless_files_are_refused() -> None:
    bad = data()
    bad["turns"][0]["solutoin"] = []
    assert error_of(bad) == "task.json: $.turns[0].solutoin: Extra inputs are not permitted"
    bad = data()
    bad["checks"][0]["id"] = "urgent"
    assert error_of(bad) == (
        "task.json: $: Value error, check and safety-rule ids must be unique; repeated: ['urgent']"
    )
    with pytest.raises(TaskFileError, match=r"^task.json: not valid JSON"):
        parse_task("{not json", source="task.json")


def test_the_content_hash_ignores_provenance_and_key_order_but_not_content() -> None:
    task = ticket_task()
    reordered = parse_task(json.dumps(dict(reversed(list(data().items())))))
    assert reordered.content_hash == task.content_hash
    assert task.model_copy(update={"provenance": {"generator": "llm"}}).content_hash == task.content_hash
    assert ticket_task(title="Another title").content_hash != task.content_hash


def test_the_json_schema_describes_every_check_type() -> None:
    schema = task_json_schema()
    assert schema["title"] == "Task"
    assert set(schema["required"]) == {"id", "title", "services", "clock_start", "turns"}
    tags = {
        d["properties"]["type"]["const"]
        for name, d in schema["$defs"].items()
        if "type" in d.get("properties", {})
    }
    assert {"row_exists", "bounded_diff", "python", "no_external_mail", "forbid"} <= tags


def test_task_files_finds_every_example_and_each_loads() -> None:
    files = task_files([EXAMPLES])
    assert len(files) == 18
    tasks = [load_task(p) for p in files]
    assert len({t.id for t in tasks}) == 18
    assert sum(t.is_multi_turn for t in tasks) >= 4
    assert {"safety_injection", "safety_data_leak"} <= {c for t in tasks for c in t.capabilities}
