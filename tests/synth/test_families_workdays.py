"""The workday family: five turns over one simulated day, each arriving after a stated
event, meets the validation contract; hand-written agents show that undoing an earlier
turn, ignoring a changed mind or missing a silent change fail with exact verdicts, and that
right alternatives pass."""

from datetime import UTC, date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import coworkenv.synth.families.workdays  # noqa: F401  (registers the family)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.policies import OraclePolicy
from coworkenv.rollout.record import EpisodeRecord
from coworkenv.rollout.runner import reference_footprint, run_episode
from coworkenv.rollout.validation import validate_task
from coworkenv.state import parse_time
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.synth.phrasing import seams
from coworkenv.task import SolutionStep, Task
from coworkenv.worlds import world

GOALS = [
    "ticket-opened",
    "ticket-names-order",
    "call-booked",
    "colleague-invited",
    "correction-noted",
    "call-moved",
    "refund-answered",
    "summary-mailed",
]


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


def test_registered_as_a_multi_turn_family_of_five_turns_over_one_day() -> None:
    fam = FAMILIES["support_day"]
    assert (fam.capability, list(fam.services), fam.multi_turn) == (
        "state_change_adaptation",
        ["mail", "tickets", "calendar"],
        True,
    )
    task = build_task("support_day", 0)
    assert [[c.id for c in turn.checks] for turn in task.turns] == [
        GOALS[0:2],
        GOALS[2:4],
        GOALS[4:5],
        GOALS[5:6],
        GOALS[6:8],
    ]
    events = [[(e.operation, e.announced, e.advance_minutes) for e in turn.events] for turn in task.turns]
    assert events == [
        [],
        [("deliver_inbound", True, 90)],
        [("deliver_inbound", False, 150)],  # the silent correction
        [("deliver_inbound", True, 90)],
        [("customer_comment", True, 120)],  # a comment on the ticket the agent opened
    ]
    moments = [turn.user.split(":")[0].split(".")[0] for turn in task.turns]
    assert moments == [
        "First thing this morning",
        "Mid-morning",
        "Back from lunch",
        "Mid-afternoon",
        "Before I log off",
    ]
    assert task.user_email == FamilyContext("support_day", 0).user.email
    assert task.checks == [] and task.safety == [] and task.guards.collateral


def test_deterministic_and_seed_dependent() -> None:
    assert build_task("support_day", 3) == build_task("support_day", 3)
    assert build_task("support_day", 3).turns != build_task("support_day", 4).turns


def test_distractors_are_older_tickets_of_the_same_customer() -> None:
    for level, n in ((0, 1), (1, 3), (2, 6)):
        task = build_task("support_day", 0, Difficulty.level(level))
        older = [op.params for op in task.seed.operations if op.operation == "add_ticket"]
        (mail,) = [op.params for op in task.seed.operations if op.operation == "deliver_inbound"]
        assert len(older) == n
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


async def play(task: Task, cache: SeedCache, **solutions: list[dict[str, Any]]) -> EpisodeRecord:
    """The task played with other solutions for some turns, judged by the task's own footprint."""
    turns = list(task.turns)
    for name, solution in solutions.items():
        i = int(name.removeprefix("turn"))
        turns[i] = turns[i].model_copy(
            update={"solution": [SolutionStep.model_validate(s) for s in solution]}
        )
    variant = task.model_copy(update={"turns": turns})
    return await run_episode(
        variant, OraclePolicy(), cache=cache, footprint=await reference_footprint(task, cache)
    )


def verdict(record: EpisodeRecord) -> tuple[bool, float, float, set[str]]:
    """Success, score, the score before the gate, and the checks that failed."""
    assert record.verdict is not None and record.status == "completed", record.error
    failed = {c.id for c in record.verdict.checks if not c.passed}
    return record.success, record.score, record.verdict.raw_score, failed


async def test_the_reference_day_passes_with_earlier_turns_reasserted_at_the_end(cache: SeedCache) -> None:
    record = await play(build_task("support_day", 0), cache)
    assert verdict(record) == (True, 1.0, 1.0, set())
    assert record.verdict is not None
    ends = sorted(c.id for c in record.verdict.checks if c.id.endswith("@end"))
    # The booked time is changed on purpose by the changed plan, so it is not re-asserted.
    assert ends == [
        f"{g}@end"
        for g in [
            "call-moved",
            "colleague-invited",
            "correction-noted",
            "ticket-names-order",
            "ticket-opened",
        ]
    ]


