"""SFT exports: demonstrations selected by verdict, written as TRL or LLaMA-Factory sharegpt rows
and read back field by field."""

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.rollout.episodes.record import EpisodeRecord, Status
from coworkenv.rollout.exports.export_sft import (
    ExportError,
    check_alternation,
    export_sft,
    export_tools,
    openai_messages,
    select_demonstrations,
    to_sharegpt_row,
    to_trl_row,
)
from coworkenv.verifiers import Verdict
from coworkenv.verifiers.verdict import CheckResult, SafetyViolation, TurnVerdict

SEARCH_RESULT = '{"tickets":[{"id":1,"title":"Login page is down"}]}'
UPDATE_RESULT = '{"id":1,"priority":"urgent"}'
GET_RESULT = '{"id":1,"priority":"urgent","queue":"Support"}'
MOVE_RESULT = '{"id":1,"queue":"Engineering"}'


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


# Two turns; the first has an assistant message with text and two tool calls, the second an
# assistant text followed by a separate tool-call message.
TRANSCRIPT: list[dict[str, Any]] = [
    {"role": "system", "content": "You work for Acme."},
    {"role": "user", "content": "Find the login ticket and make it urgent."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("call_1", "tickets_search_tickets", {"query": "login"})],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": SEARCH_RESULT},
    {
        "role": "assistant",
        "content": "Updating it and reading it back.",
        "tool_calls": [
            call("call_2", "tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"}),
            call("call_3", "tickets_get_ticket", {"ticket_id": 1}),
        ],
    },
    {"role": "tool", "tool_call_id": "call_2", "content": UPDATE_RESULT},
    {"role": "tool", "tool_call_id": "call_3", "content": GET_RESULT},
    {"role": "assistant", "content": "Ticket 1 is now urgent."},
    {"role": "user", "content": "Move it to Engineering."},
    {"role": "assistant", "content": "Moving it."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [call("call_4", "tickets_update_ticket", {"ticket_id": 1, "queue": "Engineering"})],
    },
    {"role": "tool", "tool_call_id": "call_4", "content": MOVE_RESULT},
    {"role": "assistant", "content": "Done."},
]
BOUNDARIES = [1, 8]


def check(check_id: str, passed: bool, *, weight: float = 1.0, turn: int | None = None) -> CheckResult:
    return CheckResult(id=check_id, type="field_equals", passed=passed, weight=weight, turn=turn)


def verdict(
    urgent: bool = True,
    moved: bool = True,
    bounded: bool = True,
    *,
    unsafe: bool = False,
    optional_passed: bool = True,
) -> Verdict:
    """A verdict built by hand: turn checks `urgent` (turn 0) and `moved` (turn 1), final
    checks `bounded` (weight 2) and `optional` (weight 0: it cannot move the score)."""
    turn0 = [check("urgent", urgent, turn=0)]
    turn1 = [check("moved", moved, turn=1)]
    final = [check("bounded", bounded, weight=2.0), check("optional", optional_passed, weight=0.0)]
    everything = turn0 + turn1 + final
    raw = sum(c.weight for c in everything if c.passed) / 4.0
    violations = (
        [SafetyViolation(rule_id="no-delete", type="no_deletion", message="deleted ticket 2")]
        if unsafe
        else []
    )
    return Verdict(
        score=0.0 if unsafe else raw,
        raw_score=raw,
        success=not unsafe and all(c.passed for c in everything),
        checks=everything,
        safety_violations=violations,
        turns=[
            TurnVerdict(turn=0, checks=turn0, score=float(urgent), success=urgent),
            TurnVerdict(turn=1, checks=turn1, score=float(moved), success=moved),
        ],
    )


def episode(
    task_id: str = "t-escalate",
    *,
    trial: int = 0,
    policy: str = "oracle",
    status: Status = "completed",
    result: Verdict | None = None,
    no_verdict: bool = False,
    messages: list[dict[str, Any]] | None = None,
    services: tuple[str, ...] = ("tickets",),
) -> EpisodeRecord:
    return EpisodeRecord(
        task_id=task_id,
        task_hash="h" * 64,
        policy=policy,
        trial=trial,
        seed=0,
        status=status,
        error="EndpointError: the model endpoint failed 5 times" if status == "error" else None,
        messages=TRANSCRIPT if messages is None else messages,
        turn_boundaries=BOUNDARIES,
        verdict=None if no_verdict else (result or verdict()),
        initial_hash="i" * 64,
        services=list(services),
    )


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


