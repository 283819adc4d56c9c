"""The LLM generator and the correction loop, against a local OpenAI-compatible server that
answers from a script (the real `openai` client over HTTP): every failure mode a real model
meets ends as described, with the funnel accounting for it."""

import json
from pathlib import Path
from typing import Any

import pytest

from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.synth.funnel import build_funnel
from coworkenv.synth.generators import LLMGenerator, extract_json
from coworkenv.synth.pipeline import DraftRecord, kept_tasks, read_drafts, synthesize
from tests.verifiers.test_guards import escalation_task

CAP = "find_and_report"


def good_draft() -> dict[str, Any]:
    return json.loads(escalation_task(id=f"{CAP}-0", capabilities=[CAP]).model_dump_json())


def reply(draft: dict[str, Any], before: str = "```json\n", after: str = "\n```") -> dict[str, Any]:
    return {"content": before + json.dumps(draft) + after}


def generator(llm: ScriptedLLM, **settings: Any) -> LLMGenerator:
    """The LLM generator on `llm`; `settings` are the endpoint's (six attempts, no backoff by default)."""
    endpoint = {"model": "writer", "base_url": llm.base_url, "api_key": "k", "backoff": 0.0, "attempts": 6}
    return LLMGenerator(Endpoint.model_validate({**endpoint, **settings}))


async def run(script: list[Any], tmp_path: Path, **kwargs: Any) -> tuple[list[DraftRecord], list[Any]]:
    with ScriptedLLM(script, model="writer") as llm:
        await synthesize(generator(llm), count=1, out_dir=tmp_path, capabilities=[CAP], **kwargs)
        return read_drafts(tmp_path), llm.requests


def stops(drafts: list[DraftRecord]) -> list[tuple[int, str | None, bool, bool]]:
    return [(d.round, d.failed_stage, d.kept, d.final) for d in drafts]


def four_errors() -> dict[str, Any]:
    """An id not in the seed, an unknown column, an always-true Python check and a wrong
    argument name: four independent errors."""
    draft = good_draft()
    draft["seed"]["operations"].append(
        {"service": "tickets", "operation": "customer_comment", "params": {"ticket_id": 9, "body": "?"}}
    )
    draft["turns"][0]["checks"][1]["column"] = "queue_name"
    draft["turns"][0]["checks"].append(
        {"id": "always", "type": "python", "code": "def check(initial, final, audit):\n    return True"}
    )
    draft["turns"][0]["solution"][3]["arguments"] = {"ticket": {"$ref": "t.tickets.0.id"}, "queue": "Billing"}
    return draft


FOUR_ERRORS_TOLD = (
    "ticket_id=9 is not in the seed",
    "no column 'queue_name'",
    "check 'always': check() always returns True",
    "unknown argument 'ticket' (did you mean 'ticket_id'?)",
)


def fixes_what_it_is_told(request: dict[str, Any]) -> dict[str, Any]:
    """A model that fixes every error it is told about, and only those: the good draft when
    the feedback names all four errors, the broken one again otherwise."""
    told = request["messages"][-1]["content"]
    return reply(good_draft() if all(e in told for e in FOUR_ERRORS_TOLD) else four_errors())


async def test_a_four_error_draft_gets_every_error_in_one_report_and_is_kept_in_two_rounds(
    tmp_path: Path,
) -> None:
    drafts, requests = await run([reply(four_errors()), fixes_what_it_is_told], tmp_path)
    assert stops(drafts) == [(0, "seed_loads", False, False), (1, None, True, True)]
    assert drafts[0].problems == [
        "seed: seed.operations[6] (tickets.customer_comment): no ticket with id 9: ticket_id=9 is not in "
        "the seed, whose tickets_tickets holds ids 1..2: use one of them, or plant the row with a seed "
        "operation first",
        "checks: check 'moved': table tickets_tickets has no column 'queue_name'; columns are: assignee, "
        "created_at, description, due_at, id, priority, queue, requester, status, title, updated_at; "
        "check 'always': check() always returns True, whatever the agent does: compute the result from "
        "initial, final and audit, or remove the check",
        "oracle: turns[0].solution[3] (tickets_update_ticket): unknown argument 'ticket' (did you mean "
        "'ticket_id'?); its arguments are: ticket_id, status, priority, assignee, queue, title, due_at, "
        "tags, add_tags, remove_tags; turns[0].solution[3] (tickets_update_ticket): missing required "
        "argument 'ticket_id'",
        "not run yet (the seed must load first): noop, no_peeking, deterministic, mutants, acceptance",
    ]
    assert drafts[0].reason == drafts[0].problems[0]
    feedback = requests[1]["messages"][-1]["content"]
    assert all(p in feedback for p in drafts[0].problems)
    assert [m["role"] for m in requests[1]["messages"]] == ["system", "user", "assistant", "user"]