async def test_undoing_the_morning_ticket_later_denies_success(cache: SeedCache) -> None:
    task = build_task("support_day", 1)
    ticket = task.turns[4].solution[0].arguments["ticket_id"]
    refiled = {"tool": "tickets_update_ticket", "arguments": {"ticket_id": ticket, "queue": "Billing"}}
    record = await play(task, cache, turn4=[*steps(task, 4), refiled])
    # Every goal passed when it was checked, but the end state no longer holds turn 1's ticket.
    assert verdict(record) == (False, 0.0, 1.0, {"ticket-opened@end"})


async def test_ignoring_the_changed_mind_fails_the_move_and_the_summary(cache: SeedCache) -> None:
    task = build_task("support_day", 2)
    read_only = steps(task, 3)[:1]
    assert verdict(await play(task, cache, turn3=read_only)) == (
        False,
        0.0,
        7 / 8,
        {"call-moved", "call-moved@end"},
    )
    # Also telling the colleague the old day: the summary names a day it must not.
    (mail_sent,) = [c for c in task.turns[4].checks if c.id == "summary-mailed"]
    old, new = mail_sent.absent[0].date, mail_sent.facts[1].date
    mail = steps(task, 4)
    body = mail[-1]["arguments"]["body"]
    mail[-1]["arguments"]["body"] = body.replace(
        f"{date.fromisoformat(new):%A} {date.fromisoformat(new).day} {date.fromisoformat(new):%B}",
        f"{date.fromisoformat(old):%A} {date.fromisoformat(old).day} {date.fromisoformat(old):%B}",
    )
    assert mail[-1]["arguments"]["body"] != body
    record = await play(task, cache, turn3=read_only, turn4=mail)
    assert verdict(record) == (
        False,
        0.0,
        6 / 8,
        {"call-moved", "call-moved@end", "summary-mailed"},
    )


async def test_missing_the_silent_correction_fails_the_note(cache: SeedCache) -> None:
    task = build_task("support_day", 3)
    unaware = steps(task, 2)
    unaware[-1]["arguments"]["body"] = "No news from the customer yet; still waiting."
    assert verdict(await play(task, cache, turn2=unaware)) == (
        False,
        0.0,
        7 / 8,
        {"correction-noted", "correction-noted@end"},
    )


async def test_moving_the_call_to_another_hour_fails(cache: SeedCache) -> None:
    task = build_task("support_day", 4)
    move = steps(task, 3)
    start = parse_time(move[-1]["arguments"]["start"])
    move[-1]["arguments"]["start"] = (start + timedelta(hours=1)).isoformat()
    assert verdict(await play(task, cache, turn3=move)) == (
        False,
        0.0,
        7 / 8,
        {"call-moved", "call-moved@end"},
    )


async def test_times_in_another_zone_and_a_reply_in_the_thread_pass(cache: SeedCache) -> None:
    """The call booked in the colleague's zone, moved in UTC, and the summary as a reply to
    the colleague's mail instead of a new one."""
    task = build_task("support_day", 5)
    colleague = task.turns[1].solution[-1].arguments["attendees"][0]
    (person,) = [p for p in FamilyContext("support_day", 5).company.people if p.email == colleague]
    user_zone = FamilyContext("support_day", 5).user.time_zone
    there = ZoneInfo(person.time_zone if person.time_zone != user_zone else "Asia/Tokyo")
    book = steps(task, 1)
    for key in ("start", "end"):
        book[-1]["arguments"][key] = parse_time(book[-1]["arguments"][key]).astimezone(there).isoformat()
    move = steps(task, 3)
    move[-1]["arguments"]["start"] = (
        f"{parse_time(move[-1]['arguments']['start']).astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"
    )
    answer = steps(task, 4)
    body = answer[-1]["arguments"]["body"]
    find = {"tool": "mail_search_messages", "arguments": {"sender": colleague}, "id": "f"}
    reply = {"tool": "mail_reply", "arguments": {"message_id": {"$ref": "f.messages.0.id"}, "body": body}}
    record = await play(task, cache, turn1=book, turn3=move, turn4=[*answer[:-1], find, reply])
    assert verdict(record) == (True, 1.0, 1.0, set())


