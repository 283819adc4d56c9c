"""`Episode`, the public way to run a task: reset, call, next turn, verdict, record, sync and async."""

import json

import anyio
import anyio.lowlevel
import pytest
from mcp import Client

from coworkenv import Episode
from coworkenv.rollout import OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.rollout.episodes.episode import EpisodeError
from coworkenv.servers import build_workspace_server, get_service
from coworkenv.servers.faults import INJECTED_PREFIX, FaultPlan
from coworkenv.task import Limits
from tests.rollout.test_runner import ticket_task


def play_reference_by_hand(ep: Episode) -> None:
    """The ticket task's reference solution, called the way a trainer's agent would."""
    found = ep.call("tickets_search_tickets", {"query": "login"})
    ticket_id = json.loads(found.text)["tickets"][0]["id"]
    ep.call("tickets_update_ticket", {"ticket_id": ticket_id, "priority": "urgent"})
    ep.reply("Done.")
    assert ep.next_turn() == "Anything new on it? Move it to Engineering if it is open again."
    ep.call("tickets_get_ticket", {"ticket_id": 1})
    ep.call("tickets_update_ticket", {"ticket_id": 1, "queue": "Engineering"})
    ep.reply("Done.")
    assert ep.next_turn() is None


async def test_reset_gives_the_prompt_the_first_message_and_the_exact_tool_schemas() -> None:
    ep = Episode(ticket_task())
    start = await ep.areset()
    assert start.user_message == "Find the login ticket and set its priority to urgent."
    assert start.system_prompt.splitlines()[1:] == [
        "You act for me@acme.example: mail you send comes from this address.",
        "The current date and time is 2026-03-02T09:00:00+00:00 (UTC).",
    ]
    async with Client(build_workspace_server(ep.workspace)) as client:
        listed = (await client.list_tools()).tools
    assert start.tools == [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]
    assert [t["name"] for t in start.tools] == [f"tickets_{n}" for n in get_service("tickets").tools.names]
    assert start.tools[0]["inputSchema"]["type"] == "object"
    assert start.openai_tools == tools_for_services(["tickets"])
    assert start.turns == 2


def test_an_agent_playing_by_hand_gets_the_same_record_as_the_runner() -> None:
    cache = SeedCache()
    ep = Episode(ticket_task(), cache=cache, policy="oracle", actor="oracle")
    ep.reset()
    play_reference_by_hand(ep)
    verdict = ep.verdict()
    assert verdict is not None
    assert (verdict.score, verdict.success) == (1.0, True)
    assert ep.rewards() == {"score": 1.0, "success": 1.0, "raw_score": 1.0, "safety": 1.0, "collateral": 0.0}
    mine = ep.record()
    theirs = anyio.run(lambda: run_episode(ticket_task(), OraclePolicy(), cache=cache))
    assert mine.messages == theirs.messages
    assert mine.turn_boundaries == theirs.turn_boundaries == [1, 7]
    assert [(e.actor, e.tool, e.arguments, e.result) for e in mine.tool_calls] == [
        (e.actor, e.tool, e.arguments, e.result) for e in theirs.tool_calls
    ]
    assert mine.verdict == theirs.verdict
    assert (mine.final_hash, mine.diff_summary, mine.status) == (
        theirs.final_hash,
        theirs.diff_summary,
        "completed",
    )


async def test_the_async_twins_run_an_episode_and_a_do_nothing_agent_scores_zero() -> None:
    ep = Episode(ticket_task())
    await ep.areset()
    ep.reply("I will not take any action.")
    assert await ep.anext_turn() is not None
    assert await ep.anext_turn() is None
    verdict = await ep.averdict()
    assert verdict is not None
    assert (verdict.score, verdict.success) == (0.0, False)
    record = await ep.arecord()
    assert [(e.actor, e.tool) for e in record.tool_calls] == [("event", "customer_comment")]
    assert record.policy == "agent"


def test_judging_mid_episode_counts_the_unreached_turn_as_failed() -> None:
    ep = Episode(ticket_task())
    ep.reset()
    ep.call("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"})
    verdict = ep.verdict()
    assert verdict is not None
    assert [(t.turn, t.success) for t in verdict.turns] == [(0, True), (1, False)]
    assert verdict.success is False
    with pytest.raises(EpisodeError, match="the episode is over"):
        ep.call("tickets_get_ticket", {"ticket_id": 1})


def test_past_the_tool_limit_the_model_reads_an_error_and_the_episode_is_truncated() -> None:
    ep = Episode(ticket_task(), limits=Limits(max_tool_calls_per_turn=1))
    ep.reset()
    assert ep.call("tickets_get_ticket", {"ticket_id": 1}).is_error is False
    over = ep.call("tickets_get_ticket", {"ticket_id": 1})
    assert (over.is_error, over.text) == (
        True,
        "the limit of 1 tool calls per turn is reached: no more tool calls this turn; answer the user.",
    )
    assert ep.messages[-1] == {"role": "tool", "tool_call_id": "call_2", "content": over.text}
    record = ep.record()
    assert record.status == "truncated"
    assert [e.tool for e in record.tool_calls] == ["get_ticket"]


