"""Paraphrased requests: a model rewrites a task's user messages, nothing else.

`Paraphraser.paraphrase(task)` asks an OpenAI-compatible endpoint to reword each turn's user
message in its own words and the same tone. A rewrite is refused when it drops a fact the
original states (a number, a date, a ticket reference, an email address, a path, a quoted
phrase, a person of the workspace's directory named in the original, a text the checks or the
reference solution use such as a queue or a label), and the whole task is
validated again (the full contract: a rewrite that leaves the agent unable to find what the
solution uses fails "no peeking"); a task that no longer validates keeps its original words.
Refusals are returned with their reasons, so the funnel can count them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from coworkenv.rollout.agents.openai_client import Endpoint, EndpointFailed
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.synth.generators import GenerationError
from coworkenv.task import Task
from coworkenv.verifiers.facts import number_mentions, states_date, states_number, states_person, states_text

_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_PATH = re.compile(r"(?<![\w/])/[\w.-]+(?:/[\w.-]*\w)+")
_TICKET = re.compile(r"#\d+\b")
_QUOTED = re.compile(r"[\"“']([^\"”'\n]{3,80})[\"”']")

_NOT_FACTS = {"id", "type", "role", "code", "sql", "table", "column", "columns", "tool", "query", "body"}
"""Keys whose texts are not facts a request states: names of the task format, search words, bodies."""

SYSTEM = (
    "You rewrite messages that a person sends to their AI assistant at work. Reword the message "
    "in your own words, as the same person in the same tone would write it on another day. Keep "
    "every fact exactly: names, numbers and amounts, dates and times, ticket numbers, email "
    "addresses, file paths and anything in quotes. Do not add facts, steps or greetings that "
    "are not there. Answer with the rewritten message only."
)


def dropped_facts(
    original: str, rewrite: str, people: Sequence[tuple[str, str]] = (), values: Sequence[str] = ()
) -> list[str]:
    """The facts `original` states that `rewrite` no longer does; `people` are (name, email)
    of the workspace and `values` the texts the task's checks and solution use (a queue, a
    label, a status), each checked when the original states it."""
    dropped: list[str] = []
    for match in _EMAIL.finditer(original):
        if match.group(0).lower() not in rewrite.lower():
            dropped.append(match.group(0))
    for match in _PATH.finditer(original):
        if match.group(0) not in rewrite:
            dropped.append(match.group(0))
    for match in _TICKET.finditer(original):
        if not re.search(rf"(?<!\d){match.group(0)[1:]}(?!\d)", rewrite):
            dropped.append(match.group(0))
    days = set()
    for match in _ISO_DATE.finditer(original):
        try:
            day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            continue
        days.add(day)
        if not states_date(rewrite, day):
            dropped.append(match.group(0))
    rest = original
    for pattern in (_EMAIL, _PATH, _TICKET, _ISO_DATE):
        rest = pattern.sub(" ", rest)
    for readings in number_mentions(rest):
        if not any(states_number(rewrite, str(value)) for value in readings):
            dropped.append(str(readings[0]))
    for match in _QUOTED.finditer(original):
        if not states_text(rewrite, match.group(1)):
            dropped.append(f'"{match.group(1)}"')
    for name, email in people:
        if states_person(original, name, email) and not states_person(rewrite, name, email):
            dropped.append(name)
    for value in values:
        if states_text(original, value) and not states_text(rewrite, value):
            dropped.append(value)
    return list(dict.fromkeys(dropped))


def check_values(task: Task) -> list[str]:
    """Every short text the task's checks and reference solution use (queue names, labels,
    statuses, subjects): a rewrite must keep those its original states."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            if 3 <= len(value.strip()) <= 60 and any(c.isalpha() for c in value):
                found.append(value.strip())
        elif isinstance(value, dict):
            for key, item in value.items():
                if key not in _NOT_FACTS:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    data = task.model_dump(mode="json")
    walk(data["checks"])
    for turn in data["turns"]:
        walk(turn["checks"])
        walk([step.get("arguments", {}) for step in turn["solution"]])
    return list(dict.fromkeys(found))


@dataclass
class Paraphrased:
    """The task after paraphrasing, the turns whose words changed and every refusal."""

    task: Task
    changed: list[int] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class Paraphraser:
    """Rewrites user messages through a Chat Completions endpoint (see the module docstring)."""

    def __init__(self, endpoint: Endpoint, *, temperature: float = 0.9) -> None:
        self.endpoint = endpoint
        self.model = endpoint.model
        self.client = endpoint.client()
        self.temperature = temperature

    async def rewrite(self, text: str) -> str:
        """The model's rewording of `text`; an endpoint that keeps failing is an infrastructure
        `GenerationError` (the slot stops unfinished, and a rerun fills it)."""
        try:
            response = await self.endpoint.chat(
                self.client,
                temperature=self.temperature,
                messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}],
            )
        except EndpointFailed as exc:
            raise GenerationError(f"the paraphrase endpoint failed: {exc}", infrastructure=True) from exc
        return (response.choices[0].message.content or "").strip()

    async def paraphrase(self, task: Task, *, cache: SeedCache | None = None) -> Paraphrased:
        """`task` with each user message rewritten where the rewrite keeps every fact and the
        task still passes validation; else the original words, with the reasons."""
        from coworkenv.synth.validation.validation import validate_task

        cache = cache or SeedCache()
        people = _people(task, cache)
        values = check_values(task)
        turns: list[dict[str, Any]] = [t.model_dump(mode="json") for t in task.turns]
        result = Paraphrased(task)
        for i, turn in enumerate(task.turns):
            rewrite = await self.rewrite(turn.user)
            if not rewrite:
                result.refused.append(f"turn {i}: the rewrite is empty")
                continue
            lost = dropped_facts(turn.user, rewrite, people, values)
            if lost:
                result.refused.append(f"turn {i}: the rewrite drops {', '.join(lost)}")
                continue
            if rewrite != turn.user:
                turns[i]["user"] = rewrite
                result.changed.append(i)
        if not result.changed:
            return result
        data = task.model_dump(mode="json")
        data["turns"] = turns
        data["provenance"] = {**data["provenance"], "paraphrased_by": self.model}
        candidate = Task.model_validate(data)
        report = await validate_task(candidate, cache=cache)
        if not report.ok:
            result.refused.append(f"the paraphrased task fails validation: {report.summary()}")
            result.changed = []
            return result
        result.task = candidate
        return result


def _people(task: Task, cache: SeedCache) -> list[tuple[str, str]]:
    if "directory" not in task.services:
        return []
    ws = cache.fork(task)
    try:
        return [(r["name"], r["email"]) for r in ws.rows("directory_people")]
    finally:
        ws.close()
