"""Scheduling tools: check_availability and find_free_slots, with working hours in each
person's own time zone (the user: Berlin, Bo: New York, Cy: Singapore, Di: London)."""

from collections.abc import AsyncIterator
from typing import Any

import pytest

from coworkenv.state import Workspace
from tests.servers.test_calendar import BO, CY, DI, ME, Calendar, error, make_workspace, open_calendar

STANDUP = {
    "event_id": 1,
    "title": "Standup",
    "start": "2026-03-02T14:30:00+00:00",
    "end": "2026-03-02T15:00:00+00:00",
}


@pytest.fixture
def ws() -> Workspace:
    return make_workspace()


@pytest.fixture
async def cal(ws: Workspace) -> AsyncIterator[Calendar]:
    async with open_calendar(ws) as calendar:
        yield calendar


def starts(result: dict[str, Any]) -> list[str]:
    return [s["start"] for s in result["slots"]]


# -- check_availability ----------------------------------------------------------------------


async def test_check_availability_reports_conflicts_and_working_hours_per_person(cal: Calendar) -> None:
    result = await cal(
        "check_availability",
        {"attendees": [BO, CY], "start": "2026-03-02T14:30:00Z", "end": "2026-03-02T15:00:00Z"},
    )
    assert result == {
        "start": "2026-03-02T14:30:00+00:00",
        "end": "2026-03-02T15:00:00+00:00",
        "everyone_available": False,
        "attendees": [
            {
                "email": ME,
                "time_zone": "Europe/Berlin",
                "start_local": "2026-03-02T15:30:00+01:00",
                "end_local": "2026-03-02T16:00:00+01:00",
                "free": False,
                "within_working_hours": True,
                "conflicts": [STANDUP],
            },
            {
                "email": BO,
                "time_zone": "America/New_York",
                "start_local": "2026-03-02T09:30:00-05:00",
                "end_local": "2026-03-02T10:00:00-05:00",
                "free": False,
                "within_working_hours": True,
                "conflicts": [STANDUP],
            },
            {
                # Cy declined the standup, so it does not keep her busy; 22:30 is after her hours.
                "email": CY,
                "time_zone": "Asia/Singapore",
                "start_local": "2026-03-02T22:30:00+08:00",
                "end_local": "2026-03-02T23:00:00+08:00",
                "free": True,
                "within_working_hours": False,
                "conflicts": [],
            },
        ],
    }


async def test_check_availability_can_ignore_the_meeting_being_moved(cal: Calendar) -> None:
    args = {"attendees": [BO], "start": "2026-03-02T15:30", "end": "2026-03-02T16:00", "ignore_event_id": 1}
    result = await cal("check_availability", args)
    assert result["everyone_available"] is True
    assert [(a["email"], a["free"], a["within_working_hours"]) for a in result["attendees"]] == [
        (ME, True, True),
        (BO, True, True),
    ]


async def test_check_availability_ignores_declined_and_cancelled_events(cal: Calendar) -> None:
    lunch = await cal(
        "check_availability",
        {"attendees": [DI], "start": "2026-03-05T12:00Z", "end": "2026-03-05T13:00Z"},
    )
    assert [(a["email"], a["free"], [c["title"] for c in a["conflicts"]]) for a in lunch["attendees"]] == [
        (ME, True, []),
        (DI, False, ["Lunch"]),
    ]
    review = await cal(
        "check_availability",
        {"attendees": [CY], "include_me": False, "start": "2026-03-04T03:00Z", "end": "2026-03-04T04:00Z"},
    )
    assert review["everyone_available"] is True


async def test_check_availability_counts_tentative_answers_as_busy(cal: Calendar) -> None:
    result = await cal(
        "check_availability",
        {"attendees": [DI], "include_me": False, "start": "2026-03-03T09:30Z", "end": "2026-03-03T10:30Z"},
    )
    assert result["attendees"][0]["conflicts"] == [
        {
            "event_id": 2,
            "title": "Planning",
            "start": "2026-03-03T09:00:00+00:00",
            "end": "2026-03-03T10:00:00+00:00",
        }
    ]


