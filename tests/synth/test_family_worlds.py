"""Families on worlds: a context in any world plants on that world's seed, the task names its
world, and the world-aware family builds a valid task on every profile."""

import anyio
import pytest

import coworkenv.synth.families  # noqa: F401  (registers the families)
from coworkenv.rollout import SeedCache
from coworkenv.rollout.seeding import seed_workspace
from coworkenv.rollout.validation import validate_task
from coworkenv.synth.family import FAMILIES, Difficulty, FamilyContext, SeedDoesNotFit, build_task
from coworkenv.synth.generators import DraftRequest, GenerationError, ProceduralGenerator
from coworkenv.worlds import PROFILES, world, world_from_spec

WORLD_FAMILIES = sorted(name for name, fam in FAMILIES.items() if fam.worlds)
"""The families that take their queues, people and topics from the world (the others assume
the demo company's names and run on it only)."""


def test_the_ticket_families_run_on_worlds() -> None:
    assert {
        "tickets_escalate",
        "tickets_bulk_close_resolved",
        "tickets_route_by_rule",
        "ticket_status_report",
        "tickets_invalid_transition",
    } <= set(WORLD_FAMILIES)


def test_the_default_context_is_the_demo_company_of_its_demo_seed() -> None:
    ctx = FamilyContext("tickets_escalate", 6)
    assert ctx.on_demo and ctx.world == world("northwind", None, 2)
    assert ctx.user.email == ctx.world.user


def test_a_context_in_a_world_plants_on_that_world_and_the_task_names_it() -> None:
    museum = world("museum", 14, 2)
    ctx = FamilyContext("tickets_escalate", 0, world=museum)
    assert not ctx.on_demo and ctx.user.email == museum.user
    customer = ctx.person(internal=False)
    assert customer.email in {p.email for p in museum.contacts}
    operations = [
        {"service": "tickets", "operation": "add_ticket", "params": {"title": "Lost audio guide", "queue": "Bookings", "requester": customer.email}}
    ]  # fmt: skip
    results, planted = ctx.seeded(["tickets", "directory"], operations)
    task = ctx.task(
        capability_id="triage_routing",
        services=["tickets", "directory"],
        operations=operations,
        title="t",
        turns=[{"user": "Close it.", "checks": [{"id": "c", "type": "field_equals", "table": "tickets_tickets", "where": {"id": results[0]["ticket_id"]}, "column": "status", "value": "closed"}]}],
    )  # fmt: skip
    assert task.id == "tickets_escalate-museum-14-2-0"
    assert task.seed.procedural.model_dump() == {
        "name": "world",
        "params": {"profile": "museum", "size": 14, "seed": 2},
    }
    seeded = seed_workspace(task)
    assert (
        seeded.rows("tickets_tickets", "id = ?", [results[0]["ticket_id"]])[0]["title"] == "Lost audio guide"
    )
    assert {r["email"] for r in seeded.rows("directory_people")} == {
        r["email"] for r in planted.rows("directory_people")
    }


def test_the_demo_company_is_never_passed_as_a_world() -> None:
    with pytest.raises(ValueError, match="the demo company is the default world"):
        FamilyContext("tickets_escalate", 0, world=world("northwind"))


@pytest.mark.parametrize("family_name", WORLD_FAMILIES)
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_a_world_family_builds_a_valid_task_on_every_profile(family_name: str, profile: str) -> None:
    """Every family on every profile: the seed loads, the checks are sound, the no-op scores 0,
    the reference solution scores 1 and reads before it writes, twice the same. The mutants
    and right variants of the contract run on three profiles per family (below) and on many
    seeds in each area's tests."""
    task = build_task(family_name, 1, world=world(profile))
    assert task.seed.procedural.name == "world"
    report = anyio.run(lambda: validate_task(task, cache=SeedCache(), run_mutants=False))
    assert report.ok, report.summary()


def _three_profiles(family_name: str) -> list[str]:
    """Three profiles per family, different for neighbouring families, so that together the
    families' full contracts go round every profile."""
    names = sorted(PROFILES)
    start = 3 * WORLD_FAMILIES.index(family_name)
    return [names[(start + k) % len(names)] for k in range(3)]


@pytest.mark.parametrize(
    ("family_name", "profile"), [(f, p) for f in WORLD_FAMILIES for p in _three_profiles(f)]
)
def test_a_world_family_meets_the_whole_contract(family_name: str, profile: str) -> None:
    task = build_task(family_name, 1, world=world(profile))
    report = anyio.run(lambda: validate_task(task, cache=SeedCache()))
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}
    assert set(report.acceptance_rates().values()) == {1.0}


async def test_a_draw_that_does_not_fit_its_world_is_a_spent_round_not_a_crash() -> None:
    # On this world a seed ticket of the front queue falls in the task's three-hour window,
    # which would make "the last three hours of tickets" ambiguous: the family says so, and
    # the generator answers with a round's error (the next round draws another seed).
    request = DraftRequest(
        slot=35,
        capability="triage_routing",
        variant=2,
        difficulty=2,
        seed=11,
        family="tickets_route_by_rule",
        world="marketing_agency:14:166",
    )
    with pytest.raises(SeedDoesNotFit, match="fall in the task's three-hour window"):
        build_task(
            "tickets_route_by_rule",
            11002,
            Difficulty.level(2),
            world=world_from_spec("marketing_agency:14:166"),
        )
    with pytest.raises(
        GenerationError, match=r"family 'tickets_route_by_rule' on seed 11002: .*; drawing again"
    ):
        await ProceduralGenerator().draft(request, None, None, 0)
