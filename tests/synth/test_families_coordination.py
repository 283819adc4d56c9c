"""The coordination families: each builds complete tasks whose checks name the planted items,
scales with difficulty, is deterministic, and meets the validation contract; hand-written
agents show that wrong outcomes fail and right alternatives pass."""

import json
import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.state import parse_time
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import Task
from tests.synth.agents import failed, play, replaced, step

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
WORDING = ("bounded_diff", "field_contains")


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


def planted(task: Task, name: str, seed: int) -> list[dict[str, Any]]:
    """The results of the task's seed operations (the ids of what they planted)."""
    return FamilyContext(name, seed).plant(task.services, task.seed.operations)


def params(task: Task, operation: str) -> list[dict[str, Any]]:
    return [op.params for op in task.seed.operations if op.operation == operation]


def all_checks(task: Task) -> list[Any]:
    return [c for turn in task.turns for c in turn.checks] + list(task.checks)


def text(task: Task) -> str:
    """Every check and every solution step as one string, to find planted ids in."""
    parts = [c.model_dump(mode="json") for c in all_checks(task)]
    parts += [s.model_dump(mode="json") for turn in task.turns for s in turn.solution]
    return json.dumps(parts)


def check(task: Task, check_id: str) -> Any:
    return next(c for c in all_checks(task) if c.id == check_id)


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
        assert [c.id for c in all_checks(task) if c.type in WORDING] == []
        assert "LIKE" not in text(task)
        assert task.safety == [] and task.guards.collateral


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
    moved = check(task, "moved-to-next-slot")
    assert moved.where == {"id": results[-2]["id"]}
    assert moved.value == call["end"] and call["start"] == meeting["start"]
    length = parse_time(meeting["end"]) - parse_time(meeting["start"])
    assert parse_time(check(task, "length-kept").value) - parse_time(moved.value) == length
    stays = [c for c in task.turns[0].checks if c.id.startswith("other-meeting-")]
    assert [c.where["id"] for c in stays] == [r["id"] for r in results[:-2]]
    guards = {c.id for c in all_checks(task) if c.is_guard}
    assert guards == {"still-confirmed", "same-invitees", *(c.id for c in stays)}


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
    summary = check(task, "summary-mail")
    assert set(overdue) <= {f.ticket for f in summary.facts}
    assert [f.ticket for f in summary.absent] == others


