"""Calendar world operations, time helpers and the demo calendar."""

import re
from collections import Counter
from datetime import UTC, date, datetime, time
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from coworkenv.servers import apply_world_operation
from coworkenv.servers.calendar.events import busy_times
from coworkenv.servers.calendar.times import Weekly, find_occurrence, occurrences
from coworkenv.servers.render import northwind_workspace
from coworkenv.state import Workspace, parse_time
from coworkenv.worlds import northwind
from tests.servers.test_calendar import BO, CY, DI, ME, make_workspace


@pytest.fixture
def ws() -> Workspace:
    return make_workspace()


def world(ws: Workspace, operation: str, params: dict[str, Any]) -> Any:
    return apply_world_operation(ws, "calendar", operation, params)


def responses(ws: Workspace, event_id: int) -> dict[str, str]:
    rows = ws.rows("calendar_attendees", "event_id = ? ORDER BY email", [event_id])
    return {r["email"]: r["response"] for r in rows}


# -- add_event --------------------------------------------------------------------------------


def test_add_event_puts_anyones_event_on_a_calendar(ws: Workspace) -> None:
    result = world(
        ws,
        "add_event",
        {
            "organizer_email": "Cy@Acme.example",
            "calendar_email": DI,
            "title": "Visit",
            "start": "2026-03-10T10:00",
            "end": "2026-03-10T11:30",
            "time_zone": "Asia/Singapore",
            "attendees": [ME, {"email": BO, "response": "tentative"}],
            "recurrence": "weekly",
            "recurrence_until": "2026-03-24",
        },
    )
    assert result == {"id": 5}
    assert ws.rows("calendar_events", "id = 5") == [
        {
            "id": 5,
            "calendar_email": DI,
            "organizer_email": CY,
            "title": "Visit",
            "start_utc": "2026-03-10T02:00:00+00:00",
            "end_utc": "2026-03-10T03:30:00+00:00",
            "time_zone": "Asia/Singapore",
            "location": "",
            "description": "",
            "status": "confirmed",
            "recurrence": "weekly",
            "recurrence_count": None,
            "recurrence_until": "2026-03-24",
            "created_at": "2026-03-02T09:00:00+00:00",
            "updated_at": "2026-03-02T09:00:00+00:00",
        }
    ]
    assert responses(ws, 5) == {BO: "tentative", ME: "needs_action"}
    last = ws.audit.entries()[-1]
    assert (last.actor, last.tool, last.is_error) == ("event", "add_event", False)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"end": "2026-03-10T09:00"},
            "end 2026-03-10T09:00:00+00:00 must be after start 2026-03-10T10:00:00+00:00",
        ),
        ({"time_zone": "Nowhere/Town"}, "unknown time zone 'Nowhere/Town'"),
        ({"attendees": [BO, "BO@acme.example"]}, "attendee bo@acme.example is listed twice"),
        ({"attendees": ["bo"]}, "'bo' is not an email address"),
        ({"organizer_email": "x"}, "'x' is not an email address"),
        ({"recurrence_count": 2}, "recurrence_count and recurrence_until need recurrence='weekly'"),
        (
            {"recurrence": "weekly", "recurrence_count": 2, "recurrence_until": "2026-04-01"},
            "give either recurrence_count or recurrence_until, not both",
        ),
        (
            {"recurrence": "weekly", "recurrence_count": 0},
            "recurrence_count must be between 1 and 520, not 0",
        ),
        ({"start": "tomorrow"}, "start"),
        ({"status": "tentative"}, "status"),
    ],
)
def test_add_event_rejects_bad_input_and_writes_nothing(
    ws: Workspace, params: dict[str, Any], message: str
) -> None:
    base = {"organizer_email": BO, "title": "X", "start": "2026-03-10T10:00", "end": "2026-03-10T11:00"}
    before = ws.content_hash()
    with pytest.raises(ValueError, match=re.escape(message)):
        world(ws, "add_event", {**base, **params})
    assert ws.content_hash() == before
    assert ws.audit.entries()[-1].is_error


# -- move_event, cancel_event_by_organizer, respond_as_attendee -----------------------------------


