"""The scheduling and state-change families on worlds: they run on every world, plan with the
world's own working hours, word their requests like people (no template seams anywhere), and
hand-written agents show that wrong outcomes fail and right alternatives pass on worlds other
than the demo company."""

import json
import re
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import coworkenv.synth.families.coordination  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.state import parse_time
from coworkenv.synth.families.coordination.scheduling_constraints import _topic_phrase
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.synth.phrasing import seams
from coworkenv.task import Task
from coworkenv.world import World
from coworkenv.worlds import world
from tests.synth.agents import failed, play, replaced

FAMILY_NAMES = [
    "schedule_across_zones",
    "reschedule_conflict",
    "reply_after_new_info",
    "meeting_moved_announced",
]
EASY = Difficulty.level(0)
WORLDS = ["law_firm", "logistics"]
SPEC_WORDING = re.compile(
    r"\d\d:\d\d-\d\d:\d\d|in their own time zones?|local time for each|Hi Dr\.|before .* before"
)


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


def texts(task: Task) -> list[str]:
    """Every text of the task a person reads: user messages, texts the events deliver, and each
    string argument of the reference solution."""
    out = [turn.user for turn in task.turns]
    for turn in task.turns:
        out += [v for e in turn.events for v in e.params.values() if isinstance(v, str)]
        out += [v for s in turn.solution for v in s.arguments.values() if isinstance(v, str)]
    return out


def test_the_four_families_run_on_worlds() -> None:
    assert [FAMILIES[name].worlds for name in FAMILY_NAMES] == [True, True, True, True]


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_no_text_has_a_template_seam_or_reads_like_a_spec(name: str) -> None:
    places: list[World | None] = [None, world("law_firm"), world("telecom"), world("manufacturer", 8)]
    for place in places:
        for seed in range(6):
            task = build_task(name, seed, Difficulty.level(seed % 3), world=place)
            for text in texts(task):
                assert seams(text) == [], (task.id, text)
                assert SPEC_WORDING.search(text) is None, (task.id, text)


def masked(text: str) -> str:
    text = re.sub(r"\S+@\S+", "@", text)
    text = re.sub(r"\d+", "0", text)
    text = re.sub(r"'[^']*'", "'T'", text)
    return re.sub(r"\b[A-Z][\w-]*", "N", text)


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_each_request_kind_comes_in_many_phrasings(name: str) -> None:
    tasks = [build_task(name, seed, EASY, world=world("logistics")) for seed in range(16)]
    for turn in range(2 if FAMILIES[name].multi_turn else 1):
        assert len({masked(t.turns[turn].user) for t in tasks}) >= 8


def constants(code: str) -> dict[str, Any]:
    """The task constants a python check carries (its `P = json.loads(...)` line)."""
    line = next(x for x in code.splitlines() if x.startswith("P = json.loads("))
    return json.loads(json.loads(line.removeprefix("P = json.loads(").removesuffix(")")))


async def test_a_world_with_early_shifts_books_inside_both_readings_of_working_hours(
    cache: SeedCache,
) -> None:
    """In the ground-handling world most people work 06:00-14:00: the check judges a booking by
    each person's own hours, and the one free stretch lies inside those and inside the
    calendar's default 09:00-17:00 too, so either reading finds it."""
    place = world("airline_ground_ops")
    task = build_task("schedule_across_zones", 2, EASY, world=place)
    fits = constants(task.turns[0].checks[0].code)
    everyone = [person(place, e) for e in [task.user_email, *fits["attendees"]]]
    hours = {p.email: [f"{place.hours(p).start:%H:%M}", f"{place.hours(p).end:%H:%M}"] for p in everyone}
    assert fits["hours"] == hours and any(h != ["09:00", "17:00"] for h in hours.values())
    record = await play(task, cache)
    assert verdict(record) == (True, 1.0, set())
    (made,) = [e for e in record.tool_calls if e.tool == "create_event"]
    start, end = parse_time(made.result["start"]), parse_time(made.result["end"])
    for p in everyone:
        zone = ZoneInfo(p.time_zone)
        first, last = start.astimezone(zone).time(), end.astimezone(zone).time()
        own = place.hours(p)
        assert max(own.start, time(9)) <= first and last <= min(own.end, time(17)), (p.email, first, last)


# -- hand-written agents on worlds other than the demo company -----------------------------------


def verdict(record: EpisodeRecord) -> tuple[bool, float, set[str]]:
    assert record.verdict is not None and record.verdict.collateral == []
    return record.success, record.score, failed(record)


def person(place: World, email: str) -> Any:
    return next(p for p in place.people if p.email == email)


@pytest.mark.parametrize("profile", WORLDS)
async def test_schedule_on_a_world_takes_any_fitting_start_and_rejects_a_clash(
    profile: str, cache: SeedCache
) -> None:
    place = world(profile)
    task = build_task("schedule_across_zones", 0, EASY, world=place)
    record = await play(task, cache)
    (found,) = [e for e in record.tool_calls if e.tool == "find_free_slots"]
    slots = [(parse_time(s["start"]), parse_time(s["end"])) for s in found.result["slots"]]
    assert verdict(record) == (True, 1.0, set()) and slots
    guest = person(place, task.turns[0].checks[1].where["email"])
    start, end = (t.astimezone(ZoneInfo(guest.time_zone)).isoformat() for t in slots[-1])
    right = await play(task, cache, turn0=replaced(task, 0, -1, start=start, end=end))
    assert verdict(right) == (True, 1.0, set())
    early = [(t - timedelta(minutes=15)).isoformat() for t in slots[0]]
    wrong = await play(task, cache, turn0=replaced(task, 0, -1, start=early[0], end=early[1]))
    assert verdict(wrong) == (False, 0.5, {"meeting-fits"})


