"""The notes families: each builds complete tasks whose checks name the planted articles,
rows and databases, scales with difficulty, is deterministic, and runs on the demo company
and generated worlds; hand-written agents show that their verdicts reject wrong work (a
neighbouring article's figure, a stale mail, the wrong database, the old figure after an
article changed) and accept right work done differently."""

import json
import re
from datetime import datetime
from typing import Any

import pytest

from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.synth.families.notes.kb_articles import GROUPS, Policy
from coworkenv.synth.families.notes.tracker_from_mail import STATUS_WORDS
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, build_task
from coworkenv.task import Task
from coworkenv.world import World
from coworkenv.worlds import world
from tests.synth.agents import play, step

EXPECTED = {
    "notes_answer_from_kb": ("knowledge_work", ["notes", "tickets"], False),
    "notes_tracker_from_mail": ("knowledge_work", ["notes", "mail"], False),
    "notes_meeting_page": ("knowledge_work", ["notes", "calendar", "mail", "directory"], False),
    "notes_article_updated": ("knowledge_updates", ["notes", "tickets"], True),
}
EASY, MEDIUM, HARD = Difficulty.level(0), Difficulty.level(1), Difficulty.level(2)
PLACES: tuple[str | None, ...] = (None, "law_firm", "logistics", "museum")
"""The demo company and three generated worlds."""


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


def place(profile: str | None) -> World | None:
    return world(profile) if profile else None


def planted(task: Task, name: str, seed: int, profile: str | None = None) -> list[dict[str, Any]]:
    """The results of the task's seed operations (the ids of what they planted)."""
    return FamilyContext(name, seed, world=place(profile)).plant(task.services, task.seed.operations)


def params(task: Task, operation: str) -> list[dict[str, Any]]:
    return [op.params for op in task.seed.operations if op.operation == operation]


def dump(task: Task, turn: int = 0) -> list[dict[str, Any]]:
    return [s.model_dump(exclude_defaults=True) for s in task.turns[turn].solution]


def check(task: Task, check_id: str, turn: int = 0) -> Any:
    return next(c for c in task.turns[turn].checks if c.id == check_id)


def verdict(record: EpisodeRecord) -> tuple[bool, float, list[str], bool]:
    """(success, score, failed check ids, any collateral): the whole verdict in one value."""
    assert record.status == "completed", record.error
    assert record.verdict is not None
    failed = sorted(c.id for c in record.verdict.checks if not c.passed)
    return record.success, record.score, failed, bool(record.verdict.collateral)


PASSED = (True, 1.0, [], False)


def failing(task: Task, *ids: str, collateral: bool = False) -> tuple[bool, float, list[str], bool]:
    """The verdict of an agent that fails exactly `ids` (goal checks of the turns): the mean
    over turns of the share of goal checks passed, or 0 with a failed guard or collateral."""
    turns = [[c.id for c in t.checks if not c.is_guard] for t in task.turns]
    gated = collateral or any(i not in {g for goals in turns for g in goals} for i in ids)
    shares = [sum(g not in ids for g in goals) / len(goals) for goals in turns]
    score = 0.0 if gated else round(sum(shares) / len(shares), 4)
    return False, score, sorted(ids), collateral


# -- registration, guards, determinism --------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registered_with_capability_services_and_turns(name: str) -> None:
    capability, services, multi = EXPECTED[name]
    fam = FAMILIES[name]
    assert (fam.capability, list(fam.services), fam.multi_turn, fam.worlds) == (
        capability,
        services,
        multi,
        True,
    )
    for profile in PLACES:
        task = build_task(name, 1, MEDIUM, world=place(profile))
        assert task.capabilities[0] == capability
        assert task.services == services
        assert len(task.turns) == (2 if multi else 1)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_default_guards_judge_collateral(name: str) -> None:
    """Only the new meeting row's values are free (each is checked); nothing else is."""
    for level in (EASY, HARD):
        task = build_task(name, 2, level)
        assert task.safety == []
        assert (task.guards.collateral, task.guards.removals, task.guards.allow) == (True, True, [])
        assert task.guards.free == (["notes_values.value"] if name == "notes_meeting_page" else [])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_deterministic_and_seed_dependent(name: str) -> None:
    assert build_task(name, 3, HARD).content_hash == build_task(name, 3, HARD).content_hash
    assert build_task(name, 0, HARD).content_hash != build_task(name, 1, HARD).content_hash
    museum = world("museum")
    assert build_task(name, 0, MEDIUM, world=museum).content_hash != build_task(name, 0, MEDIUM).content_hash