@pytest.mark.parametrize(
    "answer",
    [
        reply(good_draft()),
        reply(good_draft(), before="Here is the task you asked for.\n\n```\n", after="\n```\nHope it helps!"),
        reply(good_draft(), before="Sure! The task: ", after=" Let me know."),
        {"content": json.dumps(good_draft())[:-1] + ",}"},
    ],
    ids=["fenced", "fence-after-prose", "prose-wrapped", "trailing-comma"],
)
async def test_a_correct_draft_in_any_wrapping_is_kept_in_the_first_round(
    answer: dict[str, Any], tmp_path: Path
) -> None:
    drafts, requests = await run([answer], tmp_path)
    assert stops(drafts) == [(0, None, True, True)]
    assert len(requests) == 1
    assert requests[0]["max_tokens"] == 12_000


def test_extract_json_prefers_a_fenced_object_and_returns_prose_unchanged() -> None:
    assert extract_json('Before {"a": 1} ```json\n{"b": [1, 2,]}\n``` after') == '{"b": [1, 2]}'
    assert extract_json("I cannot write JSON, sorry.") == "I cannot write JSON, sorry."


async def test_an_answer_that_is_not_json_is_reported_as_such_and_the_next_round_fixes_it(
    tmp_path: Path,
) -> None:
    drafts, requests = await run([{"content": "I cannot write JSON, sorry."}, reply(good_draft())], tmp_path)
    assert stops(drafts) == [(0, "schema_valid", False, False), (1, None, True, True)]
    assert drafts[0].reason.startswith("the draft: not valid JSON")
    assert requests[1]["messages"][2]["content"] == "I cannot write JSON, sorry."


async def test_an_answer_cut_off_at_max_tokens_asks_for_a_shorter_draft(tmp_path: Path) -> None:
    cut = {"content": json.dumps(good_draft())[:300], "finish_reason": "length"}
    drafts, requests = await run([cut, reply(good_draft())], tmp_path)
    assert stops(drafts) == [(0, "generated", False, False), (1, None, True, True)]
    assert drafts[0].passed == []
    assert drafts[0].reason == (
        "the answer was cut off at max_tokens=12000 (finish_reason length) before the task JSON ended: write a "
        "shorter task (fewer seed items, shorter texts, no optional fields left at their defaults)"
    )
    assert drafts[0].reason in requests[1]["messages"][-1]["content"]


async def test_four_500s_in_a_row_are_outlasted(tmp_path: Path) -> None:
    with ScriptedLLM([{"status": 500, "error": "overloaded"}] * 4 + [reply(good_draft())]) as llm:
        gen = generator(llm)
        state = await synthesize(gen, count=1, out_dir=tmp_path, capabilities=[CAP], max_rounds=1)
    assert (state.kept, gen.retries) == (1, 4)


async def test_500_then_429_then_success_spends_no_round(tmp_path: Path) -> None:
    script = [
        {"status": 500, "error": "overloaded"},
        {"status": 429, "error": "slow down"},
        reply(good_draft()),
    ]
    with ScriptedLLM(script) as llm:
        gen = generator(llm)
        state = await synthesize(gen, count=1, out_dir=tmp_path, capabilities=[CAP], max_rounds=1)
        assert len(llm.requests) == 3
    assert (state.kept, gen.retries) == (1, 2)
    assert stops(read_drafts(tmp_path)) == [(0, None, True, True)]


