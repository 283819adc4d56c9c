"""A later turn's work done before the user asked for it fails the turn it was done in; the
same work in its own turn, a split of it, or work the turn asks for passes."""

from typing import Any

import pytest

import coworkenv.synth.families.coordination  # noqa: F401  (registers the families)
from coworkenv.rollout import OraclePolicy, SeedCache
from coworkenv.rollout.episodes.runner import reference_footprint, run_episode
from coworkenv.state import AuditEntry
from coworkenv.synth.family import Difficulty, build_task
from coworkenv.synth.validation.redteam import search_variants
from coworkenv.verifiers import ahead_guards, turn_writes


def call(seq: int, tool: str, actor: str = "agent", **arguments: Any) -> AuditEntry:
    return AuditEntry(
        seq=seq, time="2026-03-02T09:00:00Z", actor=actor, service="tickets", tool=tool,
        arguments=arguments, is_error=False, latency_ms=1.0,
    )  # fmt: skip


def is_write(entry: AuditEntry) -> bool:
    return entry.tool != "get_ticket"


# the reference: turn 0 raises #1 to urgent; turn 1 (after seq 10) moves it to Engineering
REFERENCE = turn_writes(
    [
        call(1, "get_ticket", ticket_id=1),
        call(2, "update_ticket", ticket_id=1, priority="urgent", description="why"),
        call(11, "update_ticket", ticket_id=1, queue="Engineering"),
    ],
    [0, 10],
    writes=is_write,
)


def test_the_reference_writes_of_each_turn_leave_out_what_the_agent_words() -> None:
    assert REFERENCE == [
        ['["tickets.update_ticket", {"priority": "urgent", "ticket_id": 1}]'],
        ['["tickets.update_ticket", {"queue": "engineering", "ticket_id": 1}]'],
    ]


def test_a_later_turns_write_done_early_fails_the_turn_it_was_done_in() -> None:
    agent = [
        call(1, "update_ticket", ticket_id=1, priority="urgent"),
        call(2, "update_ticket", ticket_id=1, queue="engineering"),  # turn 1's work, in turn 0
        call(5, "update_ticket", ticket_id=1, queue="Engineering", actor="event"),
    ]
    found = ahead_guards(agent, [0, 10], REFERENCE, writes=is_write)
    assert list(found) == [0]
    assert (found[0].id, found[0].passed, found[0].role, found[0].message) == (
        "in-turn-0",
        False,
        "guard",
        "tickets.update_ticket with {'queue': 'engineering', 'ticket_id': 1} does turns[1]'s work in turns[0], "
        "before it was asked",
    )


def test_work_in_its_own_turn_split_or_asked_for_passes() -> None:
    agent = [
        call(1, "get_ticket", ticket_id=1),
        call(2, "update_ticket", ticket_id=1, priority="urgent", description="other words"),
        call(11, "update_ticket", ticket_id=1, queue="Engineering"),
        call(12, "update_ticket", ticket_id=1, priority="urgent"),  # again, later: not ahead
    ]
    assert ahead_guards(agent, [0, 10], REFERENCE, writes=is_write) == {}
    assert ahead_guards(agent, [0], REFERENCE[:1], writes=is_write) == {}  # one turn: nothing to be ahead of


@pytest.mark.parametrize(
    ("family", "caught"),
    [
        ("reply_after_new_info", {"in-turn-0"}),  # the ticket resolved before the customer said so
        # the mail about the new time sent before the meeting moved: a turn's mail checks read
        # only the mail sent in that turn
        ("meeting_moved_announced", {"updated-0", "updated-1", "updated-2"}),
    ],
)
async def test_a_turn_done_before_it_was_asked_fails_and_the_reference_passes(
    family: str, caught: set[str]
) -> None:
    task = build_task(family, 1, Difficulty.level(1))
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    assert len(footprint.turn_writes) == len(task.turns)
    (early,) = [v for v in search_variants(task, cache.fork(task)) if v.kind == "done_early"]
    record = await run_episode(early.task, OraclePolicy(), cache=cache, footprint=footprint)
    assert record.verdict is not None
    assert (record.success, {c.id for c in record.verdict.checks if not c.passed}) == (False, caught)
    reference = await run_episode(task, OraclePolicy(), cache=cache, footprint=footprint)
    assert (reference.success, reference.score) == (True, 1.0)
