"""The document and follow-up families on worlds: edit_policy_document, compile_meeting_notes
and ticket_follow_up_due take their folders, currency, meetings, queues and people from the
world, word their requests through the registers without template seams, and hand-written
agents on two worlds other than the demo company get exact verdicts."""

import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import coworkenv.synth.families.coordination  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.agents.policies import OraclePolicy
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.runner import reference_footprint, run_episode
from coworkenv.synth.families.coordination._documents_world import (
    archive_folder,
    notes_folder,
    parent,
    policy_folder,
    scale,
    team_folder,
    unique_names,
)
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.synth.phrasing import seams
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import SolutionStep, Task
from coworkenv.world import World
from coworkenv.worlds import world

OURS = ("edit_policy_document", "compile_meeting_notes", "ticket_follow_up_due")
EASY, HARD = Difficulty.level(0), Difficulty.level(2)
WORLDS = ("law_firm", "logistics")


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


def _world(profile: str | None) -> World | None:
    return None if profile is None else world(profile)


def params(task: Task, operation: str) -> list[dict[str, Any]]:
    return [op.params for op in task.seed.operations if op.operation == operation]


def texts(task: Task) -> list[str]:
    """Every text of the task a person reads: user messages, event texts and every string
    argument of the solution steps."""
    found = []
    for turn in task.turns:
        found.append(turn.user)
        found += [v for e in turn.events for v in e.params.values() if isinstance(v, str)]
        found += [v for s in turn.solution for v in s.arguments.values() if isinstance(v, str)]
    return found


def masked(text: str) -> str:
    """The message with its facts masked: addresses, paths, digits, capitalised words."""
    text = re.sub(r"\S+@\S+", "E", text)
    text = re.sub(r"/\S+", "P", text)
    text = re.sub(r"\d+", "0", text)
    return re.sub(r"\b[A-Z][a-z]+\b", "N", text)


# -- where things come from ----------------------------------------------------------------------


def test_folders_come_from_the_world() -> None:
    demo, law = FamilyContext("edit_policy_document", 0).the_world, world("law_firm")
    assert (policy_folder(demo), policy_folder(law)) == ("/shared/policies", "/knowledge/policies")
    assert (team_folder(demo, "Engineering"), team_folder(law, "Knowledge")) == ("/teams/engineering", None)
    assert team_folder(law, "Client Services") == "/teams/client-services"
    assert notes_folder(demo, "Support") == "/teams/support/meeting-notes"
    assert notes_folder(law, "Client Services") == "/teams/client-services/meeting-notes"
    assert notes_folder(law, "Partners") == "/teams/partners/meeting-notes"  # no notes yet: its own folder
    assert archive_folder(law, "/knowledge/policies") == "/shared/archive"
    assert archive_folder(law.model_copy(update={"empty_folders": []}), "/x") == "/x/archive"
    assert (scale("EUR"), scale("DKK"), scale("INR")) == (1, 7, 80)


def test_unique_names_leave_out_shared_names() -> None:
    law = world("law_firm")
    first = law.staff[0]
    twin = first.model_copy(update={"email": "twin@hartleymossllp.example"})
    namesake = first.model_copy(update={"email": "other@x.example", "name": first.name.split()[0] + " Zed"})
    crowded = law.model_copy(update={"people": [*law.people, twin]})
    assert first not in unique_names(crowded, [first])
    assert first in unique_names(law, [first])
    by_first = law.model_copy(update={"people": [*law.people, namesake]})
    assert unique_names(by_first, [first]) == []
    assert unique_names(by_first, [first], first=False) == [first]


def test_the_policy_lives_in_the_worlds_folders_and_currency() -> None:
    law = world("law_firm")
    for seed in range(8):
        task = build_task("edit_policy_document", seed, HARD, world=law)
        policy, faq, *archived = params(task, "add_file")
        assert parent(policy["path"]) == "/knowledge/policies"
        assert parent(faq["path"]) == "/teams/client-services" and faq["path"].endswith("-faq.md")
        assert {parent(a["path"]) for a in archived} == {"/shared/archive"}
        if "per-diem" not in policy["path"]:
            assert "GBP" in policy["content"] and "EUR" not in policy["content"]
        assert "Northwind" not in policy["content"]