def test_unknown_tools_and_bad_arguments_are_errors_the_model_reads() -> None:
    ep = Episode(ticket_task())
    ep.reset()
    unknown = ep.call("tickets_fly", {})
    assert unknown.is_error and unknown.text.startswith("Unknown tool 'tickets_fly'. Available tools: ")
    bad = ep.call("tickets_get_ticket", {"ticket_id": "one"})
    assert bad.is_error
    assert "ticket_id" in bad.text and bad.text.endswith("Fix these arguments and call again.")
    assert ep.record().agent_stats == {}


def test_a_failed_episode_has_no_verdict_and_says_why() -> None:
    ep = Episode(ticket_task())
    ep.reset()
    ep.fail(RuntimeError("the endpoint kept failing"))
    assert ep.verdict() is None
    record = ep.record()
    assert (record.status, record.error, record.verdict) == (
        "error",
        "RuntimeError: the endpoint kept failing",
        None,
    )


def test_calls_before_reset_are_refused() -> None:
    ep = Episode(ticket_task())
    assert ep.rewards() == {"score": 0.0, "success": 0.0, "raw_score": 0.0, "safety": 0.0, "collateral": 0.0}
    with pytest.raises(EpisodeError, match=r"call reset\(\) first"):
        ep.call("tickets_get_ticket", {"ticket_id": 1})


def test_injected_faults_reach_the_model_as_errors_and_change_nothing() -> None:
    plan = FaultPlan(rate=1.0, kinds={"transient": 1.0}, seed=3)
    ep = Episode(ticket_task(), faults=plan)
    ep.reset()
    outcome = ep.call("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"})
    assert outcome.is_error and INJECTED_PREFIX in outcome.text
    record = ep.record()
    assert [(e.tool, e.error is not None) for e in record.tool_calls] == [("update_ticket", True)]
    assert record.diff_summary == {}
    assert record.verdict is not None and record.verdict.score == 0.0


async def test_episodes_share_one_server_and_each_writes_only_its_own_workspace() -> None:
    from coworkenv.rollout.episodes.session import shared_server

    cache = SeedCache()
    first, second = Episode(ticket_task(), cache=cache), Episode(ticket_task(), cache=cache)
    await first.areset()
    await second.areset()
    assert first.session.client.server is second.session.client.server is shared_server(["tickets"])

    async def urgent(ep: Episode) -> None:
        await ep.acall("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"})

    async with anyio.create_task_group() as group:
        group.start_soon(urgent, first)
        group.start_soon(first.acall, "tickets_get_ticket", {"ticket_id": 1})
        group.start_soon(second.acall, "tickets_get_ticket", {"ticket_id": 2})
    assert [(e.tool, e.arguments) for e in first.workspace.audit.entries(actor="agent")] == [
        ("update_ticket", {"ticket_id": 1, "priority": "urgent"}),
        ("get_ticket", {"ticket_id": 1}),
    ]
    assert [(e.tool, e.arguments) for e in second.workspace.audit.entries(actor="agent")] == [
        ("get_ticket", {"ticket_id": 2})
    ]
    assert first.workspace.rows("tickets_tickets", "id = 1")[0]["priority"] == "urgent"
    assert second.workspace.rows("tickets_tickets", "id = 1")[0]["priority"] != "urgent"


async def test_a_shared_server_is_called_with_a_workspace_that_has_its_services() -> None:
    from coworkenv.rollout.episodes.session import InProcessClient, shared_server

    server = shared_server(["mail", "tickets"])
    with pytest.raises(
        RuntimeError, match=r"shared by in-process episodes: use call_on\(workspace, \.\.\.\)"
    ):
        await server.call_tool("tickets_get_ticket", {"ticket_id": 1})
    ep = Episode(ticket_task())
    await ep.areset()
    with pytest.raises(
        ValueError, match=r"the workspace has no tables for \['mail'\]; it was created with \['tickets'\]"
    ):
        InProcessClient(server, ep.workspace)


async def test_the_transcript_shows_the_json_the_audit_recorded_as_a_real_client_would() -> None:
    """In process, a result's text for the transcript is the audit entry's JSON, written
    once; through a real MCP client it is written from the structured content: the same text."""
    from coworkenv.rollout.episodes.session import AgentSession, InProcessClient, shared_server

    ep = Episode(ticket_task())
    await ep.areset()
    ws = ep.workspace
    session = AgentSession(InProcessClient(shared_server(["tickets"]), ws), [], [])
    shown = await session.call_tool("tickets_get_ticket", {"ticket_id": 1})
    missing = await session.call_tool("tickets_get_ticket", {"ticket_id": 999})
    recorded = ws.conn.execute("SELECT result, error FROM audit_log ORDER BY seq").fetchall()
    assert shown.text == recorded[-2][0] and not shown.is_error
    assert json.loads(shown.text) == shown.structured
    assert missing.is_error and missing.text == recorded[-1][1] == (
        "Error executing tool tickets_get_ticket: no ticket with id 999; search_tickets returns valid ids"
    )
    async with Client(build_workspace_server(ws, ["tickets"])) as client:
        over_mcp = await AgentSession(client, [], []).call_tool("tickets_get_ticket", {"ticket_id": 1})
    assert over_mcp.text == shown.text


