"""The plan of a synthesis run: kinds by the mix, capabilities and families of each kind, and
worlds for the families that run on every world."""

from collections import Counter

import pytest

from coworkenv.synth import plan
from coworkenv.synth.family import FAMILIES, Family
from coworkenv.synth.plan import (
    DEFAULT_MIX,
    DEFAULT_WORLDS,
    Mix,
    PlanError,
    kind_sequence,
    parse_mix,
    plan_requests,
    world_plan,
)
from coworkenv.worlds import PROFILES


def _unused(ctx: object) -> object:
    raise AssertionError("planning never builds a task")


def fake(name: str, capability: str, kind: str, worlds: bool) -> Family:
    return Family(name, capability, ("tickets",), kind != "single", _unused, worlds, kind)


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two capabilities: triage with a world-ready and a demo-only family, state changes with
    a multi-turn family and a workday, both world-ready."""
    families = [
        fake("route_anywhere", "triage_routing", "single", True),
        fake("label_on_demo", "triage_routing", "single", False),
        fake("two_turns", "state_change_adaptation", "multi", True),
        fake("a_day", "state_change_adaptation", "workday", True),
    ]
    monkeypatch.setattr(plan, "FAMILIES", {f.name: f for f in families})


def test_the_world_list_starts_with_the_demo_company_and_goes_round_every_profile() -> None:
    assert world_plan(4, 0) == [
        "northwind",
        "retail_chain:14:956",
        "law_firm:19:474",
        "architecture_studio:64:437",
    ]
    worlds = world_plan(61, 0)
    assert worlds[:4] == world_plan(4, 0)
    profiles = [w.split(":")[0] for w in worlds[1:]]
    assert sorted(profiles[:30]) == sorted(PROFILES) == sorted(profiles[30:])
    sizes = [int(w.split(":")[1]) for w in worlds[1:]]
    assert (min(sizes), max(sizes)) == (8, 262)
    assert sum(s < 25 for s in sizes) == 23 and sum(s > 100 for s in sizes) == 19
    assert len(set(worlds)) == 61
    assert world_plan(4, 1) == ["northwind", "school_district:13:557", "museum:18:45", "hotel_group:65:889"]


def test_a_world_list_needs_at_least_the_demo_company() -> None:
    with pytest.raises(PlanError, match=r"^--worlds must be at least 1; got 0$"):
        world_plan(0, 0)


def test_every_prefix_of_the_kinds_keeps_the_mix() -> None:
    shares = {"single": 0.40, "multi": 0.35, "workday": 0.25}
    kinds = kind_sequence(20, shares)
    assert kinds[:10] == [
        "single", "multi", "workday", "single", "multi", "workday", "single", "multi", "single", "multi",
    ]  # fmt: skip
    assert Counter(kinds) == {"single": 8, "multi": 7, "workday": 5}
    assert Counter(kind_sequence(100, shares)) == {"single": 40, "multi": 35, "workday": 25}


@pytest.mark.usefixtures("registry")
def test_slots_take_a_kind_then_a_capability_and_family_of_it_and_world_ready_ones_a_world() -> None:
    requests = plan_requests(
        8,
        ["triage_routing", "state_change_adaptation"],
        seed=3,
        mix=parse_mix("single=2,multi=1,workday=1"),
        worlds=3,
    )
    assert [(r.slot, r.kind, r.family, r.world, r.variant, r.difficulty, r.seed) for r in requests] == [
        (0, "single", "label_on_demo", "northwind", 0, 0, 3),
        (1, "multi", "two_turns", "housing_association:13:306", 0, 0, 3),
        (2, "workday", "a_day", "recruitment_agency:30:481", 0, 0, 3),
        (3, "single", "route_anywhere", "northwind", 1, 1, 3),
        (4, "single", "label_on_demo", "northwind", 2, 1, 3),
        (5, "multi", "two_turns", "housing_association:13:306", 1, 1, 3),
        (6, "workday", "a_day", "recruitment_agency:30:481", 1, 1, 3),
        (7, "single", "route_anywhere", "northwind", 3, 2, 3),
    ]
    assert world_plan(3, 3) == ["northwind", "housing_association:13:306", "recruitment_agency:30:481"]


@pytest.mark.usefixtures("registry")
def test_one_world_keeps_every_slot_on_the_demo_company_and_an_llm_plan_names_no_family_or_world() -> None:
    caps = ["triage_routing", "state_change_adaptation"]
    assert {r.world for r in plan_requests(6, caps, seed=0, worlds=1)} == {"northwind"}
    llm = plan_requests(6, caps, seed=0, worlds=50, families=False)
    assert [(r.kind, r.capability, r.family, r.world) for r in llm[:3]] == [
        ("single", "triage_routing", None, None),
        ("multi", "state_change_adaptation", None, None),
        ("single", "triage_routing", None, None),
    ]


@pytest.mark.usefixtures("registry")
def test_a_mix_that_asks_for_a_kind_no_requested_capability_has_is_refused() -> None:
    with pytest.raises(PlanError) as caught:
        plan_requests(4, ["triage_routing"], seed=0, mix=parse_mix("single=0.5,workday=0.5"))
    assert str(caught.value) == (
        "the mix gives workday tasks 50% of the slots, but no family of the requested capabilities "
        "(triage_routing) is workday; their families by kind: single: label_on_demo, route_anywhere; "
        "multi: none; workday: none; set workday=0 or request a capability that has one"
    )


@pytest.mark.usefixtures("registry")
def test_the_default_mix_gives_a_missing_kind_s_share_to_the_nearest_kind_that_has_families(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Counter(r.kind for r in plan_requests(10, ["triage_routing"], seed=0)) == {"single": 10}
    del plan.FAMILIES["a_day"]
    kinds = Counter(r.kind for r in plan_requests(10, ["triage_routing", "state_change_adaptation"], seed=0))
    assert kinds == {"single": 6, "multi": 4}
    assert Mix({"single": 0.60, "multi": 0.20, "workday": 0.20}, strict=False) == DEFAULT_MIX


def test_a_mix_is_read_as_weights_of_named_kinds() -> None:
    assert parse_mix("single=0.40,multi=0.35,workday=0.25") == Mix(
        {"single": 0.40, "multi": 0.35, "workday": 0.25}
    )
    assert parse_mix(" single = 3 , multi = 1 ") == Mix({"single": 0.75, "multi": 0.25, "workday": 0.0})
    assert parse_mix("single=3,multi=1").text() == "single=0.75,multi=0.25,workday=0"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("single", "--mix takes KIND=SHARE pairs separated by commas; got 'single'"),
        ("solo=1", "--mix: unknown kind 'solo'; kinds: single, multi, workday"),
        ("single=1,single=2", "--mix names 'single' twice"),
        ("multi=lots", "--mix: the share of multi must be a number; got 'lots'"),
        ("multi=-1", "--mix: the share of multi must be 0 or more; got -1"),
        ("single=0,multi=0", "--mix: at least one share must be above 0"),
    ],
)
def test_a_bad_mix_is_refused_with_what_to_write(text: str, message: str) -> None:
    with pytest.raises(PlanError) as caught:
        parse_mix(text)
    assert str(caught.value) == message


def test_with_the_registry_as_it_is_only_world_ready_families_leave_the_demo_company() -> None:
    requests = plan_requests(200, None, seed=0, worlds=50)
    ready = [r.world for r in requests if r.family is not None and FAMILIES[r.family].worlds]
    assert ready == (([*world_plan(50, 0)[1:], "northwind"]) * 5)[: len(ready)]
    assert {r.world for r in requests if r.family is not None and not FAMILIES[r.family].worlds} <= {
        "northwind"
    }
    assert {r.kind for r in requests} == {"single", "multi", "workday"} & {f.kind for f in FAMILIES.values()}
    assert sum(r.kind != "single" for r in requests) == 80
    assert len({r.world for r in requests}) == 50


def test_a_default_plan_of_100_slots_reaches_every_industry_and_one_of_200_every_world() -> None:
    for count in (100, 200):
        requests = plan_requests(count, None, seed=0, worlds=DEFAULT_WORLDS)
        worlds = {r.world for r in requests}
        industries = {PROFILES[w.split(":")[0]].industry if w != "northwind" else w for w in worlds if w}
        assert (len(worlds), len(industries)) == (50, 31)
        assert sum(r.kind != "single" for r in requests) == count * 2 // 5


def test_a_procedural_workday_slot_may_use_every_service() -> None:
    from coworkenv.servers import SERVICE_NAMES

    requests = plan_requests(30, None, 0, worlds=5)
    days = [r for r in requests if r.kind == "workday"]
    assert days and all(r.services == list(SERVICE_NAMES) for r in days)
    assert all(r.services is None for r in requests if r.kind != "workday")
    assert all(r.services is None for r in plan_requests(30, None, 0, families=False))
