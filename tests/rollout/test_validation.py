"""The validation contract, stage by stage: a sound task passes every stage with every mutant
class killed and every right variant accepted; each way a task can be broken stops it at the
stage that names the problem."""

from typing import Any

from coworkenv.rollout import SeedCache
from coworkenv.synth.validation.acceptance import reformat_text
from coworkenv.synth.validation.mutants import mutants, wrong_figures
from coworkenv.synth.validation.validation import STAGES, contract_problems, validate_task
from coworkenv.task import Task
from tests.verifiers.test_guards import ANA, MOVE, REPLY, escalation_task, with_steps


def with_checks(task: Task, checks: list[dict[str, Any]]) -> Task:
    data = task.model_dump()
    data["turns"][0]["checks"] = checks
    return Task.model_validate(data)


TOLD_ANA = {"id": "told-ana", "type": "mail_sent", "to": [ANA], "facts": [{"number": 45550}, {"ticket": 1}]}
MOVED = {
    "id": "moved",
    "type": "field_equals",
    "table": "tickets_tickets",
    "where": {"id": 1},
    "column": "queue",
    "value": "Billing",
}


async def test_a_sound_task_passes_every_stage_of_both_sides() -> None:
    report = await validate_task(escalation_task(), cache=SeedCache())
    assert [s.name for s in report.stages] == list(STAGES)
    assert report.summary() == "ok"
    assert report.kill_rates() == {
        "alter": 1.0,
        "blank": 1.0,
        "collateral_archive": 1.0,
        "collateral_close": 1.0,
        "collateral_delete": 1.0,
        "collateral_junk_create": 1.0,
        "collateral_outside_mail": 1.0,
        "collateral_overwrite": 1.0,
        "collateral_trash": 1.0,
        "drop": 1.0,
        "duplicate": 1.0,
        "hedge": 1.0,
        "negate": 1.0,
        "rival": 1.0,
        "wrong_figure": 1.0,
    }
    assert report.acceptance_rates() == {
        "courtesy": 1.0,
        "extra_reads": 1.0,
        "harmless_marks": 1.0,
        "other_format": 1.0,
        "reordered": 1.0,
        "reply_all": 1.0,
        "second_note": 1.0,
        "ticket_id_form": 1.0,
    }


async def test_a_goal_check_that_holds_before_the_agent_acts_fails_the_noop_stage() -> None:
    stays = {**MOVED, "id": "printer-stays", "where": {"id": 2}, "value": "Support"}
    report = await validate_task(with_checks(escalation_task(), [TOLD_ANA, MOVED, stays]))
    assert report.summary() == (
        "noop: a do-nothing agent scores 0.33: these goal checks already pass before the agent acts: "
        "printer-stays (make them guards, role: guard, or check the change)"
    )
    guarded = with_checks(escalation_task(), [TOLD_ANA, MOVED, {**stays, "role": "guard"}])
    assert (await validate_task(guarded, run_mutants=False)).summary() == "ok"


async def test_a_wording_check_is_caught_by_the_right_variants() -> None:
    # "#1" literally, instead of the ticket as a fact: "ticket number 1" is rejected.
    literal = {
        "id": "says-1",
        "type": "sql",
        "query": "SELECT count(*) FROM mail_messages WHERE folder = 'sent' AND body LIKE '%#1%'",
        "expected": 1,
    }
    report = await validate_task(with_checks(escalation_task(), [TOLD_ANA, MOVED, literal]))
    failed = report.failed_stage
    assert failed is not None and failed.name == "acceptance"
    assert failed.detail.startswith(
        "these right variants of the solution are rejected: other_format: turns[0].solution[2] (mail_reply) "
        "texts in other formats (says-1: query returned 0, expected 1)"
    )
    assert report.acceptance_rates()["other_format"] == 0.0
    assert report.acceptance_rates()["ticket_id_form"] == 0.0


async def test_a_substring_figure_check_lets_wrong_figures_through() -> None:
    substring = {
        "id": "figure",
        "type": "field_contains",
        "table": "mail_messages",
        "where": {"folder": "sent"},
        "column": "body",
        "text": "45,55",
    }
    report = await validate_task(with_checks(escalation_task(), [substring, MOVED]))
    failed = report.failed_stage
    assert failed is not None and failed.name == "mutants"
    # 45,551 still contains "45,55": only the +1 variant gets through, and it is caught.
    assert "wrong_figure: figures +1 in turns[0].solution[2] (mail_reply) body" in failed.detail


async def test_a_solution_that_uses_an_id_it_was_never_shown_fails_no_peeking() -> None:
    report = await validate_task(with_steps(escalation_task(), [REPLY, MOVE]))
    assert report.summary() == (
        "no_peeking: turns[0].solution[0] (mail_reply) uses message_id=1 before any message or tool "
        "result showed it; turns[0].solution[0] (mail_reply) writes before anything was read: look up what "
        "it acts on first; turns[0].solution[1] (tickets_update_ticket) uses ticket_id=1 before any "
        "message or tool result showed it"
    )


async def test_an_event_that_cannot_apply_fails_the_oracle_stage() -> None:
    data = escalation_task().model_dump(mode="json")
    data["turns"].append(
        {
            "user": "Anything new?",
            "events": [
                {
                    "service": "tickets",
                    "operation": "customer_comment",
                    "params": {"ticket_id": 99, "body": "?"},
                }
            ],
            "checks": [{**MOVED, "id": "still-moved"}],
            "solution": [{"tool": "tickets_get_ticket", "arguments": {"ticket_id": 1}}],
        }
    )
    report = await validate_task(Task.model_validate(data))
    failed = report.failed_stage
    assert failed is not None and failed.name == "oracle"
    assert failed.detail.startswith(
        "events could not apply after the reference solution: turns[1].events[0] (tickets.customer_comment):"
    )