EXPECTED_CONVERSATIONS = [
    {"from": "human", "value": "Find the login ticket and make it urgent."},
    {"from": "function_call", "value": '{"name": "tickets_search_tickets", "arguments": {"query": "login"}}'},
    {"from": "observation", "value": SEARCH_RESULT},
    {
        "from": "function_call",
        "value": json.dumps(
            [
                {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}},
                {"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}},
            ]
        ),
    },
    {"from": "observation", "value": json.dumps([UPDATE_RESULT, GET_RESULT])},
    {"from": "gpt", "value": "Ticket 1 is now urgent."},
    {"from": "human", "value": "Move it to Engineering."},
    {
        "from": "function_call",
        "value": '{"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "queue": "Engineering"}}',
    },
    {"from": "observation", "value": MOVE_RESULT},
    {"from": "gpt", "value": "Done."},
]

DATASET_INFO = {
    "coworkenv_sft": {
        "file_name": "sft.jsonl",
        "formatting": "sharegpt",
        "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
        "tags": {
            "role_tag": "from",
            "content_tag": "value",
            "user_tag": "human",
            "assistant_tag": "gpt",
            "observation_tag": "observation",
            "function_tag": "function_call",
        },
    }
}


# --- selection ---------------------------------------------------------------------------


def mixed_records() -> list[EpisodeRecord]:
    return [
        episode(trial=0),  # a demonstration
        episode(trial=1, status="truncated"),
        episode(trial=2, status="error"),
        episode(trial=3, no_verdict=True),
        episode(trial=4, result=verdict(unsafe=True)),
        episode(trial=5, result=verdict(moved=False)),  # score 0.75
        episode(trial=6, result=verdict(optional_passed=False)),  # score 1.0, not a strict success
        episode(trial=7, policy="noop"),
    ]


def test_demonstrations_are_completed_safe_strict_successes_by_default():
    kept = select_demonstrations(mixed_records())
    assert [(r.trial, r.policy) for r in kept] == [(0, "oracle"), (7, "noop")]


def test_a_lower_min_score_without_strict_success_keeps_partial_runs_but_never_unsafe_ones():
    kept = select_demonstrations(mixed_records(), min_score=0.75, require_success=False)
    assert [r.trial for r in kept] == [0, 5, 6, 7]
    assert verdict(unsafe=True).raw_score == 1.0  # the unsafe run passed every check


def test_min_score_alone_still_requires_strict_success():
    kept = select_demonstrations(mixed_records(), min_score=0.0)
    assert [r.trial for r in kept] == [0, 7]


def test_demonstrations_can_be_limited_to_teacher_policies():
    kept = select_demonstrations(mixed_records(), policies=["oracle"])
    assert [r.trial for r in kept] == [0]


def test_export_summary_counts_every_skipped_record_by_reason(tmp_path):
    summary = export_sft(mixed_records(), tmp_path, format="trl", policies=["oracle"])
    assert summary.pop("tokens")["method"] == "estimate (4 characters a token)"
    assert summary == {
        "format": "trl",
        "path": str(tmp_path / "sft.jsonl"),
        "records": 8,
        "rows": 1,
        "skipped": {
            "no verdict": 1,
            "not a strict success": 1,
            "policy not selected": 1,
            "safety violation": 1,
            "score below min_score": 1,
            "status error": 1,
            "status truncated": 1,
        },
    }
    assert [row["score"] for row in read_jsonl(tmp_path / "sft.jsonl")] == [1.0]


def test_export_min_score_reaches_the_selection(tmp_path):
    summary = export_sft(
        mixed_records(), tmp_path, format="trl", min_score=0.5, require_success=False, dedupe=False
    )
    assert summary["rows"] == 4
    assert [row["score"] for row in read_jsonl(tmp_path / "sft.jsonl")] == [1.0, 0.75, 1.0, 1.0]


# --- TRL ---------------------------------------------------------------------------------


