"""The LLM generator and the correction loop, against a local OpenAI-compatible server
that answers from a script: each broken draft is fixed after its report is fed back."""

import json
from pathlib import Path

from coworkenv.rollout.scripted_llm import ScriptedLLM
from coworkenv.synth.funnel import build_funnel
from coworkenv.synth.generators import LLMGenerator
from coworkenv.synth.pipeline import kept_tasks, read_drafts, synthesize
from tests.rollout.test_runner import ticket_task


def good_draft() -> dict:
    return json.loads(ticket_task(id="triage-0").model_dump_json())


def schema_error() -> dict:
    draft = good_draft()
    del draft["turns"]
    return draft


def passes_the_noop() -> dict:
    draft = good_draft()
    for i, turn in enumerate(draft["turns"]):  # checks that hold before the agent acts
        turn["checks"] = [
            {"id": f"ticket-there-{i}", "type": "count", "table": "tickets_tickets", "value": 1}
        ]
    draft["checks"] = [{"id": "nothing-deleted", "type": "count", "table": "tickets_tickets", "value": 1}]
    return draft


def unsolvable() -> dict:
    draft = good_draft()
    draft["turns"][0]["solution"][1]["arguments"] = {"ticket_id": 99, "priority": "urgent"}
    return draft


def reply(draft: dict) -> dict:
    return {"content": "```json\n" + json.dumps(draft) + "\n```"}


async def test_the_loop_fixes_each_broken_draft_and_rejects_one_never_fixed(tmp_path: Path) -> None:
    script = [reply(schema_error()), reply(passes_the_noop()), reply(unsolvable()), reply(good_draft())]
    script += [{"content": "I cannot write JSON, sorry."}] * 4
    with ScriptedLLM(script, model="writer") as llm:
        generator = LLMGenerator("writer", base_url=llm.base_url, api_key="k")
        state = await synthesize(
            generator, count=2, out_dir=tmp_path, capabilities=["triage_routing"], max_rounds=4
        )
        requests = llm.requests
    assert (state.kept, state.rejected) == (1, 1)
    drafts = read_drafts(tmp_path)
    assert [(d.slot, d.round, d.failed_stage, d.kept, d.final) for d in drafts] == [
        (0, 0, "schema_valid", False, False),
        (0, 1, "noop_fails", False, False),
        (0, 2, "solvable", False, False),
        (0, 3, None, True, True),
        (1, 0, "schema_valid", False, False),
        (1, 1, "schema_valid", False, False),
        (1, 2, "schema_valid", False, False),
        (1, 3, "schema_valid", False, True),
    ]
    assert drafts[0].reason == "the draft: $.turns: Field required"
    assert drafts[1].reason.startswith("noop: a do-nothing agent passes every check")
    assert drafts[2].reason.startswith(
        "oracle: the reference solution did not complete: turns[0].solution[1]"
    )
    assert drafts[4].reason.startswith("the draft: not valid JSON")
    # each correction request carries the previous draft and its report
    assert len(requests) == 8
    first = requests[0]
    assert first["model"] == "writer"
    assert first["response_format"]["json_schema"]["name"] == "task"
    assert "triage_routing" in first["messages"][1]["content"]
    assert "tickets_update_ticket(" in first["messages"][0]["content"]
    second = requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert "$.turns: Field required" in second[3]["content"]
    assert "a do-nothing agent passes every check" in requests[2]["messages"][-1]["content"]
    assert len(requests[3]["messages"]) == 8
    # the kept task, with provenance
    (task,) = kept_tasks(tmp_path)
    assert task.id == "triage-0"
    assert task.provenance.model_dump() == {
        "generator": "llm",
        "model": "writer",
        "rounds": 4,
        "seed": 0,
        "family": None,
    }
    funnel = build_funnel(drafts, [task])
    assert funnel.counts == {
        "generated": 8,
        "schema_valid": 3,
        "seed_loads": 3,
        "checks_valid": 3,
        "noop_fails": 2,
        "solvable": 1,
        "no_peeking": 1,
        "deterministic": 1,
        "mutants_killed": 1,
        "right_variants_pass": 1,
        "unique": 1,
        "kept": 1,
    }
    assert funnel.rounds_to_keep == {"4": 1}


async def test_a_rerun_resumes_finished_slots_without_asking_again(tmp_path: Path) -> None:
    with ScriptedLLM([reply(good_draft())]) as llm:
        await synthesize(
            LLMGenerator("w", base_url=llm.base_url, api_key="k"),
            count=1,
            out_dir=tmp_path,
            capabilities=["triage_routing"],
        )
    with ScriptedLLM([]) as llm:
        state = await synthesize(
            LLMGenerator("w", base_url=llm.base_url, api_key="k"),
            count=1,
            out_dir=tmp_path,
            capabilities=["triage_routing"],
        )
        assert llm.requests == []
    assert (state.done, state.kept) == (1, 0)
    assert [t.id for t in kept_tasks(tmp_path)] == ["triage-0"]


async def test_a_near_duplicate_of_a_kept_task_is_dropped(tmp_path: Path) -> None:
    other = good_draft()
    other["id"] = "triage-copy"
    with ScriptedLLM([reply(good_draft()), reply(other), reply(other)]) as llm:
        state = await synthesize(
            LLMGenerator("w", base_url=llm.base_url, api_key="k"),
            count=2,
            out_dir=tmp_path,
            capabilities=["triage_routing"],
            max_rounds=2,
        )
    assert (state.kept, state.rejected) == (1, 1)
    drafts = read_drafts(tmp_path)
    assert drafts[-1].failed_stage == "unique"
    assert drafts[-1].reason == (
        "unique: a near-duplicate of kept task 'triage-0': change the scenario, people and values"
    )
