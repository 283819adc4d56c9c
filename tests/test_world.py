"""The world model: validation names what is inconsistent, the hash follows the content."""

from typing import Any

import pytest
from pydantic import ValidationError

from coworkenv.world import World, WorldFileError, parse_world
from coworkenv.worlds import northwind

NORTHWIND = northwind(0)


def _data() -> dict[str, Any]:
    return NORTHWIND.model_dump(mode="json")


def _error(data: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as info:
        World.model_validate(data)
    return str(info.value)


def test_the_demo_company_is_a_valid_world_with_its_user_and_teams() -> None:
    assert NORTHWIND.name == "Northwind" and NORTHWIND.profile == "northwind"
    assert NORTHWIND.user == "kimberly.smith@northwind.example"
    assert NORTHWIND.team_names == ("Leadership", "Engineering", "Sales", "Support", "Finance")
    assert [q.name for q in NORTHWIND.queues] == ["Support", "Billing", "Engineering", "IT"]
    assert (len(NORTHWIND.staff), len(NORTHWIND.contacts), len(NORTHWIND.documents)) == (18, 8, 40)


def test_a_world_round_trips_through_json_with_the_same_content_hash() -> None:
    again = parse_world(NORTHWIND.model_dump_json())
    assert again == NORTHWIND and again.content_hash == NORTHWIND.content_hash
    assert northwind(1).content_hash != NORTHWIND.content_hash


def test_repeated_emails_are_named() -> None:
    data = _data()
    data["people"][1]["email"] = data["people"][0]["email"]
    assert f"emails must be unique; repeated: {data['people'][0]['email']}" in _error(data)


def test_a_manager_who_is_not_a_colleague_is_named() -> None:
    data = _data()
    data["people"][3]["manager_email"] = "ghost@northwind.example"
    assert f"{data['people'][3]['email']}: manager 'ghost@northwind.example' is not a colleague" in _error(
        data
    )


def test_an_unknown_time_zone_is_refused() -> None:
    data = _data()
    data["people"][0]["time_zone"] = "Mars/Olympus"
    assert "unknown time zone 'Mars/Olympus'" in _error(data)
    data = _data()
    data["offices"]["Moon/Base"] = "Crater room"
    assert "offices: unknown time zone 'Moon/Base'" in _error(data)


def test_a_team_without_people_is_refused() -> None:
    data = _data()
    data["teams"].append({"name": "Legal", "purpose": "Contracts.", "lead": data["user"]})
    message = _error(data)
    assert "team 'Legal' has no people" in message


def test_a_queue_needs_an_owner_who_is_a_colleague() -> None:
    data = _data()
    contact = next(p["email"] for p in data["people"] if not p["internal"])
    data["queues"][0]["owner"] = contact
    assert f"queue 'Support': owner {contact!r} is not a colleague" in _error(data)


def test_a_lead_must_be_a_member_of_their_team_and_queues_name_known_teams() -> None:
    data = _data()
    data["teams"][1]["lead"] = data["user"]
    data["queues"][1]["teams"] = ["Accounting"]
    message = _error(data)
    assert f"team 'Engineering': lead {data['user']!r} is not a member" in message
    assert "queue 'Billing': unknown teams ['Accounting']" in message


def test_a_world_file_that_is_not_a_world_names_the_json_path() -> None:
    with pytest.raises(WorldFileError, match=r"w\.json: not a valid world:\n  currency: String should match"):
        parse_world(NORTHWIND.model_dump_json().replace('"EUR"', '"euro"', 1), source="w.json")
