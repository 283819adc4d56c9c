"""A scored batch for any MCP agent: the official MCP SDK's client, the OpenAI Agents SDK
and pydantic-ai (models scripted by `ScriptedLLM`) play episodes over each episode's own
streamable HTTP endpoint; each episode is recorded and judged, and `coworkenv report` reads
the records."""

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from coworkenv.cli import cli
from coworkenv.integrations.episode_server import OVER
from coworkenv.integrations.mcp_agents import Conversation, load_agent, run_agent_batch, run_agent_episode
from coworkenv.rollout import read_records
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.servers.faults import INJECTED_PREFIX, FaultPlan
from coworkenv.task import dump_task
from tests.integrations.test_text_episode import TURN_2
from tests.rollout.test_runner import ticket_task

URGENT = {"ticket_id": 1, "priority": "urgent"}
MOVE = {"ticket_id": 1, "queue": "Engineering"}


async def mcp_client_agent(conversation: Conversation) -> str:
    """An agent on the official MCP SDK's client: both turns, replying to get the second."""
    async with Client(conversation.mcp_url) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert len(names) == 8 and all(n.startswith("tickets_") for n in names)
        found = await client.call_tool("tickets_search_tickets", {"query": "login"})
        ticket_id = found.structured_content["tickets"][0]["id"]
        await client.call_tool("tickets_update_ticket", {"ticket_id": ticket_id, "priority": "urgent"})
        following = await conversation.reply("It is urgent now.")
        assert following == TURN_2
        await client.call_tool("tickets_update_ticket", MOVE)
        return "Moved to Engineering."


async def one_turn_agent(conversation: Conversation) -> None:
    """Does the first turn, then stops: the second turn is never reached."""
    async with Client(conversation.mcp_url) as client:
        await client.call_tool("tickets_update_ticket", URGENT)


async def broken_agent(conversation: Conversation) -> str:
    raise ConnectionError("the model endpoint refused the connection")


async def test_an_mcp_client_agent_plays_both_turns_and_is_judged() -> None:
    record = await run_agent_episode(ticket_task(), mcp_client_agent, policy="mcp:test")
    assert (record.status, record.error, record.policy) == ("completed", None, "mcp:test")
    assert record.verdict is not None and (record.verdict.score, record.verdict.success) == (1.0, True)
    assert [(e.actor, e.tool) for e in record.tool_calls] == [
        ("agent", "search_tickets"),
        ("agent", "update_ticket"),
        ("event", "customer_comment"),
        ("agent", "update_ticket"),
    ]
    assert [m["content"] for m in record.messages if m["role"] == "user"] == [
        ticket_task().turns[0].user,
        TURN_2,
    ]
    assert record.messages[-1] == {"role": "assistant", "content": "Moved to Engineering."}


async def test_turns_never_reached_fail_and_a_broken_agent_is_an_error_without_a_verdict() -> None:
    stopped = await run_agent_episode(ticket_task(), one_turn_agent, policy="mcp:test")
    assert stopped.status == "completed" and stopped.verdict is not None
    assert [t.success for t in stopped.verdict.turns] == [True, False]
    broken = await run_agent_episode(ticket_task(), broken_agent, policy="mcp:test")
    assert (broken.status, broken.verdict) == ("error", None)
    assert broken.error == "ConnectionError: the model endpoint refused the connection"


async def test_a_tool_call_after_the_conversation_is_over_is_told_so() -> None:
    answers: list[Any] = []

    async def keeps_going(conversation: Conversation) -> None:
        async with Client(conversation.mcp_url) as client:
            await client.call_tool("tickets_update_ticket", URGENT)
            assert await conversation.reply("Done.") == TURN_2
            assert await conversation.reply("Nothing to move.") is None
            answers.append(await client.call_tool("tickets_get_ticket", {"ticket_id": 1}))

    record = await run_agent_episode(ticket_task(), keeps_going, policy="mcp:test")
    assert (answers[0].is_error, answers[0].content[0].text) == (True, OVER)
    assert record.status == "completed" and len(record.tool_calls) == 2  # the late call never ran


async def test_the_batch_records_every_episode_and_resumes_only_the_errors(tmp_path: Path) -> None:
    calls = {"n": 0}

    async def flaky(conversation: Conversation) -> str:
        calls["n"] += 1
        if calls["n"] == 2:
            raise TimeoutError("the model took too long")  # an infrastructure failure
        return await mcp_client_agent(conversation)

    first = await run_agent_batch([ticket_task()], flaky, trials=3, out_dir=tmp_path, concurrency=1)
    assert (first.done, first.successes, first.errors) == (3, 2, 1)
    second = await run_agent_batch([ticket_task()], flaky, trials=3, out_dir=tmp_path, concurrency=1)
    assert (second.done, second.skipped, second.errors) == (1, 2, 0)
    records = read_records(tmp_path)
    assert {r.policy for r in records} == {f"mcp:{__name__}:{flaky.__qualname__}"}
    assert sorted((r.trial, r.status) for r in records) == [
        (0, "completed"),
        (1, "completed"),
        (1, "error"),
        (2, "completed"),
    ]


async def test_injected_faults_reach_the_agent_as_error_results_and_the_record() -> None:
    seen: list[Any] = []

    async def one_call(conversation: Conversation) -> None:
        async with Client(conversation.mcp_url) as client:
            seen.append(await client.call_tool("tickets_get_ticket", {"ticket_id": 1}))

    plan = FaultPlan(rate=1.0, kinds={"transient": 1.0}, seed=3)
    record = await run_agent_episode(ticket_task(), one_call, policy="mcp:test", faults=plan)
    assert seen[0].is_error and seen[0].content[0].text == (
        f"Error executing tool tickets_get_ticket: {INJECTED_PREFIX} transient error: the tickets service "
        "did not answer in time. Nothing was changed; call get_ticket again."
    )
    assert [(e.tool, e.error) for e in record.tool_calls] == [
        (
            "get_ticket",
            f"{INJECTED_PREFIX} transient error: the tickets service did not answer in time. "
            "Nothing was changed; call get_ticket again.",
        )
    ]