def test_the_demo_policies_keep_their_paths() -> None:
    paths = {params(build_task("edit_policy_document", s, EASY), "add_file")[0]["path"] for s in range(12)}
    assert paths == {
        "/shared/policies/per-diem-rates.md",
        "/shared/policies/purchase-approvals.md",
        "/shared/policies/home-office-allowance.md",
        "/shared/policies/spending-limits.md",
        "/teams/engineering/on-call-compensation.md",
    }


def test_the_request_states_todays_date_in_the_stamp() -> None:
    for profile in (None, *WORLDS):
        for seed in range(12):
            task = build_task("edit_policy_document", seed, EASY, world=_world(profile))
            today = task.clock_start.date().isoformat()
            assert f"'Last updated: {today}'" in task.turns[0].user
            assert "YYYY" not in task.turns[0].user and "<" not in task.turns[0].user


def test_meeting_notes_go_where_the_team_keeps_notes() -> None:
    law = world("law_firm")
    staff = {p.email for p in law.staff}
    for seed in range(6):
        task = build_task("compile_meeting_notes", seed, HARD, world=law)
        path = task.turns[0].solution[-1].arguments["path"]
        assert parent(path) == "/teams/client-services/meeting-notes"
        (event,) = params(task, "add_event")
        assert {event["organizer_email"], *(a["email"] for a in event["attendees"])} <= staff
        assert law.user in {event["organizer_email"], *(a["email"] for a in event["attendees"])}


def test_follow_up_tickets_are_on_the_worlds_customer_queues() -> None:
    law = world("law_firm")
    contacts = {p.email for p in law.contacts}
    for seed in range(6):
        task = build_task("ticket_follow_up_due", seed, HARD, world=law)
        tickets = params(task, "add_ticket")
        assert {t["queue"] for t in tickets} <= {"Intake", "Billing"}
        assert {t["requester"] for t in tickets} <= contacts
        assert not any("NW-" in t["title"] for t in tickets)


@pytest.mark.parametrize("name", OURS)
def test_registered_for_worlds(name: str) -> None:
    assert FAMILIES[name].worlds


# -- wording -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", OURS)
def test_no_template_seams_in_any_text(name: str) -> None:
    for profile in (None, *WORLDS, "museum"):
        for seed in range(12):
            task = build_task(name, seed, Difficulty.level(seed % 3), world=_world(profile))
            found = [(t[:80], seams(t)) for t in texts(task) if seams(t)]
            assert found == [], (profile, seed)


@pytest.mark.parametrize("name", OURS)
def test_requests_vary_in_wording(name: str) -> None:
    messages = {masked(build_task(name, seed, EASY).turns[0].user) for seed in range(40)}
    assert len(messages) >= 8


# -- hand-written agents on worlds ---------------------------------------------------------------


def with_steps(task: Task, steps: list[dict[str, Any]]) -> Task:
    turn = task.turns[0].model_copy(update={"solution": [SolutionStep.model_validate(s) for s in steps]})
    return task.model_copy(update={"turns": [turn]})


def steps_of(task: Task) -> list[dict[str, Any]]:
    return [s.model_dump() for s in task.turns[0].solution]


def replaced(task: Task, position: int, **arguments: Any) -> list[dict[str, Any]]:
    steps = steps_of(task)
    steps[position]["arguments"] = {**steps[position]["arguments"], **arguments}
    return steps


async def play(task: Task, cache: SeedCache, steps: list[dict[str, Any]]) -> EpisodeRecord:
    """The task played with other steps, judged by the task's own footprint."""
    footprint = await reference_footprint(task, cache)
    return await run_episode(with_steps(task, steps), OraclePolicy(), cache=cache, footprint=footprint)


def failed(record: EpisodeRecord) -> set[str]:
    assert record.verdict is not None and record.status == "completed", record.error
    return {c.id for c in record.verdict.checks if not c.passed}


def verdict(record: EpisodeRecord) -> tuple[bool, float, set[str]]:
    return record.success, record.score, failed(record)


