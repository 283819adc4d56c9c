"""`TextEpisode`: an `Episode` driven by a model's raw text, one gym-style step per reply.

Trainers that sample text (verl's agent loops, SkyRL's gym environments) see an episode as
a conversation: the prompt (`reset()`: the system message with the task's tools rendered in
it, then the first user message), then, for each thing the model writes, `step(text)`:

- a reply with `<tool_call>` blocks runs each call through the episode (audited, the turn's
  tool limit and any faults apply); the observation is one `tool` message per call with
  the text the model reads (an unreadable block gets an error message, and nothing runs);
- a reply without tool calls is the answer to the user. A question may be answered within
  the turn (the observation is the user's answer); otherwise the turn is judged, the next
  turn's events are applied and the observation is its user message; after the last turn
  the episode is over.

`step` returns `Step(observation, reward, done, info)`, a tuple as gym's: the reward is 0.0 until the end,
then the verdict's score, with the named rewards (`Episode.rewards()`) and the status in
`info`. An episode with no verdict (its checks could not run) ends with reward None.
With `max_steps`, the episode ends after that many steps, judged as it stands (the turns
never reached count as failed). With `max_result_chars`, each tool result the model reads is
cut to that many characters, with a note on how to page (`rollout.agents.tool_schemas.bound_result`).

    text_episode = TextEpisode(Episode(task))
    messages = text_episode.reset()
    step = text_episode.step('<tool_call>\\n{"name": "tickets_get_ticket", "arguments": {"ticket_id": 1}}\\n</tool_call>')
    step = text_episode.step("Done: it is urgent now.")
    if step.done:
        record = text_episode.episode.record()
"""

from __future__ import annotations

from typing import Any, NamedTuple

from coworkenv.rollout.agents.tool_schemas import bound_result
from coworkenv.rollout.episodes.episode import Episode, EpisodeError, Start, run_sync

from .tool_text import ParsedText, parse_tool_calls, system_with_tools

__all__ = ["Step", "TextEpisode", "UnscoredEpisode"]

Message = dict[str, str]


class UnscoredEpisode(RuntimeError):
    """An episode ended without a verdict (its checks could not run, or it failed), in a
    trainer that cannot leave one trajectory out of a batch (verl, SkyRL): no reward is
    made up for it."""


class Step(NamedTuple):
    """What one step returns, as in gym (`observation, reward, done, info = game.step(text)`):
    the messages that follow the model's reply, the reward (0.0 until `done`, then the
    verdict's score; None for an episode with no verdict), whether the episode is over, and
    `info` (at the end: `rewards`, `status`, `steps`)."""

    observation: list[Message]
    reward: float | None
    done: bool
    info: dict[str, Any]


class TextEpisode:
    """An episode played from model text. See the module docstring."""

    def __init__(
        self,
        episode: Episode,
        *,
        max_steps: int | None = None,
        tools_in_prompt: bool = True,
        max_result_chars: int | None = None,
    ) -> None:
        if max_steps is not None and max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, not {max_steps}")
        if max_result_chars is not None and max_result_chars < 1:
            raise ValueError(f"max_result_chars must be at least 1, not {max_result_chars}")
        self.episode = episode
        self.max_steps = max_steps
        self.max_result_chars = max_result_chars
        self.tools_in_prompt = tools_in_prompt
        self.start: Start | None = None
        """What `reset` started from (its `openai_tools` for a chat template's `tools`)."""
        self.steps = 0
        self.messages: list[Message] = []
        """The conversation as the model saw it: the prompt, its replies and the observations."""

    async def areset(self) -> list[Message]:
        """Start the episode: the prompt, a system message with the task's tools in it and
        the first user message. With `tools_in_prompt` False the system message is the
        task's system prompt alone, for a trainer that renders `start.openai_tools` with
        the model's own chat template."""
        start = self.start = await self.episode.areset()
        self.steps = 0
        system = start.system_prompt
        if self.tools_in_prompt:
            system = system_with_tools(start.system_prompt, start.openai_tools)
        self.messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": start.user_message},
        ]
        return list(self.messages)

    async def astep(self, action: str | ParsedText) -> Step:
        """Play the model's reply (its text, or text already split by a trainer's own
        tool-call parser) and return what follows it."""
        episode = self.episode
        if episode.done:
            raise EpisodeError("the episode is over: reset() starts a new one")
        parsed = parse_tool_calls(action) if isinstance(action, str) else action
        self.steps += 1
        self.messages.append(
            {"role": "assistant", "content": action if isinstance(action, str) else parsed.content}
        )
        observation: list[Message] = []
        if parsed.calls:
            for call in parsed.calls:
                if call.error is not None:
                    text = f"Error: {call.error}; nothing was run."
                else:
                    text = (await episode.acall(call.name, call.arguments)).text
                    if self.max_result_chars is not None:
                        text = bound_result(text, self.max_result_chars)
                observation.append({"role": "tool", "content": text})
        else:
            answer = episode.reply(parsed.content)
            following = answer if answer is not None else await episode.anext_turn()
            if following is not None:
                observation.append({"role": "user", "content": following})
        self.messages += observation
        if not episode.done and (self.max_steps is None or self.steps < self.max_steps):
            return Step(observation=observation, reward=0.0, done=False, info={})
        verdict = await episode.averdict()
        status = episode.status
        if status == "completed" and episode.session.truncated:
            status = "truncated"
        info = {"rewards": episode.rewards(), "status": status, "steps": self.steps}
        reward = float(verdict.score) if verdict is not None else None
        return Step(observation=observation, reward=reward, done=True, info=info)

    def reset(self) -> list[Message]:
        """Sync `areset`."""
        return run_sync(self.areset)

    def step(self, action: str | ParsedText) -> Step:
        """Sync `astep`."""
        return run_sync(lambda: self.astep(action))
