"""The workday families: days of six and seven turns over one workspace, each turn arriving
at a stated moment after the events since the last one, meet the validation contract on the
demo company and on worlds. Hand-written agents show, for each kind of between-turn change
(announced, silent, the user changing their mind, a clarification), that a wrong agent fails
with an exact verdict and that a right agent on another valid path passes."""

from datetime import UTC, date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import coworkenv.synth.families.workdays  # noqa: F401  (registers the family)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.agents.policies import OraclePolicy
from coworkenv.rollout.episodes.episode import NOTHING_TO_ADD
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.runner import reference_footprint, run_episode
from coworkenv.state import parse_time
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.synth.phrasing import seams
from coworkenv.synth.validation.mutants import guessing_mutants
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import Task, Turn
from coworkenv.worlds import world
from tests.synth.agents import play

GOALS = [
    "ticket-opened",
    "ticket-names-order",
    "call-booked",
    "colleague-invited",
    "correction-noted",
    "old-ticket-closed",
    "call-moved",
    "finance-invited",
    "refund-answered",
    "summary-mailed",
]
CHANGED_MIND = "changed_mind" in Turn.model_fields


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


def test_registered_as_a_workday_of_seven_turns_over_one_day() -> None:
    fam = FAMILIES["support_day"]
    assert (fam.capability, list(fam.services), fam.multi_turn, fam.kind) == (
        "state_change_adaptation",
        ["mail", "tickets", "calendar"],
        True,
        "workday",
    )
    task = build_task("support_day", 0)
    assert [[c.id for c in turn.checks] for turn in task.turns] == [
        GOALS[0:2],
        GOALS[2:4],
        GOALS[4:5],
        GOALS[5:6],
        GOALS[6:7],
        GOALS[7:8],
        GOALS[8:10],
    ]
    events = [[(e.operation, e.announced, e.advance_minutes) for e in turn.events] for turn in task.turns]
    assert events == [
        [],
        [("deliver_inbound", True, 90)],
        [("deliver_inbound", False, 60)],  # the silent correction
        [],
        [("deliver_inbound", True, 120)],  # the colleague's changed plan
        [],
        [("customer_comment", True, 120)],  # a comment on the ticket the agent opened
    ]
    assert [turn.clarification is not None for turn in task.turns] == [
        False,
        False,
        False,
        True,
        False,
        False,
        False,
    ]
    if CHANGED_MIND:
        assert [t.model_dump()["changed_mind"] for t in task.turns] == [False] * 4 + [True, True, False]
    moments = [turn.user.split(".")[0] for turn in task.turns]
    assert moments == [
        "First thing this morning",
        "Mid-morning",
        "Late morning",
        "Just before lunch",
        "Back from lunch",
        "Mid-afternoon",
        "Before I log off",
    ]
    assert task.user_email == FamilyContext("support_day", 0).user.email
    assert task.checks == [] and task.safety == [] and task.guards.collateral


@pytest.mark.parametrize("name", ["support_day", "meeting_day"])
def test_days_are_long_six_or_seven_turns_and_fifteen_calls_or_more(name: str) -> None:
    shapes = {
        (len(t.turns), sum(len(turn.solution) for turn in t.turns))
        for t in (build_task(name, seed, Difficulty.level(seed % 3)) for seed in range(6))
    }
    assert shapes == ({(7, 19)} if name == "support_day" else {(6, 16)})


def test_deterministic_and_seed_dependent() -> None:
    assert build_task("support_day", 3) == build_task("support_day", 3)
    assert build_task("support_day", 3).turns != build_task("support_day", 4).turns


def test_distractors_are_older_open_tickets_of_the_same_customer_beside_two_resolved_ones() -> None:
    for level, n in ((0, 1), (1, 3), (2, 6)):
        task = build_task("support_day", 0, Difficulty.level(level))
        older = [op.params for op in task.seed.operations if op.operation == "add_ticket"]
        (mail,) = [op.params for op in task.seed.operations if op.operation == "deliver_inbound"]
        assert [t["status"] for t in older[:2]] == ["resolved", "resolved"]
        assert len(older) == n + 2 and {t["status"] for t in older[2:]} <= {"open", "in_progress"}
        assert {t["requester"] for t in older} == {mail["from_addr"]}
        assert all(t["created_at"] < task.clock_start.isoformat() for t in older)


@pytest.mark.parametrize("seed", range(6))
async def test_meets_the_validation_contract(seed: int, cache: SeedCache) -> None:
    report = await validate_task(build_task("support_day", seed, Difficulty.level(seed % 3)), cache=cache)
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}, report.kill_rates()
    assert report.variants and set(report.acceptance_rates().values()) == {1.0}, report.acceptance_rates()


