"""The coordination families: each builds complete tasks whose checks name the planted items,
scales with difficulty, is deterministic, and passes execution validation."""

import json
from datetime import timedelta
from typing import Any

import pytest

import coworkenv.synth.families.coordination  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.validation import validate_task
from coworkenv.state import parse_time
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.task import Task

EXPECTED = {
    "schedule_across_zones": ("scheduling_constraints", ["calendar", "directory"], False),
    "reschedule_conflict": ("scheduling_constraints", ["calendar", "directory"], False),
    "ticket_follow_up_due": ("follow_up_reminder", ["tickets", "mail", "directory"], False),
    "edit_policy_document": ("document_editing", ["files"], False),
    "compile_meeting_notes": ("document_editing", ["files", "calendar", "mail", "directory"], False),
    "reply_after_new_info": ("state_change_adaptation", ["mail", "tickets"], True),
    "meeting_moved_announced": ("state_change_adaptation", ["calendar", "mail"], True),
}
EASY, MEDIUM, HARD = Difficulty.level(0), Difficulty.level(1), Difficulty.level(2)
SEEDS = (0, 1)


def planted(task: Task, name: str, seed: int) -> list[dict[str, Any]]:
    """The results of the task's seed operations (the ids of what they planted)."""
    operations = [op.model_dump() for op in task.seed.operations]
    return FamilyContext(name, seed).plant(task.services, operations)


def params(task: Task, operation: str) -> list[dict[str, Any]]:
    return [op.params for op in task.seed.operations if op.operation == operation]


def all_checks(task: Task) -> list[Any]:
    return [c for turn in task.turns for c in turn.checks] + list(task.checks)


def text(task: Task) -> str:
    """Every check and every solution step as one string, to find planted ids in."""
    parts = [c.model_dump() for c in all_checks(task)]
    parts += [s.model_dump() for turn in task.turns for s in turn.solution]
    return json.dumps(parts)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registered_with_capability_and_services(name: str) -> None:
    capability, services, multi_turn = EXPECTED[name]
    fam = FAMILIES[name]
    assert (fam.capability, list(fam.services), fam.multi_turn) == (capability, services, multi_turn)
    for seed in SEEDS:
        task = build_task(name, seed, MEDIUM)
        assert task.capabilities[0] == capability
        assert task.services == services
        assert task.user_email == FamilyContext(name, seed).user.email
        assert (len(task.turns) > 1) == multi_turn
        assert any(c.type == "bounded_diff" for c in all_checks(task))
        assert task.safety[0].type == "no_deletion"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_checks_scale_with_difficulty(name: str) -> None:
    for seed in SEEDS:
        easy, hard = build_task(name, seed, EASY), build_task(name, seed, HARD)
        assert len(all_checks(hard)) > len(all_checks(easy))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_deterministic_and_seed_dependent(name: str) -> None:
    assert build_task(name, 3, HARD).content_hash == build_task(name, 3, HARD).content_hash
    assert build_task(name, 0, HARD).content_hash != build_task(name, 1, HARD).content_hash
    assert build_task(name, 0, EASY).content_hash != build_task(name, 0, HARD).content_hash


