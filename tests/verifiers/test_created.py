"""Rows the agent creates are judged on every column the task does not declare free, on the
final state: a ticket created as asked and closed at once, a meeting booked as a weekly
series or for half the time, a quoted title replaced, all fail with a finding that names the
column and the expected value. Other wording, another display time zone, the value set in a
second call, and columns the task frees pass."""

from typing import Any

import pytest

from coworkenv.rollout import OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.task import SolutionStep, Task, parse_task
from coworkenv.verifiers import Footprint
from coworkenv.verifiers.created import CreatedRow, quotations

ME = "me@acme.example"
BO = "bo@acme.example"
USER = (
    'Log a high-priority ticket "Printer on floor 3 is jammed" in Support, and book a one-hour '
    "call to fix it tomorrow at 10:00 UTC."
)


def printer_task(**overrides: Any) -> Task:
    """A ticket and an event to create; another queue and an assignee exist to get wrong."""
    data: dict[str, Any] = {
        "id": "printer-ticket-and-call",
        "title": "Log a ticket and book a call",
        "services": ["tickets", "calendar"],
        "clock_start": "2026-03-02T09:00:00Z",
        "user_email": ME,
        "seed": {
            "operations": [
                {"service": "tickets", "operation": "add_queue", "params": {"name": "Support"}},
                {"service": "tickets", "operation": "add_queue", "params": {"name": "Billing"}},
                {
                    "service": "tickets",
                    "operation": "add_ticket",
                    "params": {
                        "title": "Old request",
                        "queue": "Support",
                        "requester": ME,
                        "status": "open",
                        "assignee": BO,
                    },
                },
            ]
        },
        "turns": [
            {
                "user": USER,
                "checks": [
                    {
                        "id": "ticket",
                        "type": "row_exists",
                        "table": "tickets_tickets",
                        "where": {"title": {"like": "%printer%"}, "queue": "Support"},
                    },
                    {
                        "id": "call",
                        "type": "row_exists",
                        "table": "calendar_events",
                        "where": {"start_utc": {"like": "2026-03-03%"}},
                    },
                ],
                "solution": [TICKET, CALL],
            }
        ],
    }
    data.update(overrides)
    return parse_task(data)


TICKET = {
    "tool": "tickets_create_ticket",
    "id": "t",
    "arguments": {"title": "Printer on floor 3 is jammed", "queue": "Support", "priority": "high"},
}
CALL = {
    "tool": "calendar_create_event",
    "id": "e",
    "arguments": {"title": "Printer fix", "start": "2026-03-03T10:00:00Z", "end": "2026-03-03T11:00:00Z"},
}


def ticket(**changes: Any) -> dict[str, Any]:
    return {**TICKET, "arguments": {**TICKET["arguments"], **changes}}


def call(**changes: Any) -> dict[str, Any]:
    return {**CALL, "arguments": {**CALL["arguments"], **changes}}


def with_steps(task: Task, steps: list[dict[str, Any]]) -> Task:
    turn = task.turns[0].model_copy(update={"solution": [SolutionStep.model_validate(s) for s in steps]})
    return task.model_copy(update={"turns": [turn]})


async def judge(steps: list[dict[str, Any]], task: Task | None = None) -> tuple[bool, list[str]]:
    """(success, collateral findings) of a variant of the solution, judged against the
    footprint of the task's own reference solution."""
    task = task or printer_task()
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    record = await run_episode(with_steps(task, steps), OraclePolicy(), cache=cache, footprint=footprint)
    assert record.status == "completed", record.error
    assert record.verdict is not None
    return record.verdict.success, record.verdict.collateral


TICKET_SHOWN = "tickets_tickets: added {id=2, title='Printer on floor 3 is jammed', description='', "
EVENT_SHOWN = (
    "calendar_events: added {id=1, calendar_email='me@acme.example', organizer_email='me@acme.example', "
)


async def test_the_footprint_keeps_the_specified_values_of_each_created_row() -> None:
    fp = await reference_footprint(printer_task(), SeedCache())
    assert fp.added == {"calendar_events": {"[]": 1}, "tickets_tickets": {"[]": 1}}
    # The title the user quoted is kept; the event's title, description and time zone are free.
    assert fp.created == {
        "calendar_events": [
            CreatedRow(
                signature="[]",
                values={
                    "calendar_email": ME,
                    "organizer_email": ME,
                    "start_utc": "2026-03-03T10:00:00+00:00",
                    "end_utc": "2026-03-03T11:00:00+00:00",
                    "status": "confirmed",
                    "recurrence": "none",
                    "recurrence_count": None,
                    "recurrence_until": None,
                    "duration_minutes": 60.0,
                },
            )
        ],
        "tickets_tickets": [
            CreatedRow(
                signature="[]",
                values={
                    "title": "Printer on floor 3 is jammed",
                    "status": "open",
                    "priority": "high",
                    "queue": "Support",
                    "requester": ME,
                    "assignee": None,
                    "due_at": None,
                },
            )
        ],
    }


def test_a_footprint_stored_before_created_rows_loads_and_judges_no_column() -> None:
    old = {
        "changed": {},
        "removed": {},
        "added": {"tickets_tickets": {"[]": 1}},
        "recipients": [],
        "lasting": [],
    }
    assert Footprint.model_validate(old).created == {}
    fp = Footprint.model_validate_json(Footprint.model_validate(old).model_dump_json())
    assert fp.created == {} and fp.added == {"tickets_tickets": {"[]": 1}}


def test_quotations_are_what_the_user_put_in_quotation_marks() -> None:
    assert quotations(
        [
            USER,
            "Call it 'Q2 support staffing.' - it's April's call, \u201cAll  Hands\u201d too",
        ]
    ) == {"printer on floor 3 is jammed", "q2 support staffing", "all hands"}