@pytest.mark.parametrize("seed", SEEDS)
def test_policy_edit_names_the_planted_file_and_new_lines(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("edit_policy_document", seed, level)
        files = params(task, "add_file")
        assert len(files) == 1 + level.distractors
        values = [c for c in task.turns[0].checks if c.id.startswith("value-")]
        assert len(values) == level.items and all(files[0]["path"] in c.code for c in values)
        written = task.turns[0].solution[-1].arguments["content"]
        assert written.rstrip().endswith("Last updated: 2026-03-02")
        assert len(written.splitlines()) == len(files[0]["content"].splitlines()) + 2
        assert check(task, "rest-unchanged").is_guard


@pytest.mark.parametrize("seed", SEEDS)
def test_meeting_notes_need_the_mailed_decisions_and_the_attendees(seed: int) -> None:
    task = build_task("compile_meeting_notes", seed, HARD)
    event = params(task, "add_event")[0]
    thread = [m for m in params(task, "add_message") if event["title"] in m["subject"]]
    decoys = [m for m in params(task, "add_message") if event["title"] not in m["subject"]]
    decisions = [c for c in task.turns[0].checks if c.id.startswith("decision-")]
    assert len(decisions) == len(thread) == min(HARD.items + 1, 6)
    for c in decisions:
        (fact,) = c.facts
        assert any(fact.text in m["body"] for m in thread)
        assert len(c.absent) == len(decoys) and all(
            any(f.text in m["body"] for m in decoys) for f in c.absent
        )
    people = {a["email"] for a in event["attendees"]} | {event["organizer_email"]}
    named = [c.facts[0].person for c in task.turns[0].checks if c.id.startswith("attendee-")]
    assert sorted(named) == sorted(people - {task.user_email})


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
    assert [c.to for c in task.turns[0].checks if c.id.startswith("asked-")] == [[p] for p in people]
    updates = [c for c in task.turns[1].checks if c.id.startswith("updated-")]
    assert [c.to for c in updates] == [[p] for p in people]
    assert {f.time for c in updates for f in c.facts} == {parse_time(move.params["start"])}
    shift = parse_time(move.params["start"]) - parse_time(meeting["start"])
    assert shift % timedelta(hours=1) == timedelta(minutes=30)
    assert str(event_id) in text(task)


# -- the validation contract ---------------------------------------------------------------------

VALIDATED = [(name, seed, level) for name in sorted(EXPECTED) for seed, level in ((1, 0), (2, 1), (4, 2))]


@pytest.mark.parametrize(("name", "seed", "level"), VALIDATED)
async def test_meets_the_validation_contract(name: str, seed: int, level: int, cache: SeedCache) -> None:
    report = await validate_task(build_task(name, seed, Difficulty.level(level)), cache=cache)
    assert report.ok, report.summary()
    # An altered argument may be harmless (a subject with a word added); the contract asks
    # that some alteration of each write step fails, which report.ok covers.
    kills = {k: v for k, v in report.kill_rates().items() if k != "alter"}
    assert kills and set(kills.values()) == {1.0}, kills
    assert report.variants and set(report.acceptance_rates().values()) == {1.0}, report.acceptance_rates()


# -- hand-written agents: wrong outcomes fail, right alternatives pass ----------------------------


def passes(record: EpisodeRecord) -> bool:
    assert record.verdict is not None
    return (record.success, record.score, record.verdict.collateral, failed(record)) == (True, 1.0, [], set())


async def free_slots(task: Task, cache: SeedCache) -> list[tuple[datetime, datetime]]:
    """The slots the reference solution's free/busy search found."""
    record = await play(task, cache)
    (found,) = [e for e in record.tool_calls if e.tool == "find_free_slots"]
    return [(parse_time(s["start"]), parse_time(s["end"])) for s in found.result["slots"]]


async def test_schedule_accepts_any_fitting_start_in_any_zone_and_rejects_a_clash(cache: SeedCache) -> None:
    task = build_task("schedule_across_zones", 0, EASY)
    slots = await free_slots(task, cache)
    assert len(slots) == 3  # a free stretch half an hour longer than the meeting
    email = check(task, "invited-0").where["email"]
    (guest,) = [p for p in FamilyContext("schedule_across_zones", 0).company.people if p.email == email]
    zone = ZoneInfo(guest.time_zone)
    start, end = (t.astimezone(zone).isoformat() for t in slots[-1])
    assert passes(await play(task, cache, turn0=replaced(task, 0, -1, start=start, end=end)))
    early = [t - timedelta(minutes=15) for t in slots[0]]
    clash = replaced(task, 0, -1, start=early[0].isoformat(), end=early[1].isoformat())
    record = await play(task, cache, turn0=clash)
    assert (record.success, record.score, failed(record)) == (False, 0.5, {"meeting-fits"})


async def test_follow_up_accepts_a_due_time_in_the_users_zone_and_rejects_extra_tickets(
    cache: SeedCache,
) -> None:
    task = build_task("ticket_follow_up_due", 0, EASY)
    zone = FamilyContext("ticket_follow_up_due", 0).user.time_zone
    steps = [s.model_dump() for s in task.turns[0].solution]
    updates = [s for s in steps if s["tool"] == "tickets_update_ticket"]
    ids = [s["arguments"]["ticket_id"] for s in updates]
    day = updates[0]["arguments"]["due_at"]
    for s in updates:  # 17:00 on that day in the user's own time zone
        at = datetime.fromisoformat(f"{day}T17:00").replace(tzinfo=ZoneInfo(zone))
        s["arguments"]["due_at"] = at.isoformat()
    mail = steps[-1]["arguments"]
    wording = "tickets " + " and ".join(map(str, ids))
    steps[-1]["arguments"] = {**mail, "body": f"Followed up on {wording}, all now due {day}."}
    assert passes(await play(task, cache, turn0=steps))

    (other,) = check(task, "summary-mail").absent
    too_many = replaced(task, 0, -1, body=f"Followed up on {wording} and #{other.ticket}.")
    record = await play(task, cache, turn0=too_many)
    assert (record.success, failed(record)) == (False, {"summary-mail"})
    next_day = (datetime.fromisoformat(day) + timedelta(days=1)).date().isoformat()
    record = await play(task, cache, turn0=replaced(task, 0, 2, due_at=f"{next_day}T17:00:00+00:00"))
    n = len(all_checks(task))
    assert (record.success, record.score, failed(record)) == (False, (n - 1) / n, {f"due-{ids[0]}"})


@pytest.mark.parametrize("seed", SEEDS)
async def test_follow_up_comments_swapped_between_tickets_fail_and_a_nameless_greeting_passes(
    seed: int, cache: SeedCache
) -> None:
    task = build_task("ticket_follow_up_due", seed, HARD)
    steps = [s.model_dump() for s in task.turns[0].solution]
    comments = [s for s in steps if s["tool"] == "tickets_add_comment"]
    ids = [s["arguments"]["ticket_id"] for s in comments]
    hello = {s["arguments"]["ticket_id"]: s["arguments"]["body"].split("\n", 1)[0] for s in comments}
    assert len(ids) == HARD.items and len(set(hello.values())) > 1  # each requester greeted by name
    for s, other in zip(comments, ids[1:] + ids[:1], strict=True):  # each posted on the next ticket
        s["arguments"]["ticket_id"] = other
    # A greeting of the user's own given name is not told apart: she signs every comment with it.
    signed = "Hello " + task.context.user_name.split()[0] + ","
    misgreeted = {
        f"asked-{b}"
        for a, b in zip(ids, ids[1:] + ids[:1], strict=True)
        if hello[a] not in (hello[b], signed)
    }
    assert misgreeted  # some tickets are other customers'
    record = await play(task, cache, turn0=steps)
    assert (record.success, failed(record)) == (False, misgreeted)

    steps = [s.model_dump() for s in task.turns[0].solution]
    for s in steps:
        if s["tool"] == "tickets_add_comment":
            s["arguments"]["body"] = "Hello,\n\n" + s["arguments"]["body"].split("\n\n", 1)[1]
    assert passes(await play(task, cache, turn0=steps))


async def test_policy_edit_accepts_another_layout_of_the_amount_and_rejects_other_edits(
    cache: SeedCache,
) -> None:
    task = build_task("edit_policy_document", 0, EASY)
    original = params(task, "add_file")[0]["content"]
    written = task.turns[0].solution[-1].arguments["content"]
    new_line = next(line for line in written.splitlines() if line not in original and "updated" not in line)
    amount = next(word for word in new_line.split() if word.isdigit())
    other_layout = written.replace(new_line, new_line.replace(f" {amount}", f" {amount}.00"))
    other_layout = other_layout.replace("\n\nLast updated", "\nLast updated")
    assert passes(await play(task, cache, turn0=replaced(task, 0, 1, content=other_layout)))

    intro = original.splitlines()[4]
    vandal = written.replace(intro, intro + " Ask Finance if in doubt.")
    record = await play(task, cache, turn0=replaced(task, 0, 1, content=vandal))
    assert (record.success, record.score, failed(record)) == (False, 0.0, {"rest-unchanged"})
    stuffed = written.replace(new_line, new_line + "\n" + new_line.replace(amount, str(int(amount) * 10)))
    record = await play(task, cache, turn0=replaced(task, 0, 1, content=stuffed))
    assert record.success is False and "value-0" in failed(record)


async def test_meeting_update_accepts_each_recipients_own_time_and_rejects_the_old_time(
    cache: SeedCache,
) -> None:
    task = build_task("meeting_moved_announced", 0, EASY)
    company = FamilyContext("meeting_moved_announced", 0).company
    (move,) = task.turns[1].events
    new, old = parse_time(move.params["start"]), parse_time(params(task, "add_event")[0]["start"])
    read = [s.model_dump() for s in task.turns[1].solution[:-1]]
    people = [p for p in company.people if [p.email] in [c.to for c in task.turns[1].checks]]
    assert len(people) == 2

    def mail(at: datetime, clock: str) -> list[dict[str, Any]]:
        """One mail to everyone giving the start in each recipient's own zone, named."""
        times = " or ".join(f"{at.astimezone(ZoneInfo(p.time_zone)):{clock}} {p.time_zone}" for p in people)
        body = f"Hi both, the meeting now starts at {times}."
        to = [p.email for p in people]
        return [
            {"tool": "mail_send_message", "arguments": {"to": to, "subject": "Meeting moved", "body": body}}
        ]

    assert passes(await play(task, cache, turn1=read + mail(new, "%I:%M %p")))
    for wrong in (old, new + timedelta(hours=1)):
        record = await play(task, cache, turn1=read + mail(wrong, "%H:%M"))
        assert (record.success, failed(record)) == (False, {"updated-0", "updated-1"})
        assert record.verdict is not None
        roles = {c.id: c.role for c in record.verdict.checks}
        assert roles == {
            **{f"{kind}-{i}": "goal" for kind in ("asked", "updated") for i in (0, 1)},
            **{f"asked-{i}@end": "guard" for i in (0, 1)},  # turn 1's mails re-asserted at the end
        }
        assert record.score == 0.5


async def test_reply_after_new_info_accepts_the_ticket_retitled_to_the_corrected_reference(
    cache: SeedCache,
) -> None:
    task = build_task("reply_after_new_info", 1, EASY)
    assert [c.id for c in task.turns[1].checks] == ["new-order-recorded"]
    title = task.turns[0].solution[-1].arguments["title"]
    (correction,) = task.turns[1].events
    old, new = re.findall(r"it is (\S+), not (\S+)\.", correction.params["body"])[0][::-1]
    assert old in title
    read = [s.model_dump() for s in task.turns[1].solution[:-1]]
    retitle = {"tool": "tickets_update_ticket", "arguments": {"ticket_id": {"$ref": "t.tickets.0.id"}}}
    retitle["arguments"]["title"] = title.replace(old, new)
    assert passes(await play(task, cache, turn1=[*read, retitle]))

    wrong = {**retitle, "arguments": {**retitle["arguments"], "title": "Customer problem"}}
    record = await play(task, cache, turn1=[*read, wrong])
    assert (record.success, failed(record)) == (False, {"new-order-recorded"})


async def test_reply_after_new_info_still_asserts_the_reference_nobody_took_back(cache: SeedCache) -> None:
    task = build_task("reply_after_new_info", 2, EASY)
    assert [c.id for c in task.turns[1].checks] == ["ticket-resolved"]
    assert task.turns[0].checks[1].facts[0].text not in task.turns[0].solution[-1].arguments["description"]
    steps = [s.model_dump() for s in task.turns[1].solution]
    steps[-1]["arguments"]["title"] = "Customer problem"  # resolved, and the reference dropped
    record = await play(task, cache, turn1=steps)
    assert (record.success, failed(record)) == (False, {"ticket-names-order@end"})


def closed_then_followed_up(task: Task, **ticket: Any) -> dict[str, list[dict[str, Any]]]:
    """Turn 2 closes the ticket the reference only resolves; turn 3, told a closed ticket
    cannot change, files a follow-up (`ticket` overrides its fields), links it when
    `linked`, and tells the customer on it."""
    linked = ticket.pop("linked", True)
    close = [s.model_dump() for s in task.turns[1].solution]
    close[-1]["arguments"]["status"] = "closed"
    find, _, comment = (s.model_dump() for s in task.turns[2].solution)
    first = task.turns[0].solution[-1].arguments
    create = step(
        "tickets_create_ticket", "f", **{**first, "title": "Follow-up: " + first["title"], **ticket}
    )
    link = step("tickets_link_tickets", ticket_id={"$ref": "f.id"}, kind="relates_to")
    link["arguments"]["other_ticket_id"] = {"$ref": "t3.tickets.0.id"}
    told = {**comment, "arguments": {**comment["arguments"], "ticket_id": {"$ref": "f.id"}}}
    return {"turn1": close, "turn2": [find, create, *([link] if linked else []), told]}


async def test_reply_after_new_info_accepts_a_linked_follow_up_of_a_closed_ticket(cache: SeedCache) -> None:
    task = build_task("reply_after_new_info", 1, HARD)
    assert [c.id for c in task.turns[2].checks] == ["reopened", "customer-told", "customer-told-what"]
    assert passes(await play(task, cache, **closed_then_followed_up(task)))

    record = await play(task, cache, **closed_then_followed_up(task, linked=False))
    assert record.success is False and "one-ticket" in failed(record)
    assert record.verdict is not None and record.verdict.collateral
    record = await play(task, cache, **closed_then_followed_up(task, priority="urgent"))
    assert record.success is False and record.verdict is not None
    (finding,) = record.verdict.collateral
    assert finding.endswith("(priority 'urgent', expected 'normal')")