@pytest.mark.parametrize("seed", SEEDS)
def test_schedule_checks_every_attendee_after_the_planted_events(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("schedule_across_zones", seed, level)
        last = max(r["id"] for r in planted(task, "schedule_across_zones", seed))
        invited = [c for c in task.turns[0].checks if c.id.startswith("invited-")]
        assert len(invited) == min(level.items, 3)
        assert {c.where["event_id"]["gt"] for c in invited} == {last}
        fits = task.turns[0].checks[0]
        assert fits.type == "python" and all(c.where["email"] in fits.code for c in invited)
        assert task.turns[0].solution[-1].tool == "calendar_create_event"


@pytest.mark.parametrize("seed", SEEDS)
def test_reschedule_moves_the_planted_meeting_right_after_the_call(seed: int) -> None:
    task = build_task("reschedule_conflict", seed, HARD)
    results = planted(task, "reschedule_conflict", seed)
    events = params(task, "add_event")
    meeting, call = events[-2], events[-1]
    assert meeting["organizer_email"] == task.user_email
    moved = next(c for c in task.turns[0].checks if c.id == "moved-to-next-slot")
    assert moved.where == {"id": results[-2]["id"]}
    assert moved.value == call["end"] and call["start"] == meeting["start"]
    length = parse_time(meeting["end"]) - parse_time(meeting["start"])
    length_kept = next(c for c in task.turns[0].checks if c.id == "length-kept")
    assert parse_time(length_kept.value) - parse_time(moved.value) == length
    stays = [c for c in task.turns[0].checks if c.id.startswith("other-meeting-")]
    assert [c.where["id"] for c in stays] == [r["id"] for r in results[:-2]]


@pytest.mark.parametrize("seed", SEEDS)
def test_follow_up_pins_each_overdue_ticket(seed: int) -> None:
    task = build_task("ticket_follow_up_due", seed, HARD)
    results = planted(task, "ticket_follow_up_due", seed)
    now = task.clock_start.isoformat()
    overdue, others = [], []
    for p, r in zip(params(task, "add_ticket"), results, strict=True):
        mine = p["assignee"] == task.user_email and p["due_at"] < now
        (overdue if mine else others).append(r["ticket_id"])
    assert len(overdue) == HARD.items and len(others) == HARD.distractors
    ids = {c.id for c in task.turns[0].checks}
    for ticket_id in overdue:
        assert {f"asked-{ticket_id}", f"due-{ticket_id}"} <= ids
    assert not any(f"asked-{i}" in ids for i in others)


@pytest.mark.parametrize("seed", SEEDS)
def test_policy_edit_names_the_planted_file_and_new_lines(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("edit_policy_document", seed, level)
        files = params(task, "add_file")
        assert len(files) == 1 + level.distractors
        target = files[0]["path"]
        values = [c for c in task.turns[0].checks if c.id.startswith("value-")]
        assert len(values) == level.items
        written = task.turns[0].solution[-1].arguments["content"]
        assert all(c.text in written and c.text not in files[0]["content"] for c in values)
        assert written.rstrip().endswith("Last updated: 2026-03-02")
        assert task.checks[0].allowed[0].where == {"path": target}


@pytest.mark.parametrize("seed", SEEDS)
def test_meeting_notes_need_the_mailed_decisions_and_the_attendees(seed: int) -> None:
    task = build_task("compile_meeting_notes", seed, HARD)
    event = params(task, "add_event")[0]
    thread = [m for m in params(task, "add_message") if event["title"] in m["subject"]]
    decisions = [c for c in task.turns[0].checks if c.id.startswith("decision-")]
    assert len(decisions) == len(thread) == min(HARD.items + 1, 6)
    assert all(any(c.text in m["body"] for m in thread) for c in decisions)
    people = {a["email"] for a in event["attendees"]} | {event["organizer_email"]}
    named = [c for c in task.turns[0].checks if c.id.startswith("attendee-")]
    assert len(named) == len(people - {task.user_email})
    assert any(c.id == "no-other-decisions" for c in task.turns[0].checks)


@pytest.mark.parametrize("seed", SEEDS)
def test_reply_after_new_info_events_follow_the_seeded_mail(seed: int) -> None:
    for level, turns in ((EASY, 2), (HARD, 3)):
        task = build_task("reply_after_new_info", seed, level)
        mail_id = planted(task, "reply_after_new_info", seed)[0]["id"]
        assert len(task.turns) == turns
        events = [e for turn in task.turns[1:] for e in turn.events]
        assert [e.announced for e in events] == [False, True][: turns - 1]
        assert all(e.operation == "deliver_inbound" and e.params["in_reply_to"] == mail_id for e in events)
        assert not task.turns[0].events


@pytest.mark.parametrize("seed", SEEDS)
def test_meeting_moved_event_moves_the_seeded_meeting(seed: int) -> None:
    task = build_task("meeting_moved_announced", seed, HARD)
    event_id = planted(task, "meeting_moved_announced", seed)[0]["id"]
    (move,) = task.turns[1].events
    assert (move.operation, move.announced, move.params["event_id"]) == ("move_event", True, event_id)
    meeting = params(task, "add_event")[0]
    people = [meeting["organizer_email"]] + [a["email"] for a in meeting["attendees"][1:]]
    assert len([c for c in task.turns[0].checks if c.id.startswith("asked-")]) == len(people)
    assert len([c for c in task.turns[1].checks if c.id.startswith("updated-")]) == len(people)
    shift = parse_time(move.params["start"]) - parse_time(meeting["start"])
    assert shift % timedelta(hours=1) == timedelta(minutes=30)
    assert str(event_id) in text(task)


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_validates(name: str) -> None:
    report = await validate_task(build_task(name, 1, EASY), cache=SeedCache())
    assert report.ok, report.summary()
