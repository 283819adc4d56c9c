"""Calendar tools that change state: create, update, cancel, respond."""

from collections.abc import AsyncIterator
from typing import Any

import pytest

from coworkenv.servers import apply_world_operation
from coworkenv.state import Workspace
from tests.servers.test_calendar import BO, CY, DI, ME, Calendar, error, make_workspace, open_calendar


@pytest.fixture
def ws() -> Workspace:
    return make_workspace()


@pytest.fixture
async def cal(ws: Workspace) -> AsyncIterator[Calendar]:
    async with open_calendar(ws) as calendar:
        yield calendar


def responses(ws: Workspace, event_id: int) -> dict[str, str]:
    rows = ws.rows("calendar_attendees", "event_id = ? ORDER BY email", [event_id])
    return {r["email"]: r["response"] for r in rows}


async def titles(cal: Calendar, start: str, end: str, **extra: Any) -> list[tuple[str, str, str]]:
    result = await cal("list_events", {"start": start, "end": end, **extra})
    return [(e["title"], e["start"], e["status"]) for e in result["events"]]


# -- create_event ------------------------------------------------------------------------------


async def test_create_event_stores_my_event_in_my_time_zone_and_invites_each_attendee_once(
    ws: Workspace,
    cal: Calendar,
) -> None:
    result = await cal(
        "create_event",
        {
            "title": " Review ",
            "start": "2026-03-04T15:00",
            "end": "2026-03-04T15:45",
            "attendees": ["BO@acme.example", ME, "bo@acme.example", DI],
            "location": "Room 2",
            "description": "Slides",
        },
    )
    assert result == {
        "id": 5,
        "calendar_email": ME,
        "organizer_email": ME,
        "title": "Review",
        "start": "2026-03-04T14:00:00+00:00",
        "end": "2026-03-04T14:45:00+00:00",
        "time_zone": "Europe/Berlin",
        "start_local": "2026-03-04T15:00:00+01:00",
        "end_local": "2026-03-04T15:45:00+01:00",
        "location": "Room 2",
        "description": "Slides",
        "attendees": [{"email": BO, "response": "needs_action"}, {"email": DI, "response": "needs_action"}],
        "status": "confirmed",
        "recurrence": None,
        "created_at": "2026-03-02T09:00:00+00:00",
        "updated_at": "2026-03-02T09:00:00+00:00",
    }
    assert ws.rows("calendar_events", "id = 5") == [
        {
            "id": 5,
            "calendar_email": ME,
            "organizer_email": ME,
            "title": "Review",
            "start_utc": "2026-03-04T14:00:00+00:00",
            "end_utc": "2026-03-04T14:45:00+00:00",
            "time_zone": "Europe/Berlin",
            "location": "Room 2",
            "description": "Slides",
            "status": "confirmed",
            "recurrence": "none",
            "recurrence_count": None,
            "recurrence_until": None,
            "created_at": "2026-03-02T09:00:00+00:00",
            "updated_at": "2026-03-02T09:00:00+00:00",
        }
    ]
    assert responses(ws, 5) == {BO: "needs_action", DI: "needs_action"}
    assert ws.clock.now_text() == "2026-03-02T09:01:00+00:00"


async def test_create_event_takes_offsets_as_given_and_stores_the_named_time_zone(cal: Calendar) -> None:
    result = await cal(
        "create_event",
        {
            "title": "Call",
            "start": "2026-03-10T15:00:00+01:00",
            "end": "2026-03-10T16:00:00+01:00",
            "time_zone": "America/New_York",
        },
    )
    assert (result["start"], result["time_zone"], result["start_local"], result["attendees"]) == (
        "2026-03-10T14:00:00+00:00",
        "America/New_York",
        "2026-03-10T10:00:00-04:00",
        [],
    )


