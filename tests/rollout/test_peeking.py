"""No peeking, strictly: each kind of literal a reference step passes is accepted once shown and
rejected, by name, before; and no example or family uses a literal it was not shown."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

import coworkenv.synth.families  # noqa: F401  (registers every family)
from coworkenv.rollout import OraclePolicy, SeedCache
from coworkenv.rollout.episodes.runner import run_episode, system_prompt, user_zone
from coworkenv.synth.family import FAMILIES, Difficulty, build_task
from coworkenv.synth.validation.peeking import Shown, peeking, step_problems
from coworkenv.task import Task, load_task

START = datetime(2026, 3, 2, 9, tzinfo=UTC)
PROMPT = "You act for Kim <kim@northwind.example>. The current date and time is 2026-03-02T09:00:00Z (UTC)."
UNSEEN = "before any message or tool result showed it"


def shown(*texts: str, zone: str | None = "Europe/Paris") -> Shown:
    seen = Shown(PROMPT, START, zone)
    for text in texts:
        seen.add(text)
    return seen


def test_a_time_zone_never_shown_is_rejected_by_name() -> None:
    args = {"start": "2026-03-04", "end": "2026-03-05", "time_zone": "Europe/Paris"}
    assert step_problems("calendar_list_events", args, shown("Anything on Wednesday?")) == [
        f"uses time_zone='Europe/Paris' {UNSEEN}: a time zone never shown"
    ]


def test_a_time_zone_shown_in_the_prompt_is_accepted() -> None:
    args = {"start": "2026-03-04", "end": "2026-03-05", "time_zone": "Europe/Paris"}
    seen = shown(
        "Kim's time zone is Europe/Paris; their working hours are 09:00-17:00.", "Anything on Wednesday?"
    )
    assert step_problems("calendar_list_events", args, seen) == []


def test_a_time_without_a_zone_is_in_the_users_zone_which_must_be_shown() -> None:
    args = {"title": "Sync", "start": "2026-03-04T10:00:00", "end": "2026-03-04T10:30:00"}
    ask = "Book a 30-minute sync on Wednesday at 10:00."
    assert step_problems("calendar_create_event", args, shown(ask)) == [
        f"uses start='2026-03-04T10:00:00' {UNSEEN}: its time zone Europe/Paris (the user's) was never shown",
        f"uses end='2026-03-04T10:30:00' {UNSEEN}: its time zone Europe/Paris (the user's) was never shown",
    ]
    assert step_problems("calendar_create_event", args, shown("My zone: Europe/Paris.", ask)) == []


def test_an_event_time_never_said_is_rejected_and_its_end_is_computed_from_a_stated_duration() -> None:
    args = {"title": "Sync", "start": "2026-03-04T11:00:00Z", "end": "2026-03-04T11:45:00Z"}
    assert step_problems("calendar_create_event", args, shown("Book a sync on Wednesday at 10:00.")) == [
        f"uses start='2026-03-04T11:00:00Z' {UNSEEN}: its time of day 11:00 was never shown",
        f"uses end='2026-03-04T11:45:00Z' {UNSEEN}: its time of day 11:45 was never shown",
    ]
    assert step_problems("calendar_create_event", args, shown("A 45-minute sync on 4 March at 11am.")) == []


def test_a_queue_named_before_any_queue_was_listed_is_rejected() -> None:
    args = {"title": "Refund", "queue": "Client requests", "description": "Refund order 5"}
    assert step_problems("tickets_create_ticket", args, shown("File a ticket for the refund.")) == [
        f"uses queue='Client requests' {UNSEEN}: a queue name never listed or mentioned"
    ]
    listed = shown("File a ticket for the refund.", '["Client requests", "Engineering"]')
    assert step_problems("tickets_create_ticket", args, listed) == []


def test_an_address_spelled_from_a_name_is_rejected_even_in_a_search_filter() -> None:
    seen = shown("Answer the mail Dana Kim sent me.")
    assert step_problems("mail_search_messages", {"sender": "dana.kim@northwind.example"}, seen) == [
        f"uses sender='dana.kim@northwind.example' {UNSEEN}: the address dana.kim@northwind.example was "
        "never shown (addresses come from results or messages)"
    ]
    body = {"to": ["kim@northwind.example"], "subject": "Hi", "body": "Ask dana.kim@northwind.example"}
    assert step_problems("mail_send_message", body, seen)[0].startswith("uses body=")


def test_a_search_term_from_the_users_message_is_accepted_and_one_never_said_is_rejected() -> None:
    seen = shown("Find the invoices Globex sent last week.")
    assert step_problems("mail_search_messages", {"query": "Globex invoice"}, seen) == []
    assert step_problems("mail_search_messages", {"query": "Globex contract"}, seen) == [
        f"uses query='Globex contract' {UNSEEN}: the word 'contract' was never shown"
    ]


def test_free_text_is_exempt_but_for_its_addresses() -> None:
    args = {"ticket_id": 7, "body": "Refund agreed on the phone, EUR 120.", "visibility": "internal"}
    seen = shown("Note on ticket 7 that I agreed the refund.")
    assert step_problems("tickets_add_comment", args, seen) == []


def test_a_new_file_may_be_written_into_a_shown_directory_but_a_read_needs_its_own_path() -> None:
    seen = shown('[{"path": "/reports/2026-q1.md"}]')
    write = {"path": "/reports/summary.md", "content": "x"}
    assert step_problems("files_write_file", write, seen) == []
    assert step_problems("files_read_file", {"path": "/reports/summary.md"}, seen) == [
        f"uses path='/reports/summary.md' {UNSEEN}: a path never listed"
    ]


# -- every example and every family --------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "tasks" / "examples"
CACHE = SeedCache()


def _tasks() -> list[tuple[str, Task]]:
    found = [(p.stem, load_task(p)) for p in sorted(EXAMPLES.glob("*.json"))]
    for name in sorted(FAMILIES):
        for seed in (0, 1, 2):
            level = seed % 3
            found.append((f"{name}@{seed}", build_task(name, seed, Difficulty.level(level))))
    return found


async def test_no_example_and_no_family_uses_a_literal_it_was_not_shown() -> None:
    peeked = {}
    for label, task in _tasks():
        record = await run_episode(task, OraclePolicy(), cache=CACHE)
        assert record.status == "completed", (label, record.error)
        ws = CACHE.fork(task)
        found = peeking(task, record, system_prompt(task, ws), user_zone(ws))
        if found:
            peeked[label] = found
    assert peeked == {}


@pytest.mark.parametrize("with_directory", [True, False])
def test_the_system_prompt_states_the_users_time_zone_and_working_hours(with_directory: bool) -> None:
    task = build_task("ticket_to_meeting" if with_directory else "meeting_day", 0)
    ws = CACHE.fork(task)
    prompt = system_prompt(task, ws)
    zone = user_zone(ws)
    assert (zone is not None) == with_directory
    line = next(x for x in prompt.splitlines() if "time zone is" in x)
    assert line.endswith("on weekdays, local time.")
    if zone is not None:
        assert f"time zone is {zone};" in line
