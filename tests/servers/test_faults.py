"""Seeded fault injection: deterministic, never changes service state, recoverable."""

from typing import Any

import anyio
from mcp import Client

from coworkenv.rollout import OraclePolicy, run_episode
from coworkenv.servers import build_server
from coworkenv.servers.faults import FaultInjector, FaultPlan
from tests.rollout.test_runner import ticket_task
from tests.servers.test_directory import ws as directory_ws  # noqa: F401  (fixture)


def test_the_same_plan_and_stream_give_the_same_faults() -> None:
    plan = FaultPlan(rate=0.5, seed=7)
    injectors = [FaultInjector(plan, stream="t:0"), FaultInjector(plan, stream="t:0")]
    draws = [[injector.draw("mail", "reply") for _ in range(20)] for injector in injectors]
    assert draws[0] == draws[1]
    assert 0 < sum(f is not None for f in draws[0]) < 20
    other_injector = FaultInjector(plan, stream="t:1")
    other = [other_injector.draw("mail", "reply") for _ in range(20)]
    assert other != draws[0]


def test_tool_rates_beat_service_rates_which_beat_the_default() -> None:
    plan = FaultPlan(rate=0.1, services={"mail": 0.5}, tools={"mail.reply": 1.0})
    assert (
        plan.rate_for("mail", "reply"),
        plan.rate_for("mail", "forward"),
        plan.rate_for("files", "x"),
    ) == (
        1.0,
        0.5,
        0.1,
    )
    never = FaultInjector(FaultPlan(rate=0.0, tools={"mail.reply": 0.0}))
    assert [never.draw("mail", "reply") for _ in range(50)] == [None] * 50


async def test_an_injected_failure_changes_nothing_and_is_audited(directory_ws) -> None:  # noqa: F811
    ws = directory_ws
    server = build_server(ws, "directory")
    server.faults = FaultInjector(FaultPlan(rate=1.0, kinds={"transient": 1.0}))
    before = ws.content_hash()
    with anyio.fail_after(5):
        async with Client(server) as client:
            result = await client.call_tool("search_people", {"query": "ann"})
    assert result.is_error
    assert result.content[0].text == (
        "Error executing tool search_people: [injected] transient error: the directory service did not "
        "answer in time. Nothing was changed; call search_people again."
    )
    assert ws.content_hash() == before
    entry = ws.audit.entries()[-1]
    assert (entry.tool, entry.is_error, entry.error) == (
        "search_people",
        True,
        "[injected] transient error: the directory service did not answer in time. "
        "Nothing was changed; call search_people again.",
    )


async def search_after_a_latency_fault(ws, arguments: dict) -> Any:
    """A directory search on `ws` that meets a 90-second latency fault first."""
    server = build_server(ws, "directory")
    server.faults = FaultInjector(FaultPlan(rate=1.0, kinds={"latency": 1.0}, latency_seconds=90))
    with anyio.fail_after(5):
        async with Client(server) as client:
            return await client.call_tool("search_people", arguments)


async def test_a_latency_fault_moves_the_clock_and_the_call_succeeds(directory_ws) -> None:  # noqa: F811
    ws = directory_ws
    result = await search_after_a_latency_fault(ws, {"query": "ann"})
    assert not result.is_error
    assert ws.clock.now_text() == "2026-03-02T09:01:30+00:00"


async def test_a_latency_fault_before_a_call_that_fails_keeps_the_time_it_took(directory_ws) -> None:  # noqa: F811
    ws = directory_ws
    result = await search_after_a_latency_fault(ws, {"query": "ann", "limit": 0})
    assert result.is_error
    assert ws.clock.now_text() == "2026-03-02T09:01:30+00:00"  # the wait happened; the call failed after it
    entry = ws.audit.entries()[-1]
    assert (entry.tool, entry.is_error, entry.time) == ("search_people", True, "2026-03-02T09:01:30+00:00")


async def test_the_oracle_recovers_from_injected_errors_and_still_succeeds() -> None:
    plan = FaultPlan(rate=0.4, kinds={"transient": 0.5, "rate_limit": 0.5}, seed=3)
    record = await run_episode(ticket_task(), OraclePolicy(), faults=plan)
    clean = await run_episode(ticket_task(), OraclePolicy())
    injected = [e for e in record.tool_calls if e.error and e.error.startswith("[injected]")]
    assert injected, "the seed should inject at least one fault"
    assert record.verdict is not None and record.verdict.success
    assert record.final_hash is not None
    # faults never change service state: the same rows as a clean run (the clock is not compared)
    assert record.diff_summary == clean.diff_summary
    for fault in injected:
        later = [
            e for e in record.tool_calls if e.seq > fault.seq and e.tool == fault.tool and not e.is_error
        ]
        assert later, f"no recovery after {fault.tool}"