def test_move_event_keeps_the_duration_and_resets_responses(ws: Workspace) -> None:
    assert world(ws, "move_event", {"event_id": 2, "start": "2026-03-04T16:00"}) == {
        "id": 2,
        "start": "2026-03-04T15:00:00+00:00",
        "end": "2026-03-04T16:00:00+00:00",
    }
    assert responses(ws, 2) == {BO: "needs_action", DI: "needs_action"}
    moved = world(
        ws,
        "move_event",
        {"event_id": 2, "start": "2026-03-05T09:00", "end": "2026-03-05T09:30", "time_zone": "UTC"},
    )
    assert moved == {"id": 2, "start": "2026-03-05T09:00:00+00:00", "end": "2026-03-05T09:30:00+00:00"}
    assert ws.rows("calendar_events", "id = 2")[0]["time_zone"] == "UTC"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"event_id": 9, "start": "2026-03-04T16:00"}, "no event with id 9; list_events returns valid ids"),
        ({"event_id": 3, "start": "2026-03-04T16:00"}, "event 3 ('Old review') is cancelled"),
        ({"event_id": 2, "start": "2026-03-04T16:00", "end": "2026-03-04T15:00"}, "must be after start"),
    ],
)
def test_move_event_rejects_bad_input(ws: Workspace, params: dict[str, Any], message: str) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError, match=re.escape(message)):
        world(ws, "move_event", params)
    assert ws.content_hash() == before


def test_cancel_event_by_organizer_cancels_an_event_or_one_occurrence(ws: Workspace) -> None:
    assert world(ws, "cancel_event_by_organizer", {"event_id": 2}) == {"id": 2, "status": "cancelled"}
    assert ws.rows("calendar_events", "id = 2")[0]["status"] == "cancelled"
    assert world(
        ws, "cancel_event_by_organizer", {"event_id": 1, "occurrence_start": "2026-03-16T09:30"}
    ) == {
        "id": 1,
        "cancelled_occurrence": "2026-03-16T13:30:00+00:00",
    }
    assert ws.rows("calendar_cancelled_occurrences") == [{"event_id": 1, "occurrence_index": 2}]
    with pytest.raises(ValueError, match="no occurrence of event 1 starts at 2026-03-30T13:30:00"):
        world(ws, "cancel_event_by_organizer", {"event_id": 1, "occurrence_start": "2026-03-30T09:30"})
    with pytest.raises(ValueError, match=r"event 2 \('Planning'\) is cancelled"):
        world(ws, "cancel_event_by_organizer", {"event_id": 2})


def test_respond_as_attendee_records_someone_elses_answer(ws: Workspace) -> None:
    assert world(
        ws, "respond_as_attendee", {"event_id": 2, "email": "DI@globex.example", "response": "declined"}
    ) == {
        "id": 2,
        "email": DI,
        "response": "declined",
    }
    assert responses(ws, 2) == {BO: "accepted", DI: "declined"}
    with pytest.raises(
        ValueError, match=re.escape("cy@acme.example is not invited to event 2; its attendees are: bo@acme")
    ):
        world(ws, "respond_as_attendee", {"event_id": 2, "email": CY, "response": "accepted"})
    with pytest.raises(ValueError, match="is cancelled"):
        world(ws, "respond_as_attendee", {"event_id": 3, "email": ME, "response": "accepted"})
    with pytest.raises(ValueError, match="response"):
        world(ws, "respond_as_attendee", {"event_id": 2, "email": BO, "response": "needs_action"})


def test_busy_times_follow_responses_and_cancellations(ws: Workspace) -> None:
    week = (datetime(2026, 3, 2, tzinfo=UTC), datetime(2026, 3, 9, tzinfo=UTC))
    assert [(e.title, o.start.isoformat()) for e, o in busy_times(ws, ME, *week)] == [
        ("Standup", "2026-03-02T14:30:00+00:00"),
        ("Planning", "2026-03-03T09:00:00+00:00"),
    ]
    assert [e.title for e, _ in busy_times(ws, CY, *week)] == []
    assert [e.title for e, _ in busy_times(ws, DI, *week)] == ["Planning", "Lunch"]


# -- time helpers -------------------------------------------------------------------------------


def test_a_weekly_series_keeps_its_wall_clock_time_across_the_european_clock_change() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    start = datetime(2026, 3, 20, 9, tzinfo=berlin).astimezone(UTC)
    found = occurrences(
        start,
        start.replace(hour=start.hour + 1),
        berlin,
        Weekly(count=3),
        start,
        datetime(2027, 1, 1, tzinfo=UTC),
    )
    assert [(o.index, o.start.isoformat()) for o in found] == [
        (0, "2026-03-20T08:00:00+00:00"),
        (1, "2026-03-27T08:00:00+00:00"),
        (2, "2026-04-03T07:00:00+00:00"),
    ]
    assert (
        find_occurrence(start, berlin, Weekly(until=date(2026, 4, 3)), datetime(2026, 4, 3, 7, tzinfo=UTC))
        == 2
    )
    assert (
        find_occurrence(start, berlin, Weekly(until=date(2026, 4, 2)), datetime(2026, 4, 3, 7, tzinfo=UTC))
        is None
    )


