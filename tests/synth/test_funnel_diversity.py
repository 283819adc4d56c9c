"""The funnel's diversity figures: worlds and industries, request templates with every name
masked, the distinct-bigram ratio, tool sequences, kinds and lengths; and the accounting of
slots an endpoint failure left."""

import io
from typing import Any

import pytest
from rich.console import Console

from coworkenv.synth import diversity as diversity_module
from coworkenv.synth.diversity import Lengths, bigram_ratio, task_names
from coworkenv.synth.family import Family
from coworkenv.synth.funnel import build_funnel, diversity, print_funnel, render_funnel_html, request_template
from coworkenv.synth.generators import DraftRequest
from coworkenv.synth.pipeline import DraftRecord
from coworkenv.task import Task
from tests.verifiers.test_guards import escalation_task

LAW_FIRM = {"name": "world", "params": {"profile": "law_firm", "size": 40, "seed": 3}}


def test_a_request_template_masks_addresses_quotes_paths_references_dates_times_and_numbers() -> None:
    assert request_template(
        "Answer Ana's mail: we refunded EUR 45,550 to cy@globex.example on 2026-03-05."
    ) == ("answer <name>'s mail: we refunded <n> to <email> on <date>.")
    assert request_template(
        'Move ticket #61 (ref HM-10233) to Billing by Thursday 5 March at 3:30 pm, label it "urgent", '
        "save /finance/fee-schedule.csv and archive acme.example mail. Thanks, Dana"
    ) == (
        "move ticket <n> (ref <id>) to <name> by <date> at <time>, label it <quoted>, save <path> and "
        "archive <domain> mail. thanks, <name>"
    )


def test_names_of_people_organizations_and_worlds_are_masked_wherever_they_stand() -> None:
    first = request_template(
        "Graham asked Graham Harvey's team at Calloway Holdings: Harvey wants the Hartley Moss LLP report.",
        ["Graham Harvey", "Graham", "Harvey", "Calloway Holdings", "Hartley Moss LLP"],
    )
    second = request_template(
        "Kim asked Kim Lee's team at Fenwick Estates: Lee wants the Northwind report.",
        ["Kim Lee", "Kim", "Lee", "Fenwick Estates", "Northwind"],
    )
    assert first == second == "<name> asked <name>'s team at <name>: <name> wants the <name> report."
    assert request_template("Invite April Griffin on 3 April.", ["April Griffin", "April", "Griffin"]) == (
        "invite <name> on <date>."
    )
    unnamed = request_template("Ask Ruth Ann van Dyke and Bo Ek & Co about it.")
    assert unnamed == "ask <name> van <name> and <name> about it."


def test_a_task_s_names_come_from_its_world_and_its_seed() -> None:
    names = task_names(task(procedural=LAW_FIRM))
    assert {
        "Hartley Moss LLP",
        "Graham Harvey",
        "Graham",
        "Harvey",
        "Calloway Holdings",
        "Litigation",
    } <= set(names)
    assert task_names(task(procedural={"name": "empty"})) == ["Billing", "Support"]  # the planted queues


def test_the_distinct_bigram_ratio_counts_bigrams_inside_each_message() -> None:
    texts = ["Move ticket 1 to Billing.", "Move ticket 1 to Billing.", "Please move ticket 7 to Research."]
    assert bigram_ratio(texts) == round(8 / 13, 4)
    assert bigram_ratio(["one"]) == 0.0


def task(
    *, procedural: dict[str, Any], user: str = "", family: str | None = None, turns: int = 1, id: str = "t"
) -> Task:
    data = escalation_task(id=id).model_dump(mode="json")
    data["seed"]["procedural"] = procedural
    first = {**data["turns"][0], **({"user": user} if user else {})}
    data["turns"] = [first] + [{**first, "user": f"Now step {n}.", "checks": []} for n in range(1, turns)]
    data["provenance"] = {"generator": "procedural", "family": family}
    return Task.model_validate(data)


@pytest.fixture
def a_day(monkeypatch: pytest.MonkeyPatch) -> None:
    """A workday family, whichever families the registry marks as workdays today."""
    fam = Family("a_day", "state_change_adaptation", ("mail",), True, lambda ctx: None, True, "workday")
    monkeypatch.setattr(diversity_module, "FAMILIES", {"a_day": fam})


