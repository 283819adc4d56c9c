"""The operations families: each builds complete tasks whose checks name the planted items,
scales with difficulty, is deterministic, and passes execution validation."""

import json
from typing import Any

import pytest

import coworkenv.synth.families.operations  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.validation import validate_task
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.task import Task

EXPECTED = {
    "tickets_route_by_rule": ("triage_routing", ["tickets"]),
    "mail_label_by_sender": ("triage_routing", ["mail", "directory"]),
    "tickets_bulk_close_resolved": ("bulk_conditional_update", ["tickets"]),
    "mail_to_ticket": ("cross_service_handoff", ["mail", "tickets"]),
    "ticket_to_meeting": ("cross_service_handoff", ["tickets", "calendar", "directory"]),
    "tickets_invalid_transition": ("error_recovery", ["tickets"]),
    "files_missing_folder": ("error_recovery", ["files", "mail"]),
}
EASY, MEDIUM, HARD = Difficulty.level(0), Difficulty.level(1), Difficulty.level(2)
SEEDS = (0, 1)


def planted(task: Task, name: str, seed: int) -> list[dict[str, Any]]:
    """The results of the task's seed operations (the ids of what they planted)."""
    operations = [op.model_dump() for op in task.seed.operations]
    return FamilyContext(name, seed).plant(task.services, operations)


def params(task: Task, operation: str) -> list[dict[str, Any]]:
    return [op.params for op in task.seed.operations if op.operation == operation]


def checks(task: Task, prefix: str = "") -> list[Any]:
    return [c for c in task.turns[0].checks if c.id.startswith(prefix)]


def text(task: Task) -> str:
    """Every check and the solution as one string, to find planted ids in."""
    parts = [c.model_dump() for c in task.all_checks()] + [s.model_dump() for s in task.turns[0].solution]
    return json.dumps(parts)


