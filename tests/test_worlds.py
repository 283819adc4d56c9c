"""Procedural worlds: 30 industry profiles that differ in substance, sizes 8 to 300,
deterministic, and every service's seed data rendered from the world's own topics."""

import json
import re
from itertools import combinations
from pathlib import Path

import pytest

from coworkenv.servers.render import northwind_workspace, render_workspace
from coworkenv.world import save_world
from coworkenv.worlds import (
    PROFILES,
    UnknownWorldError,
    generate_world,
    profile_names,
    world,
    world_from_spec,
)

PLACEHOLDER = re.compile(r"\{[a-z_]*\}|<[a-z' ]+>")


def _pattern(template: str) -> str:
    """A topic title as a pattern: each placeholder matches any filled-in value."""
    return re.sub(r"\\\{[a-z]+\\\}", ".+", re.escape(template))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b)


def test_there_are_at_least_30_profiles_and_the_demo_company_comes_first() -> None:
    assert len(PROFILES) >= 30
    assert profile_names()[0] == "northwind" and profile_names()[1:] == sorted(PROFILES)


@pytest.mark.parametrize(
    "part",
    [
        lambda w: {t.name for t in w.teams},
        lambda w: {q.name for q in w.queues},
        lambda w: {t.title for q in w.queues for t in q.topics},
        lambda w: {d.path for d in w.documents},
        lambda w: set(w.house_rules),
        lambda w: set(w.vocabulary.updates),
        lambda w: {p.title for p in w.staff},
    ],
    ids=["teams", "queues", "ticket topics", "folder layout", "house rules", "vocabulary", "titles"],
)
def test_profiles_differ_in_substance_not_only_in_names(part) -> None:  # type: ignore[no-untyped-def]
    worlds = [world(name) for name in PROFILES]
    worst = max(_jaccard(part(a), part(b)) for a, b in combinations(worlds, 2))
    assert worst < 0.6


@pytest.mark.parametrize("size", [8, 300])
def test_a_world_has_exactly_the_colleagues_asked_for_and_every_team_has_people(size: int) -> None:
    for name in ("law_firm", "telecom", "public_library"):
        built = world(name, size)
        assert len(built.staff) == size
        assert all(built.team_members(t.name) for t in built.teams)
        assert built.user_person.team == PROFILES[name].user_team


def test_sizes_outside_8_to_300_are_refused_with_the_range() -> None:
    with pytest.raises(ValueError, match="a world has 8 to 300 colleagues; got 7"):
        generate_world(PROFILES["law_firm"], 7)
    with pytest.raises(ValueError, match="got 301"):
        world("telecom", 301)


def test_people_sit_in_the_zones_their_profile_names() -> None:
    council = world("city_council", 60)
    assert {p.time_zone for p in council.staff} == {"America/Chicago"}
    bank = world("bank_operations", 120)
    assert {p.time_zone for p in bank.staff} == {"Europe/London", "America/New_York", "Asia/Singapore"}
    assert bank.headquarters_time_zone == "Europe/London"


def test_the_same_parameters_give_the_same_world_and_the_same_state_hash() -> None:
    first = generate_world(PROFILES["hospital_admin"], 40, 3)
    again = generate_world(PROFILES["hospital_admin"], 40, 3)
    assert first == again and first.content_hash == again.content_hash
    assert render_workspace(first).content_hash() == render_workspace(again).content_hash()
    other = generate_world(PROFILES["hospital_admin"], 40, 4)
    assert other.content_hash != first.content_hash
    assert {p.email for p in other.staff} != {p.email for p in first.staff}


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_renders_every_service_from_its_own_topics(name: str) -> None:
    built = world(name)
    ws = render_workspace(built)
    assert ws.meta("user_email") == built.user
    people = {r["email"] for r in ws.rows("directory_people")}
    assert people == {p.email for p in built.people}
    tickets = ws.rows("tickets_tickets")
    assert len(tickets) == sum(q.tickets for q in built.queues)
    assert {t["queue"] for t in tickets} == {q.name for q in built.queues}
    titles = {q.name: [_pattern(t.title) for t in q.topics] for q in built.queues}
    for ticket in tickets:
        assert any(re.fullmatch(p, ticket["title"]) for p in titles[ticket["queue"]]), ticket["title"]
    files = {r["path"] for r in ws.rows("files_nodes", "kind = 'file'")}
    assert files == {d.path for d in built.documents}
    assert len(ws.rows("mail_messages")) == 200
    assert ws.rows("calendar_events")
    texts = [t["title"] + t["description"] for t in tickets]
    texts += [m["subject"] + m["body"] for m in ws.rows("mail_messages")]
    texts += [r["content"] for r in ws.rows("files_nodes", "kind = 'file'")]
    leaked = [t for t in texts if PLACEHOLDER.search(t) and "{customer_name}" not in t]
    assert leaked == []
    assert ws.integrity_check() == "ok"


def test_a_world_is_named_by_a_spec_or_a_file(tmp_path: Path) -> None:
    assert world_from_spec("law_firm:12:2") == generate_world(PROFILES["law_firm"], 12, 2)
    assert world_from_spec("northwind") == world("northwind")
    path = tmp_path / "w.json"
    save_world(world("museum", 20, 1), path)
    assert world_from_spec(str(path)) == world("museum", 20, 1)
    assert json.loads(path.read_text())["profile"] == "museum"
    with pytest.raises(
        UnknownWorldError, match="no world profile 'moon_base'; known: northwind, accounting_firm"
    ):
        world_from_spec("moon_base")
    with pytest.raises(UnknownWorldError, match="NAME\\[:SIZE\\[:SEED\\]\\]"):
        world_from_spec("law_firm:big")
    with pytest.raises(ValueError, match="the northwind world has 18 colleagues; it takes no other size"):
        world("northwind", 40)


def test_the_northwind_world_renders_the_northwind_workspace() -> None:
    assert render_workspace(world("northwind", None, 2), task_id="demo-2").content_hash() == (
        northwind_workspace(seed=2).content_hash()
    )