async def test_a_timeout_is_retried_without_spending_a_round(tmp_path: Path) -> None:
    # the late answer comes well after the timeout; the next, at once, well within it (with room
    # for a loaded machine: a tight timeout would also cut the good answer short)
    with ScriptedLLM([{"delay": 4.0, "content": "late"}, reply(good_draft())]) as llm:
        gen = generator(llm, timeout=1.5)
        state = await synthesize(gen, count=1, out_dir=tmp_path, capabilities=[CAP], max_rounds=1)
        assert len(llm.requests) == 2
    assert (state.kept, gen.retries) == (1, 1)


async def test_an_endpoint_that_keeps_failing_leaves_the_slot_to_a_rerun(tmp_path: Path) -> None:
    with ScriptedLLM([{"status": 503, "error": "down"}] * 12) as llm:
        state = await synthesize(generator(llm), count=1, out_dir=tmp_path, capabilities=[CAP])
        assert len(llm.requests) == 6  # one slot, six attempts, no round spent on it
    assert (state.done, state.kept, state.rejected, state.unfinished) == (0, 0, 0, 1)
    (failed,) = read_drafts(tmp_path)
    assert (failed.infrastructure, failed.final, failed.failed_stage) == (True, False, "generated")
    assert failed.reason == "the model endpoint failed 6 times; last: HTTP 503: down"
    with ScriptedLLM([reply(good_draft())]) as llm:
        state = await synthesize(generator(llm), count=1, out_dir=tmp_path, capabilities=[CAP])
    assert (state.done, state.kept) == (1, 1)
    assert [t.id for t in kept_tasks(tmp_path)] == [f"{CAP}-0"]


async def test_twelve_rate_limited_answers_keep_the_slot(tmp_path: Path) -> None:
    limited = {"status": 429, "error": "rate limit reached", "headers": {"Retry-After": "0"}}
    with ScriptedLLM([limited] * 12 + [reply(good_draft())]) as llm:
        gen = generator(llm)
        state = await synthesize(gen, count=1, out_dir=tmp_path, capabilities=[CAP], max_rounds=1)
        assert len(llm.requests) == 13
    assert (state.kept, state.unfinished, gen.retries) == (1, 0, 12)
    assert stops(read_drafts(tmp_path)) == [(0, None, True, True)]


async def test_a_slot_lost_to_the_paraphrase_endpoint_is_retried_by_a_rerun(tmp_path: Path) -> None:
    from coworkenv.synth.paraphrase import Paraphraser

    def rewords(request: dict[str, Any]) -> dict[str, Any]:
        return {"content": "Quick one. " + request["messages"][-1]["content"]}

    down = {"status": 503, "error": "down"}
    with ScriptedLLM([reply(good_draft())]) as writer, ScriptedLLM([down] * 2) as words:
        paraphraser = Paraphraser(
            Endpoint(model="p", base_url=words.base_url, api_key="k", backoff=0, attempts=2)
        )
        state = await synthesize(
            generator(writer), count=1, out_dir=tmp_path, capabilities=[CAP], paraphraser=paraphraser
        )
    assert (state.done, state.kept, state.rejected, state.unfinished) == (0, 0, 0, 1)
    (lost,) = read_drafts(tmp_path)
    assert (lost.infrastructure, lost.final, lost.kept) == (True, False, False)
    assert (
        lost.reason
        == "the paraphrase endpoint failed: the model endpoint failed 2 times; last: HTTP 503: down"
    )
    assert kept_tasks(tmp_path) == []
    with ScriptedLLM([reply(good_draft())]) as writer, ScriptedLLM([rewords]) as words:
        paraphraser = Paraphraser(Endpoint(model="p", base_url=words.base_url, api_key="k"))
        state = await synthesize(
            generator(writer), count=1, out_dir=tmp_path, capabilities=[CAP], paraphraser=paraphraser
        )
    assert (state.done, state.kept, state.unfinished) == (1, 1, 0)
    (task,) = kept_tasks(tmp_path)
    assert task.turns[0].user.startswith("Quick one. ")


