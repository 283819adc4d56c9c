"""The episode runner with the oracle and no-op policies, through the real MCP servers."""

import json
from typing import Any

import anyio
import pytest

from coworkenv.rollout import NoopPolicy, OraclePolicy, SeedCache, SeedError, run_episode, seed_workspace
from coworkenv.rollout.agents.policies import resolve_refs
from coworkenv.rollout.episodes.episode import Episode, EpisodeError
from coworkenv.rollout.episodes.reference import footprint_of_run
from coworkenv.rollout.episodes.runner import play, reference_footprint
from coworkenv.task import Task, parse_task
from coworkenv.verifiers import Evidence


def ticket_task(**overrides: Any) -> Task:
    """A two-turn tickets task on a tiny hand-made seed, with a silent event before turn 2."""
    data: dict[str, Any] = {
        "id": "t-escalate",
        "title": "Escalate a ticket, then react to a customer comment",
        "capabilities": ["triage_routing", "multi_turn_adaptation"],
        "services": ["tickets"],
        "clock_start": "2026-03-02T09:00:00Z",
        "user_email": "me@acme.example",
        "seed": {
            "operations": [
                {"service": "tickets", "operation": "add_queue", "params": {"name": "Support"}},
                {"service": "tickets", "operation": "add_queue", "params": {"name": "Engineering"}},
                {
                    "service": "tickets",
                    "operation": "add_ticket",
                    "params": {
                        "title": "Login page is down",
                        "queue": "Support",
                        "requester": "cy@globex.example",
                        "status": "resolved",
                    },
                },
            ]
        },
        "turns": [
            {
                "user": "Find the login ticket and set its priority to urgent.",
                "checks": [
                    {
                        "id": "urgent",
                        "type": "field_equals",
                        "table": "tickets_tickets",
                        "where": {"id": 1},
                        "column": "priority",
                        "value": "urgent",
                    }
                ],
                "solution": [
                    {"tool": "tickets_search_tickets", "arguments": {"query": "login"}, "id": "found"},
                    {
                        "tool": "tickets_update_ticket",
                        "arguments": {"ticket_id": {"$ref": "found.tickets.0.id"}, "priority": "urgent"},
                    },
                ],
            },
            {
                "user": "Anything new on it? Move it to Engineering if it is open again.",
                "events": [
                    {
                        "service": "tickets",
                        "operation": "customer_comment",
                        "params": {"ticket_id": 1, "body": "Still broken!", "reopen": True},
                        "advance_minutes": 30,
                    }
                ],
                "checks": [
                    {
                        "id": "moved",
                        "type": "field_equals",
                        "table": "tickets_tickets",
                        "where": {"id": 1},
                        "column": "queue",
                        "value": "Engineering",
                    }
                ],
                "solution": [
                    {"tool": "tickets_get_ticket", "arguments": {"ticket_id": 1}},
                    {"tool": "tickets_update_ticket", "arguments": {"ticket_id": 1, "queue": "Engineering"}},
                ],
            },
        ],
        # The customer's comment arrives by an event: it holds without the agent, so it guards.
        "checks": [
            {"id": "comment-kept", "type": "count", "table": "tickets_comments", "value": 1, "role": "guard"}
        ],
        "safety": [{"id": "no-delete", "type": "no_deletion"}],
    }
    data.update(overrides)
    return parse_task(data)


