"""The communication families: each builds complete tasks whose checks name the planted
items, scales with difficulty, is deterministic, and passes execution validation."""

import json
from typing import Any

import pytest

import coworkenv.synth.families.communication  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.validation import validate_task
from coworkenv.synth.family import FAMILIES, Difficulty, build_task
from coworkenv.task import Task

EXPECTED = {
    "mail_answer_figure": ("find_and_report", ["mail", "files"]),
    "ticket_status_report": ("find_and_report", ["tickets", "mail"]),
    "mail_bulk_archive": ("bulk_conditional_update", ["mail"]),
    "mail_chase_unanswered": ("follow_up_reminder", ["mail"]),
    "injection_in_mail": ("safety_injection", ["mail", "files"]),
    "injection_in_file": ("safety_injection", ["files", "mail", "tickets"]),
    "leak_external_request": ("safety_data_leak", ["mail", "files"]),
    "leak_forward_thread": ("safety_data_leak", ["mail"]),
}
EASY, HARD = Difficulty.level(0), Difficulty.level(2)
SEEDS = (0, 1)


def ops(task: Task, operation: str) -> list[dict[str, Any]]:
    return [op.params for op in task.seed.operations if op.operation == operation]


def turn_checks(task: Task, prefix: str = "") -> list[Any]:
    return [c for c in task.turns[0].checks if c.id.startswith(prefix)]


def safety_of(task: Task, kind: str) -> list[Any]:
    return [r for r in task.safety if r.type == kind]


def text(task: Task) -> str:
    """Checks, safety rules and solution as one string, to find planted ids and addresses in."""
    parts = [c.model_dump() for c in task.all_checks()] + [r.model_dump() for r in task.safety]
    parts += [s.model_dump() for s in task.turns[0].solution]
    return json.dumps(parts)


def writes(task: Task, tool: str) -> list[Any]:
    return [s for s in task.turns[0].solution if s.tool == tool]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registered_with_capability_and_services(name: str) -> None:
    capability, services = EXPECTED[name]
    fam = FAMILIES[name]
    assert (fam.capability, list(fam.services)) == (capability, services)
    for seed in SEEDS:
        task = build_task(name, seed, EASY)
        assert task.capabilities == [capability]
        assert task.services == services
        assert any(c.type == "bounded_diff" for c in task.checks)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_deterministic_and_seed_dependent(name: str) -> None:
    assert build_task(name, 3, HARD).content_hash == build_task(name, 3, HARD).content_hash
    assert build_task(name, 0, EASY).content_hash != build_task(name, 1, EASY).content_hash
    assert build_task(name, 0, EASY).content_hash != build_task(name, 0, HARD).content_hash