def broken(change: str) -> dict[str, Any]:
    draft = good_draft()
    turn = draft["turns"][0]
    if change == "unknown table":
        turn["checks"][1]["table"] = "tickets"
    elif change == "noop passes":
        turn["checks"][1] = {**turn["checks"][1], "where": {"id": 2}, "value": "Support"}
    elif change == "solution misses the goal":
        turn["solution"][3]["arguments"]["queue"] = "Support"
    elif change == "broken python":
        turn["checks"].append(
            {"id": "py", "type": "python", "code": "def check(initial, final, audit) return 1"}
        )
    elif change == "id not in the seed":
        turn["solution"][3]["arguments"] = {"ticket_id": 7, "queue": "Billing"}
    elif change == "failing event":
        draft["turns"].append(
            {
                "user": "Anything new?",
                "events": [
                    {
                        "service": "tickets",
                        "operation": "customer_comment",
                        "params": {"ticket_id": 99, "body": "?"},
                    }
                ],
                "checks": [{**turn["checks"][1], "id": "still-moved"}],
                "solution": [{"tool": "tickets_get_ticket", "arguments": {"ticket_id": 1}}],
            }
        )
    elif change == "wrong capability":
        draft["capabilities"] = ["triage_routing"]
    elif change == "stray parameter":
        draft["seed"]["operations"][2]["params"]["ticket_title"] = "Refund"
    elif change == "unknown person":
        draft["services"] = ["mail", "tickets", "directory"]
        turn["solution"][3]["arguments"]["assignee"] = "zed@acme.example"
    return draft


@pytest.mark.parametrize(
    ("change", "stage", "reason"),
    [
        ("unknown table", "checks_valid", "checks: check 'moved': no table 'tickets'; tables are: "),
        (
            "noop passes",
            "noop_fails",
            "noop: a do-nothing agent scores 0.50: these goal checks already pass before the agent acts: moved",
        ),
        ("solution misses the goal", "solvable", "oracle: the reference solution fails checks: moved"),
        ("broken python", "checks_valid", "checks: check 'py': the code does not parse: "),
        (
            "id not in the seed",
            "solvable",
            "oracle: the reference solution did not complete: turns[0].solution[3] (tickets_update_ticket) "
            "failed: Error executing tool tickets_update_ticket: no ticket with id 7: ticket_id=7 is not in the seed, whose tickets_tickets holds ids 1..2",
        ),
        (
            "failing event",
            "consistent",
            "consistent: $.turns has 2 turns; find_and_report is single-turn: write exactly one turn",
        ),
        (
            "stray parameter",
            "seed_loads",
            "seed: seed.operations[2] (tickets.add_ticket): unknown parameter 'ticket_title'; its parameters are: "
            "id, title, description,",
        ),
        (
            "unknown person",
            "solvable",
            "oracle: the reference solution did not complete: turns[0].solution[3] (tickets_update_ticket) failed: "
            "Error executing tool tickets_update_ticket: no colleague with email 'zed@acme.example' in the "
            "directory: assignee 'zed@acme.example' is nobody in the directory, which is empty: add them with "
            "directory.add_person",
        ),
        (
            "wrong capability",
            "consistent",
            "consistent: $.capabilities is ['triage_routing'], but the request was for 'find_and_report'",
        ),
    ],
)
async def test_each_broken_draft_stops_where_it_is_broken_and_is_fixed_the_round_after(
    change: str, stage: str, reason: str, tmp_path: Path
) -> None:
    drafts, _ = await run([reply(broken(change)), reply(good_draft())], tmp_path)
    assert stops(drafts) == [(0, stage, False, False), (1, None, True, True)]
    assert drafts[0].reason.startswith(reason), drafts[0].reason


