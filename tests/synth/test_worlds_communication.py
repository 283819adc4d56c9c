"""The communication families on worlds: mail_bulk_archive, mail_answer_figure,
mail_chase_unanswered and ticket_status_report word their requests in many ways and leave no
template seam in any text; hand-written wrong agents fail and right ones pass, with exact
verdicts, in worlds other than the demo company."""

import re
from collections.abc import Iterator
from typing import Any

import pytest

import coworkenv.synth.families.communication  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.synth.family import FAMILIES, Difficulty, build_task
from coworkenv.synth.phrasing import seams
from coworkenv.task import Task
from coworkenv.world import World
from coworkenv.worlds import world
from tests.synth.agents import judge, step

FAMILY_NAMES = ("mail_bulk_archive", "mail_answer_figure", "mail_chase_unanswered", "ticket_status_report")
MEDIUM = Difficulty.level(1)
WORLDS = ("law_firm", "logistics")


def test_the_families_run_on_worlds() -> None:
    assert all(FAMILIES[name].worlds for name in FAMILY_NAMES)


# -- wording ---------------------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def texts(task: Task) -> list[str]:
    """The user messages, event texts, every string argument of the solution steps and the
    texts of the planted mail, files and tickets."""
    out = [
        str(op.params[key])
        for op in task.seed.operations
        for key in ("subject", "body", "content", "title", "description")
        if key in op.params
    ]
    for turn in task.turns:
        out.append(turn.user)
        for event in turn.events:
            out.extend(_strings(event.model_dump()))
        for solution_step in turn.solution:
            out.extend(_strings(solution_step.arguments))
    return out


def masked(text: str) -> str:
    """A request with its facts masked (addresses, domains, paths, digits, capitalised words),
    so two requests that differ only in names and figures read the same."""
    text = re.sub(r"\S+@\S+|\b[\w.-]+\.example\b|/\S+|(?<=\s)'[^'\n]{1,40}'", "_", text)
    text = re.sub(r"\b(?:\d+ [A-Z][a-z]+ \d{4}|\d{4}-\d\d-\d\d|[A-Z][a-z]+ \d+)\b", "D", text)
    text = re.sub(r"\d+", "0", text)
    return re.sub(r"\b[A-Z][\w'-]*", "N", text)


def checks_of(task: Task) -> list[Any]:
    """The checks of the task's only turn (typed loosely: each test knows their kinds)."""
    return list(task.turns[0].checks)


def in_thread(task: Task) -> bool:
    return any(getattr(c, "reply", False) for c in checks_of(task))


def _world(profile: str | None) -> World | None:
    return None if profile is None else world(profile)


@pytest.mark.parametrize("name", FAMILY_NAMES)
@pytest.mark.parametrize("profile", [None, "law_firm", "logistics", "marketing_agency", "hospital_admin"])
def test_no_text_of_a_task_has_a_template_seam(name: str, profile: str | None) -> None:
    where = _world(profile)
    for seed in range(12):
        task = build_task(name, seed, Difficulty.level(seed % 3), world=where)
        found = {text: seams(text) for text in texts(task) if seams(text)}
        assert found == {}, (seed, found)


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_each_request_kind_is_worded_in_many_ways(name: str) -> None:
    kinds: dict[bool, set[str]] = {True: set(), False: set()}
    for seed in range(40):
        task = build_task(name, seed, MEDIUM, world=_world(WORLDS[seed % 2]))
        kinds[in_thread(task)].add(masked(task.turns[0].user))
    # the archive and the chase are one kind each; the two reports are asked in or out of thread
    counts = {kind: len(found) for kind, found in kinds.items() if found}
    assert all(count >= 8 for count in counts.values()), counts


def test_only_an_in_thread_request_mentions_the_thread() -> None:
    for name in ("mail_answer_figure", "ticket_status_report"):
        for seed in range(20):
            task = build_task(name, seed, MEDIUM, world=world("law_firm"))
            assert ("thread" in task.turns[0].user) == in_thread(task), (name, seed, task.turns[0].user)


# -- hand-written agents on two worlds ------------------------------------------------------


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