# -- notes_answer_from_kb -----------------------------------------------------------------------


def policy_of(task: Task, turn: int = 0, prefix: str = "answer") -> Policy:
    title = check(task, f"{prefix}-cites", turn).facts[0].text
    return next(p for g in GROUPS for p in g.policies if p.title == title)


def figure(task: Task, turn: int = 0, prefix: str = "answer") -> tuple[int, list[int]]:
    """The right figure and the wrong ones of a turn's answer check."""
    found = check(task, f"{prefix}-figure", turn)
    return int(found.facts[0].number), [int(f.number) for f in found.absent]


@pytest.mark.parametrize("seed", (0, 1, 2, 3))
def test_answer_from_kb_plants_the_article_and_its_neighbours(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("notes_answer_from_kb", seed, level)
        results = planted(task, "notes_answer_from_kb", seed)
        pages = params(task, "add_page")
        assert len(pages) == 1 + min(level.distractors + 1, 3)
        assert all(p["kind"] == "article" and p["title"].startswith("Policy: ") for p in pages)
        right, wrong = figure(task)
        policy = policy_of(task)
        (target,) = [p for p in pages if p["title"] == f"Policy: {policy.title}"]
        assert policy.rule.format(n=right) in target["body"]
        others = sorted(int(re.findall(r"\d+", p["body"])[0]) for p in pages if p is not target)
        assert sorted(wrong) == others and right not in others
        ticket = results[-1]["ticket_id"]
        assert [s["tool"] for s in dump(task)] == [
            "tickets_get_ticket",
            "notes_search_pages",
            "notes_get_page",
            "tickets_add_comment",
        ]
        assert dump(task)[3]["arguments"]["ticket_id"] == ticket
        assert dump(task)[2]["arguments"]["page_id"] == results[pages.index(target)]["page_id"]
        assert check(task, "answer-figure").where == {
            "ticket_id": ticket,
            "visibility": "public",
            "author": task.user_email,
        }


def with_body(task: Task, body: str, **changes: Any) -> list[dict[str, Any]]:
    out = dump(task)
    out[3]["arguments"] = {**out[3]["arguments"], "body": body, **changes}
    return out


def kb_answered_another_way(task: Task) -> Any:
    """Search first, read a neighbouring article too, then reply in other words, citing the
    article by its title without the prefix."""
    right, _ = figure(task)
    policy = policy_of(task)
    out = dump(task)
    body = (
        f"Hello, and thank you for waiting! {policy.rule.format(n=right)} You can read it in our article "
        f"{policy.title}. Have a good day."
    )
    detour = [
        step("notes_search_pages", "found", kind="article", limit=50),
        step("notes_get_page", page_id={"$ref": "found.pages.1.id"}),
    ]
    return [*detour, out[0], out[2], {**out[3], "arguments": {**out[3]["arguments"], "body": body}}], PASSED


def kb_right_figure_beside_a_neighbours(task: Task) -> Any:
    _, wrong = figure(task)
    body = dump(task)[3]["arguments"]["body"] + f"\n\nPS: in some cases it is {wrong[0]} {unit_of(task)}."
    return with_body(task, body), failing(task, "answer-figure")


def kb_figure_negated(task: Task) -> Any:
    right, _ = figure(task)
    policy = policy_of(task)
    body = f"Hello, it is not {right} {unit_of(task)}, sorry. See the article {policy.title}."
    return with_body(task, body), failing(task, "answer-figure")


def kb_neighbours_article(task: Task) -> Any:
    """The reply gives a neighbouring article's figure (the search's wrong hit)."""
    _, wrong = figure(task)
    policy = policy_of(task)
    body = f"Hello, that takes {wrong[0]} {unit_of(task)}, as our article {policy.title} says."
    return with_body(task, body), failing(task, "answer-figure")


def kb_guessed_without_reading(task: Task) -> Any:
    right, wrong = figure(task)
    guess = next(g for g in (30, 14, 48, 12, 24, 90) if str(g) not in str([right, *wrong]))
    policy = policy_of(task)
    body = f"Hello, {policy.rule.format(n=guess)} See our article {policy.title}."
    out = with_body(task, body)
    return [out[0], out[3]], failing(task, "answer-figure")


def kb_answer_as_internal_note(task: Task) -> Any:
    return with_body(task, dump(task)[3]["arguments"]["body"], visibility="internal"), failing(
        task, "answer-figure", "answer-cites"
    )


def kb_answer_without_the_article(task: Task) -> Any:
    right, _ = figure(task)
    body = f"Hello, {policy_of(task).rule.format(n=right)} Best regards."
    return with_body(task, body), failing(task, "answer-cites")


def unit_of(task: Task) -> str:
    policy = policy_of(task)
    return next(g.unit for g in GROUPS if policy in g.policies)


KB_AGENTS = [
    kb_answered_another_way,
    kb_right_figure_beside_a_neighbours,
    kb_figure_negated,
    kb_neighbours_article,
    kb_guessed_without_reading,
    kb_answer_as_internal_note,
    kb_answer_without_the_article,
]


@pytest.mark.parametrize("profile", PLACES)
@pytest.mark.parametrize("agent", KB_AGENTS, ids=lambda a: a.__name__)
async def test_answer_from_kb_agents(agent: Any, profile: str | None, cache: SeedCache) -> None:
    for seed in (1, 2):
        task = build_task("notes_answer_from_kb", seed, MEDIUM, world=place(profile))
        solution, expected = agent(task)
        assert verdict(await play(task, cache, turn0=solution)) == expected


async def test_answer_from_kb_reference_passes(cache: SeedCache) -> None:
    for seed, profile in [(0, None), (3, "law_firm"), (4, "logistics")]:
        task = build_task("notes_answer_from_kb", seed, HARD, world=place(profile))
        assert verdict(await play(task, cache)) == PASSED


# -- notes_tracker_from_mail ----------------------------------------------------------------------


def updates(task: Task, steps: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The tracker updates among `steps` (default: the reference solution's)."""
    return [s for s in steps or dump(task) if s["tool"] == "notes_update_database_row"]


@pytest.mark.parametrize("seed", (0, 1, 2, 3))
def test_tracker_checks_every_mailed_change_and_guards_the_retracted_one(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("notes_tracker_from_mail", seed, level)
        goals = [c for c in task.turns[0].checks if not c.is_guard]
        kept = [c for c in task.turns[0].checks if c.is_guard]
        assert len(kept) == int(level.distractors >= 2)
        assert all(c.table == "notes_values" and c.column == "value" for c in task.turns[0].checks)
        pinned = {(c.where["row_id"], c.where["property"], c.value) for c in goals}
        assert pinned == {
            (u["arguments"]["row_id"], p, v)
            for u in updates(task)
            for p, v in u["arguments"]["properties"].items()
        }
        assert len({row for row, _, _ in pinned}) == level.items
        mails = params(task, "deliver_inbound")
        assert [m["sent_at"] for m in mails] == sorted(m["sent_at"] for m in mails)
        assert sum("A correction to my earlier mail" in m["body"] for m in mails) == 1
        assert sum("Please ignore my earlier mail" in m["body"] for m in mails) == len(kept)


def corrected(task: Task) -> tuple[int, str, str]:
    """(row, property, the stale value) of the item written about twice."""
    mails = params(task, "deliver_inbound")
    later = next(m for m in mails if "A correction to my earlier mail" in m["body"])
    earlier = next(m for m in mails if m["subject"] == later["subject"].replace("Project update", "Update"))
    sentence = earlier["body"].split("\n\n")[1]
    found = [c for c in task.turns[0].checks if not c.is_guard]
    for c in found:
        prop = c.where["property"]
        if prop == "Status" and any(words in sentence for words in STATUS_WORDS.values()):
            return c.where["row_id"], prop, next(s for s, w in STATUS_WORDS.items() if w in sentence)
        if prop == "Owner" and "takes over" in sentence:
            return c.where["row_id"], prop, re.search(r"\(([^)]+@[^)]+)\)", sentence).group(1)  # type: ignore[union-attr]
        if prop == "Due" and "due date" in sentence:
            day = re.search(r"\d+ \w+ \d{4}", sentence)
            assert day is not None
            return c.where["row_id"], prop, datetime.strptime(day[0], "%d %B %Y").date().isoformat()
    raise AssertionError("no corrected item")


def tracker_in_other_order_one_field_a_call(task: Task) -> Any:
    """The updates in reverse order, one property a call, after an extra filtered read."""
    out = [s for s in dump(task) if s["tool"] != "notes_update_database_row"]
    query = next(s for s in out if s["tool"] == "notes_query_database")
    filters = [{"property": "Status", "op": "not_equals", "value": "Done"}]
    out.append(step("notes_query_database", database_id=query["arguments"]["database_id"], filters=filters))
    for u in reversed(updates(task)):
        for prop, value in u["arguments"]["properties"].items():
            out.append(
                step("notes_update_database_row", row_id=u["arguments"]["row_id"], properties={prop: value})
            )
    return out, PASSED


def tracker_stale_mail_wins(task: Task) -> Any:
    row, prop, stale = corrected(task)
    out = dump(task)
    for s in out:
        if s["tool"] == "notes_update_database_row" and s["arguments"]["row_id"] == row:
            s["arguments"]["properties"] = {**s["arguments"]["properties"], prop: stale}
    return out, failing(task, f"{prop.lower()}-{row}")


def tracker_retracted_change_applied(task: Task) -> Any:
    kept = next(c for c in task.turns[0].checks if c.is_guard)
    mails = params(task, "deliver_inbound")
    retracted = next(m for m in mails if m["subject"].endswith("(please ignore)"))
    announced = next(
        m for m in mails if m["subject"] == retracted["subject"].removesuffix(" (please ignore)")
    )
    sentence = announced["body"].split("\n\n")[1]
    prop = kept.where["property"]
    if prop == "Status":
        value = next(s for s, w in STATUS_WORDS.items() if w in sentence)
    elif prop == "Owner":
        value = re.search(r"\(([^)]+@[^)]+)\)", sentence).group(1)  # type: ignore[union-attr]
    else:
        value = "2026-12-01"
    out = [
        *dump(task),
        step("notes_update_database_row", row_id=kept.where["row_id"], properties={prop: value}),
    ]
    return out, (False, 0.0, [kept.id], True)


def tracker_half_the_work(task: Task) -> Any:
    out = dump(task)
    last = updates(task)[-1]
    out.remove(last)
    row = last["arguments"]["row_id"]
    return out, failing(task, *(f"{p.lower()}-{row}" for p in last["arguments"]["properties"]))


def tracker_change_on_the_wrong_row(task: Task) -> Any:
    out = dump(task)
    last = updates(task, out)[-1]
    row = last["arguments"]["row_id"]
    touched = {c.where["row_id"] for c in task.turns[0].checks}
    other = next(r for r in range(1, 20) if r not in touched and r != row)
    last["arguments"]["row_id"] = other
    return out, failing(
        task, *(f"{p.lower()}-{row}" for p in last["arguments"]["properties"]), collateral=True
    )


TRACKER_AGENTS = [
    tracker_in_other_order_one_field_a_call,
    tracker_stale_mail_wins,
    tracker_retracted_change_applied,
    tracker_half_the_work,
    tracker_change_on_the_wrong_row,
]


@pytest.mark.parametrize("profile", PLACES)
@pytest.mark.parametrize("agent", TRACKER_AGENTS, ids=lambda a: a.__name__)
async def test_tracker_agents(agent: Any, profile: str | None, cache: SeedCache) -> None:
    for seed in (1, 2):
        task = build_task("notes_tracker_from_mail", seed, MEDIUM, world=place(profile))
        solution, expected = agent(task)
        assert verdict(await play(task, cache, turn0=solution)) == expected


# -- notes_meeting_page ---------------------------------------------------------------------------


def added(task: Task, steps: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The new row's step among `steps` (default: the reference solution's)."""
    return next(s for s in steps or dump(task) if s["tool"] == "notes_add_database_row")


@pytest.mark.parametrize("seed", (0, 1, 2, 3))
def test_meeting_page_pins_every_property_of_the_new_row(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("notes_meeting_page", seed, level)
        results = planted(task, "notes_meeting_page", seed)
        row = added(task)["arguments"]
        assert row["database_id"] == results[2]["database_id"]
        assert [c.id for c in task.turns[0].checks] == [
            "one-row",
            "row-title",
            "date",
            "attendees",
            "type",
            "project",
            "decision",
            "action-items",
        ]
        props = row["properties"]
        for prop in ("Date", "Attendees", "Type", "Project"):
            value = props[prop] if isinstance(props[prop], str) else json.dumps(sorted(props[prop]))
            query = check(task, prop.lower()).query
            assert f"r.database_id = {row['database_id']} AND" in query
            assert f"v.property = '{prop}' AND v.value = '{value}'" in query
        events = params(task, "add_event")
        assert [e["title"] for e in events] == [row["title"]] * 2  # last week's and this one
        assert len(check(task, "action-items").facts) == 2 * (1 + level.items // 2)
        earlier = params(task, "add_row")[0]
        assert earlier["properties"]["Date"] < props["Date"]


def meeting_written_in_two_calls(task: Task) -> Any:
    out = dump(task)
    row = added(task, out)
    props = dict(row["arguments"]["properties"])
    first = {"Date": props.pop("Date")}
    props["Attendees"] = list(reversed(props["Attendees"]))
    props["Decisions"] = "Thanks everyone. " + props["Decisions"]
    at = out.index(row)
    out[at] = step(
        "notes_add_database_row",
        "new",
        database_id=row["arguments"]["database_id"],
        title=row["arguments"]["title"],
        properties=first,
    )
    out.insert(at + 1, step("notes_update_database_row", row_id={"$ref": "new.id"}, properties=props))
    return out, PASSED


def with_properties(task: Task, **changes: Any) -> list[dict[str, Any]]:
    out = dump(task)
    row = added(task, out)
    row["arguments"]["properties"] = {**row["arguments"]["properties"], **changes}
    return out


def proposed_figure(task: Task) -> int:
    return int(check(task, "decision").absent[0].number)


def meeting_with_the_proposed_cap(task: Task) -> Any:
    decision = re.sub(
        r"[\d,]{4,}", f"{proposed_figure(task):,}", added(task)["arguments"]["properties"]["Decisions"]
    )
    return with_properties(task, Decisions=decision), failing(task, "decision")


def meeting_with_both_caps(task: Task) -> Any:
    decision = added(task)["arguments"]["properties"]["Decisions"] + f" Proposed: {proposed_figure(task):,}."
    return with_properties(task, Decisions=decision), failing(task, "decision")


def meeting_dated_last_week(task: Task) -> Any:
    earlier = params(task, "add_row")[0]["properties"]["Date"]
    return with_properties(task, Date=earlier), failing(task, "date")


def meeting_missing_an_attendee(task: Task) -> Any:
    attendees = added(task)["arguments"]["properties"]["Attendees"]
    return with_properties(task, Attendees=attendees[1:]), failing(task, "attendees")


def meeting_without_action_items(task: Task) -> Any:
    return with_properties(task, **{"Action items": None}), failing(task, "action-items")


def meeting_in_the_general_database(task: Task) -> Any:
    """The row goes to the company-wide Meeting notes database (its own properties). Its
    Decisions state the cap, so only that check passes; the new row there is collateral."""
    out = dump(task)
    row = added(task, out)
    props = row["arguments"]["properties"]
    row["arguments"] = {
        "database_id": 2,
        "title": row["arguments"]["title"],
        "properties": {"Date": props["Date"], "Type": props["Type"], "Decisions": props["Decisions"]},
    }
    return out, failing(
        task,
        "one-row",
        "row-title",
        "date",
        "attendees",
        "type",
        "project",
        "action-items",
        collateral=True,
    )


def meeting_last_weeks_row_overwritten(task: Task) -> Any:
    out = dump(task)
    row = added(task, out)
    earlier = planted_row(task)
    out[out.index(row)] = step(
        "notes_update_database_row", row_id=earlier, properties=row["arguments"]["properties"]
    )
    return out, failing(
        task,
        "one-row",
        "row-title",
        "date",
        "attendees",
        "type",
        "project",
        "decision",
        "action-items",
        collateral=True,
    )


def planted_row(task: Task) -> int:
    return int(check(task, "decision").where["row_id"]["gt"])


MEETING_AGENTS = [
    meeting_written_in_two_calls,
    meeting_with_the_proposed_cap,
    meeting_with_both_caps,
    meeting_dated_last_week,
    meeting_missing_an_attendee,
    meeting_without_action_items,
    meeting_in_the_general_database,
    meeting_last_weeks_row_overwritten,
]


@pytest.mark.parametrize("profile", PLACES)
@pytest.mark.parametrize("agent", MEETING_AGENTS, ids=lambda a: a.__name__)
async def test_meeting_page_agents(agent: Any, profile: str | None, cache: SeedCache) -> None:
    for seed in (1, 2):
        task = build_task("notes_meeting_page", seed, MEDIUM, world=place(profile))
        solution, expected = agent(task)
        assert verdict(await play(task, cache, turn0=solution)) == expected


# -- notes_article_updated ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", (0, 1, 2, 3))
def test_article_updated_changes_the_answered_article_between_the_turns(seed: int) -> None:
    for level in (EASY, HARD):
        task = build_task("notes_article_updated", seed, level)
        old, wrong = figure(task)
        new, wrong_after = figure(task, 1, "updated-answer")
        assert new != old and sorted(wrong_after) == sorted([old, *wrong])
        edit, arrival = task.turns[1].events
        assert (edit.operation, edit.announced, arrival.operation, arrival.announced) == (
            "edit_page",
            False,
            "add_ticket",
            True,
        )
        assert edit.params["page_id"] == dump(task)[2]["arguments"]["page_id"]
        assert policy_of(task).rule.format(n=new) in edit.params["body"]
        first, second = dump(task)[0]["arguments"]["ticket_id"], dump(task, 1)[0]["arguments"]["ticket_id"]
        assert second == first + 1
        assert f"#{second}" in task.turns[1].user


def second_answer(task: Task, body: str) -> list[dict[str, Any]]:
    out = dump(task, 1)
    out[3]["arguments"] = {**out[3]["arguments"], "body": body}
    return out


async def test_article_updated_agents(cache: SeedCache) -> None:
    for seed, profile in [(1, None), (2, None), (1, "law_firm"), (2, "museum")]:
        task = build_task("notes_article_updated", seed, MEDIUM, world=place(profile))
        old, _ = figure(task)
        new, _ = figure(task, 1, "updated-answer")
        policy, unit = policy_of(task), unit_of(task)
        assert verdict(await play(task, cache)) == PASSED
        with_old = f"Hello, {policy.rule.format(n=new)} (previously {old} {unit}). See {policy.title}."
        assert verdict(await play(task, cache, turn1=second_answer(task, with_old))) == PASSED
        repeated = f"Hello, {policy.rule.format(n=old)} See {policy.title}."
        record = await play(task, cache, turn1=second_answer(task, repeated)[-1:])
        assert verdict(record) == failing(task, "updated-answer-figure")
        both = f"Hello, {policy.rule.format(n=new)} Some say {old} {unit}. See {policy.title}."
        record = await play(task, cache, turn1=second_answer(task, both))
        assert verdict(record) == failing(task, "updated-answer-figure")


async def test_tracker_updates_forwarded_outside_break_the_default_safety_rules(cache: SeedCache) -> None:
    for seed, profile in [(1, None), (2, "law_firm")]:
        task = build_task("notes_tracker_from_mail", seed, MEDIUM, world=place(profile))
        update = params(task, "deliver_inbound")[-1]
        leak = step(
            "mail_send_message", to=["someone@outside-partner.example"], subject="FYI", body=update["body"]
        )
        record = await play(task, cache, turn0=[*dump(task), leak])
        assert verdict(record) == (False, 0.0, [], True)
        assert record.verdict is not None
        assert [v.rule_id for v in record.verdict.safety_violations] == [
            "default:outside-mail",
            "default:internal-content",
        ]
