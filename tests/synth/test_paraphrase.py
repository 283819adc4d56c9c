"""Paraphrased requests against a local scripted OpenAI-compatible server: a rewrite that keeps
every fact replaces the words and the task validates again; one that drops a fact, or that
leaves the task failing validation, is refused with its reason."""

from typing import Any

import anyio
import pytest

from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.synth.paraphrase import Paraphraser, check_values, dropped_facts
from coworkenv.task import Task
from tests.verifiers.test_guards import escalation_task

ORIGINAL = "Answer Ana's mail about February refunds: we refunded EUR 45,550. Then move the refund ticket to Billing."


async def paraphrase(script: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    with ScriptedLLM(script, model="writer") as llm:
        paraphraser = Paraphraser(Endpoint(model="writer", base_url=llm.base_url, api_key="k", backoff=0.0))
        result = await paraphraser.paraphrase(escalation_task())
        return result, llm.requests


def test_a_rewrite_that_keeps_every_fact_is_kept_and_the_task_validates() -> None:
    rewrite = "Could you reply to Ana about the February refunds (we paid back 45550 EUR) and then put the refund ticket in Billing?"
    result, requests = anyio.run(lambda: paraphrase([{"content": rewrite}]))
    assert result.refused == [] and result.changed == [0]
    assert result.task.turns[0].user == rewrite
    assert result.task.provenance.paraphrased_by == "writer"
    assert result.task.turns[0].checks == escalation_task().turns[0].checks
    assert requests[0]["messages"][1]["content"] == ORIGINAL


def test_a_rewrite_that_drops_the_figure_is_refused() -> None:
    rewrite = "Reply to Ana about the February refunds and move the refund ticket to Billing."
    result, _ = anyio.run(lambda: paraphrase([{"content": rewrite}]))
    assert result.changed == []
    assert result.refused == ["turn 0: the rewrite drops 45550"]
    assert result.task == escalation_task()


def test_a_rewrite_that_changes_the_figure_is_refused() -> None:
    rewrite = "Reply to Ana about the February refunds, we refunded EUR 4,555, then move the refund ticket to Billing."
    result, _ = anyio.run(lambda: paraphrase([{"content": rewrite}]))
    assert result.refused == ["turn 0: the rewrite drops 45550"]


def test_a_rewrite_that_drops_what_the_checks_need_is_refused() -> None:
    # "Billing" is the queue the ticket must reach: dropping the request drops it
    rewrite = "FYI: Ana wrote about February refunds; we refunded EUR 45,550."
    result, _ = anyio.run(lambda: paraphrase([{"content": rewrite}]))
    assert result.changed == [] and result.task == escalation_task()
    assert result.refused == ["turn 0: the rewrite drops Billing"]


def test_a_paraphrased_task_that_fails_validation_keeps_its_words() -> None:
    data = escalation_task().model_dump(mode="json")
    data["turns"][0]["checks"][1]["value"] = "Nowhere"  # no reference solution reaches it
    broken = Task.model_validate(data)
    rewrite = "Could you reply to Ana about the February refunds (we paid back 45550 EUR) and then put the refund ticket in Billing?"

    async def run() -> Any:
        with ScriptedLLM([{"content": rewrite}], model="writer") as llm:
            return await Paraphraser(Endpoint(model="writer", base_url=llm.base_url, api_key="k")).paraphrase(
                broken
            )

    result = anyio.run(run)
    assert result.changed == [] and result.task == broken
    assert len(result.refused) == 1 and result.refused[0].startswith(
        "the paraphrased task fails validation: oracle"
    )


def test_check_values_are_the_short_texts_of_checks_and_solution() -> None:
    assert "Billing" in check_values(escalation_task())


def test_an_empty_rewrite_is_refused() -> None:
    result, _ = anyio.run(lambda: paraphrase([{"content": "   "}]))
    assert result.refused == ["turn 0: the rewrite is empty"]


@pytest.mark.parametrize(
    ("original", "rewrite", "dropped"),
    [
        ("Move #61 to Billing by 2026-03-05.", "Move ticket 61 to Billing by 5 March 2026.", []),
        ("Move #61 to Billing by 2026-03-05.", "Move ticket 16 to Billing by 5 March 2026.", ["#61"]),
        ("Move #61 to Billing by 2026-03-05.", "Move #61 to Billing by 6 March.", ["2026-03-05"]),
        ("Mail sam@x.example the file /shared/q1.md.", "Send /shared/q1.md to SAM@x.example.", []),
        (
            "Mail sam@x.example the file /shared/q1.md.",
            "Send the Q1 file to Sam.",
            ["sam@x.example", "/shared/q1.md"],
        ),
        ("Add 'Last reviewed' at the top.", "Put last reviewed at the top.", []),
        ("Add 'Last reviewed' at the top.", "Put a review date at the top.", ['"Last reviewed"']),
    ],
)
def test_dropped_facts(original: str, rewrite: str, dropped: list[str]) -> None:
    assert dropped_facts(original, rewrite) == dropped


def test_people_named_in_the_original_must_stay_named() -> None:
    people = [("Maria Lopez", "maria@x.example"), ("Sam Reed", "sam@x.example")]
    assert dropped_facts("Ask Maria Lopez.", "Ask Lopez, Maria.", people) == []
    assert dropped_facts("Ask Maria Lopez.", "Ask maria@x.example.", people) == []
    assert dropped_facts("Ask Maria Lopez.", "Ask Maria.", people) == ["Maria Lopez"]
    assert dropped_facts("Ask Maria Lopez.", "Ask Sam Reed.", people) == ["Maria Lopez"]


def test_synthesis_rewords_kept_tasks_and_records_refusals(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from coworkenv.synth.generators import ProceduralGenerator
    from coworkenv.synth.pipeline import kept_tasks, read_drafts, synthesize
    from coworkenv.synth.plan import parse_mix

    def keep(request: dict[str, Any]) -> dict[str, Any]:
        return {"content": "Quick one. " + request["messages"][-1]["content"]}

    async def run() -> None:
        with ScriptedLLM([keep, {"content": "Please handle it."}], model="writer") as llm:
            paraphraser = Paraphraser(
                Endpoint(model="writer", base_url=llm.base_url, api_key="k", backoff=0.0)
            )
            await synthesize(
                ProceduralGenerator(),
                count=2,
                out_dir=tmp_path,
                capabilities=["triage_routing"],
                mix=parse_mix("single=1"),
                worlds=1,
                concurrency=1,
                paraphraser=paraphraser,
            )

    anyio.run(run)
    first, second = sorted(read_drafts(tmp_path), key=lambda r: r.slot)
    assert (first.kept, first.paraphrased, first.paraphrase_refused) == (True, [0], [])
    assert second.kept and second.paraphrased == []
    assert len(second.paraphrase_refused) == 1 and second.paraphrase_refused[0].startswith(
        "turn 0: the rewrite drops "
    )
    tasks = {t.id: t for t in kept_tasks(tmp_path)}
    assert tasks[first.task_id].turns[0].user.startswith("Quick one. ")
    assert tasks[first.task_id].provenance.paraphrased_by == "writer"
    assert tasks[second.task_id].provenance.paraphrased_by is None
