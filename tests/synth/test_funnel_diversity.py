"""The funnel's diversity figures and the accounting of slots an endpoint failure left."""

from coworkenv.synth.funnel import build_funnel, diversity, request_template
from coworkenv.synth.pipeline import DraftRecord
from tests.verifiers.test_guards import escalation_task


def test_a_request_template_blanks_names_addresses_and_numbers() -> None:
    assert request_template(
        "Answer Ana's mail: we refunded EUR 45,550 to cy@globex.example on 2026-03-05."
    ) == ("answer <name> mail: we refunded <name> <n> to <email> on <n>")
    assert request_template(
        "Answer Bo's mail: we refunded EUR 1,200 to dee@initech.example on 2026-04-01."
    ) == (request_template("Answer Ana's mail: we refunded EUR 45,550 to cy@globex.example on 2026-03-05."))


def test_diversity_counts_templates_tool_sequences_and_worlds() -> None:
    one = escalation_task(id="a")
    same_template = escalation_task(
        id="b",
        user_email="me@other.example",
        turns=[
            {
                **escalation_task().turns[0].model_dump(mode="json"),
                "user": "Answer Bo's mail about March refunds: we refunded EUR 1,200. "
                "Then move the refund ticket to Billing.",
            }
        ],
    )
    d = diversity([one, same_template])
    assert (d.distinct_templates, d.distinct_tool_sequences, d.distinct_worlds) == (1, 1, 2)


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
