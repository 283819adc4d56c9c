"""Prompts, rows and results sized for a small model: the compact tool rendering, the bound on
each tool result the model reads, the context limit from the command line, and token counts
from the model's own tokenizer."""

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coworkenv.cli import cli
from coworkenv.rollout import OraclePolicy, run_episode
from coworkenv.rollout.agents.openai_agent import OpenAIAgent
from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.rollout.agents.tokens import token_stats, tokenizer_counter
from coworkenv.rollout.agents.tool_schemas import (
    COMPACT_HEADING,
    bound_result,
    compact_line,
    compact_tools,
    tools_for_services,
)
from coworkenv.rollout.exports.export_sft import export_tools, to_sharegpt_row, to_trl_row
from coworkenv.task import dump_task
from tests.rollout.test_runner import ticket_task


def tool(name: str) -> dict[str, Any]:
    return next(t for t in tools_for_services(["mail", "tickets"]) if t["function"]["name"] == name)


def test_a_tool_in_one_line_names_its_arguments_types_enums_and_first_sentence() -> None:
    assert compact_line(tool("mail_reply")) == (
        "mail_reply(message_id: integer, body: string, reply_all?: boolean, attachments?: string[]): "
        "Reply to a message: it goes to the original sender (replying to your own sent message goes to its "
        'recipients), with subject "Re: ...", in the same thread.'
    )
    assert compact_line(tool("tickets_search_tickets")).startswith(
        "tickets_search_tickets(query?: string, status?: open|pending|in_progress|resolved|closed (or a list), "
        "priority?: low|normal|high|urgent (or a list), assignee?: string,"
    )
    assert compact_line(tool("tickets_list_queues")).startswith(
        "tickets_list_queues(): List every ticket queue"
    )


def test_compact_tools_keep_what_a_server_needs_to_parse_a_call_and_are_a_fraction_of_the_full_ones() -> None:
    text, entries = compact_tools([tool("tickets_add_comment")])
    assert text == (
        f"{COMPACT_HEADING}\ntickets_add_comment(ticket_id: integer, body: string, visibility: public|internal): "
        "Comment on a ticket as the user you work for."
    )
    assert entries == [
        {
            "type": "function",
            "function": {
                "name": "tickets_add_comment",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "ticket_id": {"type": "integer"},
                        "body": {"type": "string"},
                        "visibility": {"type": "string", "enum": ["public", "internal"]},
                    },
                    "required": ["ticket_id", "body", "visibility"],
                },
            },
        }
    ]
    full = tools_for_services(["mail", "tickets", "calendar", "files", "directory"])
    text, entries = compact_tools(full)
    assert len(text) + len(json.dumps(entries)) < len(json.dumps(full)) / 2


def test_a_long_result_is_cut_with_a_note_on_how_to_page() -> None:
    assert bound_result("short", 100) == "short"
    assert bound_result("x" * 250, 100) == "x" * 100 + (
        "\n[result cut: the first 100 of 250 characters. Ask for less: a smaller `limit` and an `offset` "
        "to page, narrower filters, or one item by its id.]"
    )


def one_turn() -> Any:
    return ticket_task(turns=[ticket_task().turns[0]], checks=[])