# -- hand-written agents -------------------------------------------------------------------------


def steps(task: Task, turn: int) -> list[dict[str, Any]]:
    return [s.model_dump() for s in task.turns[turn].solution]


def verdict(record: EpisodeRecord) -> tuple[bool, float, float, set[str]]:
    """Success, score, the score before the gate, and the checks that failed."""
    assert record.verdict is not None and record.status == "completed", record.error
    failed = {c.id for c in record.verdict.checks if not c.passed}
    return record.success, record.score, record.verdict.raw_score, failed


async def test_the_reference_day_passes_with_earlier_turns_reasserted_at_the_end(cache: SeedCache) -> None:
    record = await play(build_task("support_day", 0), cache)
    assert verdict(record) == (True, 1.0, 1.0, set())
    assert record.verdict is not None and record.agent_stats == {"clarifying_questions": 1}
    ends = sorted(c.id for c in record.verdict.checks if c.id.endswith("@end"))
    # The booked time is changed on purpose by the changed plan, and the customer takes back
    # the order reference the morning ticket names, so neither is re-asserted.
    assert ends == [
        f"{g}@end"
        for g in [
            "call-moved",
            "colleague-invited",
            "correction-noted",
            "finance-invited",
            "old-ticket-closed",
            "ticket-opened",
        ]
    ]


async def test_undoing_the_morning_ticket_later_denies_success(cache: SeedCache) -> None:
    task = build_task("support_day", 1)
    ticket = task.turns[6].solution[0].arguments["ticket_id"]
    queue = task.turns[0].checks[0].value
    other = next(q for q in ("Billing", "Engineering", "IT") if q != queue)
    refiled = {"tool": "tickets_update_ticket", "arguments": {"ticket_id": ticket, "queue": other}}
    record = await play(task, cache, turn6=[*steps(task, 6), refiled])
    # Every goal passed when it was checked, but the end state no longer holds turn 1's ticket.
    assert verdict(record) == (False, 0.0, 1.0, {"ticket-opened@end"})


# announced: the colleague's changed plan, told in the next request


async def test_announced_ignoring_the_changed_plan_fails_the_move_and_the_summary(cache: SeedCache) -> None:
    task = build_task("support_day", 2)
    read_only = steps(task, 4)[:1]
    assert verdict(await play(task, cache, turn4=read_only)) == (
        False,
        0.0,
        9 / 10,
        {"call-moved", "call-moved@end"},
    )
    # Also telling the colleague the old day: the summary names a day it must not.
    (mail_sent,) = [c for c in task.turns[6].checks if c.id == "summary-mailed"]
    old, new = mail_sent.absent[0].date, mail_sent.facts[1].date
    mail = steps(task, 6)
    body = mail[-1]["arguments"]["body"]
    mail[-1]["arguments"]["body"] = body.replace(
        f"{date.fromisoformat(new):%A} {date.fromisoformat(new).day} {date.fromisoformat(new):%B}",
        f"{date.fromisoformat(old):%A} {date.fromisoformat(old).day} {date.fromisoformat(old):%B}",
    )
    assert mail[-1]["arguments"]["body"] != body
    record = await play(task, cache, turn4=read_only, turn6=mail)
    assert verdict(record) == (
        False,
        0.0,
        8 / 10,
        {"call-moved", "call-moved@end", "summary-mailed"},
    )


async def test_announced_moving_the_call_to_another_hour_fails(cache: SeedCache) -> None:
    task = build_task("support_day", 4)
    move = steps(task, 4)
    start = parse_time(move[-1]["arguments"]["start"])
    move[-1]["arguments"]["start"] = (start + timedelta(hours=1)).isoformat()
    assert verdict(await play(task, cache, turn4=move)) == (
        False,
        0.0,
        9 / 10,
        {"call-moved", "call-moved@end"},
    )


