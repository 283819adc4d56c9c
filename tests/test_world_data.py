"""The worlds shipped as data: the profile files and Northwind's world file. Each file is
validated with errors that name it and the JSON path, and what they give is pinned by
content hash: moving a profile or the demo company between formats changes no world."""

import json
from importlib.resources import files
from pathlib import Path

import pytest

from coworkenv.world import World, parse_world
from coworkenv.worlds import (
    PROFILES,
    ProfileFileError,
    ProfileFolder,
    generate_world,
    load_profile,
    northwind,
    world,
)

PROFILE_FILES = Path(str(files("coworkenv.worlds") / "profiles"))
NORTHWIND_FILE = files("coworkenv.worlds") / "northwind.json"

PINNED = {
    ("northwind", None, 0): "f4f4e2e6b9861ea5e2ff42c69236635967f85d32f9a1b3c2530bcb60dce1fd60",
    ("northwind", None, 1): "b0a01070d0cdc0b826126226ca874400a28c07e1b192bc2fbdd8bcddb0dc4d3e",
    ("northwind", None, 3): "b9dae853dd71db310b7988f6f10afd95878d32ffbe898f063446f9dffadbdd40",
    ("law_firm", None, 0): "6c6bf54e39f05df8e7c851778b68f7fa337d61384a26a61547170b1fdb949750",
    ("telecom", 8, 3): "97835c3b952bbb26c20c03fb4c023f3555442132d47bcd0695538b9c7d6b3f52",
}


@pytest.mark.parametrize("name, size, seed", list(PINNED), ids=lambda v: str(v))
def test_a_world_has_its_pinned_content_hash(name: str, size: int | None, seed: int) -> None:
    assert world(name, size, seed).content_hash == PINNED[(name, size, seed)]


def test_every_profile_file_is_read_by_its_key() -> None:
    keys = sorted(p.stem for p in PROFILE_FILES.glob("*.json"))
    assert len(keys) == 30 and list(PROFILES) == keys
    for key in keys:
        assert load_profile(PROFILE_FILES / f"{key}.json") == PROFILES[key]


def _law_firm(tmp_path: Path, change: dict, key: str = "law_firm") -> Path:
    data = json.loads((PROFILE_FILES / "law_firm.json").read_text()) | change
    path = tmp_path / f"{key}.json"
    path.write_text(json.dumps(data))
    return path


def test_a_profile_file_elsewhere_generates_the_same_world(tmp_path: Path) -> None:
    profile = load_profile(_law_firm(tmp_path, {}))
    assert generate_world(profile, 12, 2).model_dump_json() == world("law_firm", 12, 2).model_dump_json()


def _refused(path: Path) -> list[str]:
    """The lines of the error reading the profile file at `path`."""
    with pytest.raises(ProfileFileError) as info:
        load_profile(path)
    return str(info.value).split("\n  ")


def test_a_field_of_the_wrong_kind_is_named_by_file_and_json_path(tmp_path: Path) -> None:
    data = json.loads((PROFILE_FILES / "law_firm.json").read_text())
    data["queues"][1]["requested_by"] = "partners"
    del data["contact_titles"]
    path = tmp_path / "law_firm.json"
    path.write_text(json.dumps(data))
    assert _refused(path) == [
        f"{path}: not a valid profile:",
        "queues.1.requested_by: Input should be 'customers' or 'colleagues'",
        "contact_titles: Field required",
    ]


def test_teams_a_profile_does_not_have_are_named(tmp_path: Path) -> None:
    path = _law_firm(tmp_path, {"user_team": "Tax", "roles": {"finance": "Accounts"}})
    assert _refused(path)[1] == (
        "(profile): Value error, user_team 'Tax' is not one of the teams; role 'finance': unknown team 'Accounts'"
    )


def test_a_time_zone_and_hours_out_of_order_are_refused(tmp_path: Path) -> None:
    path = _law_firm(tmp_path, {"zones": ["Europe/London", "Europe/Atlantis"]})
    assert _refused(path)[1:] == [
        "zones.1: Value error, unknown time zone 'Europe/Atlantis'; use an IANA name such as 'Europe/Berlin'"
    ]
    path = _law_firm(tmp_path, {"hours": [17, 9]})
    assert _refused(path)[1:] == [
        "(profile): Value error, hours must start before they end, between 1 and 22; got 17-9"
    ]


def test_text_that_is_not_json_is_refused_with_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "law_firm.json"
    path.write_text('{"key": "law_firm",')
    lines = _refused(path)
    assert lines[0] == f"{path}: not a valid profile:" and lines[1].startswith("(profile): Invalid JSON")


def test_a_folder_refuses_a_profile_filed_under_another_key(tmp_path: Path) -> None:
    path = _law_firm(tmp_path, {}, key="solicitors")
    with pytest.raises(ProfileFileError) as info:
        dict(ProfileFolder(tmp_path))
    assert str(info.value) == f"{path}: key 'law_firm' differs from the file name"


def test_northwind_at_seed_0_is_its_world_file_as_written() -> None:
    written = parse_world(NORTHWIND_FILE.read_bytes())
    assert northwind(0).model_dump_json() == written.model_dump_json()


def test_another_seed_draws_new_people_into_the_same_places() -> None:
    first, other = northwind(0), northwind(3)
    people = ("people", "user", "teams", "queues", "seed")
    assert other.model_dump(exclude=set(people)) == first.model_dump(exclude=set(people))
    assert [(p.title, p.team, p.company) for p in other.people] == [
        (p.title, p.team, p.company) for p in first.people
    ]
    assert not {p.name for p in other.people} & {p.name for p in first.people}
    # the same places: the user, every lead, queue owner and manager hold the same titles
    assert other.user_person.title == first.user_person.title == "Support Lead"

    def places(w: World) -> list[list[str | None]]:
        title = {p.email: p.title for p in w.people}
        return [
            [title[t.lead] for t in w.teams],
            [title[q.owner] for q in w.queues],
            [p.manager_email and title[p.manager_email] for p in w.people],
        ]

    assert places(other) == places(first)