async def test_the_agent_sends_compact_tools_and_reads_bounded_results() -> None:
    script = [
        {"tool_calls": [{"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}}]},
        {"content": "Done."},
    ]
    with ScriptedLLM(script) as llm:
        endpoint = Endpoint(model="m", base_url=llm.base_url, api_key="k")
        agent = OpenAIAgent(endpoint, tool_format="compact", max_result_chars=120)
        record = await run_episode(one_turn(), agent)
        first, second = llm.requests
    system = first["messages"][0]["content"]
    assert system.startswith(record.messages[0]["content"] + "\n\n" + COMPACT_HEADING + "\n")
    block = system.split("\n\n" + COMPACT_HEADING + "\n", 1)[1].splitlines()
    assert block[0].startswith("tickets_search_tickets(query?: string, ")
    assert all(set(t["function"]) == {"name", "parameters"} for t in first["tools"])
    assert [t["function"]["name"] for t in first["tools"]] == [line.split("(")[0] for line in block]
    result = second["messages"][-1]["content"]
    assert result.startswith(record.messages[-2]["content"][:120])
    assert "[result cut: the first 120 of " in result
    assert record.messages[3]["content"] == result  # the record keeps what the model read
    assert record.agent_stats == {"results_cut": 1}


async def oracle_record() -> Any:
    return await run_episode(one_turn(), OraclePolicy())


async def test_sft_rows_in_the_compact_rendering_match_what_the_agent_sends() -> None:
    record = await oracle_record()
    row = to_trl_row(record, tools="compact", max_result_chars=100)
    text, entries = compact_tools(export_tools(record.services))
    assert row["tools"] == entries
    assert row["messages"][0]["content"] == record.messages[0]["content"] + "\n\n" + text
    results = [m["content"] for m in row["messages"] if m["role"] == "tool"]
    assert results == [bound_result(m["content"], 100) for m in record.messages if m["role"] == "tool"]
    assert any("[result cut:" in r for r in results)
    full = to_trl_row(record)
    assert full["tools"] == export_tools(record.services)
    assert full["messages"][0] == record.messages[0]
    sharegpt = to_sharegpt_row(record, tools="compact")
    assert json.loads(sharegpt["tools"]) == [e["function"] for e in entries]
    assert sharegpt["system"].endswith(text)


def test_token_counts_come_from_the_counter_given() -> None:
    import anyio

    record = anyio.run(oracle_record)
    stats = token_stats([record], (lambda text: len(text.split()), "words"))
    assert stats is not None and stats.method == "words"
    assert stats.max["user"] == len(record.messages[1]["content"].split())


NO_TRANSFORMERS = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is not None,
    reason="transformers is installed: a named tokenizer is loaded, not skipped",
)
SMOLLM = "HuggingFaceTB/SmolLM2-135M-Instruct"


@NO_TRANSFORMERS
def test_without_transformers_a_named_tokenizer_falls_back_and_says_so() -> None:
    count, method = tokenizer_counter(SMOLLM)
    assert method.endswith(f"; tokenizer {SMOLLM} not used: transformers is not installed")
    assert count("four words in here") > 0


def test_rollout_and_export_take_the_small_model_options(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "t.json").write_text(dump_task(one_turn()))
    script = [
        {"tool_calls": [{"name": "tickets_search_tickets", "arguments": {"query": "login"}}]},
        {
            "tool_calls": [
                {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}}
            ]
        },
        {"content": "Done."},
    ]
    with ScriptedLLM(script) as llm:
        result = CliRunner().invoke(
            cli,
            ["rollout", str(folder), "--agent", "openai", "--endpoint", f"agent=m@{llm.base_url}",
             "--tools", "compact", "--max-result-chars", "150", "--max-context-chars", "5000",
             "--out", str(tmp_path / "out")],
            catch_exceptions=False,
        )  # fmt: skip
        requests = llm.requests
    assert result.exit_code == 0, result.output
    assert COMPACT_HEADING in requests[0]["messages"][0]["content"]
    assert "[result cut: the first 150 of " in requests[1]["messages"][-1]["content"]
    exported = CliRunner().invoke(
        cli,
        ["export", "sft", str(tmp_path / "out"), "--min-score", "0", "--tools", "compact",
         "--max-result-chars", "150", "--out", str(tmp_path / "sft")],
    )  # fmt: skip
    assert exported.exit_code == 0, exported.output
    (row,) = [json.loads(line) for line in (tmp_path / "sft" / "sft.jsonl").read_text().splitlines()]
    assert COMPACT_HEADING in row["messages"][0]["content"]
    assert row["tools"] == compact_tools(export_tools(["tickets"]))[1]


@NO_TRANSFORMERS
def test_the_report_says_which_tokenizer_counted(tmp_path: Path) -> None:
    import anyio

    from coworkenv.rollout.episodes.records_io import append_record

    append_record(tmp_path, anyio.run(oracle_record))
    reported = CliRunner().invoke(cli, ["report", str(tmp_path), "--json", "--tokenizer", SMOLLM])
    assert reported.exit_code == 0, reported.output
    (summary,) = json.loads(reported.output)["policies"].values()
    assert summary["tokens"]["method"].endswith(f"tokenizer {SMOLLM} not used: transformers is not installed")


def test_the_trl_environment_bounds_what_the_model_reads() -> None:
    from coworkenv.integrations.trl import dataset_rows, environment_class

    env = environment_class([one_turn()], max_result_chars=100)()
    env.reset(**dataset_rows([one_turn()])[0])
    answer = env.tickets_get_ticket(ticket_id=1)
    assert answer.startswith("{") and "\n[result cut: the first 100 of " in answer
    assert len(answer.split("\n[result cut:")[0]) == 100