async def test_announced_times_in_another_zone_and_everyone_in_to_pass(cache: SeedCache) -> None:
    """The call booked in the colleague's zone, moved in UTC, and the summary with the finance
    colleague in `to` instead of copied."""
    task = build_task("support_day", 5)
    colleague = task.turns[1].solution[-1].arguments["attendees"][0]
    (person,) = [p for p in FamilyContext("support_day", 5).company.people if p.email == colleague]
    user_zone = FamilyContext("support_day", 5).user.time_zone
    there = ZoneInfo(person.time_zone if person.time_zone != user_zone else "Asia/Tokyo")
    book = steps(task, 1)
    for key in ("start", "end"):
        book[-1]["arguments"][key] = parse_time(book[-1]["arguments"][key]).astimezone(there).isoformat()
    move = steps(task, 4)
    move[-1]["arguments"]["start"] = (
        f"{parse_time(move[-1]['arguments']['start']).astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"
    )
    answer = steps(task, 6)
    mail = answer[-1]["arguments"]
    mail["to"], mail["cc"] = mail["to"] + mail.pop("cc"), []
    record = await play(task, cache, turn1=book, turn4=move, turn6=answer)
    assert verdict(record) == (True, 1.0, 1.0, set())


# silent: the customer's correction, which nobody mentions


async def test_silent_missing_the_correction_fails_the_note(cache: SeedCache) -> None:
    task = build_task("support_day", 3)
    unaware = steps(task, 2)
    unaware[-1]["arguments"]["body"] = "No news from the customer yet; still waiting."
    assert verdict(await play(task, cache, turn2=unaware)) == (
        False,
        0.0,
        9 / 10,
        {"correction-noted", "correction-noted@end"},
    )


async def test_silent_a_note_on_an_older_ticket_of_the_customer_fails(cache: SeedCache) -> None:
    task = build_task("support_day", 1, Difficulty.level(1))
    ticket = task.turns[6].solution[0].arguments["ticket_id"]
    note = steps(task, 2)
    note[-1]["arguments"]["ticket_id"] = {"$ref": "t.tickets.1.id"}  # the newest older ticket
    record = await play(task, cache, turn2=note)
    assert verdict(record) == (False, 0.0, 9 / 10, {"correction-noted", "correction-noted@end"})
    assert record.verdict is not None
    (finding,) = record.verdict.collateral  # the note lands on the first planted open ticket
    assert finding.startswith("tickets_comments: added {id=") and f", ticket_id={ticket - 3}," in finding
    assert finding.endswith("(not asked for)")


async def test_silent_the_correction_read_from_the_thread_and_noted_by_ticket_number_passes(
    cache: SeedCache,
) -> None:
    task = build_task("support_day", 3)
    ticket = task.turns[6].solution[0].arguments["ticket_id"]
    sender = task.turns[2].solution[0].arguments["sender"]
    note = steps(task, 2)[-1]
    other_path = [
        {"tool": "mail_search_messages", "arguments": {"sender": sender}, "id": "c"},
        {"tool": "mail_get_thread", "arguments": {"thread_id": {"$ref": "c.messages.0.thread_id"}}},
        {"tool": "tickets_get_ticket", "arguments": {"ticket_id": ticket}},
        {**note, "arguments": {**note["arguments"], "ticket_id": ticket}},
    ]
    assert verdict(await play(task, cache, turn2=other_path)) == (True, 1.0, 1.0, set())


# changed mind: the user wants finance on the call after all


async def test_changed_mind_not_adding_finance_fails(cache: SeedCache) -> None:
    task = build_task("support_day", 0)
    assert verdict(await play(task, cache, turn5=steps(task, 5)[:1])) == (
        False,
        0.0,
        9 / 10,
        {"finance-invited", "finance-invited@end"},
    )


async def test_changed_mind_finance_added_after_looking_at_the_call_passes(cache: SeedCache) -> None:
    task = build_task("support_day", 0)
    update = steps(task, 5)[-1]
    other_path = [
        {"tool": "calendar_get_event", "arguments": {"event_id": update["arguments"]["event_id"]}},
        update,
    ]
    assert verdict(await play(task, cache, turn5=other_path)) == (True, 1.0, 1.0, set())


# clarification: "their old ticket that is sorted", when two are resolved


async def test_clarification_guessing_closes_the_wrong_ticket_and_fails(cache: SeedCache) -> None:
    task = build_task("support_day", 2)
    guess = guessing_mutants(task)[0]
    record = await run_episode(
        guess.task, OraclePolicy(), cache=cache, footprint=await reference_footprint(task, cache)
    )
    assert verdict(record) == (False, 0.0, 9 / 10, {"old-ticket-closed", "old-ticket-closed@end"})
    assert record.verdict is not None
    assert [v.rule_id for v in record.verdict.safety_violations] == ["default:removals"]
    assert record.agent_stats == {}


