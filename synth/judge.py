"""An LLM judge of a validated draft: from what the agent is told alone (the user messages,
the context and its rules), is every checked outcome asked for or implied, and does the
request read like a real one? Execution proves a task solvable by its own solution; the
judge catches a task only its author could solve (a rule the checks need, missing from the
user text). Any OpenAI-compatible endpoint; off unless `--endpoint judge=MODEL[@URL]` is given."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from coworkenv.rollout.agents.openai_client import Endpoint, EndpointFailed
from coworkenv.synth.generators import GenerationError, extract_json
from coworkenv.task import Task

#: Drafts the judge scores below this (out of 10) go back to the generator with its reasons.
DEFAULT_MIN_SCORE = 8

JUDGE_PROMPT = """You review tasks written for AI coworker agents. The agent sees only the context and the user
messages below, then works with mail, tickets, calendar, files and directory tools. The checks are what
will be verified afterwards. Answer whether an agent that reads only the user text, the context and the
workspace could know to produce every checked outcome: each value, recipient, queue, status, rule and
threshold a check requires must be stated or clearly implied (found in the workspace counts as implied
when the user says where to look). Also answer whether the request reads like one a real colleague would
send. Answer JSON only: {"score": 0-10, "unasked": ["each checked outcome that is neither asked for nor
implied, and why"], "natural": true|false, "reasons": ["short reasons"]}. Score 10: everything asked for,
natural. Below 8: some checked outcome cannot be known from the user text."""


class Judgement(BaseModel):
    """What the judge said about one draft."""

    score: float = Field(ge=0, le=10)
    unasked: list[str] = Field(default_factory=list)
    natural: bool = True
    reasons: list[str] = Field(default_factory=list)

    def feedback(self) -> str:
        """The judge's findings, for the task's author."""
        parts = [f"a reviewer who sees only the user text scored the task {self.score:g}/10"]
        if self.unasked:
            parts.append(
                "checked but never asked for or implied: "
                + "; ".join(self.unasked)
                + " (state it in the user message or the context rules, or drop the check)"
            )
        if not self.natural:
            parts.append("the request does not read like a real one: rewrite it as a colleague would")
        if self.reasons:
            parts.append("reasons: " + "; ".join(self.reasons))
        return "; ".join(parts)


def judge_view(task: Task) -> str:
    """What the judge sees: the context, each turn's user message and events, and the checks."""
    view: dict[str, Any] = {
        "context": task.context.model_dump(mode="json"),
        "turns": [
            {
                "user": t.user,
                "events": [e.model_dump(mode="json") for e in t.events],
                "checks": [c.model_dump(mode="json", exclude_defaults=True) for c in t.checks],
            }
            for t in task.turns
        ],
        "final_checks": [c.model_dump(mode="json", exclude_defaults=True) for c in task.checks],
        "safety": [r.model_dump(mode="json", exclude_defaults=True) for r in task.safety],
    }
    return json.dumps(view, ensure_ascii=False)


class LLMJudge:
    """Scores drafts through a Chat Completions endpoint (see the module docstring)."""

    def __init__(self, endpoint: Endpoint, *, min_score: float = DEFAULT_MIN_SCORE) -> None:
        self.endpoint = endpoint
        self.model = endpoint.model
        self.client = endpoint.client()
        self.min_score = min_score

    async def judge(self, task: Task) -> Judgement:
        """The judge's verdict on one draft; `GenerationError` (infrastructure) when the
        endpoint keeps failing, a score of 0 when its answer is not a judgement."""
        messages = [
            {"role": "system", "content": JUDGE_PROMPT},
            {"role": "user", "content": judge_view(task)},
        ]
        try:
            response = await self.endpoint.chat(
                self.client,
                messages=messages,
                temperature=0.0,
                max_tokens=1500,
            )
        except EndpointFailed as exc:
            raise GenerationError(f"the judge endpoint failed: {exc}", infrastructure=True) from exc
        text = extract_json(response.choices[0].message.content or "")
        try:
            return Judgement.model_validate_json(text)
        except ValidationError:
            return Judgement(score=0, reasons=[f"the judge's answer was not a judgement: {text[:200]}"])