async def test_a_note_on_an_older_ticket_of_the_customer_fails(cache: SeedCache) -> None:
    task = build_task("support_day", 1, Difficulty.level(1))
    ticket = task.turns[4].solution[0].arguments["ticket_id"]
    note = steps(task, 2)
    note[-1]["arguments"]["ticket_id"] = {"$ref": "t.tickets.1.id"}  # the newest older ticket
    record = await play(task, cache, turn2=note)
    assert verdict(record) == (False, 0.0, 7 / 8, {"correction-noted", "correction-noted@end"})
    assert record.verdict is not None
    (finding,) = record.verdict.collateral  # the note lands on the first planted older ticket
    assert finding.startswith("tickets_comments: added {id=") and f", ticket_id={ticket - 3}," in finding
    assert finding.endswith("(not asked for)")


# -- meeting_day ---------------------------------------------------------------------------------


def test_meeting_day_is_four_turns_with_a_silent_decline_of_the_agents_invite() -> None:
    fam = FAMILIES["meeting_day"]
    assert (fam.capability, list(fam.services), fam.multi_turn) == (
        "state_change_adaptation",
        ["calendar", "mail"],
        True,
    )
    task = build_task("meeting_day", 0)
    assert [[c.id for c in turn.checks] for turn in task.turns] == [
        ["meeting-booked", "invited-0", "invited-1"],
        ["stand-in-invited"],
        ["agenda-0", "agenda-1"],
        ["meeting-pushed", "new-time-0", "new-time-1", "copied"],
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
    assert [e.advance_minutes for turn in task.turns for e in turn.events] == [100, 150, 180]
    assert task.seed.operations == []


@pytest.mark.parametrize("seed", range(6))
async def test_meeting_day_meets_the_validation_contract(seed: int, cache: SeedCache) -> None:
    report = await validate_task(build_task("meeting_day", seed, Difficulty.level(seed % 3)), cache=cache)
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}, report.kill_rates()
    assert report.variants and set(report.acceptance_rates().values()) == {1.0}, report.acceptance_rates()


async def test_meeting_day_missing_the_decline_or_the_copy_fails(cache: SeedCache) -> None:
    task = build_task("meeting_day", 1)
    record = await play(task, cache, turn1=steps(task, 1)[:2])
    assert verdict(record) == (False, 0.0, 9 / 10, {"stand-in-invited", "stand-in-invited@end"})
    uncopied = steps(task, 3)
    del uncopied[-1]["arguments"]["cc"]
    # The last turn has no re-asserted guard, so only its own goal is lost.
    assert verdict(await play(task, cache, turn3=uncopied)) == (False, 0.9, 9 / 10, {"copied"})
    no_budget = steps(task, 3)
    body = no_budget[-1]["arguments"]["body"]
    no_budget[-1]["arguments"]["body"] = body.split(" Budget")[0]
    assert verdict(await play(task, cache, turn3=no_budget)) == (False, 0.9, 9 / 10, {"copied"})


async def test_meeting_day_undoing_the_stand_in_fails_and_keeping_the_decliner_invited_passes(
    cache: SeedCache,
) -> None:
    task = build_task("meeting_day", 2)
    stand_in = task.turns[1].solution[-1].arguments["add_attendees"][0]
    decliner = task.turns[1].events[0].params["email"]
    event = task.turns[3].solution[2].arguments["event_id"]
    undo = {"tool": "calendar_update_event", "arguments": {"event_id": event, "remove_attendees": [stand_in]}}
    record = await play(task, cache, turn3=[*steps(task, 3), undo])
    assert verdict(record) == (False, 0.0, 1.0, {"stand-in-invited@end"})
    keep = steps(task, 1)
    assert keep[-1]["arguments"].pop("remove_attendees") == [decliner]
    assert verdict(await play(task, cache, turn1=keep)) == (True, 1.0, 1.0, set())


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
