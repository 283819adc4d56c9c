"""Validation's variants of objects the reference solution creates: closed or cancelled at
once, or created wrong in one column, they must fail; created and then given a value in a
second call, they must pass."""

from pathlib import Path

from coworkenv.rollout import OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.synth.validation.acceptance import acceptance_variants
from coworkenv.synth.validation.created_mutants import created_mutants
from coworkenv.synth.validation.mutants import mutants
from coworkenv.synth.validation.variants import Variant
from coworkenv.task import load_task
from coworkenv.verifiers import Footprint
from tests.verifiers.test_created import printer_task

EXAMPLES = Path(__file__).resolve().parents[2] / "tasks" / "examples"


async def played(
    variants: list[Variant], cache: SeedCache, footprint: Footprint
) -> list[tuple[str, bool, list[str]]]:
    """(description, success, collateral findings) of each variant, judged against `footprint`."""
    out = []
    for v in variants:
        record = await run_episode(v.task, OraclePolicy(), cache=cache, footprint=footprint)
        assert record.status == "completed", record.error
        assert record.verdict is not None
        out.append((v.description, record.success, record.verdict.collateral))
    return out


async def test_a_created_ticket_wrong_in_any_column_or_closed_at_once_fails() -> None:
    task = load_task(EXAMPLES / "handoff-mail-to-ticket.json")
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    variants = created_mutants(task, cache.fork(task), footprint)
    assert [(v.kind, v.description) for v in variants] == [
        ("created_column", "turns[0].solution[3] (tickets_create_ticket) with another priority"),
        ("created_column", "turns[0].solution[3] (tickets_create_ticket) with another queue"),
        ("created_column", "turns[0].solution[3] (tickets_create_ticket) with another assignee"),
        ("created_column", "turns[0].solution[3] (tickets_create_ticket) with another requester"),
        ("create_then_close", "turns[0].solution[3] (tickets_create_ticket), then resolved at once"),
        ("create_then_close", "turns[0].solution[3] (tickets_create_ticket), then closed at once"),
    ]
    assert {v.kind for v in mutants(task, cache.fork(task), footprint)} >= {
        "created_column",
        "create_then_close",
    }
    results = await played(variants, cache, footprint)
    assert [(success, [f.rsplit(" (", 1)[1] for f in found]) for _, success, found in results] == [
        (False, ["priority 'urgent', expected 'normal')"]),
        (False, ["queue 'Engineering', expected 'Billing')"]),
        (False, ["assignee 'april.snyder@northwind.example', expected None)"]),
        (False, ["requester 'kimberly.smith@northwind.example', expected 'laurie.wallace@initech.example')"]),
        (False, ["status 'resolved', expected 'open')"]),
        (False, ["status 'closed', expected 'open')"]),
    ]


async def test_a_created_event_as_a_series_shorter_later_cancelled_or_retitled_fails() -> None:
    task = printer_task()
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    variants = [v for v in created_mutants(task, cache.fork(task), footprint) if "calendar" in v.description]
    results = await played(variants, cache, footprint)
    assert [(d, s, [f.rsplit("} (", 1)[1] for f in found]) for d, s, found in results] == [
        (
            "turns[0].solution[1] (calendar_create_event) with another recurrence",
            False,
            ["recurrence 'weekly', expected 'none'; recurrence_count 12, expected None)"],
        ),
        (
            "turns[0].solution[1] (calendar_create_event) with another duration_minutes",
            False,
            [
                "end_utc '2026-03-03T10:30:00+00:00', expected '2026-03-03T11:00:00+00:00'; "
                "duration_minutes 30.0, expected 60.0)"
            ],
        ),
        (
            "turns[0].solution[1] (calendar_create_event) with another start_utc",
            False,
            [
                "start_utc '2026-03-03T11:00:00+00:00', expected '2026-03-03T10:00:00+00:00'; "
                "end_utc '2026-03-03T12:00:00+00:00', expected '2026-03-03T11:00:00+00:00')"
            ],
        ),
        (
            "turns[0].solution[1] (calendar_create_event), then cancelled at once",
            False,
            ["status 'cancelled', expected 'confirmed')"],
        ),
    ]


async def test_a_quoted_title_replaced_fails_and_columns_the_task_frees_get_no_variant() -> None:
    task = printer_task(guards={"free": ["calendar_events.start_utc", "tickets_tickets.status"]})
    data = task.model_dump()
    data["turns"][0]["user"] += ' Call the meeting "Printer fix".'
    task = type(task).model_validate(data)
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    variants = created_mutants(task, cache.fork(task), footprint)
    assert [v.description.split(" (", 1)[1].split(" ", 1)[1] for v in variants] == [
        "with another priority",
        "with another queue",
        "with another assignee",
        "with another recurrence",
        "with another duration_minutes",
        "with another title",
        "then cancelled at once",
    ]
    (retitled,) = [v for v in variants if v.description.endswith("title")]
    ((_, success, found),) = await played([retitled], cache, footprint)
    assert (success, found[0].rsplit("} (", 1)[1]) == (False, "title 'Meeting', expected 'Printer fix')")


async def test_a_ticket_created_then_given_its_priority_in_a_second_call_passes() -> None:
    task = printer_task()
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    (variant,) = [
        v for v in acceptance_variants(task, cache.fork(task), footprint) if v.kind == "create_then_set"
    ]
    assert (
        variant.description
        == "turns[0].solution[0] (tickets_create_ticket) without its priority, set in a second call"
    )
    assert [(s.tool, s.arguments) for s in variant.task.turns[0].solution[:2]] == [
        ("tickets_create_ticket", {"title": "Printer on floor 3 is jammed", "queue": "Support"}),
        ("tickets_update_ticket", {"ticket_id": {"$ref": "t.id"}, "priority": "high"}),
    ]
    assert await played([variant], cache, footprint) == [(variant.description, True, [])]


async def test_a_quoted_title_is_not_rewritten_in_other_formats() -> None:
    task = printer_task()
    data = task.model_dump()
    data["turns"][0]["user"] += ' Call the meeting "Printer fix 10:00".'
    data["turns"][0]["solution"][1]["arguments"]["title"] = "Printer fix 10:00"
    data["turns"][0]["solution"][0]["arguments"]["description"] = "Since 09:30."
    task = type(task).model_validate(data)
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    variants = [v for v in acceptance_variants(task, cache.fork(task), footprint) if v.kind == "other_format"]
    # The ticket's own wording is rewritten; the title the user quoted is not.
    assert [(v.description, v.task.turns[0].solution[0].arguments["description"]) for v in variants] == [
        ("turns[0].solution[0] (tickets_create_ticket) texts in other formats", "Since 9:30 am.")
    ]