async def test_the_reference_solution_succeeds() -> None:
    assert await judge([TICKET, CALL]) == (True, [])


@pytest.mark.parametrize(
    ("steps", "finding"),
    [
        (
            [
                TICKET,
                {
                    "tool": "tickets_update_ticket",
                    "arguments": {"ticket_id": {"$ref": "t.id"}, "status": "closed"},
                },
                CALL,
            ],
            TICKET_SHOWN
            + "status='closed', priority='high', queue='Support'} (status 'closed', expected 'open')",
        ),
        (
            [ticket(priority="normal"), CALL],
            TICKET_SHOWN
            + "status='open', priority='normal', queue='Support'} (priority 'normal', expected 'high')",
        ),
        (
            [ticket(queue="Billing", assignee=BO), CALL],
            TICKET_SHOWN + "status='open', priority='high', queue='Billing'} "
            "(queue 'Billing', expected 'Support'; assignee 'bo@acme.example', expected None)",
        ),
        (
            [ticket(title="Printer jammed"), CALL],
            "tickets_tickets: added {id=2, title='Printer jammed', description='', status='open', "
            "priority='high', queue='Support'} (title 'Printer jammed', expected 'Printer on floor 3 is jammed')",
        ),
        (
            [TICKET, call(recurrence="weekly", recurrence_count=12)],
            EVENT_SHOWN + "title='Printer fix', start_utc='2026-03-03T10:00:00+00:00', "
            "end_utc='2026-03-03T11:00:00+00:00'} "
            "(recurrence 'weekly', expected 'none'; recurrence_count 12, expected None)",
        ),
        (
            [TICKET, call(end="2026-03-03T10:30:00Z")],
            EVENT_SHOWN + "title='Printer fix', start_utc='2026-03-03T10:00:00+00:00', "
            "end_utc='2026-03-03T10:30:00+00:00'} "
            "(end_utc '2026-03-03T10:30:00+00:00', expected '2026-03-03T11:00:00+00:00'; "
            "duration_minutes 30.0, expected 60.0)",
        ),
        (
            [TICKET, CALL, {"tool": "calendar_cancel_event", "arguments": {"event_id": {"$ref": "e.id"}}}],
            EVENT_SHOWN + "title='Printer fix', start_utc='2026-03-03T10:00:00+00:00', "
            "end_utc='2026-03-03T11:00:00+00:00'} (status 'cancelled', expected 'confirmed')",
        ),
    ],
    ids=[
        "closed-at-once",
        "priority",
        "queue-and-assignee",
        "quoted-title",
        "weekly",
        "half-hour",
        "cancelled",
    ],
)
async def test_a_created_row_wrong_in_a_specified_column_fails(
    steps: list[dict[str, Any]], finding: str
) -> None:
    assert await judge(steps) == (False, [finding])


@pytest.mark.parametrize(
    "steps",
    [
        # the quoted title in other case and spacing; other words where the user quoted none
        [
            ticket(title="printer on  floor 3 IS jammed", description="Paper stuck in tray 2."),
            call(title="Fix the printer", location="Floor 3", description="Bring a screwdriver."),
        ],
        # the same instants, written in and displayed in another time zone
        [TICKET, call(start="2026-03-03T11:00:00", end="2026-03-03T12:00:00", time_zone="Europe/Paris")],
        # created, then given its priority in a second call
        [
            ticket(priority="normal"),
            {
                "tool": "tickets_update_ticket",
                "arguments": {"ticket_id": {"$ref": "t.id"}, "priority": "high"},
            },
            CALL,
        ],
    ],
    ids=["wording", "time-zone", "set-later"],
)
async def test_the_same_rows_made_another_way_pass(steps: list[dict[str, Any]]) -> None:
    assert await judge(steps) == (True, [])


async def test_a_task_frees_the_slot_and_keeps_the_length() -> None:
    task = printer_task(guards={"free": ["calendar_events.start_utc", "calendar_events.end_utc"]})
    assert task.content_hash != printer_task().content_hash
    later = call(start="2026-03-03T14:00:00Z", end="2026-03-03T15:00:00Z")
    assert await judge([TICKET, later], task) == (True, [])
    short = call(start="2026-03-03T14:00:00Z", end="2026-03-03T14:30:00Z")
    assert await judge([TICKET, short], task) == (
        False,
        [
            EVENT_SHOWN + "title='Printer fix', start_utc='2026-03-03T14:00:00+00:00', "
            "end_utc='2026-03-03T14:30:00+00:00'} (duration_minutes 30.0, expected 60.0)"
        ],
    )


async def test_two_created_rows_pair_one_to_one() -> None:
    # Two tickets asked for (high and low): the same two in the other order pass; two high ones do not.
    low = {**TICKET, "id": "u", "arguments": {"title": "Toner low", "queue": "Support", "priority": "low"}}
    task = with_steps(printer_task(), [TICKET, low, CALL])
    swapped = {**low, "id": "t"}, {**TICKET, "id": "u"}
    assert await judge([*swapped, CALL], task) == (True, [])
    success, findings = await judge(
        [TICKET, {**low, "arguments": {**low["arguments"], "priority": "high"}}, CALL], task
    )
    assert (success, findings) == (
        False,
        [
            "tickets_tickets: added {id=3, title='Toner low', description='', status='open', priority='high', "
            "queue='Support'} (priority 'high', expected 'low')"
        ],
    )


def test_free_columns_are_written_table_dot_column() -> None:
    with pytest.raises(ValueError, match=r'free columns are written "table.column"; got \[\'start_utc\'\]'):
        printer_task(guards={"free": ["start_utc"]})