async def test_in_process_calls_yield_to_other_episodes_and_let_cancellation_in() -> None:
    """A scripted policy waits on nothing, so its calls yield to the event loop at least every
    `YIELD_SECONDS` (not on each call), and every call lets a cancellation in."""
    from coworkenv.rollout.episodes.session import YIELD_SECONDS, InProcessClient, shared_server

    ep = Episode(ticket_task())
    await ep.areset()
    client = InProcessClient(shared_server(["tickets"]), ep.workspace)
    ticks = 0

    async def other_episode() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(other_episode)
        await anyio.lowlevel.checkpoint()
        seen = [ticks]
        started = anyio.current_time()
        for _ in range(40):
            await client.call_tool("tickets_get_ticket", {"ticket_id": 1})
            seen.append(ticks)
        elapsed = anyio.current_time() - started
        group.cancel_scope.cancel()
    yields = len(set(seen)) - 1
    assert 1 <= yields <= 40  # the other task ran while the calls went on
    assert yields <= elapsed / YIELD_SECONDS + 1  # but not after every call

    before = len(ep.workspace.audit.entries())
    with anyio.CancelScope() as scope:
        scope.cancel()
        await client.call_tool("tickets_get_ticket", {"ticket_id": 1})
    assert scope.cancelled_caught
    assert len(ep.workspace.audit.entries()) == before  # the cancelled call did not run


@pytest.mark.parametrize("how", ["written", "written and rolled back", "table added"])
def test_the_verdict_sees_a_change_made_after_the_last_turn_was_judged(how: str) -> None:
    # The verdict reuses what judging the last turn read of the state only while that state
    # stands: a write since (kept or rolled back) or a schema change makes it read again.
    task = ticket_task()
    turns = [t.model_dump(mode="json") for t in task.turns]
    # The last turn reads the comments too, as the verdict's guard does.
    turns[1]["checks"].append({"id": "commented", "type": "count", "table": "tickets_comments", "value": 1})
    ep = Episode(ticket_task(turns=turns))
    ep.reset()
    play_reference_by_hand(ep)  # the last turn judged, on a state with the customer's comment
    conn = ep.workspace.conn
    if how == "written":
        conn.execute("DELETE FROM tickets_comments")
    elif how == "written and rolled back":
        conn.execute("SAVEPOINT probe")
        conn.execute("DELETE FROM tickets_comments")
        conn.execute("ROLLBACK TO probe")
        conn.execute("RELEASE probe")
    else:
        conn.execute("CREATE TABLE tickets_notes (id INTEGER PRIMARY KEY, body TEXT)")
    verdict = ep.verdict()
    assert verdict is not None
    assert {c.id: c.passed for c in verdict.checks}["comment-kept"] is (how != "written")
    assert verdict.success is (how != "written")
    comments = ep.record().diff_summary.get("tickets_comments")
    assert comments == (None if how == "written" else {"added": 1, "removed": 0, "changed": 0})


@pytest.mark.parametrize("event_first", [False, True])
def test_a_one_turn_verdict_reads_the_audit_log_once_and_keeps_every_entry(event_first: bool) -> None:
    # With nothing logged before the only turn, the turn's calls are the episode's: the
    # verdict reads no audit entry again. An event before the turn is logged first, and the
    # record still holds it.
    full = ticket_task()
    first = full.turns[0]
    if event_first:
        first = first.model_copy(update={"events": full.turns[1].events})
    ep = Episode(full.model_copy(update={"turns": [first], "checks": []}))
    ep.reset()
    ep.call("tickets_search_tickets", {"query": "login"})
    ep.call("tickets_update_ticket", {"ticket_id": 1, "priority": "urgent"})
    ep.reply("Done.")
    reads: list[str] = []
    ep.workspace.conn.set_trace_callback(lambda sql: reads.append(sql) if "FROM audit_log" in sql else None)
    assert ep.next_turn() is None
    record = ep.record()
    ep.workspace.conn.set_trace_callback(None)
    assert len(reads) == (2 if event_first else 1)
    assert [(e.actor, e.tool) for e in record.tool_calls] == [
        *([("event", "customer_comment")] if event_first else []),
        ("agent", "search_tickets"),
        ("agent", "update_ticket"),
    ]
    assert record.verdict is not None and record.verdict.success
