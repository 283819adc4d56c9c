"""The calendar service through a real in-memory MCP client: reading calendars.

The workspace used by every calendar test file (`make_workspace`): the user works in
Berlin, Bo in New York, Cy in Singapore, Di (external) in London; the clock starts on
Monday 2 March 2026, 09:00 UTC.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.state import Workspace
from tests.conftest import START

ME, BO, CY, DI = "me@acme.example", "bo@acme.example", "cy@acme.example", "di@globex.example"
PEOPLE = [
    (ME, "Mia Meyer", "Europe/Berlin"),
    (BO, "Bo Chan", "America/New_York"),
    (CY, "Cy Diaz", "Asia/Singapore"),
    (DI, "Di Evans", "Europe/London"),
]


def make_workspace() -> Workspace:
    """Four people and four events: 1 Bo's weekly standup (4 times, Mon 09:30 New York; Cy
    declined), 2 the user's planning meeting, 3 Cy's cancelled review, 4 Di's lunch the user declined."""
    ws = create_workspace(["directory", "calendar"], clock_start=START, user_email=ME)
    for email, name, tz in PEOPLE:
        apply_world_operation(ws, "directory", "add_person", {"email": email, "name": name, "time_zone": tz})
    for event in [
        {
            "organizer_email": BO,
            "title": "Standup",
            "start": "2026-03-02T09:30",
            "end": "2026-03-02T10:00",
            "time_zone": "America/New_York",
            "attendees": [ME, {"email": CY, "response": "declined"}],
            "recurrence": "weekly",
            "recurrence_count": 4,
        },
        {
            "organizer_email": ME,
            "title": "Planning",
            "start": "2026-03-03T10:00",
            "end": "2026-03-03T11:00",
            "time_zone": "Europe/Berlin",
            "location": "Room 1",
            "description": "Q2 plan",
            "attendees": [{"email": BO, "response": "accepted"}, {"email": DI, "response": "tentative"}],
        },
        {
            "organizer_email": CY,
            "title": "Old review",
            "start": "2026-03-04T11:00",
            "end": "2026-03-04T12:00",
            "time_zone": "Asia/Singapore",
            "status": "cancelled",
            "attendees": [{"email": ME, "response": "accepted"}],
        },
        {
            "organizer_email": DI,
            "title": "Lunch",
            "start": "2026-03-05T12:00:00+00:00",
            "end": "2026-03-05T13:00:00+00:00",
            "time_zone": "Europe/London",
            "attendees": [{"email": ME, "response": "declined"}],
        },
    ]:
        apply_world_operation(ws, "calendar", "add_event", event)
    return ws