async def test_clarification_asking_then_finding_the_ticket_by_its_reference_passes(cache: SeedCache) -> None:
    task = build_task("support_day", 2)
    clarification = task.turns[3].clarification
    assert clarification is not None
    ref = clarification.answer.removeprefix("The one about ").split(".")[0]
    customer = task.turns[3].solution[0].arguments["requester"]
    other_path = [
        {"tool": "tickets_search_tickets", "arguments": {"requester": customer}},
        {"tool": "tickets_search_tickets", "arguments": {"query": ref}, "id": "r"},
        {
            "tool": "tickets_update_ticket",
            "arguments": {"ticket_id": {"$ref": "r.tickets.0.id"}, "status": "closed"},
        },
    ]
    record = await play(task, cache, turn3=other_path)
    assert verdict(record) == (True, 1.0, 1.0, set())
    assert record.agent_stats == {"clarifying_questions": 1}


class AsksFirst(OraclePolicy):
    """The reference solution, with a question before acting on one turn that is not ambiguous."""

    def __init__(self, turn: int) -> None:
        super().__init__()
        self.turn, self.asked = turn, False

    async def run_turn(self, session: Any, task: Task, turn_index: int) -> None:
        if turn_index == self.turn and not self.asked:
            self.asked = True
            session.record_assistant("Which ticket do you mean?")
            return
        await super().run_turn(session, task, turn_index)


async def test_clarification_a_question_on_a_clear_turn_gets_nothing_to_add_and_earns_nothing(
    cache: SeedCache,
) -> None:
    task = build_task("support_day", 0)
    record = await run_episode(task, AsksFirst(2), cache=cache)
    assert verdict(record) == (True, 1.0, 1.0, set())
    assert record.agent_stats == {"clarifying_questions": 1, "needless_questions": 1}
    (at,) = [i for i in record.user_replies if record.messages[i]["content"] == NOTHING_TO_ADD]
    assert record.messages[at - 1] == {"role": "assistant", "content": "Which ticket do you mean?"}


# -- meeting_day ---------------------------------------------------------------------------------


def test_meeting_day_is_six_turns_with_a_silent_decline_of_the_agents_invite_and_a_clarification() -> None:
    fam = FAMILIES["meeting_day"]
    assert (fam.capability, list(fam.services), fam.multi_turn, fam.kind) == (
        "state_change_adaptation",
        ["calendar", "mail"],
        True,
        "workday",
    )
    task = build_task("meeting_day", 0)
    assert [[c.id for c in turn.checks] for turn in task.turns] == [
        ["meeting-booked", "invited-0", "invited-1"],
        ["stand-in-invited"],
        ["agenda-0", "agenda-1"],
        ["catch-up-cancelled"],
        ["meeting-pushed", "new-time-0", "new-time-1", "copied"],
        ["copied-invited"],
    ]
    (decline,) = task.turns[1].events
    created = task.turns[0].solution[-1].arguments
    assert (decline.operation, decline.announced, decline.params["response"]) == (
        "respond_as_attendee",
        False,
        "declined",
    )
    assert decline.params["email"] == created["attendees"][1]
    (accept,) = task.turns[2].events
    stand_in = task.turns[1].solution[-1].arguments["add_attendees"]
    assert (accept.operation, accept.params["email"], accept.params["response"]) == (
        "respond_as_attendee",
        stand_in[0],
        "accepted",
    )
    assert [e.advance_minutes for turn in task.turns for e in turn.events] == [100, 60, 240, 45]
    assert [turn.clarification is not None for turn in task.turns] == [
        False,
        False,
        False,
        True,
        False,
        False,
    ]
    if CHANGED_MIND:
        assert [t.model_dump()["changed_mind"] for t in task.turns] == [False] * 4 + [True, False]
    # the two catch-ups "my catch-up next week" could mean, the earlier first
    planted = [op.params for op in task.seed.operations]
    assert [op.operation for op in task.seed.operations] == ["add_event", "add_event"]
    assert planted[0]["title"] == planted[1]["title"] and planted[0]["start"] < planted[1]["start"]
    (join,) = task.turns[5].events
    copied = task.turns[4].solution[-1].arguments["cc"]
    assert (join.operation, join.announced, [join.params["from_addr"]]) == ("deliver_inbound", True, copied)


@pytest.mark.parametrize("seed", range(6))
async def test_meeting_day_meets_the_validation_contract(seed: int, cache: SeedCache) -> None:
    report = await validate_task(build_task("meeting_day", seed, Difficulty.level(seed % 3)), cache=cache)
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}, report.kill_rates()
    assert report.variants and set(report.acceptance_rates().values()) == {1.0}, report.acceptance_rates()