async def test_create_event_weekly_until_a_date_keeps_local_time_across_daylight_saving(
    ws: Workspace,
    cal: Calendar,
) -> None:
    result = await cal(
        "create_event",
        {
            "title": "Sync",
            "start": "2026-03-20T09:00",
            "end": "2026-03-20T09:15",
            "recurrence": "weekly",
            "recurrence_until": "2026-04-03",
        },
    )
    assert result["recurrence"] == {
        "frequency": "weekly",
        "count": None,
        "until": "2026-04-03",
        "cancelled_occurrences": [],
    }
    assert await titles(cal, "2026-03-01", "2026-05-01", query="sync") == [
        ("Sync", "2026-03-20T08:00:00+00:00", "confirmed"),
        ("Sync", "2026-03-27T08:00:00+00:00", "confirmed"),
        ("Sync", "2026-04-03T07:00:00+00:00", "confirmed"),
    ]
    assert ws.rows("calendar_events", "id = 5")[0]["recurrence_until"] == "2026-04-03"


async def test_create_event_weekly_without_an_end_repeats_in_every_listed_week(cal: Calendar) -> None:
    result = await cal(
        "create_event",
        {"title": "1:1", "start": "2026-03-06T10:00", "end": "2026-03-06T10:30", "recurrence": "weekly"},
    )
    assert result["recurrence"] == {
        "frequency": "weekly",
        "count": None,
        "until": None,
        "cancelled_occurrences": [],
    }
    starts = [s for _, s, _ in await titles(cal, "2026-05-01", "2026-06-01", query="1:1")]
    assert starts == [
        "2026-05-01T08:00:00+00:00",
        "2026-05-08T08:00:00+00:00",
        "2026-05-15T08:00:00+00:00",
        "2026-05-22T08:00:00+00:00",
        "2026-05-29T08:00:00+00:00",
    ]


async def test_create_event_weekly_with_a_count(cal: Calendar) -> None:
    await cal(
        "create_event",
        {
            "title": "Demo",
            "start": "2026-03-03T16:00",
            "end": "2026-03-03T16:30",
            "recurrence": "weekly",
            "recurrence_count": 2,
        },
    )
    assert [s for _, s, _ in await titles(cal, "2026-03-01", "2026-04-01", query="demo")] == [
        "2026-03-03T15:00:00+00:00",
        "2026-03-10T15:00:00+00:00",
    ]


GOOD = {"title": "X", "start": "2026-03-04T15:00", "end": "2026-03-04T16:00"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"end": "2026-03-04T14:00"}, "end 2026-03-04T13:00:00+00:00 must be after start 2026-03-04T14:00:00+00:00"),
        (
            {"end": "2026-03-05T16:00"},
            "an event lasts at most 24 hours; split longer stretches into several events",
        ),
        (
            {"start": "2026-03-02T09:00", "end": "2026-03-02T09:30"},
            "start '2026-03-02T09:00' is in the past (it is now 2026-03-02T09:00:00+00:00); pick a later time",
        ),
        (
            {"attendees": [BO, "zed@acme.example"]},
            "no person with email 'zed@acme.example' in the directory; use the directory's search_people to "
            "find the right address",
        ),
        ({"attendees": ["zed"]}, "'zed' is not an email address; use the form name@company.example"),
        (
            {"start": "2026-03-29T02:30", "end": "2026-03-29T03:30"},
            "start 2026-03-29T02:30:00 does not exist in Europe/Berlin (the clocks skip it for daylight saving "
            "time); pick another time",
        ),
        ({"start": "4 March 3pm"}, "start '4 March 3pm' is not an ISO 8601 time; e.g. 2026-03-02T14:30:00+01:00, "
         "or 2026-03-02T14:30 together with time_zone"),
        (
            {"time_zone": "CET+1"},
            "unknown time zone 'CET+1'; use an IANA name such as Europe/Berlin, America/New_York or UTC",
        ),
        ({"recurrence_count": 3}, "recurrence_count and recurrence_until need recurrence='weekly'"),
        (
            {"recurrence": "weekly", "recurrence_count": 3, "recurrence_until": "2026-04-01"},
            "give either recurrence_count or recurrence_until, not both",
        ),
        (
            {"recurrence": "weekly", "recurrence_until": "2026-03-01"},
            "recurrence_until 2026-03-01 is before the first occurrence on 2026-03-04",
        ),
        (
            {"recurrence": "weekly", "recurrence_until": "31/03/2026"},
            "recurrence_until '31/03/2026' is not a date; use YYYY-MM-DD, e.g. 2026-03-31",
        ),
        ({"title": "   "}, "title must not be blank"),
    ],
)  # fmt: skip
async def test_create_event_explains_bad_input_and_writes_nothing(
    ws: Workspace, cal: Calendar, args: dict[str, Any], message: str
) -> None:
    before = ws.content_hash()
    assert await cal("create_event", {**GOOD, **args}) == error("create_event", message)
    assert ws.content_hash() == before