class Calendar:
    """An MCP client session with the calendar server of one workspace, for a whole test."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def __call__(self, tool: str, args: dict[str, Any]) -> Any:
        """Call one tool; the structured result, or ("error", text)."""
        with anyio.fail_after(5):
            result = await self.client.call_tool(tool, args)
        if result.is_error:
            return ("error", result.content[0].text)
        return result.structured_content


@asynccontextmanager
async def open_calendar(ws: Workspace) -> AsyncIterator[Calendar]:
    async with Client(build_server(ws, "calendar")) as client:
        yield Calendar(client)


def error(tool: str, message: str) -> tuple[str, str]:
    return ("error", f"Error executing tool {tool}: {message}")


@pytest.fixture
def ws() -> Workspace:
    return make_workspace()


@pytest.fixture
async def cal(ws: Workspace) -> AsyncIterator[Calendar]:
    async with open_calendar(ws) as calendar:
        yield calendar


WEEK = {"start": "2026-03-02T00:00:00Z", "end": "2026-03-09T00:00:00Z"}

PLANNING = {
    "event_id": 2,
    "series_id": None,
    "occurrence_start": None,
    "calendar_email": ME,
    "organizer_email": ME,
    "title": "Planning",
    "start": "2026-03-03T09:00:00+00:00",
    "end": "2026-03-03T10:00:00+00:00",
    "time_zone": "Europe/Berlin",
    "start_local": "2026-03-03T10:00:00+01:00",
    "end_local": "2026-03-03T11:00:00+01:00",
    "location": "Room 1",
    "description": "Q2 plan",
    "attendees": [{"email": BO, "response": "accepted"}, {"email": DI, "response": "tentative"}],
    "status": "confirmed",
}


def brief(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (e["event_id"], e["series_id"], e["start"], e["start_local"], e["status"]) for e in result["events"]
    ]


async def test_list_events_shows_my_week_with_series_occurrences_and_declined_invitations(
    ws: Workspace,
    cal: Calendar,
) -> None:
    result = await cal("list_events", WEEK)
    assert (result["calendar_email"], result["range_start"], result["range_end"], result["total"]) == (
        ME,
        "2026-03-02T00:00:00+00:00",
        "2026-03-09T00:00:00+00:00",
        3,
    )
    assert brief(result) == [
        (1, 1, "2026-03-02T14:30:00+00:00", "2026-03-02T09:30:00-05:00", "confirmed"),
        (2, None, "2026-03-03T09:00:00+00:00", "2026-03-03T10:00:00+01:00", "confirmed"),
        (4, None, "2026-03-05T12:00:00+00:00", "2026-03-05T12:00:00+00:00", "confirmed"),
    ]
    assert result["events"][1] == PLANNING
    assert result["events"][0]["occurrence_start"] == "2026-03-02T14:30:00+00:00"
    assert result["events"][2]["attendees"] == [{"email": ME, "response": "declined"}]


async def test_list_events_keeps_a_series_at_its_local_time_across_daylight_saving(cal: Calendar) -> None:
    result = await cal("list_events", {"start": "2026-03-01", "end": "2026-04-30", "calendar_email": BO})
    standups = [(e["start"], e["start_local"]) for e in result["events"] if e["event_id"] == 1]
    assert standups == [
        ("2026-03-02T14:30:00+00:00", "2026-03-02T09:30:00-05:00"),
        ("2026-03-09T13:30:00+00:00", "2026-03-09T09:30:00-04:00"),
        ("2026-03-16T13:30:00+00:00", "2026-03-16T09:30:00-04:00"),
        ("2026-03-23T13:30:00+00:00", "2026-03-23T09:30:00-04:00"),
    ]


async def test_list_events_includes_cancelled_events_only_when_asked(cal: Calendar) -> None:
    result = await cal("list_events", {**WEEK, "include_cancelled": True})
    assert brief(result)[2] == (
        3,
        None,
        "2026-03-04T03:00:00+00:00",
        "2026-03-04T11:00:00+08:00",
        "cancelled",
    )
    assert result["total"] == 4


async def test_list_events_reads_another_calendar_by_normalized_email(cal: Calendar) -> None:
    result = await cal("list_events", {**WEEK, "calendar_email": " CY@acme.example "})
    assert result["calendar_email"] == CY
    assert [(e["title"], e["attendees"][0]) for e in result["events"]] == [
        ("Standup", {"email": CY, "response": "declined"})
    ]


async def test_list_events_filters_by_words_and_pages(cal: Calendar) -> None:
    assert brief(await cal("list_events", {**WEEK, "query": "q2 ROOM"})) == [
        (2, None, "2026-03-03T09:00:00+00:00", "2026-03-03T10:00:00+01:00", "confirmed")
    ]
    page = await cal("list_events", {**WEEK, "limit": 1, "offset": 1})
    assert (page["total"], [e["title"] for e in page["events"]]) == (3, ["Planning"])


async def test_list_events_reads_times_without_offset_in_the_given_time_zone(cal: Calendar) -> None:
    result = await cal(
        "list_events",
        {"start": "2026-03-03T00:00", "end": "2026-03-03T23:59", "time_zone": "Asia/Singapore"},
    )
    assert (result["range_start"], result["range_end"]) == (
        "2026-03-02T16:00:00+00:00",
        "2026-03-03T15:59:00+00:00",
    )
    assert [e["title"] for e in result["events"]] == ["Planning"]
    # Without time_zone, the user's own zone (Berlin) applies.
    mine = await cal("list_events", {"start": "2026-03-03", "end": "2026-03-04"})
    assert mine["range_start"] == "2026-03-02T23:00:00+00:00"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"calendar_email": "nobody@acme.example"},
            "no calendar for 'nobody@acme.example': nobody with that email is in the directory or on any event; "
            "use the directory's search_people to find the right address",
        ),
        (
            {"calendar_email": "bo chan"},
            "'bo chan' is not an email address; use the form name@company.example",
        ),
        (
            {"start": "next monday"},
            "start 'next monday' is not an ISO 8601 time; e.g. 2026-03-02T14:30:00+01:00, or 2026-03-02T14:30 "
            "together with time_zone",
        ),
        (
            {"end": "2026-03-01T00:00:00Z"},
            "end 2026-03-01T00:00:00+00:00 must be after start 2026-03-02T00:00:00+00:00",
        ),
        ({"end": "2026-07-01"}, "the range from start to end may span at most 92 days"),
        (
            {"start": "2026-03-02T00:00", "time_zone": "Berlin"},
            "unknown time zone 'Berlin'; use an IANA name such as Europe/Berlin, America/New_York or UTC",
        ),
    ],
)
async def test_list_events_explains_bad_input(cal: Calendar, args: dict[str, Any], message: str) -> None:
    assert await cal("list_events", {**WEEK, **args}) == error("list_events", message)


async def test_list_events_rejects_a_limit_out_of_range(cal: Calendar) -> None:
    kind, text = await cal("list_events", {**WEEK, "limit": 0})
    assert kind == "error" and "limit" in text and "greater than or equal to 1" in text


async def test_get_event_returns_a_series_with_its_recurrence(cal: Calendar) -> None:
    assert await cal("get_event", {"event_id": 1}) == {
        "id": 1,
        "calendar_email": BO,
        "organizer_email": BO,
        "title": "Standup",
        "start": "2026-03-02T14:30:00+00:00",
        "end": "2026-03-02T15:00:00+00:00",
        "time_zone": "America/New_York",
        "start_local": "2026-03-02T09:30:00-05:00",
        "end_local": "2026-03-02T10:00:00-05:00",
        "location": "",
        "description": "",
        "attendees": [{"email": CY, "response": "declined"}, {"email": ME, "response": "needs_action"}],
        "status": "confirmed",
        "recurrence": {"frequency": "weekly", "count": 4, "until": None, "cancelled_occurrences": []},
        "created_at": "2026-03-02T09:00:00+00:00",
        "updated_at": "2026-03-02T09:00:00+00:00",
    }


async def test_get_event_explains_an_unknown_id(cal: Calendar) -> None:
    assert await cal("get_event", {"event_id": 99}) == error(
        "get_event", "no event with id 99; list_events returns valid ids"
    )


async def test_read_tools_change_nothing_and_are_audited(ws: Workspace, cal: Calendar) -> None:
    before, clock = ws.content_hash(), ws.clock.now_text()
    await cal("list_events", WEEK)
    await cal("get_event", {"event_id": 42})
    await cal(
        "check_availability", {"attendees": [BO], "start": "2026-03-03T10:00", "end": "2026-03-03T11:00"}
    )
    await cal(
        "find_free_slots",
        {"attendees": [BO], "duration_minutes": 30, "window_start": "2026-03-03", "window_end": "2026-03-04"},
    )
    assert (ws.content_hash(), ws.clock.now_text()) == (before, clock)
    assert [(e.tool, e.is_error) for e in ws.audit.entries(actor="agent")] == [
        ("list_events", False),
        ("get_event", True),
        ("check_availability", False),
        ("find_free_slots", False),
    ]


async def test_tools_are_annotated_read_only_or_destructive(ws: Workspace) -> None:
    with anyio.fail_after(5):
        async with Client(build_server(ws, "calendar")) as client:
            tools = (await client.list_tools()).tools
    flags = {t.name: (t.annotations.read_only_hint, t.annotations.destructive_hint) for t in tools}
    assert flags == {
        "list_events": (True, False),
        "get_event": (True, False),
        "check_availability": (True, False),
        "find_free_slots": (True, False),
        "create_event": (False, False),
        "update_event": (False, False),
        "cancel_event": (False, True),
        "respond_to_invite": (False, False),
    }


async def test_without_a_directory_everyone_works_in_utc_and_my_empty_calendar_lists_fine() -> None:
    ws = create_workspace(["calendar"], clock_start=START, user_email=ME)
    async with open_calendar(ws) as cal:
        mine = await cal("list_events", WEEK)
        assert (mine["calendar_email"], mine["total"], mine["events"]) == (ME, 0, [])
        assert await cal("list_events", {**WEEK, "calendar_email": BO}) == error(
            "list_events",
            "no calendar for 'bo@acme.example': nobody with that email is in the directory or on any event; "
            "use the directory's search_people to find the right address",
        )
        created = await cal(
            "create_event",
            {"title": "Intro", "start": "2026-03-03T10:00", "end": "2026-03-03T10:30", "attendees": [BO]},
        )
        assert (created["time_zone"], created["start"]) == ("UTC", "2026-03-03T10:00:00+00:00")
        listed = await cal("list_events", {**WEEK, "calendar_email": BO})
        assert [e["title"] for e in listed["events"]] == ["Intro"]


async def test_my_own_calendar_needs_no_directory_entry() -> None:
    ws = create_workspace(["directory", "calendar"], clock_start=START, user_email="new.hire@acme.example")
    apply_world_operation(
        ws, "directory", "add_person", {"email": BO, "name": "Bo", "time_zone": "America/New_York"}
    )
    async with open_calendar(ws) as cal:
        result = await cal(
            "check_availability",
            {"attendees": [BO], "start": "2026-03-03T15:00Z", "end": "2026-03-03T15:30Z"},
        )
    assert [(a["email"], a["time_zone"], a["within_working_hours"]) for a in result["attendees"]] == [
        ("new.hire@acme.example", "UTC", True),
        (BO, "America/New_York", True),
    ]