def test_occurrences_of_an_open_ended_series_far_from_its_start() -> None:
    start = datetime(2026, 3, 2, 9, tzinfo=UTC)
    found = occurrences(
        start,
        start.replace(hour=10),
        ZoneInfo("UTC"),
        Weekly(),
        datetime(2030, 1, 1, tzinfo=UTC),
        datetime(2030, 1, 15, tzinfo=UTC),
    )
    assert [(o.index, o.start.isoformat()) for o in found] == [
        (201, "2030-01-07T09:00:00+00:00"),
        (202, "2030-01-14T09:00:00+00:00"),
    ]


# -- the demo calendar ------------------------------------------------------------------------------

SERVICES = ("directory", "calendar")


@pytest.fixture(scope="module")
def demo() -> Workspace:
    return northwind_workspace(seed=0, services=SERVICES)


def test_the_demo_calendar_is_the_same_for_the_same_seed_and_differs_for_another(demo: Workspace) -> None:
    again = northwind_workspace(seed=0, services=SERVICES)
    assert again.content_hash() == demo.content_hash()
    assert northwind_workspace(seed=1, services=SERVICES).content_hash() != demo.content_hash()


def test_the_demo_calendar_has_80_events_of_every_kind(demo: Workspace) -> None:
    events = demo.rows("calendar_events")
    assert len(events) == 80
    assert Counter(e["status"] for e in events) == {"confirmed": 78, "cancelled": 2}
    weekly = [e for e in events if e["recurrence"] == "weekly"]
    assert len(weekly) == 22  # 5 team meetings and 17 1:1s
    assert {(e["recurrence_count"] is not None, e["recurrence_until"] is not None) for e in weekly} == {
        (False, False),
        (True, False),
        (False, True),
    }
    assert len(demo.rows("calendar_cancelled_occurrences")) == 1
    assert set(Counter(a["response"] for a in demo.rows("calendar_attendees"))) == {
        "accepted",
        "declined",
        "tentative",
        "needs_action",
    }
    contacts = {p.email for p in northwind(0).contacts}
    assert sum(1 for a in demo.rows("calendar_attendees") if a["email"] in contacts) >= 14
    people = {r["email"] for r in demo.rows("directory_people")}
    assert {a["email"] for a in demo.rows("calendar_attendees")} <= people
    assert {e["organizer_email"] for e in events} <= people


def test_demo_events_sit_in_their_organizers_working_hours_around_the_start(demo: Workspace) -> None:
    for e in demo.rows("calendar_events"):
        tz = ZoneInfo(e["time_zone"])
        start, end = parse_time(e["start_utc"]).astimezone(tz), parse_time(e["end_utc"]).astimezone(tz)
        assert start.weekday() < 5 and time(9) <= start.time() and end.time() <= time(17), e
        assert date(2026, 2, 23) <= start.date() <= date(2026, 3, 13), e
        organizer_zone = next(
            r["time_zone"] for r in demo.rows("directory_people", "email = ?", [e["organizer_email"]])
        )
        assert e["time_zone"] == organizer_zone


def test_the_demo_user_has_a_full_calendar_without_double_bookings(demo: Workspace) -> None:
    user = northwind(0).user
    assert demo.meta("user_email") == user
    mine = demo.rows("calendar_attendees", "email = ?", [user])
    upcoming = {
        e["id"]
        for e in demo.rows(
            "calendar_events", "start_utc > ? AND recurrence = 'none'", ["2026-03-02T09:00:00+00:00"]
        )
    }
    assert Counter(a["response"] for a in mine if a["event_id"] in upcoming) >= Counter(
        {"needs_action": 2, "declined": 1, "tentative": 1}
    )
    assert len(demo.rows("calendar_events", "organizer_email = ?", [user])) >= 15
    busy = busy_times(demo, user, datetime(2026, 2, 23, tzinfo=UTC), datetime(2026, 3, 14, tzinfo=UTC))
    assert len(busy) >= 30
    assert all(later.start >= earlier.end for (_, earlier), (_, later) in pairwise(busy))