def test_agents_are_named_module_function_and_must_be_async() -> None:
    assert load_agent(f"{__name__}:mcp_client_agent") is mcp_client_agent
    for spec, message in [
        ("nocolon", "an agent is named as module:function, e.g. my_agents:triage, not 'nocolon'"),
        ("no_such_module_here:agent", "cannot import the agent's module 'no_such_module_here'"),
        (f"{__name__}:missing", f"the module '{__name__}' has no 'missing'"),
        (f"{__name__}:ticket_task", f"the agent {__name__}:ticket_task must be an async function"),
    ]:
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            load_agent(spec)


AGENT_MODULE = """
from mcp import Client


async def triage(conversation):
    async with Client(conversation.mcp_url) as client:
        await client.call_tool("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"})
        await conversation.reply("It is urgent now.")
        await client.call_tool("tickets_update_ticket", {"ticket_id": 1, "queue": "Engineering"})
    return "Moved."
"""


def test_rollout_mcp_runs_a_users_agent_module_and_report_reads_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t-escalate.json").write_text(dump_task(ticket_task()))
    (tmp_path / "my_cli_agents.py").write_text(AGENT_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    runner = CliRunner()
    result = runner.invoke(
        cli, ["rollout-mcp", "tasks", "--agent", "my_cli_agents:triage", "--trials", "2", "--out", "out"]
    )
    assert result.exit_code == 0, result.output
    assert "[2/2] t-escalate trial " in result.output and ": completed, score 1.00" in result.output
    assert result.output.splitlines()[-1] == (
        "2 episode(s) run, 0 already done; success rate 1.000, 0 error(s); records in out/records.jsonl"
    )
    assert {(r.policy, r.success) for r in read_records(tmp_path / "out")} == {
        ("mcp:my_cli_agents:triage", True)
    }
    report = runner.invoke(cli, ["report", "out", "--json"])
    assert report.exit_code == 0 and '"mcp:my_cli_agents:triage"' in report.output
    faulty = runner.invoke(
        cli,
        ["rollout-mcp", "tasks", "--agent", "my_cli_agents:triage", "--fault-rate", "1", "--out", "faulty"],
    )
    assert faulty.exit_code == 0 and "[1/1] t-escalate trial 0: completed, score 0.00" in faulty.output
    assert all(e.error for r in read_records(tmp_path / "faulty") for e in r.tool_calls if e.actor == "agent")
    wrong = runner.invoke(cli, ["rollout-mcp", "tasks", "--agent", "my_cli_agents", "--out", "out"])
    assert wrong.exit_code == 2
    assert "Invalid value for --agent: an agent is named as module:function" in wrong.output


SCRIPT = [
    {"tool_calls": [{"name": "tickets_update_ticket", "arguments": URGENT}]},
    {"content": "It is urgent now."},
    {"tool_calls": [{"name": "tickets_update_ticket", "arguments": MOVE}]},
    {"content": "Moved to Engineering."},
]


async def test_an_openai_agents_sdk_agent_over_the_episode_endpoint() -> None:
    pytest.importorskip("agents", reason="the OpenAI Agents SDK comes with the [agents] extra")
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStreamableHttp
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    with ScriptedLLM(list(SCRIPT)) as llm:

        async def sdk_agent(conversation: Conversation) -> None:
            model = OpenAIChatCompletionsModel(
                model="scripted", openai_client=AsyncOpenAI(base_url=llm.base_url, api_key="x")
            )
            async with MCPServerStreamableHttp(params={"url": conversation.mcp_url}) as tools:
                bot = Agent(
                    name="assistant", instructions=conversation.instructions, model=model, mcp_servers=[tools]
                )
                history: list[Any] = []
                message: str | None = conversation.prompt
                while message is not None:
                    result = await Runner.run(bot, [*history, {"role": "user", "content": message}])
                    history = result.to_input_list()
                    message = await conversation.reply(str(result.final_output))

        with anyio.fail_after(60):
            record = await run_agent_episode(ticket_task(), sdk_agent, policy="mcp:agents-sdk")
        assert llm.requests[0]["messages"][0] == {"role": "system", "content": record.messages[0]["content"]}
    assert record.verdict is not None and record.verdict.success
    assert [e.tool for e in record.tool_calls if e.actor == "agent"] == ["update_ticket", "update_ticket"]


async def test_a_pydantic_ai_agent_streaming_from_the_scripted_model() -> None:
    pytest.importorskip("pydantic_ai", reason="pydantic-ai comes with the [agents] extra")
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    with ScriptedLLM(list(SCRIPT)) as llm:

        async def streaming_agent(conversation: Conversation) -> None:
            model = OpenAIChatModel("scripted", provider=OpenAIProvider(base_url=llm.base_url, api_key="x"))
            bot = Agent(
                model, instructions=conversation.instructions, toolsets=[MCPToolset(conversation.mcp_url)]
            )
            history: list[Any] = []
            message: str | None = conversation.prompt
            async with bot:
                while message is not None:
                    async with bot.run_stream(message, message_history=history) as run:
                        answer = await run.get_output()
                    history = run.all_messages()
                    message = await conversation.reply(answer)

        with anyio.fail_after(60):
            record = await run_agent_episode(ticket_task(), streaming_agent, policy="mcp:pydantic-ai")
        assert all(request.get("stream") for request in llm.requests)
    assert record.verdict is not None and record.verdict.success, record.error
