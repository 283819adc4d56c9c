"""Right variants where an assistant does the work differently from the reference: a second
internal note, ticket references in other forms, independent writes in another order,
candidates read before asking. Each is produced for a fitting task and passes."""

from pathlib import Path

from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.synth.validation.acceptance import acceptance_variants
from coworkenv.synth.validation.assistant_variants import (
    NOTE,
    candidates_read_first,
    reordered,
    second_notes,
    ticket_id_forms,
    with_ticket_form,
)
from coworkenv.task import Task, load_task
from tests.rollout.test_created_variants import played
from tests.verifiers.test_guards import MOVE, REPLY, escalation_task, with_steps

EXAMPLES = Path(__file__).resolve().parents[2] / "tasks" / "examples"


def calls(task: Task, turn: int = 0) -> list[tuple[str, dict[str, object]]]:
    return [(s.tool, s.arguments) for s in task.turns[turn].solution]


async def accepted(task: Task, kind: str) -> list[tuple[str, bool, list[str]]]:
    """(description, success, collateral) of each acceptance variant of `kind`, as validation
    produces and judges them."""
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    variants = [v for v in acceptance_variants(task, cache.fork(task), footprint) if v.kind == kind]
    return await played(variants, cache, footprint)


async def test_an_internal_note_on_each_ticket_the_reference_touches_passes() -> None:
    task = load_task(EXAMPLES / "clarification-which-ticket.json")
    (variant,) = second_notes(task)
    assert variant.description == "an internal note on the ticket of turns[0].solution[2]"
    assert [tool for tool, _ in calls(variant.task)][2:4] == ["tickets_update_ticket", "tickets_add_comment"]
    assert calls(variant.task)[3][1] == {"ticket_id": 62, "body": NOTE, "visibility": "internal"}
    assert variant.task.turns[0].clarification is not None
    assert variant.task.turns[0].clarification.after == 2  # the note comes after the question
    assert await accepted(task, "second_note") == [(variant.description, True, [])]


async def test_notes_go_on_every_touched_ticket_however_many_and_before_a_closing_step() -> None:
    task = load_task(EXAMPLES / "multi-turn-silent-reopen.json")
    (variant,) = second_notes(task)
    assert variant.description == (
        "an internal note on the ticket of turns[0].solution[1], turns[0].solution[2], "
        "turns[1].solution[2], turns[1].solution[3]"
    )
    assert await accepted(task, "second_note") == [(variant.description, True, [])]
    closing = with_steps(escalation_task(), [{**MOVE, "arguments": {"ticket_id": 1, "status": "closed"}}])
    (variant,) = second_notes(closing)
    assert calls(variant.task) == [
        ("tickets_add_comment", {"ticket_id": 1, "body": NOTE, "visibility": "internal"}),
        ("tickets_update_ticket", {"ticket_id": 1, "status": "closed"}),
    ]


def test_ticket_references_are_rewritten_in_each_form() -> None:
    text = "Logged as ticket #61; see also tickets #60 and #62, and #7."
    assert with_ticket_form(text, "ticket ID {}") == (
        "Logged as ticket ID 61; see also ticket ID 60 and ticket ID 62, and ticket ID 7."
    )
    assert with_ticket_form(text, "Ticket-{}") == (
        "Logged as Ticket-61; see also Ticket-60 and Ticket-62, and Ticket-7."
    )


async def test_a_reply_naming_its_ticket_as_ticket_id_or_ticket_dash_passes() -> None:
    task = load_task(EXAMPLES / "handoff-mail-to-ticket.json")
    variants = ticket_id_forms(task)
    assert [v.description for v in variants] == [
        'the tickets of turns[0].solution[4] written as "ticket ID 61"',
        'the tickets of turns[0].solution[4] written as "Ticket-61"',
    ]
    bodies = [str(v.task.turns[0].solution[4].arguments["body"]) for v in variants]
    assert ["as ticket ID 61;" in bodies[0], "as Ticket-61;" in bodies[1]] == [True, True]
    assert await accepted(task, "ticket_id_form") == [(v.description, True, []) for v in variants]


async def test_a_reply_moved_after_an_independent_ticket_update_passes() -> None:
    task = load_task(EXAMPLES / "multi-turn-follow-up.json")
    (variant,) = reordered(task)
    assert (
        variant.description
        == "turns[2].solution[1] (mail_reply) moved after solution[2] (tickets_update_ticket)"
    )
    assert [tool for tool, _ in calls(variant.task, 2)][1:3] == ["tickets_update_ticket", "mail_reply"]
    assert await accepted(task, "reordered") == [(variant.description, True, [])]


def test_steps_tied_to_each_other_are_not_reordered() -> None:
    task = escalation_task()
    comment = {
        "tool": "tickets_add_comment",
        "arguments": {"ticket_id": 1, "body": "Moved.", "visibility": "internal"},
    }
    create = {
        "tool": "tickets_create_ticket",
        "id": "c",
        "arguments": {"title": "Refund", "queue": "Billing"},
    }
    by_ref = {**comment, "arguments": {**comment["arguments"], "ticket_id": {"$ref": "c.id"}}}
    other = {**comment, "arguments": {**comment["arguments"], "ticket_id": 2}}
    assert [v.description for v in reordered(with_steps(task, [REPLY, MOVE]))] == [
        "turns[0].solution[0] (mail_reply) moved after solution[1] (tickets_update_ticket)"
    ]
    assert [v.description for v in reordered(with_steps(task, [MOVE, other]))] == [
        "turns[0].solution[0] (tickets_update_ticket) moved after solution[1] (tickets_add_comment)"
    ]
    assert reordered(with_steps(task, [MOVE, comment])) == []  # the same ticket
    assert reordered(with_steps(task, [create, by_ref])) == []  # a $ref to the moved step
    assert reordered(with_steps(task, [create, REPLY])) == []  # the reply may quote the new number
    found = {"tool": "tickets_search_tickets", "id": "t", "arguments": {"query": "refund"}}
    moved_by_ref = {**MOVE, "arguments": {"ticket_id": {"$ref": "t.tickets.0.id"}, "queue": "Billing"}}
    assert reordered(with_steps(task, [found, moved_by_ref, other])) == []  # which ticket: not known


async def test_each_candidate_read_before_asking_passes() -> None:
    task = load_task(EXAMPLES / "clarification-which-ticket.json")
    (variant,) = candidates_read_first(task)
    assert variant.description == "turns[0] each of its 2 candidates read before asking (tickets_get_ticket)"
    assert calls(variant.task)[2:4] == [
        ("tickets_get_ticket", {"ticket_id": 61}),
        ("tickets_get_ticket", {"ticket_id": 62}),
    ]
    assert variant.task.turns[0].clarification is not None
    assert variant.task.turns[0].clarification.after == 4
    assert await accepted(task, "read_candidates_first") == [(variant.description, True, [])]