async def test_check_availability_weekends_and_custom_working_hours(cal: Calendar) -> None:
    saturday = {"attendees": [], "start": "2026-03-07T10:00", "end": "2026-03-07T11:00"}
    result = await cal("check_availability", saturday)
    assert (result["everyone_available"], result["attendees"][0]["within_working_hours"]) == (False, False)
    result = await cal("check_availability", {**saturday, "include_weekends": True})
    assert result["everyone_available"] is True
    late = {
        "attendees": [CY],
        "start": "2026-03-02T14:30:00Z",
        "end": "2026-03-02T15:00:00Z",
        "ignore_event_id": 1,
    }
    result = await cal(
        "check_availability", {**late, "working_hours_start": "07:00", "working_hours_end": "23:30"}
    )
    assert [a["within_working_hours"] for a in result["attendees"]] == [True, True]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"working_hours_start": "9am"},
            "working_hours_start '9am' is not a time of day; use HH:MM (24-hour), e.g. 09:00",
        ),
        (
            {"working_hours_start": "17:00", "working_hours_end": "09:00"},
            "working_hours_end 09:00 must be after working_hours_start 17:00",
        ),
        ({"working_hours_end": "24:00"}, "working_hours_end '24:00' is not a time of day; use HH:MM (24-hour), e.g. 09:00"),
        (
            {"attendees": ["zed@acme.example"]},
            "no person with email 'zed@acme.example' in the directory; use the directory's search_people to "
            "find the right address",
        ),
        ({"attendees": [], "include_me": False}, "nobody to check: name at least one attendee, or set include_me"),
        ({"ignore_event_id": 99}, "no event with id 99; list_events returns valid ids"),
        ({"end": "2026-03-03T09:00"}, "end 2026-03-03T08:00:00+00:00 must be after start 2026-03-03T09:00:00+00:00"),
        ({"end": "2026-03-05T10:00"}, "an event lasts at most 24 hours; split longer stretches into several events"),
    ],
)  # fmt: skip
async def test_check_availability_explains_bad_input(
    cal: Calendar, args: dict[str, Any], message: str
) -> None:
    base = {"attendees": [BO], "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}
    assert await cal("check_availability", {**base, **args}) == error("check_availability", message)


# -- find_free_slots -----------------------------------------------------------------------------


async def test_find_free_slots_uses_the_overlap_of_everyones_working_hours(cal: Calendar) -> None:
    result = await cal(
        "find_free_slots",
        {"attendees": [BO], "duration_minutes": 30, "window_start": "2026-03-02", "window_end": "2026-03-04"},
    )
    # Berlin 09-17 is 08-16 UTC, New York 09-17 is 14-22 UTC: 14:00-16:00 UTC, less the standup.
    assert result == {
        "duration_minutes": 30,
        "time_zone": "Europe/Berlin",
        "attendees": [
            {"email": ME, "time_zone": "Europe/Berlin"},
            {"email": BO, "time_zone": "America/New_York"},
        ],
        "slots": [
            {
                "start": "2026-03-02T14:00:00+00:00",
                "end": "2026-03-02T14:30:00+00:00",
                "start_local": "2026-03-02T15:00:00+01:00",
                "end_local": "2026-03-02T15:30:00+01:00",
            },
            {
                "start": "2026-03-02T15:00:00+00:00",
                "end": "2026-03-02T15:30:00+00:00",
                "start_local": "2026-03-02T16:00:00+01:00",
                "end_local": "2026-03-02T16:30:00+01:00",
            },
            {
                "start": "2026-03-02T15:30:00+00:00",
                "end": "2026-03-02T16:00:00+00:00",
                "start_local": "2026-03-02T16:30:00+01:00",
                "end_local": "2026-03-02T17:00:00+01:00",
            },
            {
                "start": "2026-03-03T14:00:00+00:00",
                "end": "2026-03-03T14:30:00+00:00",
                "start_local": "2026-03-03T15:00:00+01:00",
                "end_local": "2026-03-03T15:30:00+01:00",
            },
            {
                "start": "2026-03-03T14:30:00+00:00",
                "end": "2026-03-03T15:00:00+00:00",
                "start_local": "2026-03-03T15:30:00+01:00",
                "end_local": "2026-03-03T16:00:00+01:00",
            },
            {
                "start": "2026-03-03T15:00:00+00:00",
                "end": "2026-03-03T15:30:00+00:00",
                "start_local": "2026-03-03T16:00:00+01:00",
                "end_local": "2026-03-03T16:30:00+01:00",
            },
            {
                "start": "2026-03-03T15:30:00+00:00",
                "end": "2026-03-03T16:00:00+00:00",
                "start_local": "2026-03-03T16:30:00+01:00",
                "end_local": "2026-03-03T17:00:00+01:00",
            },
        ],
    }


async def test_find_free_slots_granularity_limit_and_time_zone(cal: Calendar) -> None:
    result = await cal(
        "find_free_slots",
        {
            "attendees": [BO],
            "duration_minutes": 60,
            "granularity_minutes": 60,
            "max_slots": 3,
            "window_start": "2026-03-02T00:00",
            "window_end": "2026-03-06T00:00",
            "time_zone": "America/New_York",
        },
    )
    assert result["time_zone"] == "America/New_York"
    assert [(s["start"], s["start_local"]) for s in result["slots"]] == [
        ("2026-03-02T15:00:00+00:00", "2026-03-02T10:00:00-05:00"),
        ("2026-03-03T14:00:00+00:00", "2026-03-03T09:00:00-05:00"),
        ("2026-03-03T15:00:00+00:00", "2026-03-03T10:00:00-05:00"),
    ]


async def test_find_free_slots_never_starts_before_now(cal: Calendar) -> None:
    args = {"attendees": [], "duration_minutes": 30, "window_start": "2026-03-02T00:00:00Z"}
    result = await cal("find_free_slots", {**args, "window_end": "2026-03-02T12:00:00Z", "max_slots": 3})
    assert starts(result) == [
        "2026-03-02T09:00:00+00:00",
        "2026-03-02T09:30:00+00:00",
        "2026-03-02T10:00:00+00:00",
    ]


async def test_find_free_slots_skips_weekends_unless_asked(cal: Calendar) -> None:
    args = {
        "attendees": [DI],
        "duration_minutes": 60,
        "granularity_minutes": 60,
        "window_start": "2026-03-06T15:00:00Z",
        "window_end": "2026-03-09T10:00:00Z",
        "max_slots": 3,
    }
    assert starts(await cal("find_free_slots", args)) == [
        "2026-03-06T15:00:00+00:00",
        "2026-03-09T09:00:00+00:00",
    ]
    assert starts(await cal("find_free_slots", {**args, "include_weekends": True})) == [
        "2026-03-06T15:00:00+00:00",
        "2026-03-07T09:00:00+00:00",
        "2026-03-07T10:00:00+00:00",
    ]


async def test_find_free_slots_busy_rules(cal: Calendar) -> None:
    lunch = {"duration_minutes": 60, "window_start": "2026-03-05T12:00Z", "window_end": "2026-03-05T13:00Z"}
    # I declined Di's lunch, Di organizes it.
    assert starts(await cal("find_free_slots", {**lunch, "attendees": []})) == ["2026-03-05T12:00:00+00:00"]
    assert starts(await cal("find_free_slots", {**lunch, "attendees": [DI], "include_me": False})) == []
    # Di's tentative answer to the planning meeting keeps her busy.
    planning = {
        "duration_minutes": 60,
        "window_start": "2026-03-03T09:00Z",
        "window_end": "2026-03-03T10:00Z",
    }
    assert starts(await cal("find_free_slots", {**planning, "attendees": [DI], "include_me": False})) == []
    moving = {
        "attendees": [BO],
        "duration_minutes": 60,
        "window_start": "2026-03-02T14:00Z",
        "window_end": "2026-03-02T15:30Z",
    }
    assert starts(await cal("find_free_slots", moving)) == []
    assert starts(await cal("find_free_slots", {**moving, "ignore_event_id": 1})) == [
        "2026-03-02T14:00:00+00:00",
        "2026-03-02T14:30:00+00:00",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"window_start": "2026-03-01", "window_end": "2026-03-02T08:00:00Z"},
            "window_end 2026-03-02T08:00:00+00:00 is not after the current time 2026-03-02T09:00:00+00:00; "
            "search a future window",
        ),
        ({"window_end": "2026-04-10"}, "the range from window_start to window_end may span at most 31 days"),
        (
            {"window_end": "2026-03-01"},
            "window_end 2026-02-28T23:00:00+00:00 must be after window_start 2026-03-02T23:00:00+00:00",
        ),
        ({"window_start": "3/3/2026"}, "window_start '3/3/2026' is not an ISO 8601 time; "
         "e.g. 2026-03-02T14:30:00+01:00, or 2026-03-02T14:30 together with time_zone"),
        ({"working_hours_end": "5pm"}, "working_hours_end '5pm' is not a time of day; use HH:MM (24-hour), e.g. 09:00"),
        ({"attendees": [CY, "cy"]}, "'cy' is not an email address; use the form name@company.example"),
        ({"ignore_event_id": -1}, "no event with id -1; list_events returns valid ids"),
        ({"time_zone": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'; use an IANA name such as Europe/Berlin, "
         "America/New_York or UTC"),
    ],
)  # fmt: skip
async def test_find_free_slots_explains_bad_input(cal: Calendar, args: dict[str, Any], message: str) -> None:
    base = {
        "attendees": [BO],
        "duration_minutes": 30,
        "window_start": "2026-03-03",
        "window_end": "2026-03-06",
    }
    assert await cal("find_free_slots", {**base, **args}) == error("find_free_slots", message)


@pytest.mark.parametrize(
    ("args", "field"),
    [({"granularity_minutes": 20}, "granularity_minutes"), ({"duration_minutes": 0}, "duration_minutes")],
)
async def test_find_free_slots_schema_rejects_odd_numbers(
    cal: Calendar, args: dict[str, Any], field: str
) -> None:
    base = {
        "attendees": [BO],
        "duration_minutes": 30,
        "window_start": "2026-03-03",
        "window_end": "2026-03-06",
    }
    kind, text = await cal("find_free_slots", {**base, **args})
    assert kind == "error" and field in text