async def test_oracle_succeeds_with_per_turn_verdicts_and_a_transcript() -> None:
    record = await run_episode(ticket_task(), OraclePolicy())
    assert (record.status, record.error) == ("completed", None)
    assert record.verdict is not None
    assert (record.verdict.score, record.verdict.success) == (1.0, True)
    assert [(t.turn, t.success) for t in record.verdict.turns] == [(0, True), (1, True)]
    assert [m["role"] for m in record.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert record.turn_boundaries == [1, 7]
    call = record.messages[4]["tool_calls"][0]
    assert call["function"]["name"] == "tickets_update_ticket"
    assert json.loads(call["function"]["arguments"]) == {"ticket_id": 1, "priority": "urgent"}
    assert [(e.actor, e.tool) for e in record.tool_calls] == [
        ("oracle", "search_tickets"),
        ("oracle", "update_ticket"),
        ("event", "customer_comment"),
        ("oracle", "get_ticket"),
        ("oracle", "update_ticket"),
    ]
    assert record.diff_summary == {
        "tickets_comments": {"added": 1, "removed": 0, "changed": 0},
        "tickets_tickets": {"added": 0, "removed": 0, "changed": 1},
    }


async def test_two_oracle_runs_end_in_the_same_state_and_noop_gets_no_success() -> None:
    cache = SeedCache()
    task = ticket_task()
    first = await run_episode(task, OraclePolicy(), cache=cache)
    second = await run_episode(task, OraclePolicy(), cache=cache, trial=1)
    noop = await run_episode(task, NoopPolicy(), cache=cache)
    assert first.final_hash == second.final_hash
    assert first.initial_hash == noop.initial_hash
    assert noop.verdict is not None
    assert (noop.status, noop.verdict.success) == ("completed", False)
    assert [(c.id, c.passed) for c in noop.verdict.checks] == [
        ("urgent", False),
        ("moved", False),
        ("comment-kept", True),
        ("urgent@end", False),
    ]
    assert (noop.verdict.raw_score, noop.verdict.score) == (0.0, 0.0)


async def test_a_failing_reference_step_makes_an_error_record_not_a_crash() -> None:
    task = ticket_task()
    broken = task.model_copy(
        update={
            "turns": [
                task.turns[0].model_copy(update={"solution": [task.turns[0].solution[1]]}),
                task.turns[1],
            ]
        }
    )
    record = await run_episode(broken, OraclePolicy())
    assert record.status == "error"
    assert record.error == (
        "turns[0].solution[0] (tickets_update_ticket): cannot resolve a $ref: \"no earlier step with id 'found'\""
    )
    assert (record.verdict, record.success, record.score) == (None, False, 0.0)  # not judged


async def test_the_tool_call_limit_truncates_the_turn() -> None:
    record = await run_episode(ticket_task(limits={"max_tool_calls_per_turn": 1}), OraclePolicy())
    assert record.status == "error"
    assert record.error == (
        "turns[0].solution[1] (tickets_update_ticket): the limit of 1 tool calls per turn is reached"
    )


def test_seed_errors_name_the_failing_part() -> None:
    task = ticket_task(seed={"operations": [{"service": "tickets", "operation": "add_ticket", "params": {}}]})
    with pytest.raises(
        SeedError,
        match=r"seed.operations\[0\] \(tickets.add_ticket\): invalid parameters for tickets.add_ticket: title: Field required; queue: Field required; requester: Field required",
    ):
        seed_workspace(task)
    with pytest.raises(SeedError, match=r"seed.rows: no table 'mail_messages'"):
        seed_workspace(ticket_task(seed={"rows": {"mail_messages": [{"id": 1}]}}))
    with pytest.raises(
        SeedError, match=r"seed.operations\[0\]: service 'files' is not in the task's services"
    ):
        seed_workspace(
            ticket_task(seed={"operations": [{"service": "files", "operation": "add_file", "params": {}}]})
        )


def test_resolve_refs_walks_keys_and_indexes() -> None:
    results = {"s": {"items": [{"id": 7}, {"id": 9}]}}
    assert resolve_refs({"a": {"$ref": "s.items.1.id"}, "b": [{"$ref": "s.items.0"}], "c": 3}, results) == {
        "a": 9,
        "b": [{"id": 7}],
        "c": 3,
    }
    with pytest.raises(KeyError, match="no earlier step with id 'x'"):
        resolve_refs({"$ref": "x.y"}, results)


async def test_an_event_that_cannot_apply_is_recorded_and_the_episode_goes_on() -> None:
    task = ticket_task()
    event = (
        task.turns[1]
        .events[0]
        .model_copy(update={"params": {"ticket_id": 99, "body": "hello?", "reopen": True}})
    )
    broken = task.model_copy(
        update={"turns": [task.turns[0], task.turns[1].model_copy(update={"events": [event]})]}
    )
    record = await run_episode(broken, NoopPolicy())
    assert record.status == "completed"
    assert record.event_errors == [
        "turns[1].events[0] (tickets.customer_comment): no ticket with id 99; search_tickets returns valid ids"
    ]


async def test_episodes_that_start_together_derive_the_footprint_once() -> None:
    task, cache = ticket_task(), SeedCache()
    found: list[Any] = []

    async def derive() -> None:
        found.append(await reference_footprint(task, cache))

    async with anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(derive)
    # one derivation, the others waited for it: the very same footprint object, none left running
    assert len(found) == 4 and all(f is found[0] for f in found)
    assert found[0].error is None and cache.deriving == {}


async def test_the_footprint_run_plays_its_turns_unjudged_and_derives_what_a_judged_run_does() -> None:
    task = ticket_task()
    judged = await play(task, OraclePolicy(), cache=SeedCache())
    unjudged = await play(task, OraclePolicy(), cache=SeedCache(), judge_turns=False)
    assert [len(r) for r in judged.turn_results] == [len(t.checks) for t in task.turns]
    assert unjudged.turn_results == [] and len(unjudged.timings.turns) == len(task.turns)
    assert unjudged.workspace.content_hash() == judged.workspace.content_hash()

    def evidence(played: Any) -> Evidence:
        return Evidence(played.initial, played.workspace, played.workspace.audit.entries(), task.user_email)

    assert isinstance(judged.episode, Episode)
    from_judged = await footprint_of_run(task, evidence(judged), judged.episode.turn_starts)
    assert (await reference_footprint(task, SeedCache())).model_dump() == from_judged.model_dump()
    assert isinstance(unjudged.episode, Episode)
    with pytest.raises(EpisodeError, match="without judging its turns: it has no verdict"):
        await unjudged.episode.averdict()