@pytest.mark.parametrize("profile", WORLDS)
async def test_reschedule_on_a_world_takes_the_slot_in_any_zone_and_rejects_a_later_one(
    profile: str, cache: SeedCache
) -> None:
    place = world(profile)
    task = build_task("reschedule_conflict", 0, EASY, world=place)
    moved = next(c for c in task.turns[0].checks if c.id == "moved-to-next-slot")
    kept = next(c for c in task.turns[0].checks if c.id == "length-kept")
    start, end = parse_time(moved.value), parse_time(kept.value)
    zone = ZoneInfo(person(place, task.user_email).time_zone)
    steps = replaced(
        task, 0, -1, start=start.astimezone(zone).isoformat(), end=end.astimezone(zone).isoformat()
    )
    assert verdict(await play(task, cache, turn0=steps)) == (True, 1.0, set())
    later = replaced(
        task,
        0,
        -1,
        start=(start + timedelta(minutes=15)).isoformat(),
        end=(end + timedelta(minutes=15)).isoformat(),
    )
    wrong = await play(task, cache, turn0=later)
    assert verdict(wrong) == (False, 0.0, {"moved-to-next-slot", "length-kept"})


@pytest.mark.parametrize(("profile", "seed", "kind"), [
    ("law_firm", 0, "ticket-resolved"),
    ("law_firm", 1, "new-order-recorded"),
    ("logistics", 0, "ticket-resolved"),
    ("logistics", 2, "new-order-recorded"),
])  # fmt: skip
async def test_reply_after_new_info_on_a_world_needs_the_silent_mail(
    profile: str, seed: int, kind: str, cache: SeedCache
) -> None:
    task = build_task("reply_after_new_info", seed, EASY, world=world(profile))
    (check,) = task.turns[1].checks
    assert check.id == kind
    steps = [s.model_dump() for s in task.turns[1].solution]
    if check.id == "new-order-recorded":  # the corrected reference in other words, lower case
        new = check.description.rsplit(" ", 1)[-1]
        steps[-1]["arguments"] = {
            **steps[-1]["arguments"],
            "body": f"Right reference per customer: {new.lower()}",
        }
    else:  # closed rather than resolved
        steps[-1]["arguments"] = {**steps[-1]["arguments"], "status": "closed"}
    assert verdict(await play(task, cache, turn1=steps)) == (True, 1.0, set())
    reads_only = [s.model_dump() for s in task.turns[1].solution[:-1]]
    record = await play(task, cache, turn1=reads_only)
    # Four goal checks: the ticket, its reference, the turn's check, one ticket in the episode.
    assert verdict(record) == (False, 0.75, {check.id})


@pytest.mark.parametrize("profile", WORLDS)
async def test_meeting_update_on_a_world_takes_each_recipients_own_time_and_rejects_the_old_one(
    profile: str, cache: SeedCache
) -> None:
    place = world(profile)
    task = build_task("meeting_moved_announced", 0, EASY, world=place)
    (move,) = task.turns[1].events
    new, old = parse_time(move.params["start"]), parse_time(task.seed.operations[0].params["start"])
    read = [s.model_dump() for s in task.turns[1].solution[:-1]]
    people = [person(place, c.to[0]) for c in task.turns[1].checks]
    assert len(people) == 2

    def mail(at: datetime) -> list[dict[str, Any]]:
        times = " or ".join(f"{at.astimezone(ZoneInfo(p.time_zone)):%I:%M %p} {p.time_zone}" for p in people)
        body = f"Hi both, the meeting now starts at {times}."
        to = [p.email for p in people]
        return [
            {"tool": "mail_send_message", "arguments": {"to": to, "subject": "Meeting moved", "body": body}}
        ]

    assert verdict(await play(task, cache, turn1=read + mail(new))) == (True, 1.0, set())
    for wrong in (old, new + timedelta(hours=1)):
        record = await play(task, cache, turn1=read + mail(wrong))
        assert verdict(record) == (False, 0.5, {"updated-0", "updated-1"})


def test_a_meeting_topic_reads_mid_sentence_with_capitals_only_where_they_belong() -> None:
    ctx = FamilyContext("schedule_across_zones", 0)  # the demo company, whose customers include Globex
    topics = [
        "Portal outage review",
        "Globex renewal",
        "Friday's storm plan",
        "Easter opening hours",
        "KYC backlog",
    ]
    assert [_topic_phrase(ctx, t) for t in [*topics, "the Calloway matter"]] == [
        "portal outage review",
        "the Globex renewal",
        "Friday's storm plan",
        "Easter opening hours",
        "KYC backlog",
        "the Calloway matter",
    ]