def kept() -> list[Task]:
    return [
        task(id="a", procedural={"name": "demo", "params": {"seed": 0}}, user="Move ticket 1 to Billing."),
        task(id="b", procedural={"name": "demo", "params": {"seed": 2}}, user="Move ticket 4 to Billing."),
        task(id="c", procedural=LAW_FIRM, user="Please move ticket 7 to Research.", family="a_day", turns=3),
    ]


@pytest.mark.usefixtures("a_day")
def test_diversity_counts_worlds_industries_templates_kinds_and_lengths() -> None:
    d = diversity(kept())
    assert (d.distinct_worlds, d.distinct_industries) == (2, 2)
    assert d.worlds == {"law_firm:40:3": 1, "northwind": 2}
    assert d.industries == {"industrial equipment supplier": 2, "law firm": 1}
    assert (d.distinct_templates, d.max_template_uses, d.most_used_template) == (
        2,
        2,
        "move ticket <n> to <name>.",
    )
    assert d.bigram_ratio == round(13 / 17, 4)  # "move ticket", "to billing" and "now step" twice
    assert d.distinct_tool_sequences == 2  # one turn of four calls, three turns of them
    assert (d.multi_turn, d.single_turn, d.multi_turn_share) == (1, 2, 0.3333)
    assert d.kinds == {"single": 2, "multi": 0, "workday": 1}
    assert d.overall == Lengths(tasks=3, median_turns=1, median_tool_calls=4)
    assert d.workdays == Lengths(tasks=1, median_turns=3, median_tool_calls=12)


@pytest.mark.usefixtures("a_day")
def test_the_terminal_the_json_and_the_page_show_the_diversity_and_the_plan() -> None:
    records = [
        DraftRecord(
            slot=0,
            capability="triage_routing",
            round=0,
            generator="procedural",
            kept=True,
            final=True,
            task_id="a",
            request=DraftRequest(slot=0, capability="triage_routing", world="northwind"),
        ),
        DraftRecord(
            slot=1,
            capability="state_change_adaptation",
            round=0,
            generator="procedural",
            failed_stage="solvable",
            final=True,
            request=DraftRequest(
                slot=1, capability="state_change_adaptation", kind="workday", world="law_firm:19:474"
            ),
        ),
    ]
    funnel = build_funnel(records, kept())
    assert funnel.planned.model_dump() == {
        "kinds": {"single": 1, "workday": 1},
        "worlds": 2,
        "industries": 2,
        "on_generated_worlds": 1,
    }
    console = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    print_funnel(funnel, console)
    lines = [" ".join(line.replace("│", " ").split()) for line in console.export_text().splitlines()]
    for line in [
        "worlds 2 (2 industries)",
        "planned worlds 2 (2 industries); 1 slot on generated organizations; slots by kind: 1 single, 1 workday",
        "kinds 2 single, 0 multi, 1 workday; multi-turn share 0.33",
        "request templates 2 distinct; the most used 2 times",
        "distinct-bigram ratio 0.765 of user-message word bigrams",
        "tool-call sequences 2 distinct",
        "reference solutions median 1 turn, 4 tool calls (3 tasks)",
        "workdays median 3 turns, 12 tool calls (1 task)",
    ]:
        assert line in lines
    page = render_funnel_html(funnel)
    assert "<tr><td>request templates</td><td>2 distinct; the most used 2 times</td></tr>" in page
    assert "<tr><td>workdays</td><td>median 3 turns, 12 tool calls (1 task)</td></tr>" in page
    data = funnel.model_dump(mode="json")["diversity"]
    assert (data["distinct_worlds"], data["distinct_industries"], data["bigram_ratio"]) == (2, 2, 0.7647)
    assert data["workdays"] == {"tasks": 1, "median_turns": 3, "median_tool_calls": 12}


def test_a_slot_left_by_an_endpoint_failure_is_counted_as_unfinished() -> None:
    records = [
        DraftRecord(
            slot=0, capability="c", round=0, generator="llm", failed_stage="generated", infrastructure=True
        ),
        DraftRecord(
            slot=1, capability="c", round=0, generator="llm", passed=["generated"], kept=True, final=True
        ),
    ]
    assert build_funnel(records, []).unfinished == 1