async def test_create_event_schema_rejects_a_one_time_series(ws: Workspace, cal: Calendar) -> None:
    kind, text = await cal("create_event", {**GOOD, "recurrence": "weekly", "recurrence_count": 1})
    assert kind == "error" and "recurrence_count" in text and "greater than or equal to 2" in text
    assert len(ws.rows("calendar_events")) == 4


# -- update_event ------------------------------------------------------------------------------


async def test_update_event_changes_text_and_keeps_responses(ws: Workspace, cal: Calendar) -> None:
    result = await cal("update_event", {"event_id": 2, "title": "Q2 planning", "location": "Room 3"})
    assert (result["title"], result["location"], result["description"], result["start"]) == (
        "Q2 planning",
        "Room 3",
        "Q2 plan",
        "2026-03-03T09:00:00+00:00",
    )
    assert responses(ws, 2) == {BO: "accepted", DI: "tentative"}
    assert ws.rows("calendar_events", "id = 2")[0]["updated_at"] == "2026-03-02T09:00:00+00:00"


async def test_update_event_moving_keeps_the_duration_and_asks_attendees_again(
    ws: Workspace, cal: Calendar
) -> None:
    result = await cal("update_event", {"event_id": 2, "start": "2026-03-03T14:00"})
    assert (result["start"], result["end"], result["start_local"]) == (
        "2026-03-03T13:00:00+00:00",
        "2026-03-03T14:00:00+00:00",
        "2026-03-03T14:00:00+01:00",
    )
    assert responses(ws, 2) == {BO: "needs_action", DI: "needs_action"}


async def test_update_event_end_only_lengthens_the_meeting(cal: Calendar) -> None:
    result = await cal("update_event", {"event_id": 2, "end": "2026-03-03T11:30"})
    assert (result["start"], result["end"]) == ("2026-03-03T09:00:00+00:00", "2026-03-03T10:30:00+00:00")


async def test_update_event_time_zone_alone_keeps_the_instant_and_the_responses(
    ws: Workspace, cal: Calendar
) -> None:
    result = await cal("update_event", {"event_id": 2, "time_zone": "Europe/London"})
    assert (result["start"], result["time_zone"], result["start_local"]) == (
        "2026-03-03T09:00:00+00:00",
        "Europe/London",
        "2026-03-03T09:00:00+00:00",
    )
    assert responses(ws, 2) == {BO: "accepted", DI: "tentative"}


async def test_update_event_adds_and_removes_attendees(cal: Calendar) -> None:
    result = await cal(
        "update_event",
        {"event_id": 2, "add_attendees": ["CY@acme.example", BO, ME], "remove_attendees": [DI]},
    )
    assert result["attendees"] == [
        {"email": BO, "response": "accepted"},
        {"email": CY, "response": "needs_action"},
    ]


