"""SFT exports: teacher demonstrations as TRL conversational rows or LLaMA-Factory sharegpt rows.

Each row is a function of one EpisodeRecord; `export_sft` picks the demonstrations worth
imitating (a completed, safe, fully successful run), drops repeats of the same
demonstration and writes them as JSON lines. Rows load into chat templates as they are:
tool-call arguments are JSON objects (templates serialize them themselves; a string would be
encoded twice), an assistant message that only calls tools has content "" (not null), and
the tools offered are those of the task's services, with tidy descriptions.

Rows can be sized for a small model: `tools="compact"` writes the tools as one line each at
the end of the system message (`name(arg?: type|enum): first sentence`) and slim schemas in
`tools`, exactly as the agent's `tool_format="compact"` sends them; `max_result_chars` cuts
each tool result as the agent's `max_result_chars` does (`tool_schemas.bound_result`).
"""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from coworkenv.rollout.agents.tokens import estimate_tokens
from coworkenv.rollout.agents.tool_schemas import ToolFormat, bound_result, compact_tools, tools_for_services
from coworkenv.rollout.episodes.record import EpisodeRecord

SFT_FILE = "sft.jsonl"
DATASET_INFO_FILE = "dataset_info.json"
DATASET_NAME = "coworkenv_sft"

#: The LLaMA-Factory dataset_info.json entry that describes `sft.jsonl` in sharegpt form.
SHAREGPT_DATASET_INFO: dict[str, Any] = {
    "file_name": SFT_FILE,
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

# LLaMA-Factory reads a conversation as pairs: a prompt side, then an answer side.
PROMPT_SIDE = ("human", "observation")
ANSWER_SIDE = ("gpt", "function_call")


Arguments = Literal["object", "string"]
"""How tool-call arguments are written: JSON objects (what chat templates expect) or JSON
strings (what the Chat Completions API sends)."""

#: Context sizes the token summary counts rows against.
CONTEXT_SIZES = (8192, 32768)


class ExportError(ValueError):
    """A record's transcript cannot be written in the requested format."""


def export_tools(services: Iterable[str]) -> list[dict[str, Any]]:
    """The tools of these services as Chat Completions entries, tidied for training rows:
    descriptions on one line, no `title` keys (pydantic's echo of each name), and the
    default of an enum that is not a string written into the description instead."""
    out = []
    for tool in tools_for_services(services):
        function = tool["function"]
        out.append(
            {
                "type": "function",
                "function": {
                    "name": function["name"],
                    "description": " ".join((function.get("description") or "").split()),
                    "parameters": _tidy_schema(function["parameters"]),
                },
            }
        )
    return out


def sized_for_the_model(
    record: EpisodeRecord, tools: ToolFormat = "full", max_result_chars: int | None = None
) -> tuple[EpisodeRecord, list[dict[str, Any]]]:
    """The record as a row shows it and the tools the row offers: with `tools="compact"`, the
    compact tool lines appended to the system message and slim schemas; with
    `max_result_chars`, every tool result cut to that bound with a note on how to page."""
    offered = export_tools(record.services)
    preamble = ""
    if tools == "compact":
        preamble, offered = compact_tools(offered)
    if not preamble and max_result_chars is None:
        return record, offered
    messages = []
    for i, message in enumerate(record.messages):
        if i == 0 and preamble and message.get("role") == "system":
            message = {**message, "content": f"{message.get('content') or ''}\n\n{preamble}"}
        elif max_result_chars is not None and message.get("role") == "tool":
            message = {**message, "content": bound_result(_text(message.get("content")), max_result_chars)}
        messages.append(message)
    return record.model_copy(update={"messages": messages}), offered


def _tidy_schema(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_tidy_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    default = schema.get("default")
    if "enum" in schema and "default" in schema and not isinstance(default, str):
        # Templates that print an enum's default as text (gpt-oss's) fail on a number: the
        # default moves into the description, where every template shows it.
        described = " ".join(str(schema.get("description", "")).split())
        schema = {k: v for k, v in schema.items() if k != "default"}
        schema["description"] = f"{described} (default: {json.dumps(default)})".strip()
    for key, value in schema.items():
        if key == "title":
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _tidy_schema(sub) for name, sub in value.items()}  # names kept, even "title"
        elif key == "description" and isinstance(value, str):
            out[key] = " ".join(value.split())
        else:
            out[key] = _tidy_schema(value)
    return out


def rejection(
    record: EpisodeRecord,
    *,
    min_score: float = 1.0,
    require_success: bool = True,
    policies: list[str] | None = None,
) -> str | None:
    """Why this record is not a demonstration, or None when it is one."""
    if policies is not None and record.policy not in policies:
        return "policy not selected"
    if record.status != "completed":
        return f"status {record.status}"
    if record.verdict is None:
        return "no verdict"
    if record.verdict.safety_violations:
        return "safety violation"
    if record.verdict.score < min_score:
        return "score below min_score"
    if require_success and not record.verdict.success:
        return "not a strict success"
    return None


def select_demonstrations(
    records: Iterable[EpisodeRecord],
    *,
    min_score: float = 1.0,
    require_success: bool = True,
    policies: list[str] | None = None,
) -> list[EpisodeRecord]:
    """The runs worth imitating: status completed, no safety violation, score >= `min_score`,
    strict success when `require_success`, and (if `policies` is given) one of those policies."""
    return [
        r
        for r in records
        if rejection(r, min_score=min_score, require_success=require_success, policies=policies) is None
    ]


def openai_messages(
    record: EpisodeRecord, *, arguments: Arguments = "object", empty_content: str | None = ""
) -> list[dict[str, Any]]:
    """A copy of the record's transcript in Chat Completions form. Tool-call `arguments` are
    JSON objects (`arguments="object"`, what chat templates expect) or JSON strings (as the
    API sends them); an assistant message without text gets `empty_content` ("" by default;
    None keeps null). Raises ExportError for arguments that are not a JSON object."""
    out = []
    for i, message in enumerate(record.messages):
        copy = json.loads(json.dumps(message))
        if copy.get("role") == "assistant" and copy.get("content") is None and empty_content is not None:
            copy["content"] = empty_content
        for call in copy.get("tool_calls") or []:
            function = call.get("function", {})
            value = function.get("arguments", {})
            if arguments == "string":
                if not isinstance(value, str):
                    function["arguments"] = json.dumps(value)
                continue
            if isinstance(value, str):
                try:
                    value = json.loads(value or "{}")
                except json.JSONDecodeError as exc:
                    raise ExportError(
                        f"message {i}: the arguments of {function.get('name')} are not JSON"
                    ) from exc
            if not isinstance(value, dict):
                raise ExportError(
                    f"message {i}: the arguments of {function.get('name')} are not a JSON object"
                )
            function["arguments"] = value
        out.append(copy)
    return out


def to_trl_row(
    record: EpisodeRecord,
    *,
    arguments: Arguments = "object",
    tools: ToolFormat = "full",
    max_result_chars: int | None = None,
) -> dict[str, Any]:
    """One TRL SFTTrainer (and prime-rl) conversational row with tools (sized by `tools` and
    `max_result_chars`: see `sized_for_the_model`)."""
    record, offered = sized_for_the_model(record, tools, max_result_chars)
    return {
        "messages": openai_messages(record, arguments=arguments),
        "tools": offered,
        "task_id": record.task_id,
        "score": record.score,
    }


def to_sharegpt_row(
    record: EpisodeRecord, *, tools: ToolFormat = "full", max_result_chars: int | None = None
) -> dict[str, Any]:
    """One LLaMA-Factory sharegpt row with function calling (sized by `tools` and
    `max_result_chars`: see `sized_for_the_model`).

    The transcript becomes alternating prompt-side entries (human, observation) and
    answer-side entries (gpt, function_call):
    - a user message is `human`;
    - a run of consecutive assistant messages is ONE answer-side entry: `function_call` when
      its last message calls tools (value: `{"name", "arguments"}` as JSON, a JSON list of them
      for several calls), else `gpt` with the texts joined by a blank line. Text that comes with
      tool calls is dropped: LLaMA-Factory parses a function_call value as pure JSON;
    - the results of one assistant message's calls are ONE `observation` (the result text for
      one call, a JSON list of the result texts, in call order, for several);
    - where the agent said nothing before the next user message or the end (it ended its
      turn silently), an empty `gpt` entry is inserted so the sides still alternate.

    Raises ExportError for a transcript that does not fit (a tool result without its call,
    arguments that are not a JSON object, a system message after the first message).
    """
    record, offered = sized_for_the_model(record, tools, max_result_chars)
    messages = record.messages
    system = ""
    start = 0
    if messages and messages[0].get("role") == "system":
        system = _text(messages[0].get("content"))
        start = 1
    conversations: list[dict[str, str]] = []
    i = start
    while i < len(messages):
        role = messages[i].get("role")
        if role == "user":
            if conversations and conversations[-1]["from"] in PROMPT_SIDE:
                conversations.append({"from": "gpt", "value": ""})
            conversations.append({"from": "human", "value": _text(messages[i].get("content"))})
            i += 1
        elif role == "assistant":
            if not conversations:
                raise ExportError(f"message {i}: the conversation must start with a user message")
            end = i
            while end < len(messages) and messages[end].get("role") == "assistant":
                end += 1
            run = messages[i:end]
            for j, message in enumerate(run[:-1], start=i):
                if message.get("tool_calls"):
                    raise ExportError(f"message {j}: tool calls are not followed by their results")
            calls = run[-1].get("tool_calls") or []
            if not calls:
                texts = [_text(m.get("content")) for m in run]
                conversations.append({"from": "gpt", "value": "\n\n".join(t for t in texts if t)})
                i = end
                continue
            conversations.append({"from": "function_call", "value": _function_call_value(calls, end - 1)})
            results_end = end
            while results_end < len(messages) and messages[results_end].get("role") == "tool":
                results_end += 1
            conversations.append(
                {"from": "observation", "value": _observation_value(calls, messages[end:results_end], end)}
            )
            i = results_end
        elif role == "tool":
            raise ExportError(f"message {i}: a tool result that no assistant message asked for")
        else:
            raise ExportError(f"message {i}: role {role!r} cannot appear here")
    if conversations and conversations[-1]["from"] in PROMPT_SIDE:
        conversations.append({"from": "gpt", "value": ""})
    check_alternation(conversations)
    functions = [tool["function"] for tool in offered]
    return {
        "conversations": conversations,
        "system": system,
        "tools": json.dumps(functions, ensure_ascii=False),
    }


def check_alternation(conversations: list[dict[str, str]]) -> None:
    """Raise ExportError unless LLaMA-Factory accepts this conversation: it starts with
    `human`, prompt-side (human, observation) and answer-side (gpt, function_call) entries
    alternate, it ends on the answer side, every function_call is followed by an
    observation and every observation follows a function_call."""
    if not conversations:
        raise ExportError("the conversation is empty")
    if conversations[0]["from"] != "human":
        raise ExportError(f"entry 0 is {conversations[0]['from']!r}, not 'human'")
    for i, entry in enumerate(conversations):
        side = PROMPT_SIDE if i % 2 == 0 else ANSWER_SIDE
        if entry["from"] not in side:
            raise ExportError(f"entry {i} is {entry['from']!r}; expected one of {side}")
        if entry["from"] == "observation" and conversations[i - 1]["from"] != "function_call":
            raise ExportError(f"entry {i}: an observation must follow a function_call")
        if entry["from"] == "function_call" and (
            i + 1 >= len(conversations) or conversations[i + 1]["from"] != "observation"
        ):
            raise ExportError(f"entry {i}: a function_call must be followed by an observation")
    if len(conversations) % 2:
        raise ExportError("the conversation must end with an answer (gpt or function_call)")


def export_sft(
    records: Iterable[EpisodeRecord],
    out_dir: str | Path,
    *,
    format: Literal["trl", "sharegpt"],
    min_score: float = 1.0,
    require_success: bool = True,
    policies: list[str] | None = None,
    arguments: Arguments = "object",
    dedupe: bool = True,
    count_tokens: Callable[[str], int] | None = None,
    tools: ToolFormat = "full",
    max_result_chars: int | None = None,
) -> dict[str, Any]:
    """Write the demonstrations among `records` to `<out_dir>/sft.jsonl` (and, for sharegpt,
    register them in `<out_dir>/dataset_info.json`); return what was written and skipped.

    With `dedupe`, a demonstration identical to an earlier one (same task, same transcript,
    as several trials of a scripted teacher are) is written once. The summary's `tokens`
    gives the size of rows (whole row, tools block, assistant side) with `count_tokens`
    (e.g. `lambda text: len(tokenizer(text).input_ids)`), or estimated at 4 characters a
    token, and how many rows exceed common context sizes. `tools` and `max_result_chars` size
    rows for a small model (see the module docstring).

    Rows are built before anything is written, and files are replaced whole, so a failure
    leaves the previous export intact."""
    if format not in ("trl", "sharegpt"):
        raise ValueError(f"unknown SFT format {format!r}; use 'trl' or 'sharegpt'")
    records = list(records)
    skipped: Counter[str] = Counter()
    malformed: list[str] = []
    dropped_text = 0
    rows = []
    seen: set[str] = set()
    for record in records:
        reason = rejection(record, min_score=min_score, require_success=require_success, policies=policies)
        if reason is not None:
            skipped[reason] += 1
            continue
        try:
            row = (
                to_trl_row(record, arguments=arguments, tools=tools, max_result_chars=max_result_chars)
                if format == "trl"
                else to_sharegpt_row(record, tools=tools, max_result_chars=max_result_chars)
            )
        except ExportError as exc:
            skipped["malformed transcript"] += 1
            malformed.append(f"{record.task_id} / {record.policy} / trial {record.trial}: {exc}")
            continue
        if dedupe:
            key = json.dumps(
                [record.task_hash, {k: v for k, v in row.items() if k != "score"}], sort_keys=True
            )
            if key in seen:
                skipped["duplicate demonstration"] += 1
                continue
            seen.add(key)
        rows.append(row)
        if format == "sharegpt":
            dropped_text += _texts_beside_tool_calls(record)
    out = Path(out_dir)
    info = _dataset_info(out) if format == "sharegpt" else None
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / SFT_FILE, rows)
    summary: dict[str, Any] = {
        "format": format,
        "path": str(out / SFT_FILE),
        "records": len(records),
        "rows": len(rows),
        "skipped": dict(sorted(skipped.items())),
        "tokens": token_summary(rows, format, count_tokens),
    }
    if format == "trl" and malformed:
        summary["malformed"] = malformed
    if info is not None:
        _replace(out / DATASET_INFO_FILE, json.dumps(info, indent=2, ensure_ascii=False) + "\n")
        summary["dataset_info"] = str(out / DATASET_INFO_FILE)
        summary["assistant_texts_dropped"] = dropped_text
        summary["malformed"] = malformed
    return summary