def test_a_turn_without_a_check_and_a_task_of_guards_only_break_the_contract() -> None:
    data = escalation_task().model_dump(mode="json")
    data["turns"][0]["checks"] = [{**MOVED, "role": "guard"}]
    data["turns"].append({"user": "Thanks!", "solution": []})
    assert contract_problems(Task.model_validate(data)) == [
        "turns[1] has no check: add one that judges that turn",
        "the task has no goal check (only guards): add a check of what the user asked for",
    ]


def test_wrong_figures_change_amounts_not_years_times_or_references() -> None:
    text = "We refunded EUR 45,550 in 2026 (ticket #61) by 15:30; 12.5% of 1200 units."
    assert (
        wrong_figures(text, 10, 0)
        == "We refunded EUR 455,500 in 2026 (ticket #61) by 15:30; 125% of 12000 units."
    )
    assert (
        wrong_figures(text, 1, 1)
        == "We refunded EUR 45,551 in 2026 (ticket #61) by 15:30; 13.5% of 1201 units."
    )


def test_reformatted_texts_keep_the_facts_in_other_forms() -> None:
    assert reformat_text("Ticket #61 is due 2026-03-05 at 15:30; we paid 45550.") == (
        "ticket number 61 is due 5 March 2026 at 3:30 pm; we paid 45,550."
    )


def _played_alterations(report: Any) -> list[tuple[str, bool]]:
    return [(m.description, m.killed) for m in report.mutants if m.kind == "alter"]


async def test_a_write_step_is_altered_until_one_alteration_fails() -> None:
    steps = [s.model_dump(exclude_none=True, by_alias=True) for s in escalation_task().turns[0].solution]
    # The subject's alteration keeps the facts and passes; the recipient's fails, so the
    # body's is not played. The ticket's queue fails first, so its title is not altered.
    steps[2] = {
        "tool": "mail_send_message",
        "arguments": {
            "subject": "February refunds",
            "to": [ANA],
            "body": "We refunded EUR 45,550 in February. I moved ticket #1 to Billing.",
        },
    }
    steps[3] = {
        "tool": "tickets_update_ticket",
        "arguments": {"ticket_id": {"$ref": "t.tickets.0.id"}, "queue": "Billing", "title": "Refund missing"},
    }
    task = with_steps(escalation_task(), steps)
    cache = SeedCache()
    report = await validate_task(task, cache=cache)
    assert report.summary() == "ok"
    assert _played_alterations(report) == [
        ("alter turns[0].solution[2] (mail_send_message) argument 'subject'", False),
        ("alter turns[0].solution[2] (mail_send_message) argument 'to'", True),
        ("alter turns[0].solution[3] (tickets_update_ticket) argument 'queue'", True),
    ]
    made = [
        v.description
        for v in mutants(task, cache.fork(task), cache.footprints[task.content_hash])
        if v.kind == "alter"
    ]
    assert made == [
        "alter turns[0].solution[2] (mail_send_message) argument 'subject'",
        "alter turns[0].solution[2] (mail_send_message) argument 'to'",
        "alter turns[0].solution[2] (mail_send_message) argument 'body'",
        "alter turns[0].solution[3] (tickets_update_ticket) argument 'queue'",
        "alter turns[0].solution[3] (tickets_update_ticket) argument 'title'",
    ]
    assert report.kill_rates()["alter"] == 1.0


async def test_the_deterministic_stage_compares_with_the_run_the_footprint_came_from() -> None:
    # The footprint's run is the second run of the reference solution: validation does not
    # play it a third time, and a run that ended elsewhere fails the stage.
    task, cache = escalation_task(), SeedCache()
    first = await validate_task(task, cache=cache)
    reached = cache.reference_hashes[task.content_hash]
    assert first.summary() == "ok"
    cache.reference_hashes[task.content_hash] = "0" * 64
    again = await validate_task(task, cache=cache)
    (stage,) = [s for s in again.stages if s.name == "deterministic"]
    assert (stage.passed, stage.detail) == (False, f"state hashes differ: {reached} vs {'0' * 64}")
    del cache.reference_hashes[task.content_hash]  # a footprint from elsewhere: played again
    third = await validate_task(task, cache=cache)
    assert third.summary() == "ok"


def test_a_decimal_figure_is_read_in_its_whole_sentence_and_gets_every_claim_mutant() -> None:
    from coworkenv.synth.family import Difficulty, build_task
    from coworkenv.synth.validation.text_variants import claim_mutants

    task = build_task("sheets_figure_by_formula", 7, Difficulty.level(0))
    sentence = "The average amount of the Finance cost centre's expenses in January 2026 was EUR 2,622.50"
    assert sentence in task.turns[0].solution[-1].arguments["body"]
    bodies = {
        m.kind: m.task.turns[0].solution[-1].arguments["body"]
        for m in claim_mutants(task, SeedCache().fork(task))
    }
    assert set(bodies) == {"backwards", "hedge", "negate", "rival"}
    assert f"{sentence} or 26,226.0, from the Cost centre expenses sheet." in bodies["hedge"]
    assert "It is not the case that the average amount of the Finance" in bodies["negate"]