async def test_update_event_moves_a_whole_series(cal: Calendar) -> None:
    await cal(
        "create_event",
        {
            "title": "Sync",
            "start": "2026-03-05T09:00",
            "end": "2026-03-05T09:30",
            "recurrence": "weekly",
            "recurrence_count": 2,
        },
    )
    await cal("update_event", {"event_id": 5, "start": "2026-03-05T11:00"})
    assert [s for _, s, _ in await titles(cal, "2026-03-01", "2026-04-01", query="sync")] == [
        "2026-03-05T10:00:00+00:00",
        "2026-03-12T10:00:00+00:00",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"event_id": 1, "title": "Mine now"},
            "only the organizer (bo@acme.example) can change event 1; you are me@acme.example. As an attendee, "
            "use respond_to_invite; or ask the organizer by mail.",
        ),
        ({"event_id": 3, "title": "Back"}, "event 3 ('Old review') is cancelled; create a new event instead"),
        ({"event_id": 99, "title": "X"}, "no event with id 99; list_events returns valid ids"),
        (
            {"event_id": 2},
            "nothing to change: pass at least one of title, start, end, time_zone, location, description, "
            "add_attendees, remove_attendees",
        ),
        (
            {"event_id": 2, "remove_attendees": [CY]},
            "cy@acme.example is not an attendee of event 2; its attendees are: bo@acme.example, di@globex.example",
        ),
        (
            {"event_id": 2, "add_attendees": [DI], "remove_attendees": [DI]},
            "di@globex.example is in both add_attendees and remove_attendees",
        ),
        (
            {"event_id": 2, "add_attendees": ["zed@acme.example"]},
            "no person with email 'zed@acme.example' in the directory; use the directory's search_people to "
            "find the right address",
        ),
        (
            {"event_id": 2, "start": "2026-03-01T10:00"},
            "start '2026-03-01T10:00' is in the past (it is now 2026-03-02T09:00:00+00:00); pick a later time",
        ),
        (
            {"event_id": 2, "end": "2026-03-03T09:00"},
            "end 2026-03-03T08:00:00+00:00 must be after start 2026-03-03T09:00:00+00:00",
        ),
        ({"event_id": 2, "title": " "}, "title must not be blank"),
        ({"event_id": 2, "start": "soon"}, "start 'soon' is not an ISO 8601 time; e.g. 2026-03-02T14:30:00+01:00, "
         "or 2026-03-02T14:30 together with time_zone"),
    ],
)  # fmt: skip
async def test_update_event_explains_bad_input_and_writes_nothing(
    ws: Workspace, cal: Calendar, args: dict[str, Any], message: str
) -> None:
    before = ws.content_hash()
    assert await cal("update_event", args) == error("update_event", message)
    assert ws.content_hash() == before


# -- cancel_event ------------------------------------------------------------------------------


async def test_cancel_event_cancels_my_event_for_everyone(cal: Calendar) -> None:
    result = await cal("cancel_event", {"event_id": 2})
    assert (result["status"], result["updated_at"]) == ("cancelled", "2026-03-02T09:00:00+00:00")
    assert await titles(cal, "2026-03-03", "2026-03-04", calendar_email=BO) == []
    assert await titles(cal, "2026-03-03", "2026-03-04", calendar_email=BO, include_cancelled=True) == [
        ("Planning", "2026-03-03T09:00:00+00:00", "cancelled")
    ]
    assert await cal("cancel_event", {"event_id": 2}) == error(
        "cancel_event", "event 2 ('Planning') is cancelled; create a new event instead"
    )