@pytest.mark.parametrize("profile", WORLDS)
async def test_policy_agents_on_a_world(profile: str, cache: SeedCache) -> None:
    task = build_task("edit_policy_document", 0, EASY, world=world(profile))
    original = params(task, "add_file")[0]["content"]
    written = task.turns[0].solution[-1].arguments["content"]
    new_line = next(line for line in written.splitlines() if line not in original and "updated" not in line)
    amount = next(word for word in new_line.replace("|", " ").split() if word.isdigit())
    other_layout = written.replace(new_line, new_line.replace(f" {amount}", f" {amount}.00"))
    other_layout = other_layout.replace("\n\nLast updated", "\nLast updated")
    assert verdict(await play(task, cache, replaced(task, 1, content=other_layout))) == (True, 1.0, set())

    intro = original.splitlines()[4]
    vandal = written.replace(intro, intro + " Ask us if in doubt.")
    record = await play(task, cache, replaced(task, 1, content=vandal))
    assert verdict(record) == (False, 0.0, {"rest-unchanged"})
    unstamped = written.split("\n\nLast updated")[0] + "\n"
    record = await play(task, cache, replaced(task, 1, content=unstamped))
    assert verdict(record) == (False, 0.5, {"stamped"})


@pytest.mark.parametrize("profile", WORLDS)
async def test_meeting_notes_agents_on_a_world(profile: str, cache: SeedCache) -> None:
    task = build_task("compile_meeting_notes", 0, EASY, world=world(profile))
    notes = task.turns[0].solution[-1].arguments["content"]
    decisions = [line for line in notes.splitlines() if line.startswith("- ") and "@" not in line]
    emails = [line.split("(")[1].rstrip(")") for line in notes.splitlines() if "@" in line]
    # Attendees by address only, decisions as a numbered list in the other order.
    other = "Present: \n" + "\n".join(emails) + "\n\nAgreed:\n"
    other += "\n".join(f"{i}. {d[2:]}" for i, d in enumerate(reversed(decisions), start=1)) + "\n"
    record = await play(task, cache, replaced(task, -1, content=other))
    assert verdict(record) == (True, 1.0, set())

    (decoy,) = next(c for c in task.turns[0].checks if c.id == "decision-0").absent
    mixed = notes + f"- Also agreed elsewhere: {decoy.text}.\n"
    record = await play(task, cache, replaced(task, -1, content=mixed))
    n_goal = len([c for c in task.turns[0].checks if not c.is_guard])
    n_decisions = len(decisions)
    assert verdict(record) == (
        False,
        (n_goal - n_decisions) / n_goal,
        {f"decision-{i}" for i in range(n_decisions)},
    )
    one_line = notes.replace("\n- ", " / ")
    record = await play(task, cache, replaced(task, -1, content=one_line))
    assert verdict(record) == (False, (n_goal - 1) / n_goal, {"one-per-line"})


@pytest.mark.parametrize("profile", WORLDS)
async def test_follow_up_agents_on_a_world(profile: str, cache: SeedCache) -> None:
    task = build_task("ticket_follow_up_due", 0, EASY, world=world(profile))
    zone = FamilyContext("ticket_follow_up_due", 0, world=world(profile)).user.time_zone
    steps = steps_of(task)
    updates = [s for s in steps if s["tool"] == "tickets_update_ticket"]
    ids = [s["arguments"]["ticket_id"] for s in updates]
    day = updates[0]["arguments"]["due_at"]
    for s in updates:  # 17:00 on that day in the user's own time zone
        at = datetime.fromisoformat(f"{day}T17:00").replace(tzinfo=ZoneInfo(zone))
        s["arguments"]["due_at"] = at.isoformat()
    wording = "tickets " + " and ".join(map(str, ids))
    steps[-1]["arguments"] = {
        **steps[-1]["arguments"],
        "body": f"Followed up on {wording}, all now due {day}.",
    }
    assert verdict(await play(task, cache, steps)) == (True, 1.0, set())

    (other,) = next(c for c in task.turns[0].checks if c.id == "summary-mail").absent
    too_many = replaced(task, -1, body=f"Followed up on {wording} and #{other.ticket}.")
    n = len(task.turns[0].checks)
    assert verdict(await play(task, cache, too_many)) == (False, (n - 1) / n, {"summary-mail"})
    next_day = (datetime.fromisoformat(day) + timedelta(days=1)).date().isoformat()
    late = replaced(task, 2, due_at=f"{next_day}T17:00:00+00:00")
    assert verdict(await play(task, cache, late)) == (False, (n - 1) / n, {f"due-{ids[0]}"})


@pytest.mark.parametrize("name", OURS)
async def test_meets_the_contract_on_a_small_world(name: str, cache: SeedCache) -> None:
    task = build_task(name, 2, HARD, world=world("museum", 8))
    report = await validate_task(task, cache=cache)
    assert report.ok, report.summary()