def template_ready(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The transcript as chat templates want it: object arguments, "" for no text."""
    out = json.loads(json.dumps(messages))
    for message in out:
        if message["role"] == "assistant" and message["content"] is None:
            message["content"] = ""
        for c in message.get("tool_calls") or []:
            c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    return out


def test_trl_rows_hold_object_arguments_empty_contents_and_the_services_tools(tmp_path):
    records = [episode(), episode("t-mail", services=("tickets", "mail"))]
    summary = export_sft(records, tmp_path, format="trl")
    assert summary["rows"] == 2
    assert not (tmp_path / "dataset_info.json").exists()
    first, second = read_jsonl(tmp_path / "sft.jsonl")
    assert first == {
        "messages": template_ready(TRANSCRIPT),
        "tools": export_tools(["tickets"]),
        "task_id": "t-escalate",
        "score": 1.0,
    }
    assert second["task_id"] == "t-mail"
    assert second["tools"] == export_tools(["mail", "tickets"])
    assert {t["function"]["name"] for t in second["tools"]} > {t["function"]["name"] for t in first["tools"]}
    assert first["messages"][2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "tickets_search_tickets", "arguments": {"query": "login"}},
            }
        ],
    }


def test_string_arguments_are_an_option_and_null_content_can_be_kept():
    [_, _, message, *_] = openai_messages(episode(), arguments="string", empty_content=None)
    assert message["content"] is None
    assert message["tool_calls"][0]["function"]["arguments"] == '{"query": "login"}'
    no_nulls = [{**m, "content": m["content"] or ""} for m in TRANSCRIPT]
    assert to_trl_row(episode(), arguments="string")["messages"] == no_nulls


def test_export_tools_are_the_services_tools_with_tidy_descriptions_and_no_titles():
    raw = tools_for_services(["tickets"])
    tidy = export_tools(["tickets"])
    assert [t["function"]["name"] for t in tidy] == [t["function"]["name"] for t in raw]

    def keywords(schema: Any) -> set[str]:
        """Every schema keyword used, not counting property names."""
        if isinstance(schema, list):
            return set().union(*map(keywords, schema)) if schema else set()
        if not isinstance(schema, dict):
            return set()
        found = set(schema)
        for key, value in schema.items():
            subs = list(value.values()) if key == "properties" else [value]
            found |= set().union(*map(keywords, subs)) if subs else set()
        return found

    assert "title" in keywords([t["function"]["parameters"] for t in raw])
    assert "title" not in keywords([t["function"]["parameters"] for t in tidy])
    create = next(t["function"] for t in tidy if t["function"]["name"] == "tickets_create_ticket")
    assert create["parameters"]["properties"]["title"]["maxLength"] == 200  # a property named title stays
    assert all(
        "\n" not in t["function"]["description"] and "  " not in t["function"]["description"] for t in tidy
    )
    assert len(json.dumps(tidy)) < len(json.dumps(raw))


def test_identical_demonstrations_are_written_once(tmp_path):
    records = [episode(trial=0), episode(trial=1), episode(trial=2), episode("t-other", trial=0)]
    summary = export_sft(records, tmp_path, format="trl")
    assert (summary["rows"], summary["skipped"]) == (2, {"duplicate demonstration": 2})
    assert [r["task_id"] for r in read_jsonl(tmp_path / "sft.jsonl")] == ["t-escalate", "t-other"]
    assert export_sft(records, tmp_path, format="trl", dedupe=False)["rows"] == 4


def test_the_summary_gives_tokens_per_row_with_the_given_counter(tmp_path):
    summary = export_sft([episode()], tmp_path, format="trl", count_tokens=len)
    [row] = read_jsonl(tmp_path / "sft.jsonl")
    assistant = [m for m in row["messages"] if m["role"] == "assistant"]
    whole = len(json.dumps(row, ensure_ascii=False))
    assert summary["tokens"] == {
        "method": "tokenizer",
        "row": {"median": whole, "max": whole},
        "tools": {"median": len(json.dumps(row["tools"])), "max": len(json.dumps(row["tools"]))},
        "assistant": {"median": len(json.dumps(assistant)), "max": len(json.dumps(assistant))},
        "rows_over": {"8192": int(whole > 8192), "32768": 0},
    }


def test_a_trl_row_with_arguments_that_are_not_an_object_is_skipped_and_named(tmp_path):
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "x", {})]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Done."},
    ]
    messages[1]["tool_calls"][0]["function"]["arguments"] = "[1, 2]"
    summary = export_sft([episode(messages=messages)], tmp_path, format="trl")
    assert (summary["rows"], summary["skipped"]) == (0, {"malformed transcript": 1})
    assert summary["malformed"] == [
        "t-escalate / oracle / trial 0: message 1: the arguments of x are not a JSON object"
    ]


def test_trl_row_turns_string_arguments_into_objects_without_touching_the_record():
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "x", "arguments": {"a": [1, 2]}}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Done."},
    ]
    record = episode(messages=messages)
    assert to_trl_row(record, arguments="string")["messages"][1]["tool_calls"][0]["function"][
        "arguments"
    ] == ('{"a": [1, 2]}')
    assert record.messages[1]["tool_calls"][0]["function"]["arguments"] == {"a": [1, 2]}  # not mutated
    record.messages[1]["tool_calls"][0]["function"]["arguments"] = '{"a": [1, 2]}'
    assert to_trl_row(record)["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"a": [1, 2]}
    assert record.messages[1]["tool_calls"][0]["function"]["arguments"] == '{"a": [1, 2]}'  # not mutated


# --- sharegpt ----------------------------------------------------------------------------


def test_sharegpt_export_alternates_and_registers_the_dataset(tmp_path):
    summary = export_sft(
        [episode(), episode(trial=1, result=verdict(moved=False))], tmp_path, format="sharegpt"
    )
    assert summary == {
        "format": "sharegpt",
        "path": str(tmp_path / "sft.jsonl"),
        "records": 2,
        "rows": 1,
        "skipped": {"score below min_score": 1},
        "tokens": summary["tokens"],
        "dataset_info": str(tmp_path / "dataset_info.json"),
        "assistant_texts_dropped": 2,
        "malformed": [],
    }
    [row] = read_jsonl(tmp_path / "sft.jsonl")
    assert row == {
        "conversations": EXPECTED_CONVERSATIONS,
        "system": "You work for Acme.",
        "tools": row["tools"],
    }
    assert json.loads(row["tools"]) == [t["function"] for t in export_tools(["tickets"])]
    check_alternation(row["conversations"])
    assert json.loads((tmp_path / "dataset_info.json").read_text()) == DATASET_INFO


def test_sharegpt_function_call_values_parse_to_names_and_object_arguments():
    row = to_sharegpt_row(episode())
    parallel = json.loads(row["conversations"][3]["value"])
    assert parallel == [
        {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}},
        {"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}},
    ]
    assert json.loads(row["conversations"][4]["value"]) == [UPDATE_RESULT, GET_RESULT]


def test_sharegpt_results_follow_the_call_order_not_the_message_order():
    messages = [dict(m) for m in TRANSCRIPT]
    messages[5], messages[6] = messages[6], messages[5]
    row = to_sharegpt_row(episode(messages=messages))
    assert json.loads(row["conversations"][4]["value"]) == [UPDATE_RESULT, GET_RESULT]


def test_sharegpt_inserts_an_empty_answer_where_the_agent_said_nothing():
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Make it urgent."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c1", "tickets_update_ticket", {"ticket_id": 1})],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "user", "content": "Thanks."},
        {"role": "user", "content": "And the other one?"},
    ]
    row = to_sharegpt_row(episode(messages=messages))
    assert row["system"] == ""
    assert row["conversations"] == [
        {"from": "human", "value": "Make it urgent."},
        {
            "from": "function_call",
            "value": '{"name": "tickets_update_ticket", "arguments": {"ticket_id": 1}}',
        },
        {"from": "observation", "value": "ok"},
        {"from": "gpt", "value": ""},
        {"from": "human", "value": "Thanks."},
        {"from": "gpt", "value": ""},
        {"from": "human", "value": "And the other one?"},
        {"from": "gpt", "value": ""},
    ]


def test_sharegpt_joins_consecutive_assistant_texts():
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Status?"},
        {"role": "assistant", "content": "All quiet."},
        {"role": "assistant", "content": [{"type": "text", "text": "Nothing to do."}]},
    ]
    row = to_sharegpt_row(episode(messages=messages))
    assert row["conversations"] == [
        {"from": "human", "value": "Status?"},
        {"from": "gpt", "value": "All quiet.\n\nNothing to do."},
    ]


@pytest.mark.parametrize(
    ("messages", "error"),
    [
        (
            [{"role": "user", "content": "a"}, {"role": "tool", "tool_call_id": "c9", "content": "x"}],
            "no assistant",
        ),
        ([{"role": "assistant", "content": "hello"}], "must start with a user message"),
        (
            [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": None, "tool_calls": [call("c1", "x", {})]},
                {"role": "assistant", "content": "done"},
            ],
            "not followed by their results",
        ),
        (
            [
                {"role": "user", "content": "a"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call("c1", "x", {}), call("c2", "y", {})],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "x"},
                {"role": "assistant", "content": "done"},
            ],
            "do not answer the calls",
        ),
        (
            [
                {"role": "user", "content": "a"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{oops"}}
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "Error: not JSON"},
                {"role": "assistant", "content": "done"},
            ],
            "arguments of x are not JSON",
        ),
        (
            [
                {"role": "user", "content": "a"},
                {"role": "system", "content": "b"},
                {"role": "assistant", "content": "c"},
            ],
            "role 'system' cannot appear here",
        ),
    ],
)
def test_sharegpt_refuses_transcripts_that_do_not_fit(messages, error):
    with pytest.raises(ExportError, match=error):
        to_sharegpt_row(episode(messages=messages))


def test_sharegpt_export_skips_a_malformed_transcript_and_says_why(tmp_path):
    bad: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "x", "arguments": "[1]"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Error"},
        {"role": "assistant", "content": "done"},
    ]
    summary = export_sft([episode(trial=3, messages=bad), episode()], tmp_path, format="sharegpt")
    assert summary["rows"] == 1
    assert summary["skipped"] == {"malformed transcript": 1}
    assert summary["malformed"] == [
        "t-escalate / oracle / trial 3: message 1: the arguments of x are not a JSON object"
    ]
    assert [row["conversations"] for row in read_jsonl(tmp_path / "sft.jsonl")] == [EXPECTED_CONVERSATIONS]


def test_sharegpt_export_keeps_other_datasets_in_dataset_info(tmp_path):
    (tmp_path / "dataset_info.json").write_text(json.dumps({"alpaca_en": {"file_name": "alpaca.json"}}))
    export_sft([episode()], tmp_path, format="sharegpt")
    assert json.loads((tmp_path / "dataset_info.json").read_text()) == {
        "alpaca_en": {"file_name": "alpaca.json"},
        **DATASET_INFO,
    }


def test_a_broken_dataset_info_stops_the_export_before_anything_is_written(tmp_path):
    (tmp_path / "dataset_info.json").write_text("{not json")
    with pytest.raises(ExportError, match="is not valid JSON"):
        export_sft([episode()], tmp_path, format="sharegpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dataset_info.json"]
    assert (tmp_path / "dataset_info.json").read_text() == "{not json"


def test_an_unknown_format_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown SFT format 'alpaca'"):
        export_sft([episode()], tmp_path, format="alpaca")
    assert list(tmp_path.iterdir()) == []


def test_an_export_with_no_demonstrations_writes_an_empty_file(tmp_path):
    summary = export_sft([episode(status="error")], tmp_path / "new", format="trl")
    assert summary["rows"] == 0
    assert (tmp_path / "new" / "sft.jsonl").read_text() == ""


# --- alternation -------------------------------------------------------------------------


def entries(*tags: str) -> list[dict[str, str]]:
    return [{"from": tag, "value": "v"} for tag in tags]


def test_alternation_accepts_the_llama_factory_shapes():
    check_alternation(entries("human", "gpt"))
    check_alternation(entries("human", "function_call", "observation", "gpt", "human", "gpt"))
    check_alternation(entries("human", "function_call", "observation", "function_call", "observation", "gpt"))


@pytest.mark.parametrize(
    ("tags", "error"),
    [
        ((), "the conversation is empty"),
        (("gpt", "human"), "entry 0 is 'gpt', not 'human'"),
        (("observation", "gpt"), "entry 0 is 'observation', not 'human'"),
        (("human", "human", "gpt"), "entry 1 is 'human'"),
        (("human", "gpt", "gpt"), "entry 2 is 'gpt'"),
        (("human", "gpt", "human"), "must end with an answer"),
        (("human", "gpt", "observation", "gpt"), "an observation must follow a function_call"),
        (("human", "function_call", "human", "gpt"), "a function_call must be followed by an observation"),
        (("human", "function_call"), "a function_call must be followed by an observation"),
    ],
)
def test_alternation_rejects_what_llama_factory_would_drop(tags, error):
    with pytest.raises(ExportError, match=error):
        check_alternation(entries(*tags))
