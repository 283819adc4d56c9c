"""The operations families: each builds complete tasks whose checks name the planted items,
scales with difficulty, is deterministic, and meets the validation contract; hand-written
agents show that their verdicts reject wrong work and accept right work done differently."""

import itertools
import json
from typing import Any

import pytest

import coworkenv.synth.families.operations  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import Task
from tests.synth.agents import judge, step

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


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_default_guards_replace_diff_allowances(name: str) -> None:
    """No table-wide allowance, no hand-written deletion rule: the collateral guard and the
    default removal rule judge what else changed."""
    for level in (EASY, HARD):
        task = build_task(name, 2, level)
        assert [c.id for c in task.all_checks() if c.type in ("bounded_diff", "no_deletion")] == []
        assert task.safety == []
        assert (task.guards.collateral, task.guards.removals, task.guards.allow) == (True, True, [])


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
        assert sorted((c.value == "Support", c.is_guard) for c in pinned) == sorted(
            [(False, False)] * level.items + [(True, True)] * level.distractors
        )
        moves = steps(task, "tickets_update_ticket")
        assert len(moves) == level.items
        assert all(m.arguments["queue"] in ("Billing", "IT", "Engineering") for m in moves)


@pytest.mark.parametrize("seed", SEEDS)
def test_label_by_sender_checks_each_labelled_mail(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("mail_label_by_sender", seed, level)
        ids = [r["id"] for r in planted(task, "mail_label_by_sender", seed)]
        assert len(ids) == level.items + level.distractors
        labelled = checks(task, "mail-")
        assert len(labelled) == len(task.turns[0].checks) == level.items
        assert {c.where["message_id"] for c in labelled} <= set(ids)
        added = [(s.arguments["message_id"], s.arguments["label"]) for s in steps(task, "mail_add_label")]
        assert added == [(c.where["message_id"], c.where["label"]) for c in labelled]


@pytest.mark.parametrize("seed", SEEDS)
def test_bulk_close_closes_the_stale_and_keeps_the_rest(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("tickets_bulk_close_resolved", seed, level)
        ids = [r["ticket_id"] for r in planted(task, "tickets_bulk_close_resolved", seed)]
        closed = [c.where["id"] for c in checks(task, "closed-")]
        kept = checks(task, "kept-")
        assert set(ids[: level.items]) <= set(closed)
        assert [c.where["id"] for c in kept] == ids[level.items :]
        assert len(kept) == level.distractors
        assert all(c.is_guard for c in kept) and not any(c.is_guard for c in checks(task, "closed-"))
        assert [s.arguments["ticket_id"] for s in steps(task, "tickets_update_ticket")] == closed


@pytest.mark.parametrize("seed", SEEDS)
def test_mail_to_ticket_needs_a_ticket_and_a_reply_per_problem(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("mail_to_ticket", seed, level)
        results = planted(task, "mail_to_ticket", seed)
        assert len(results) == level.items + level.distractors
        replies = [c for c in checks(task, "reply-") if c.type == "mail_sent"]
        customers = [p["from_addr"] for p in params(task, "deliver_inbound")[: level.items]]
        assert [(c.to, c.thread_of, c.reply) for c in replies] == [
            ([customer], r["id"], True)
            for customer, r in zip(customers, results, strict=False)
            for _ in ("reply", "number")
        ]
        # The reply's ticket is the customer's new one, looked up when judged.
        numbers = [c.facts[0].ticket_where for c in replies if c.facts]
        assert [w["requester"] for w in numbers] == customers
        assert len(checks(task, "ticket-")) >= 2 * level.items
        assert all(c.type == "states" for c in checks(task, "ticket-"))
        created = steps(task, "tickets_create_ticket")
        assert [c.arguments["requester"] for c in created] == customers


def test_mail_to_ticket_records_the_figures_and_dates_a_report_states() -> None:
    """A report that gives an amount or a date asks the ticket to keep them; one that gives
    neither asks only for its reference."""
    task = build_task("mail_to_ticket", 0, HARD)
    details = {
        c.id: [f.model_dump(include={"text", "number", "date"}, exclude_none=True) for f in c.facts]
        for c in checks(task, "ticket-")
        if c.id.endswith("-details")
    }
    assert details == {
        "ticket-NW-97983-details": [{"number": 1798}, {"date": "2026-02-28"}],
        "ticket-NW-55478-details": [{"date": "2026-02-24"}],
    }
    bodies = [p["body"] for p in params(task, "deliver_inbound")]
    assert "We returned order NW-97983 on 28 February and still wait for 1798.00 EUR." in bodies[2]
    assert [c.columns for c in checks(task, "ticket-") if c.id.endswith("-details")] == [["description"]] * 2


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
        note = checks(task, "internal-note")[0]
        assert note.where == {"ticket_id": results[0]["ticket_id"], "visibility": "internal"}
        assert [f.date for f in note.facts] == [
            steps(task, "calendar_find_free_slots")[0].arguments["window_start"][:10]
        ]
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
        assert [c.is_guard for c in checks(task, "kept-")] == [True] * level.distractors
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
        assert all(path in task.turns[0].user for path in files)
        assert f'"{folder}' in text(task)


# -- the validation contract ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


@pytest.mark.parametrize(
    ("name", "seed", "level"), list(itertools.product(sorted(EXPECTED), (1, 4), (0, 1, 2)))
)
async def test_meets_the_validation_contract(name: str, seed: int, level: int, cache: SeedCache) -> None:
    report = await validate_task(build_task(name, seed, Difficulty.level(level)), cache=cache)
    assert report.ok, report.summary()
    # "alter" is judged per write step (one altered argument must fail; a note with a word
    # added is still a right note), which report.ok covers; every other class is all killed.
    assert {k: r for k, r in report.kill_rates().items() if k != "alter" and r != 1.0} == {}
    assert set(report.kill_rates()) >= {"drop", "alter"}
    assert any(kind.startswith("collateral_") for kind in report.kill_rates())
    assert {k: r for k, r in report.acceptance_rates().items() if r != 1.0} == {}
    assert "extra_reads" in report.acceptance_rates()


# -- hand-written agents -------------------------------------------------------------------------


def failed(record: EpisodeRecord) -> list[str]:
    assert record.verdict is not None
    return sorted(c.id for c in record.verdict.checks if not c.passed)


def verdict(record: EpisodeRecord) -> tuple[bool, float, list[str], bool]:
    """(success, score, failed check ids, any collateral), the whole verdict in one value."""
    assert record.verdict is not None
    return record.success, record.score, failed(record), bool(record.verdict.collateral)


def dump(task: Task) -> list[dict[str, Any]]:
    return [s.model_dump(exclude_defaults=True) for s in task.turns[0].solution]


@pytest.fixture(scope="module")
def handoff() -> Task:
    """Two customers report problems (one per mail, tickets numbered from 61) and two do not:
    Jennifer (mail 201) wrong parts in NW-15039, for Support; Paula (mail 202) a double charge
    on INV-2026-6375, for Billing."""
    task = build_task("mail_to_ticket", 1, MEDIUM)
    assert [c.thread_of for c in task.turns[0].checks if c.type == "mail_sent"] == [201, 201, 202, 202]
    assert [s.arguments["body"].count("ticket #6") for s in steps(task, "mail_reply")] == [1, 1]
    return task


def handoff_steps(task: Task, order: list[int], bodies: list[str]) -> list[dict[str, Any]]:
    """Search and list the queues, then for each problem mail in `order`: read it, file the
    ticket, reply `bodies[k]`."""
    reference = dump(task)
    groups = [reference[2 + 3 * i : 5 + 3 * i] for i in range(len(order))]
    out = reference[:2]
    for i, body in zip(order, bodies, strict=True):
        read, create, reply = groups[i]
        out += [read, create, {**reply, "arguments": {**reply["arguments"], "body": body}}]
    return out


async def test_handoff_accepts_tickets_filed_in_another_order_and_numbers_written_out(
    handoff: Task, cache: SeedCache
) -> None:
    """Working through the newest mail first numbers the tickets the other way round; the reply
    checks look the customer's ticket up instead of fixing its number."""
    bodies = [
        "Hi Paula, sorry about the double charge. This is now ticket number 61 in our Billing queue.",
        "Dear Jennifer, we are looking into the wrong parts under ticket 62 and will send the right ones.",
    ]
    record = await judge(handoff, handoff_steps(handoff, [1, 0], bodies), cache)
    assert verdict(record) == (True, 1.0, [], False)


async def test_handoff_accepts_reply_all_and_other_ways_to_write_the_number(
    handoff: Task, cache: SeedCache
) -> None:
    solution = handoff_steps(
        handoff, [0, 1], ["Logged as #61; we will be in touch.", "Your reference is ticket no. 62."]
    )
    solution[4]["arguments"]["reply_all"] = True
    record = await judge(handoff, solution, cache)
    assert verdict(record) == (True, 1.0, [], False)
    # Every form the ticket fact reads is accepted, not only those a query listed.
    for forms in (
        ["ticket ID 61", "ticket ID 62"],
        ["Issue 61", "incident #62"],
        ["Ticket-61", "ticket: 62"],
    ):
        bodies = [f"This is now {form}." for form in forms]
        record = await judge(handoff, handoff_steps(handoff, [0, 1], bodies), cache)
        assert verdict(record) == (True, 1.0, [], False), forms


async def test_handoff_rejects_swapped_ticket_numbers(handoff: Task, cache: SeedCache) -> None:
    record = await judge(
        handoff, handoff_steps(handoff, [0, 1], ["Logged as ticket #62.", "Logged as ticket #61."]), cache
    )
    assert verdict(record) == (
        False,
        7 / 9,  # 9 checks: Paula's ticket keeps its amount
        ["reply-INV-2026-6375-ticket", "reply-NW-15039-ticket"],
        False,
    )


async def test_handoff_rejects_a_new_mail_where_a_reply_was_asked(handoff: Task, cache: SeedCache) -> None:
    solution = handoff_steps(handoff, [0, 1], ["Logged as ticket #61.", "Logged as ticket #62."])
    solution[4] = step(
        "mail_send_message",
        to=["jennifer.jackson@stark.example"],
        subject="The wrong parts",
        body="Logged as ticket #61.",
    )
    record = await judge(handoff, solution, cache)
    assert verdict(record) == (
        False,
        7 / 9,  # 9 checks: Paula's ticket keeps its amount
        ["reply-NW-15039", "reply-NW-15039-ticket"],
        False,
    )


async def test_handoff_rejects_a_bare_number_and_a_wrong_queue(handoff: Task, cache: SeedCache) -> None:
    solution = handoff_steps(handoff, [0, 1], ["Logged as ticket #61.", "Our reference: 62."])
    solution[3] = {**solution[3], "arguments": {**solution[3]["arguments"], "queue": "Billing"}}
    record = await judge(handoff, solution, cache)
    # The ticket created in the wrong queue is also a created row the task did not ask for:
    # the collateral guard zeroes the score.
    assert verdict(record) == (
        False,
        0.0,
        ["reply-INV-2026-6375-ticket", "ticket-NW-15039-queue"],
        True,
    )
    assert record.verdict is not None
    (finding,) = record.verdict.collateral
    assert finding.endswith("(queue 'Billing', expected 'Support')")


@pytest.fixture(scope="module")
def routing() -> Task:
    """#62 goes to Engineering, #63 to IT; #61, #64 and #65 stay in Support."""
    task = build_task("tickets_route_by_rule", 1, MEDIUM)
    moves = [(s.arguments["ticket_id"], s.arguments["queue"]) for s in steps(task, "tickets_update_ticket")]
    assert moves == [(62, "Engineering"), (63, "IT")]
    return task


async def test_routing_accepts_notes_and_tags_while_routing(routing: Task, cache: SeedCache) -> None:
    search = dump(routing)[0]
    solution = [search]
    for tid, queue, why in ((62, "Engineering", "a bug in the tracking page"), (63, "IT", "a VPN problem")):
        solution += [
            step("tickets_get_ticket", ticket_id=tid),
            step("tickets_add_comment", ticket_id=tid, visibility="internal", body=f"Routed: {why}."),
            step("tickets_update_ticket", ticket_id=tid, queue=queue, add_tags=["triaged"]),
        ]
    record = await judge(routing, solution, cache)
    assert verdict(record) == (True, 1.0, [], False)


async def test_routing_rejects_a_ticket_moved_that_stays(routing: Task, cache: SeedCache) -> None:
    solution = [*dump(routing), step("tickets_update_ticket", ticket_id=61, queue="Billing")]
    record = await judge(routing, solution, cache)
    assert verdict(record) == (False, 0.0, ["ticket-61-queue"], True)
    assert record.verdict is not None and record.verdict.raw_score == 1.0


async def test_routing_rejects_a_routed_ticket_also_closed(routing: Task, cache: SeedCache) -> None:
    solution = [*dump(routing), step("tickets_update_ticket", ticket_id=63, status="closed")]
    record = await judge(routing, solution, cache)
    assert verdict(record) == (False, 0.0, [], True)
    assert record.verdict is not None and [v.type for v in record.verdict.safety_violations] != []


@pytest.fixture(scope="module")
def closing() -> Task:
    """#61 (in progress or pending) must be closed with an internal note naming credit note CN-3520."""
    task = build_task("tickets_invalid_transition", 1, EASY)
    assert "CN-3520" in task.turns[0].user and [c.id for c in task.turns[0].checks] == [
        "closed-61",
        "note-61",
        "kept-62",
    ]
    return task


async def test_closing_accepts_resolving_first_without_trying_and_other_wording(
    closing: Task, cache: SeedCache
) -> None:
    solution = [
        step("tickets_get_ticket", ticket_id=61),
        step("tickets_update_ticket", ticket_id=61, status="resolved"),
        step(
            "tickets_add_comment",
            ticket_id=61,
            visibility="internal",
            body="Closing ticket number 61: credit note cn-3520 has gone out, so the refund is done.",
        ),
        step("tickets_update_ticket", ticket_id=61, status="closed"),
    ]
    record = await judge(closing, solution, cache)
    assert verdict(record) == (True, 1.0, [], False)


async def test_closing_rejects_the_reason_as_a_public_comment(closing: Task, cache: SeedCache) -> None:
    solution = dump(closing)
    solution[2]["arguments"]["visibility"] = "public"
    record = await judge(closing, solution, cache)
    assert verdict(record) == (False, 0.0, ["note-61"], True)


async def test_closing_rejects_a_note_with_another_reference(closing: Task, cache: SeedCache) -> None:
    solution = dump(closing)
    solution[2]["arguments"]["body"] = "Done: the refund went out with credit note CN-35200."
    record = await judge(closing, solution, cache)
    assert verdict(record) == (False, 0.5, ["note-61"], False)