def steps(task: Task, tool: str) -> list[Any]:
    return [s for s in task.turns[0].solution if s.tool == tool]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registered_with_capability_and_services(name: str) -> None:
    capability, services = EXPECTED[name]
    fam = FAMILIES[name]
    assert (fam.capability, list(fam.services), fam.multi_turn) == (capability, services, False)
    for seed in SEEDS:
        task = build_task(name, seed, MEDIUM)
        assert task.capabilities[0] == capability
        assert task.services == services
        assert task.user_email == FamilyContext(name, seed).user.email
        assert any(c.type == "bounded_diff" for c in task.checks)
        assert [r.type for r in task.safety] == ["no_deletion"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_deterministic_and_seed_dependent(name: str) -> None:
    assert build_task(name, 3, HARD).content_hash == build_task(name, 3, HARD).content_hash
    assert build_task(name, 0, HARD).content_hash != build_task(name, 1, HARD).content_hash
    assert build_task(name, 0, EASY).content_hash != build_task(name, 0, HARD).content_hash


@pytest.mark.parametrize("seed", SEEDS)
def test_route_by_rule_pins_every_new_ticket(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("tickets_route_by_rule", seed, level)
        ids = [r["ticket_id"] for r in planted(task, "tickets_route_by_rule", seed)]
        pinned = checks(task, "ticket-")
        assert len(pinned) == level.items + level.distractors
        assert sorted(c.where["id"] for c in pinned) == sorted(ids)
        assert sum(c.value != "Support" for c in pinned) == level.items
        moves = steps(task, "tickets_update_ticket")
        assert len(moves) == level.items
        assert all(m.arguments["queue"] in ("Billing", "IT", "Engineering") for m in moves)


@pytest.mark.parametrize("seed", SEEDS)
def test_label_by_sender_checks_the_exact_labelled_set(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("mail_label_by_sender", seed, level)
        ids = [r["id"] for r in planted(task, "mail_label_by_sender", seed)]
        assert len(ids) == level.items + level.distractors
        labelled = checks(task, "mail-")
        assert len(labelled) == level.items
        assert {c.where["message_id"] for c in labelled} <= set(ids)
        counts = checks(task, "exactly-")
        assert len(counts) == 2
        assert sum(c.value for c in counts) == level.items
        assert len(steps(task, "mail_add_label")) == level.items


@pytest.mark.parametrize("seed", SEEDS)
def test_bulk_close_closes_the_stale_and_keeps_the_rest(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("tickets_bulk_close_resolved", seed, level)
        ids = [r["ticket_id"] for r in planted(task, "tickets_bulk_close_resolved", seed)]
        closed = [c.where["id"] for c in checks(task, "closed-")]
        kept = [c.where["id"] for c in checks(task, "kept-")]
        assert set(ids[: level.items]) <= set(closed)
        assert kept == ids[level.items :]
        assert len(kept) == level.distractors
        assert [s.arguments["ticket_id"] for s in steps(task, "tickets_update_ticket")] == closed


@pytest.mark.parametrize("seed", SEEDS)
def test_mail_to_ticket_needs_a_ticket_and_a_reply_per_problem(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("mail_to_ticket", seed, level)
        results = planted(task, "mail_to_ticket", seed)
        assert len(results) == level.items + level.distractors
        assert len(task.turns[0].checks) == 3 * level.items + 1
        replies = checks(task, "reply-")
        assert len(replies) == level.items
        for check, result in zip(replies, results, strict=False):
            assert f"thread_id = {result['thread_id']}" in check.query
        created = steps(task, "tickets_create_ticket")
        assert len(created) == level.items
        assert [c.arguments["requester"] for c in created] == [
            p["from_addr"] for p in params(task, "deliver_inbound")[: level.items]
        ]
        assert checks(task, "one-ticket")[0].value == level.items


@pytest.mark.parametrize("seed", SEEDS)
def test_ticket_to_meeting_books_with_the_assignee(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("ticket_to_meeting", seed, level)
        results = planted(task, "ticket_to_meeting", seed)
        ticket = params(task, "add_ticket")[0]
        assert ticket["tags"] == ["escalated"]
        assert len(params(task, "add_ticket")) == 1 + level.distractors
        assert len(params(task, "add_event")) <= level.items
        assert [c.id for c in task.turns[0].checks] == [
            "meeting-with-assignee",
            "meeting-fits",
            "internal-note",
        ]
        assert checks(task, "internal-note")[0].where["ticket_id"] == results[0]["ticket_id"]
        assert f"a.email = '{ticket['assignee']}'" in checks(task, "meeting-fits")[0].query
        assert steps(task, "calendar_create_event")[0].arguments["attendees"] == [ticket["assignee"]]


@pytest.mark.parametrize("seed", SEEDS)
def test_invalid_transition_tries_the_refused_close_first(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("tickets_invalid_transition", seed, level)
        ids = [r["ticket_id"] for r in planted(task, "tickets_invalid_transition", seed)]
        statuses = [p["status"] for p in params(task, "add_ticket")]
        assert all(s in ("pending", "in_progress") for s in statuses[: level.items])
        assert len(task.turns[0].checks) == 2 * level.items + level.distractors
        assert [c.where["id"] for c in checks(task, "closed-")] == ids[: level.items]
        failing = [s for s in task.turns[0].solution if s.expect_error]
        assert len(failing) == 1
        assert failing[0].arguments == {"ticket_id": ids[0], "status": "closed"}


@pytest.mark.parametrize("seed", SEEDS)
def test_missing_folder_write_fails_before_the_folder_exists(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("files_missing_folder", seed, level)
        assert len(planted(task, "files_missing_folder", seed)) == level.items + level.distractors
        folder = steps(task, "files_create_directory")[0].arguments["path"]
        writes = steps(task, "files_write_file")
        assert writes[0].expect_error and writes[0].arguments == writes[1].arguments
        assert len(writes) == level.items + 1
        assert all(w.arguments["path"].startswith(folder + "/") for w in writes)
        files = [c.where["path"] for c in checks(task, "file-") if c.type == "row_exists"]
        assert files == [w.arguments["path"] for w in writes[1:]]
        assert f'"{folder}' in text(task)


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_a_task_passes_validation(name: str) -> None:
    report = await validate_task(build_task(name, 2, MEDIUM), cache=SeedCache())
    assert report.ok, report.summary()