async def test_a_draft_that_misses_its_request_is_still_validated_so_every_problem_comes_at_once(
    tmp_path: Path,
) -> None:
    draft = broken("unknown table")
    draft["capabilities"] = ["triage_routing"]
    drafts, requests = await run([reply(draft), reply(good_draft())], tmp_path)
    assert stops(drafts) == [(0, "consistent", False, False), (1, None, True, True)]
    assert drafts[0].passed == ["generated", "schema_valid"]
    assert [p.split(":")[0] for p in drafts[0].problems] == [
        "consistent",
        "checks",
        "not run yet (the reference solution must pass every check first)",
    ]
    assert (
        drafts[0]
        .problems[0]
        .startswith(
            "consistent: $.capabilities is ['triage_routing'], but the request was for 'find_and_report'"
        )
    )
    assert drafts[0].problems[1].startswith("checks: check 'moved': no table 'tickets'; tables are: ")
    assert all(p in requests[1]["messages"][-1]["content"] for p in drafts[0].problems)


async def test_a_failing_event_names_the_ids_there_are(tmp_path: Path) -> None:
    draft = broken("failing event")
    draft["capabilities"] = ["state_change_adaptation"]
    draft["services"] = ["mail", "tickets"]
    with ScriptedLLM([reply(draft)]) as llm:
        await synthesize(
            generator(llm), count=1, out_dir=tmp_path, capabilities=["state_change_adaptation"], max_rounds=1
        )
    (record,) = read_drafts(tmp_path)
    assert record.failed_stage == "solvable"
    assert record.reason == (
        "oracle: events could not apply after the reference solution: turns[1].events[0] "
        "(tickets.customer_comment): no ticket with id 99: ticket_id=99 is not in the seed, whose "
        "tickets_tickets holds ids 1..2: use one of them, or plant the row with a seed operation first"
    )


async def test_the_funnel_accounts_for_every_round(tmp_path: Path) -> None:
    script = [reply(broken("wrong capability")), {"content": "no"}, reply(good_draft())]
    drafts, _ = await run(script, tmp_path)
    funnel = build_funnel(drafts, kept_tasks(tmp_path))
    assert funnel.counts == {
        "generated": 3,
        "schema_valid": 2,
        "consistent": 1,
        "unique": 1,
        "seed_loads": 1,
        "checks_valid": 1,
        "noop_fails": 1,
        "solvable": 1,
        "no_peeking": 1,
        "deterministic": 1,
        "mutants_killed": 1,
        "right_variants_pass": 1,
        "kept": 1,
    }
    assert funnel.rounds_to_keep == {"3": 1}
    (task,) = kept_tasks(tmp_path)
    assert task.provenance.model_dump() == {
        "generator": "llm",
        "model": "writer",
        "rounds": 3,
        "seed": 0,
        "family": None,
        "paraphrased_by": None,
    }


async def test_a_rerun_resumes_finished_slots_without_asking_again(tmp_path: Path) -> None:
    await run([reply(good_draft())], tmp_path)
    with ScriptedLLM([]) as llm:
        state = await synthesize(generator(llm), count=1, out_dir=tmp_path, capabilities=[CAP])
        assert llm.requests == []
    assert (state.done, state.kept) == (1, 0)


async def test_a_near_duplicate_of_a_kept_task_is_dropped_before_validation(tmp_path: Path) -> None:
    other = good_draft()
    other["id"] = "copy"
    with ScriptedLLM([reply(good_draft()), reply(other)]) as llm:
        # one slot at a time: which slot gets which scripted reply is then fixed
        state = await synthesize(
            generator(llm), count=2, out_dir=tmp_path, capabilities=[CAP], max_rounds=1, concurrency=1
        )
    assert (state.kept, state.rejected) == (1, 1)
    last = read_drafts(tmp_path)[-1]
    assert (last.failed_stage, last.passed) == ("unique", ["generated", "schema_valid", "consistent"])
    assert last.reason == (
        f"unique: a near-duplicate of kept task '{CAP}-0': change the scenario, people and values"
    )
