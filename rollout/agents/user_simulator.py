"""An LLM user simulator: when the agent ends a turn by talking to the user (a question, a
summary), a persona answers through the same OpenAI-compatible client, until it says it
is satisfied or `max_replies_per_turn` is reached.

The simulator sees the task's persona (description and the facts it may share when asked),
the turn's request and the visible conversation (user and assistant text; tool traffic is
not shown). It answers with the next user message, or with `SATISFIED` when the turn's
request is done or nothing more is needed.
"""

from __future__ import annotations

from typing import Any

from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.task import Task

SATISFIED = "[[SATISFIED]]"


class UserSimulator:
    """A persona answering the agent through a Chat Completions endpoint."""

    def __init__(
        self, endpoint: Endpoint, *, temperature: float = 0.0, max_replies_per_turn: int = 3
    ) -> None:
        self.endpoint = endpoint
        self.model = endpoint.model
        self.client = endpoint.client()
        self.temperature = temperature
        self.max_replies_per_turn = max_replies_per_turn

    def system_prompt(self, task: Task, turn_index: int) -> str:
        persona = task.persona
        assert persona is not None
        facts = "\n".join(f"- {k}: {v}" for k, v in persona.facts.items()) or "- (none)"
        clarification = task.turns[turn_index].clarification
        if clarification is not None:  # the scripted answer comes first; stay consistent with it
            facts += f"\n- what you meant by your request: {clarification.answer}"
        return (
            f"You play the user in a conversation with an AI assistant. You are: {persona.description}\n"
            f"Your request this turn was: {task.turns[turn_index].user}\n"
            f"Facts you know and may share when the assistant asks for them (never volunteer them unasked):\n{facts}\n"
            "Answer the assistant's last message briefly, as this user would. "
            f"When your request is done or the assistant needs nothing more from you, answer exactly {SATISFIED}."
        )

    async def reply(self, task: Task, turn_index: int, messages: list[dict[str, Any]]) -> str | None:
        """The user's next message, or None when satisfied."""
        visible: list[Any] = [
            {"role": "assistant" if m["role"] == "user" else "user", "content": m["content"]}
            for m in messages
            if m["role"] in ("user", "assistant") and m.get("content")
        ]
        response = await self.endpoint.chat(
            self.client,
            messages=[{"role": "system", "content": self.system_prompt(task, turn_index)}, *visible],
            temperature=self.temperature,
        )
        text = (response.choices[0].message.content or "").strip()
        if not text or SATISFIED in text:
            return None
        return text