def verdict(record: EpisodeRecord) -> tuple[bool, float, list[str], bool]:
    """(success, score, failed checks, whether anything was collateral)."""
    assert record.verdict is not None
    failed = sorted(c.id for c in record.verdict.checks if not c.passed)
    return record.success, round(record.score, 4), failed, bool(record.verdict.collateral)


def solution(task: Task) -> list[dict[str, Any]]:
    return [s.model_dump(exclude_none=True) for s in task.turns[0].solution]


def reads(task: Task) -> list[dict[str, Any]]:
    return [s for s in solution(task) if s["tool"] not in ("mail_reply", "mail_move_message")]


def task_in(name: str, profile: str) -> Task:
    return build_task(name, 1, MEDIUM, world=world(profile))


@pytest.mark.parametrize("profile", WORLDS)
async def test_archiving_newest_first_passes_and_a_newer_issue_archived_fails(
    profile: str, cache: SeedCache
) -> None:
    task = task_in("mail_bulk_archive", profile)
    old = [c.where["id"] for c in checks_of(task) if c.id.startswith("archived-")]
    (stay,) = [c for c in checks_of(task) if c.id == "others-stay"]
    moves = [step("mail_move_message", message_id=mid, folder="archive") for mid in reversed(old)]
    right = await judge(
        task, [*reads(task), step("mail_mark_message", message_id=old[0], status="flagged"), *moves], cache
    )
    assert verdict(right) == (True, 1.0, [], False)
    newer = stay.where["id"]["in"][0]
    wrong = await judge(
        task, [*reads(task), *moves, step("mail_move_message", message_id=newer, folder="archive")], cache
    )
    assert verdict(wrong) == (False, 0.0, ["others-stay"], True)
    # the seed's own old issues count: leaving the oldest one in the inbox misses it
    partial = await judge(task, [*reads(task), *moves[:-1]], cache)
    assert verdict(partial) == (False, round((len(old) - 1) / len(old), 4), ["archived-0"], False)


@pytest.mark.parametrize("profile", WORLDS)
async def test_figures_reformatted_pass_and_the_drafts_figures_fail(profile: str, cache: SeedCache) -> None:
    task = task_in("mail_answer_figure", profile)
    checks = checks_of(task)
    wanted = [int(c.facts[0].number) for c in checks]
    drafted = [int(c.absent[0].number) for c in checks]
    (reply,) = [s for s in solution(task) if s["tool"] == "mail_reply"]
    request = reply["arguments"]["message_id"]
    currency = world(profile).currency
    right_body = "Hello,\n\n" + "\n".join(f"{currency}{v // 1000} {v % 1000:03d}" for v in wanted) + "\n"
    wrong_body = "Hello,\n\n" + "\n".join(f"{currency} {v:,}" for v in drafted) + "\n"
    if in_thread(task):
        right_steps = [step("mail_reply", message_id=request, body=right_body, reply_all=True)]
    else:
        right_steps = [
            step("mail_get_message", id="request", message_id=request),
            step("mail_send_message", to=[{"$ref": "request.from_addr"}], subject="Figures", body=right_body),
        ]
    right = await judge(task, [*reads(task), *right_steps], cache)
    assert verdict(right) == (True, 1.0, [], False)
    wrong = await judge(task, [*reads(task), step("mail_reply", message_id=request, body=wrong_body)], cache)
    assert verdict(wrong) == (False, 0.0, [c.id for c in checks], False)