async def test_cancel_event_cancels_one_occurrence_of_my_series(ws: Workspace, cal: Calendar) -> None:
    await cal(
        "create_event",
        {
            "title": "Sync",
            "start": "2026-03-06T09:00",
            "end": "2026-03-06T09:30",
            "recurrence": "weekly",
            "recurrence_count": 3,
        },
    )
    result = await cal("cancel_event", {"event_id": 5, "occurrence_start": "2026-03-13T08:00:00Z"})
    assert (result["status"], result["recurrence"]["cancelled_occurrences"]) == (
        "confirmed",
        ["2026-03-13T08:00:00+00:00"],
    )
    # A time without offset is read in the event's time zone.
    await cal("cancel_event", {"event_id": 5, "occurrence_start": "2026-03-20T09:00"})
    assert ws.rows("calendar_cancelled_occurrences") == [
        {"event_id": 5, "occurrence_index": 1},
        {"event_id": 5, "occurrence_index": 2},
    ]
    assert await titles(cal, "2026-03-01", "2026-04-01", query="sync", include_cancelled=True) == [
        ("Sync", "2026-03-06T08:00:00+00:00", "confirmed"),
        ("Sync", "2026-03-13T08:00:00+00:00", "cancelled"),
        ("Sync", "2026-03-20T08:00:00+00:00", "cancelled"),
    ]
    assert await titles(cal, "2026-03-01", "2026-04-01", query="sync") == [
        ("Sync", "2026-03-06T08:00:00+00:00", "confirmed")
    ]
    assert await cal("cancel_event", {"event_id": 5, "occurrence_start": "2026-03-13T08:00:00Z"}) == error(
        "cancel_event", "the occurrence of event 5 at 2026-03-13T08:00:00+00:00 is already cancelled"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"event_id": 1},
            "only the organizer (bo@acme.example) can cancel event 1; you are me@acme.example. To leave it, "
            "decline it with respond_to_invite.",
        ),
        ({"event_id": 3}, "event 3 ('Old review') is cancelled; create a new event instead"),
        ({"event_id": 0}, "no event with id 0; list_events returns valid ids"),
        (
            {"event_id": 2, "occurrence_start": "2026-03-03T09:00:00Z"},
            "event 2 is not a weekly series; leave occurrence_start out to cancel the event itself",
        ),
        (
            {"event_id": 2, "occurrence_start": "tuesday"},
            "occurrence_start 'tuesday' is not an ISO 8601 time; e.g. 2026-03-02T14:30:00+01:00, or "
            "2026-03-02T14:30 together with time_zone",
        ),
    ],
)
async def test_cancel_event_explains_bad_input_and_writes_nothing(
    ws: Workspace, cal: Calendar, args: dict[str, Any], message: str
) -> None:
    before = ws.content_hash()
    assert await cal("cancel_event", args) == error("cancel_event", message)
    assert ws.content_hash() == before


@pytest.mark.parametrize("when", ["2026-03-13T09:00:00Z", "2026-03-27T08:00:00Z", "2026-02-27T08:00:00Z"])
async def test_cancel_event_names_where_occurrence_starts_come_from(cal: Calendar, when: str) -> None:
    await cal(
        "create_event",
        {
            "title": "Sync",
            "start": "2026-03-06T09:00",
            "end": "2026-03-06T09:30",
            "recurrence": "weekly",
            "recurrence_count": 3,
        },
    )
    shown = when.replace("Z", "+00:00")
    assert await cal("cancel_event", {"event_id": 5, "occurrence_start": when}) == error(
        "cancel_event",
        f"no occurrence of event 5 starts at {shown}; list_events shows each occurrence's occurrence_start",
    )


# -- respond_to_invite ---------------------------------------------------------------------------


async def test_respond_to_invite_records_my_answer(ws: Workspace, cal: Calendar) -> None:
    result = await cal("respond_to_invite", {"event_id": 1, "response": "accepted"})
    assert result["attendees"] == [
        {"email": CY, "response": "declined"},
        {"email": ME, "response": "accepted"},
    ]
    await cal("respond_to_invite", {"event_id": 4, "response": "tentative"})
    assert (responses(ws, 1), responses(ws, 4)) == ({CY: "declined", ME: "accepted"}, {ME: "tentative"})
    assert ws.clock.now_text() == "2026-03-02T09:02:00+00:00"


async def test_respond_to_invite_explains_when_i_cannot_answer(ws: Workspace, cal: Calendar) -> None:
    apply_world_operation(
        ws,
        "calendar",
        "add_event",
        {"organizer_email": BO, "title": "Bo and Cy", "start": "2026-03-04T16:00Z", "end": "2026-03-04T17:00Z",
         "attendees": [CY]},
    )  # fmt: skip
    before = ws.content_hash()
    cases = {
        2: "you organize event 2; attendees respond to it. Use update_event or cancel_event to change it",
        3: "event 3 ('Old review') is cancelled; create a new event instead",
        5: "me@acme.example is not invited to event 5; its attendees are: cy@acme.example",
        7: "no event with id 7; list_events returns valid ids",
    }
    for event_id, message in cases.items():
        result = await cal("respond_to_invite", {"event_id": event_id, "response": "declined"})
        assert result == error("respond_to_invite", message)
    kind, text = await cal("respond_to_invite", {"event_id": 1, "response": "maybe"})
    assert kind == "error" and "'accepted', 'declined' or 'tentative'" in text
    assert ws.content_hash() == before
