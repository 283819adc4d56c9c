"""The optional judge and probe, each against its own scripted OpenAI-compatible server: a
rule the checks need but the user never states is caught by the judge and fixed the round
after; a probe agent's passes are recorded, and a task no probe solved is rejected."""

import json
from pathlib import Path

from coworkenv.rollout.agents.openai_agent import OpenAIAgent
from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.synth.funnel import build_funnel
from coworkenv.synth.judge import LLMJudge
from coworkenv.synth.pipeline import kept_tasks, read_drafts, synthesize
from coworkenv.synth.probe import Probe
from tests.synth.test_llm_synthesis import CAP, generator, good_draft, reply


def rule_left_out() -> dict:
    draft = good_draft()
    draft["turns"][0]["user"] = "Answer Ana's mail about February refunds: we refunded EUR 45,550."
    return draft


async def test_the_judge_catches_a_rule_missing_from_the_user_text(tmp_path: Path) -> None:
    low = {
        "score": 3,
        "unasked": ["moved: the user never asks to move the ticket to Billing"],
        "natural": True,
    }
    high = {"score": 10, "unasked": [], "natural": True, "reasons": ["everything is asked for"]}
    with (
        ScriptedLLM([reply(rule_left_out()), reply(good_draft())]) as writer,
        ScriptedLLM(
            [{"content": json.dumps(low)}, {"content": "```json\n" + json.dumps(high) + "\n```"}]
        ) as judge,
    ):
        state = await synthesize(
            generator(writer),
            count=1,
            out_dir=tmp_path,
            capabilities=[CAP],
            judge=LLMJudge(Endpoint(model="judge", base_url=judge.base_url, api_key="k", backoff=0.0)),
        )
        judged = judge.requests
        fed_back = writer.requests[1]["messages"][-1]["content"]
    assert state.kept == 1
    first, second = read_drafts(tmp_path)
    assert (first.failed_stage, first.judge_score, second.kept, second.judge_score) == ("judged", 3, True, 10)
    assert first.reason == (
        "judged: a reviewer who sees only the user text scored the task 3/10; checked but never asked for or "
        "implied: moved: the user never asks to move the ticket to Billing (state it in the user message or "
        "the context rules, or drop the check)"
    )
    assert first.reason in fed_back
    seen = json.loads(judged[0]["messages"][1]["content"])
    assert seen["turns"][0]["user"] == rule_left_out()["turns"][0]["user"]
    assert [c["id"] for c in seen["turns"][0]["checks"]] == ["told-ana", "moved"]
    counts = build_funnel(read_drafts(tmp_path), kept_tasks(tmp_path)).counts
    assert (counts["right_variants_pass"], counts["judged"], counts["kept"]) == (2, 1, 1)


SOLVES = [
    {
        "tool_calls": [
            {"name": "mail_search_messages", "arguments": {"query": "refunds"}},
            {"name": "tickets_search_tickets", "arguments": {"query": "refund"}},
        ]
    },
    {
        "tool_calls": [
            {
                "name": "mail_reply",
                "arguments": {"message_id": 1, "body": "We refunded EUR 45,550; ticket #1 is in Billing."},
            },
            {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "queue": "Billing"}},
        ]
    },
    {"content": "Done."},
]


async def test_the_probe_records_its_passes_and_rejects_a_task_no_probe_solved(tmp_path: Path) -> None:
    with ScriptedLLM([reply(good_draft())]) as writer, ScriptedLLM(SOLVES) as agent:
        probe = Probe(
            OpenAIAgent(Endpoint(model="probe", base_url=agent.base_url, api_key="k", backoff=0.0)), k=1
        )
        await synthesize(
            generator(writer), count=1, out_dir=tmp_path / "solved", capabilities=[CAP], probe=probe
        )
    (record,) = read_drafts(tmp_path / "solved")
    assert (record.kept, record.probe_attempts, record.probe_passes, record.passed[-1]) == (
        True,
        1,
        1,
        "probed",
    )

    with ScriptedLLM([reply(good_draft())]) as writer, ScriptedLLM([{"content": "Done."}]) as agent:
        probe = Probe(
            OpenAIAgent(Endpoint(model="probe", base_url=agent.base_url, api_key="k", backoff=0.0)),
            k=1,
            min_passes=1,
        )
        await synthesize(
            generator(writer),
            count=1,
            out_dir=tmp_path / "unsolved",
            capabilities=[CAP],
            probe=probe,
            max_rounds=1,
        )
    (record,) = read_drafts(tmp_path / "unsolved")
    assert (record.kept, record.failed_stage, record.probe_passes) == (False, "probed", 0)
    assert record.reason == (
        "probed: a test agent solved it 0 of 1 times, fewer than 1 (trial 0: score 0.00, failed told-ana, moved): "
        "make the request state what the checks need, or make the task easier"
    )
