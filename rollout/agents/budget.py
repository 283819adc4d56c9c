"""The token budget a task set needs: how long a trainer must let prompts and completions be.

An episode's prompt is what the model reads before it writes anything: the system prompt,
the tools block of the task's services and the first user message. Its completion is all
that follows, in one multi-turn generation as TRL makes it: the agent's messages and tool
calls, the tool results and the later user messages. `token_budget(records)` takes the
largest of each over finished episodes; `task_budget(tasks)` plays each task's reference
solution first, so the figures are what the oracle itself needs. A model that explores
needs more than the oracle: leave it room above these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import anyio
from pydantic import BaseModel, Field

from coworkenv.rollout.agents.policies import OraclePolicy
from coworkenv.rollout.agents.tokens import episode_tokens, token_counter
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.runner import run_episode
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.task import Task

__all__ = ["TokenBudget", "episode_budget", "task_budget", "token_budget"]


class TokenBudget(BaseModel):
    """The largest prompt and completion over a set of episodes, in tokens."""

    method: str = Field(description="How tokens were counted")
    prompt: int = Field(description="The largest prompt: system prompt, tools block, first user message")
    completion: int = Field(description="The largest completion: everything after the prompt")
    tasks: dict[str, tuple[int, int]] = Field(
        default_factory=dict, description="Per task, its largest (prompt, completion)"
    )

    def summary(self) -> str:
        """The budget in two lines, with the task that needs the most of each."""
        prompt_task = max(self.tasks, key=lambda task: self.tasks[task][0])
        completion_task = max(self.tasks, key=lambda task: self.tasks[task][1])
        return (
            f"prompt: {self.prompt} tokens ({prompt_task})\n"
            f"completion: {self.completion} tokens ({completion_task})\n"
            f"largest over {len(self.tasks)} task(s), counted with {self.method}"
        )


def episode_budget(record: EpisodeRecord, count: Callable[[str], int]) -> tuple[int, int]:
    """(prompt, completion) tokens of one episode."""
    whole = episode_tokens(record, count)["total"]
    first_user = next((m for m in record.messages if m.get("role") == "user"), None)
    opening = [m for m in record.messages if m.get("role") == "system"]
    if first_user is not None:
        opening.append(first_user)
    head = record.model_copy(update={"messages": opening})
    prompt = episode_tokens(head, count)["total"]
    return prompt, whole - prompt


def token_budget(
    records: Iterable[EpisodeRecord], count: Callable[[str], int] | None = None, method: str | None = None
) -> TokenBudget:
    """The budget of these episodes (those with status `error` left out). `count` counts a
    text's tokens, e.g. with the trainer's tokenizer (`lambda text: len(tokenizer(text).input_ids)`);
    by default tiktoken's o200k_base, or an estimate (see `rollout.agents.tokens`)."""
    if count is None:
        count, method = token_counter()
    per_task: dict[str, tuple[int, int]] = {}
    for record in records:
        if record.status == "error":
            continue
        prompt, completion = episode_budget(record, count)
        old = per_task.get(record.task_id, (0, 0))
        per_task[record.task_id] = (max(old[0], prompt), max(old[1], completion))
    if not per_task:
        raise ValueError("no finished episodes to take a token budget from")
    return TokenBudget(
        method=method or "the given counter",
        prompt=max(p for p, _ in per_task.values()),
        completion=max(c for _, c in per_task.values()),
        tasks=dict(sorted(per_task.items())),
    )


def task_budget(tasks: Iterable[Task], count: Callable[[str], int] | None = None) -> TokenBudget:
    """The budget the tasks' reference solutions need: one oracle episode of each, measured."""
    cache = SeedCache()

    async def play_all() -> list[EpisodeRecord]:
        return [await run_episode(task, OraclePolicy(), cache=cache) for task in tasks]

    records = anyio.run(play_all)
    failed = [f"{r.task_id}: {r.error}" for r in records if r.status == "error"]
    if failed:
        raise ValueError("the reference solution could not be played: " + "; ".join(failed))
    return token_budget(records, count, None if count is None else "the given counter")
