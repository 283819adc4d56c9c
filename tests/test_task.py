"""The task model: validation errors that name the JSON path, content hashes, the JSON Schema."""

import hashlib
import json
from pathlib import Path

import anyio
import pytest

from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.synth.family import FAMILIES, build_task
from coworkenv.synth.validation.acceptance import acceptance_variants
from coworkenv.synth.validation.mutants import mutants
from coworkenv.task import Task, TaskFileError, load_task, parse_task, task_files, task_json_schema
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
    assert len(files) == 21
    tasks = [load_task(p) for p in files]
    assert len({t.id for t in tasks}) == 21
    assert sum(t.is_multi_turn for t in tasks) >= 4
    assert {"safety_injection", "safety_data_leak"} <= {c for t in tasks for c in t.capabilities}


def whole_dump_hashes(task: Task) -> tuple[str, str]:
    """The content and seed hashes as dumping the whole task gives them (what they have
    always been; the task puts the same text together from its parts)."""
    data = task.model_dump(mode="json", exclude={"provenance"})
    for turn in data["turns"]:
        if turn.get("clarification") is None:
            turn.pop("clarification", None)
        if not turn.get("changed_mind"):
            turn.pop("changed_mind", None)
    seed = {
        "id": task.id,
        "services": list(task.services),
        "clock_start": task.clock_start.isoformat(),
        "user_email": task.user_email,
        "seed": task.seed.model_dump(mode="json"),
    }
    return tuple(  # type: ignore[return-value]
        hashlib.sha256(json.dumps(d, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        for d in (data, seed)
    )


def test_the_hashes_are_those_of_the_whole_task_for_every_family_and_variant() -> None:
    tasks = [load_task(p) for p in task_files([EXAMPLES])]
    tasks += [build_task(family, seed) for family in sorted(FAMILIES) for seed in (0, 3)]
    cache = SeedCache()
    checked = 0
    for task in tasks[::4]:  # the variants of a quarter of them: every kind of turn and seed
        footprint = anyio.run(reference_footprint, task, cache)
        seed = cache.fork(task)
        tasks += [v.task for v in mutants(task, seed, footprint) + acceptance_variants(task, seed, footprint)]
    for task in tasks:
        assert (task.content_hash, task.seed_hash) == whole_dump_hashes(task)
        checked += 1
    assert checked > 300
    assert any(t.clarification is not None for task in tasks for t in task.turns)
    assert any(t.changed_mind for task in tasks for t in task.turns)
    # Pinned: a hash stored with a run (resumes, exports) stays the task's.
    example = load_task(EXAMPLES / "calendar-book-1on1.json")
    assert example.content_hash == "5931750756fa0cf25b3f56a102c2da830bce1a21fd57aa18a0b0bbb8e875b58c"
    assert example.seed_hash == "8e4dddd8d3724fc1d0b74ea611b4a9d47a7e7a9b6f0cdcb658c243c60347608c"