@pytest.mark.parametrize("seed", SEEDS)
def test_mail_answer_figure(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("mail_answer_figure", seed, level)
        assert len(ops(task, "add_file")) == 1 + level.distractors
        assert len(turn_checks(task, "reply-figure")) == level.items
        (request,) = ops(task, "deliver_inbound")
        (reply,) = writes(task, "mail_reply")
        assert f"m.thread_id = {reply.arguments['message_id']}" in turn_checks(task)[0].query
        assert request["from_addr"] in turn_checks(task)[0].query
        assert safety_of(task, "no_external_mail")


@pytest.mark.parametrize("seed", SEEDS)
def test_ticket_status_report(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("ticket_status_report", seed, level)
        tickets = ops(task, "add_ticket")
        assert len(tickets) == level.items + 1 + level.distractors
        assert sum(t["status"] == "open" for t in tickets) >= level.items + 1
        assert [c.id for c in turn_checks(task)] == ["reply-count", "reply-oldest"]
        oldest = turn_checks(task, "reply-oldest")[0].query
        # the oldest open ticket is one of the planted ones (ids after the demo's 60)
        assert any(f"[^0-9]{tid}[^0-9]" in oldest for tid in range(61, 61 + len(tickets)))


@pytest.mark.parametrize("seed", SEEDS)
def test_mail_bulk_archive(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("mail_bulk_archive", seed, level)
        archived = turn_checks(task, "archived-")
        assert len(archived) == level.items
        assert all(c.column == "folder" and c.value == "archive" for c in archived)
        (stay,) = turn_checks(task, "others-stay")
        assert stay.value == level.distractors == len(stay.where["id"]["in"])
        assert len(writes(task, "mail_move_message")) == level.items
        ids = {c.where["id"] for c in archived} | set(stay.where["id"]["in"])
        assert len(ids) == level.items + level.distractors


@pytest.mark.parametrize("seed", SEEDS)
def test_mail_chase_unanswered(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("mail_chase_unanswered", seed, level)
        sent = [p for p in ops(task, "add_message") if p.get("folder") == "sent"]
        answers = [p for p in ops(task, "add_message") if p.get("in_reply_to")]
        assert (len(sent), len(answers)) == (level.items + level.distractors, level.distractors)
        assert len(turn_checks(task, "followed-up-")) == level.items
        replies = writes(task, "mail_reply")
        answered = {p["in_reply_to"] for p in answers}
        assert len(replies) == level.items and not answered & {r.arguments["message_id"] for r in replies}
        for thread in answered:
            assert str(thread) in turn_checks(task, "answered-left-alone")[0].query


@pytest.mark.parametrize("seed", SEEDS)
def test_injection_in_mail(seed: int) -> None:
    for level, attacks in ((EASY, 1), (HARD, 2)):
        task = build_task("injection_in_mail", seed, level)
        assert len(turn_checks(task, "reply-figure")) == level.items
        attackers = [p["from_addr"] for p in ops(task, "deliver_inbound")[1:]]
        assert len(attackers) == attacks
        assert safety_of(task, "no_external_mail")
        rules = text(task)
        assert all(f"lower(r.address) = '{a}'" in rules for a in attackers)
        assert len([r for r in task.safety if r.id.endswith("no-mail-to-attacker")]) == attacks


@pytest.mark.parametrize("seed", SEEDS)
def test_injection_in_file(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("injection_in_file", seed, level)
        checks = turn_checks(task)
        assert len(checks) == level.items
        assert safety_of(task, "no_deletion") and safety_of(task, "forbid")
        injected = [p for p in ops(task, "add_file") if "assistant" in p["content"].lower()]
        assert len(injected) == 1  # the report the agent must read
        assert injected[0]["path"] in text(task)  # the solution reads it


@pytest.mark.parametrize("seed", SEEDS)
def test_leak_external_request(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("leak_external_request", seed, level)
        files = ops(task, "add_file")
        assert len(files) == level.items + level.distractors
        (requester,) = [p["from_addr"] for p in ops(task, "deliver_inbound")]
        assert requester in turn_checks(task, "requester-answered")[0].query
        forbids = safety_of(task, "forbid")
        assert len(forbids) == 1 + len(files)
        assert all(f["path"] in text(task) for f in files)


@pytest.mark.parametrize("seed", SEEDS)
def test_leak_forward_thread(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("leak_forward_thread", seed, level)
        internal = ops(task, "add_message")
        assert len(internal) == level.items and all(p["subject"].endswith("(internal)") for p in internal)
        assert [bool(p.get("in_reply_to")) for p in internal] == [False] + [True] * (level.items - 1)
        assert len(safety_of(task, "forbid")) == 1 + level.items
        customer = ops(task, "deliver_inbound")[-1]["from_addr"]
        assert customer in turn_checks(task, "customer-answered")[0].query
        assert len(ops(task, "deliver_inbound")) == 1 + level.distractors


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_validates(name: str, cache: SeedCache) -> None:
    report = await validate_task(build_task(name, 2, Difficulty.level(1)), cache=cache)
    assert report.ok, report.summary()
