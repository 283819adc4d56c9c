"""office_day: a workday across all eight services, with a colleague's silent change in the
CRM, the notes workspace and the spreadsheets; it meets the whole contract on the demo
company and generated worlds, and an agent that misses a silent change fails that request."""

import anyio
import pytest

from coworkenv.rollout import SeedCache
from coworkenv.servers import SERVICE_NAMES
from coworkenv.synth.families.workdays.office_day import CHANGING_SERVICES, silent_change_in
from coworkenv.synth.family import FAMILIES, Difficulty, build_task
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import Task
from coworkenv.worlds import world
from tests.synth.agents import failed, play

CASES = [(0, None), (1, "hospital_admin"), (2, "energy_utility")]


def office(seed: int, profile: str | None) -> Task:
    return build_task(
        "office_day", seed, Difficulty.level(seed % 3), world=world(profile) if profile else None
    )


@pytest.mark.parametrize(("seed", "profile"), CASES)
def test_an_office_day_uses_every_service_and_changes_crm_notes_and_sheets_silently(
    seed: int, profile: str | None
) -> None:
    task = office(seed, profile)
    assert FAMILIES["office_day"].kind == "workday"
    assert task.services == list(SERVICE_NAMES)
    for service in CHANGING_SERVICES:
        assert silent_change_in(task, (service,)), service
    assert len(task.turns) >= 6
    assert office(seed, profile).content_hash == task.content_hash


@pytest.mark.parametrize(("seed", "profile"), CASES)
def test_an_office_day_meets_the_contract(seed: int, profile: str | None) -> None:
    report = anyio.run(lambda: validate_task(office(seed, profile), cache=SeedCache()))
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}
    assert set(report.acceptance_rates().values()) == {1.0}


async def test_skipping_the_turn_after_a_silent_change_fails_only_that_request() -> None:
    task = office(0, None)
    cache = SeedCache()
    record = await play(task, cache)
    assert record.success, record.verdict
    for k, turn in enumerate(task.turns):
        silent = [e for e in turn.events if not e.announced and e.service in CHANGING_SERVICES]
        if not silent or not turn.checks:
            continue
        # the request after the silent change left undone (the families test the stale answers)
        record = await play(task, cache, **{f"turn{k}": []})
        prefix = turn.checks[0].id.split("_", 1)[0] + "_"
        missed = failed(record)
        assert record.success is False and missed
        assert all(c.startswith(prefix) for c in missed), missed