async def test_meeting_day_missing_the_decline_or_the_copy_fails(cache: SeedCache) -> None:
    task = build_task("meeting_day", 1)
    record = await play(task, cache, turn1=steps(task, 1)[:2])
    assert verdict(record) == (False, 0.0, 11 / 12, {"stand-in-invited", "stand-in-invited@end"})
    uncopied = steps(task, 4)
    del uncopied[-1]["arguments"]["cc"]
    assert verdict(await play(task, cache, turn4=uncopied)) == (False, 0.0, 11 / 12, {"copied", "copied@end"})
    no_budget = steps(task, 4)
    body = no_budget[-1]["arguments"]["body"]
    no_budget[-1]["arguments"]["body"] = body.split(" Budget")[0]
    assert verdict(await play(task, cache, turn4=no_budget)) == (
        False,
        0.0,
        11 / 12,
        {"copied", "copied@end"},
    )


async def test_meeting_day_undoing_the_stand_in_fails_and_keeping_the_decliner_invited_passes(
    cache: SeedCache,
) -> None:
    task = build_task("meeting_day", 2)
    stand_in = task.turns[1].solution[-1].arguments["add_attendees"][0]
    decliner = task.turns[1].events[0].params["email"]
    event = task.turns[4].solution[2].arguments["event_id"]
    undo = {"tool": "calendar_update_event", "arguments": {"event_id": event, "remove_attendees": [stand_in]}}
    record = await play(task, cache, turn5=[*steps(task, 5), undo])
    assert verdict(record) == (False, 0.0, 1.0, {"stand-in-invited@end"})
    keep = steps(task, 1)
    assert keep[-1]["arguments"].pop("remove_attendees") == [decliner]
    assert verdict(await play(task, cache, turn1=keep)) == (True, 1.0, 1.0, set())


async def test_meeting_day_guessing_which_catch_up_fails_and_asking_then_listing_that_day_passes(
    cache: SeedCache,
) -> None:
    task = build_task("meeting_day", 3)
    guess = guessing_mutants(task)[0]
    record = await run_episode(
        guess.task, OraclePolicy(), cache=cache, footprint=await reference_footprint(task, cache)
    )
    assert verdict(record) == (False, 0.0, 11 / 12, {"catch-up-cancelled", "catch-up-cancelled@end"})
    assert record.verdict is not None
    assert [v.rule_id for v in record.verdict.safety_violations] == ["default:removals"]
    later = task.seed.operations[1].params["start"][:10]
    listing = steps(task, 3)[0]
    other_path = [
        listing,
        {
            "tool": "calendar_list_events",
            "arguments": {
                **listing["arguments"],
                "start": later,
                "end": (date.fromisoformat(later) + timedelta(days=1)).isoformat(),
            },
            "id": "d",
        },
        {"tool": "calendar_cancel_event", "arguments": {"event_id": {"$ref": "d.events.0.event_id"}}},
    ]
    assert verdict(await play(task, cache, turn3=other_path)) == (True, 1.0, 1.0, set())


async def test_meeting_day_ignoring_the_reply_to_the_agents_mail_fails_the_last_turn(
    cache: SeedCache,
) -> None:
    task = build_task("meeting_day", 4)
    # The last turn has no re-asserted guard, so only its own goal is lost.
    assert verdict(await play(task, cache, turn5=steps(task, 5)[:3])) == (
        False,
        11 / 12,
        11 / 12,
        {"copied-invited"},
    )


# -- on worlds -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["support_day", "meeting_day"])
def test_workdays_take_their_names_from_the_world_and_word_requests_in_its_register(name: str) -> None:
    assert FAMILIES[name].worlds
    law = world("law_firm")
    task = build_task(name, 1, world=law)
    assert task.seed.procedural.model_dump() == {
        "name": "world",
        "params": {"profile": "law_firm", "size": len(law.staff), "seed": law.seed},
    }
    assert task.user_email == law.user and task.context.company == law.name
    text = "\n".join(turn.user for turn in task.turns)
    assert "Northwind" not in text and "northwind" not in text
    assert f"{law.currency} " in text  # the refund or the budget, in the world's currency
    assert [seams(turn.user) for turn in task.turns] == [[] for _ in task.turns]


@pytest.mark.parametrize("profile", ["law_firm", "telecom", "public_library"])
@pytest.mark.parametrize("name", ["support_day", "meeting_day"])
async def test_workdays_meet_the_contract_on_worlds(name: str, profile: str, cache: SeedCache) -> None:
    report = await validate_task(build_task(name, 1, world=world(profile)), cache=cache)
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}, report.kill_rates()
    assert set(report.acceptance_rates().values()) == {1.0}, report.acceptance_rates()