@pytest.mark.parametrize("profile", WORLDS)
async def test_chasing_in_each_open_thread_passes_and_chasing_an_answered_one_fails(
    profile: str, cache: SeedCache
) -> None:
    task = task_in("mail_chase_unanswered", profile)
    follow_ups = [c for c in checks_of(task) if c.id.startswith("followed-up-")]
    (alone,) = [c for c in checks_of(task) if c.id == "answered-left-alone"]
    answered = next(op.params["in_reply_to"] for op in task.seed.operations if op.params.get("in_reply_to"))
    assert str(answered) in alone.query
    nudges = [
        step(
            "mail_reply", message_id=c.thread_of, body=f"Hello again, any news on {c.facts[0].text}? Thanks."
        )
        for c in follow_ups
    ]
    right = await judge(task, [*reads(task), *nudges], cache)
    assert verdict(right) == (True, 1.0, [], False)
    # a nudge that does not say what is still missing asks for nothing
    empty = [
        step("mail_reply", message_id=c.thread_of, body="Hello again, any news? Thanks.") for c in follow_ups
    ]
    assert verdict(await judge(task, [*reads(task), *empty], cache))[:2] == (False, 0.0)
    extra = step("mail_reply", message_id=answered, body="Hello again, any news on my mail below? Thanks.")
    wrong = await judge(task, [*reads(task), *nudges, extra], cache)
    assert verdict(wrong) == (False, 0.0, ["answered-left-alone"], True)
    # a new mail is not a reminder in the thread the user asked for (nor collateral: it is one
    # mail to the person the goal mails)
    (first,) = [c for c in follow_ups if c.id == "followed-up-0"]
    fresh = step(
        "mail_send_message", to=first.to, subject="Reminder", body=f"Any news on {first.facts[0].text}?"
    )
    missed = await judge(task, [*reads(task), fresh, *nudges[1:]], cache)
    n = len(follow_ups)
    assert verdict(missed) == (False, round((n - 1) / n, 4), ["followed-up-0"], False)


@pytest.mark.parametrize("profile", WORLDS)
async def test_the_count_in_words_passes_and_an_older_closed_ticket_fails(
    profile: str, cache: SeedCache
) -> None:
    task = task_in("ticket_status_report", profile)
    count, oldest = checks_of(task)
    (reply,) = [s for s in solution(task) if s["tool"] == "mail_reply"]
    request = reply["arguments"]["message_id"]
    words = {2: "two", 3: "three", 4: "four", 5: "five"}[int(count.facts[0].number)]
    body = f"Hi,\n\n{words} are still open; the oldest is ticket number {oldest.facts[0].ticket}.\n"
    right = await judge(task, [*reads(task), step("mail_reply", message_id=request, body=body)], cache)
    assert verdict(right) == (True, 1.0, [], False)
    closed = oldest.absent[0].ticket
    body = f"There are {int(count.facts[0].number)} open tickets. The oldest is #{closed}."
    wrong = await judge(task, [*reads(task), step("mail_reply", message_id=request, body=body)], cache)
    assert verdict(wrong) == (False, 0.5, ["reply-oldest"], False)


# -- worlds at the edges ------------------------------------------------------------------------


def test_the_chase_in_a_small_world_asks_as_many_colleagues_as_it_has() -> None:
    small = world("logistics", 8)
    colleagues = [p for p in small.staff if p.email != small.user]
    task = build_task("mail_chase_unanswered", 1, Difficulty.level(2), world=small)
    sent = [op.params for op in task.seed.operations if op.params.get("folder") == "sent"]
    answers = [op.params for op in task.seed.operations if op.params.get("in_reply_to")]
    # four unanswered threads as the level asks, and answers from the rest of the seven colleagues
    assert (len(colleagues), len(sent), len(answers)) == (7, 7, 3)
    assert len({p["to"][0] for p in sent}) == 7
    assert len([c for c in checks_of(task) if c.id.startswith("followed-up-")]) == 4


def test_a_world_with_one_newsletter_archives_it_or_a_generic_one() -> None:
    data = world("museum").model_dump()
    data["vocabulary"]["newsletters"] = data["vocabulary"]["newsletters"][:1]
    museum = World.model_validate(data)
    archived: dict[str, list[int]] = {}
    for seed in range(6):
        task = build_task("mail_bulk_archive", seed, MEDIUM, world=museum)
        (search,) = [s for s in task.turns[0].solution if s.tool == "mail_search_messages"]
        archived.setdefault(search.arguments["sender"], []).append(
            len([c for c in checks_of(task) if c.id.startswith("archived-")])
        )
    assert sorted(archived) == ["artmuseumweekly.example", "vendorpulse.example"]  # the first generic one
    # the seed holds no generic newsletter: only the planted old issues are archived
    assert archived["vendorpulse.example"] == [MEDIUM.items] * len(archived["vendorpulse.example"])