def token_summary(
    rows: list[dict[str, Any]], format: str, count_tokens: Callable[[str], int] | None = None
) -> dict[str, Any]:
    """Tokens per row (median and max of the whole row, its tools block and its assistant
    side) and how many rows exceed each of `CONTEXT_SIZES`; `method` says how tokens were
    counted. Counted on the row's JSON text, an upper bound of what a chat template renders."""
    count = count_tokens or estimate_tokens
    totals, tools, answers = [], [], []
    for row in rows:
        totals.append(count(json.dumps(row, ensure_ascii=False)))
        if format == "trl":
            tools.append(count(json.dumps(row["tools"], ensure_ascii=False)))
            side = [m for m in row["messages"] if m.get("role") == "assistant"]
        else:
            tools.append(count(row["tools"]))
            side = [e for e in row["conversations"] if e["from"] in ANSWER_SIDE]
        answers.append(count(json.dumps(side, ensure_ascii=False)))

    def spread(values: list[int]) -> dict[str, int]:
        return (
            {"median": int(statistics.median(values)), "max": max(values)}
            if values
            else {"median": 0, "max": 0}
        )

    return {
        "method": "tokenizer" if count_tokens else "estimate (4 characters a token)",
        "row": spread(totals),
        "tools": spread(tools),
        "assistant": spread(answers),
        "rows_over": {str(size): sum(t > size for t in totals) for size in CONTEXT_SIZES},
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as JSON lines, replacing the file whole (no half-written file on failure)."""
    _replace(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def _dataset_info(out: Path) -> dict[str, Any]:
    """dataset_info.json with the coworkenv_sft entry added (or refreshed), other entries kept."""
    path = out / DATASET_INFO_FILE
    info: dict[str, Any] = {}
    if path.exists():
        try:
            info = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ExportError(f"{path} is not valid JSON ({exc}); fix or remove it") from exc
        if not isinstance(info, dict):
            raise ExportError(f"{path} must hold a JSON object")
    info[DATASET_NAME] = SHAREGPT_DATASET_INFO
    return info


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _text(content: Any) -> str:
    """Message content as plain text (None is empty; content parts are joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def _function_call_value(calls: list[dict[str, Any]], index: int) -> str:
    parsed = []
    for call in calls:
        function = call.get("function") or {}
        arguments = function.get("arguments", {})
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as exc:
                raise ExportError(
                    f"message {index}: the arguments of {function.get('name')} are not JSON"
                ) from exc
        if not isinstance(arguments, dict):
            raise ExportError(
                f"message {index}: the arguments of {function.get('name')} are not a JSON object"
            )
        parsed.append({"name": function.get("name"), "arguments": arguments})
    value = parsed[0] if len(parsed) == 1 else parsed
    return json.dumps(value, ensure_ascii=False)


def _observation_value(calls: list[dict[str, Any]], results: list[dict[str, Any]], index: int) -> str:
    by_id: dict[str, str] = {}
    for result in results:
        by_id[result.get("tool_call_id", "")] = _text(result.get("content"))
    ids = [call.get("id", "") for call in calls]
    if len(results) != len(ids) or set(by_id) != set(ids):
        raise ExportError(
            f"message {index}: the tool results {sorted(by_id)} do not answer the calls {sorted(ids)}"
        )
    if len(ids) == 1:
        return by_id[ids[0]]
    return json.dumps([by_id[i] for i in ids], ensure_ascii=False)


def _texts_beside_tool_calls(record: EpisodeRecord) -> int:
    """How many assistant texts the sharegpt row leaves out (text sent with, or right before,
    tool calls), so the summary can say what was lost."""
    messages = record.messages
    count = 0
    for i, message in enumerate(messages):
        if message.get("role") != "assistant" or not _text(message.get("content")):
            continue
        j = i
        while j < len(messages) and messages[j].get("role") == "assistant":
            if messages[j].get("tool_calls"):
                count += 1
                break
            j += 1
    return count
