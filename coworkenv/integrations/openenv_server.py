"""OpenEnv: coworkenv tasks served as an OpenEnv environment (`coworkenv env-server`).

Built on `openenv-core`'s own server, so sessions, their bound and idle expiry, the
WebSocket protocol and the HTTP endpoints are OpenEnv's. Each session holds one `Episode`:

- reset(task_id, trial, seed): a fresh fork of the task; the observation carries the
  system prompt and the first user message;
- step with `{"type": "list_tools"}` or `{"type": "call_tool", "tool_name", "arguments"}`:
  the MCP tool listing and calls that OpenEnv's `MCPToolClient` sends (a tool's `result` is
  the text the model reads; an error result is text too, with `is_error` set);
- step with `{"type": "message", "content"}`: the agent's answer to the user, which ends
  the turn; the observation is the next user message, or the end of the episode. A message
  that asks a question (see clarification turns in docs/tasks.md) is answered within the
  turn instead: the observation's `user_message` is the answer and the turn goes on;
- step with `{"type": "finish"}`: the episode ends now (turns not reached count as failed);
- state: the task, turn, steps taken and whether the episode is over.

Every observation carries `done` and `reward` (0.0 until the end, then the verdict's
score) and, at the end, the verdict's named rewards in `rewards`. With `records_dir`, each
finished episode's `EpisodeRecord` is appended there, for `coworkenv report` and `export`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from openenv.core.env_server import (
    Action,
    CallToolObservation,
    ConcurrencyConfig,
    Environment,
    ListToolsObservation,
    Observation,
    State,
    create_fastapi_app,
)
from openenv.core.env_server.mcp_types import Tool as OpenEnvTool
from pydantic import Field

from coworkenv.rollout.episode import Episode
from coworkenv.rollout.records_io import append_record
from coworkenv.rollout.seeding import SeedCache
from coworkenv.rollout.tool_schemas import bound_result
from coworkenv.task import Task

__all__ = ["CoworkAction", "CoworkObservation", "CoworkOpenEnv", "build_app"]

POLICY_NAME = "openenv"


class CoworkAction(Action):
    """One step: an MCP tool listing or call, a message to the user, or finishing."""

    type: Literal["list_tools", "call_tool", "message", "finish"]
    tool_name: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    content: str | None = None


class CoworkObservation(Observation):
    """What the agent learns after a reset, a message or the end of the episode."""

    task_id: str
    turn: int | None = Field(description="The turn in play (None once the episode is over)")
    user_message: str | None = None
    system_prompt: str | None = None
    rewards: dict[str, float] = Field(
        default_factory=dict, description="The verdict's named rewards, at the end"
    )
    error: str | None = None


class CoworkOpenEnv(Environment[CoworkAction, Observation, State]):
    """An OpenEnv environment over a set of tasks; the server makes one per session."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(
        self,
        tasks: dict[str, Task],
        cache: SeedCache,
        records_dir: Path | None = None,
        max_result_chars: int | None = None,
    ) -> None:
        super().__init__()
        self.tasks = tasks
        self.cache = cache
        self.records_dir = records_dir
        self.max_result_chars = max_result_chars
        self.episode: Episode | None = None
        self.episode_id: str | None = None
        self.steps = 0
        self.recorded = False

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        trial: int = 0,
    ) -> Observation:
        """Start an episode of `task_id` (the only task, when the server has one)."""
        if task_id is None and len(self.tasks) == 1:
            task_id = next(iter(self.tasks))
        if task_id not in self.tasks:
            known = ", ".join(sorted(self.tasks))
            return CoworkObservation(
                task_id=str(task_id),
                turn=None,
                done=True,
                reward=0.0,
                error=f"no task {task_id!r}; tasks: {known}",
            )
        task = self.tasks[task_id]
        if self.episode is not None:
            self.episode.close()  # its workspace serves the next episode of the task
        self.episode = Episode(task, trial=trial, seed=seed or 0, cache=self.cache, policy=POLICY_NAME)
        self.episode_id = episode_id or uuid.uuid4().hex
        self.steps = 0
        self.recorded = False
        start = await self.episode.areset()
        return CoworkObservation(
            task_id=task.id,
            turn=0,
            user_message=start.user_message,
            system_prompt=start.system_prompt,
            done=False,
            reward=0.0,
        )

    def close(self) -> None:
        """The session ended: the episode's workspace goes back to the seed cache."""
        if self.episode is not None:
            self.episode.close()

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Observation:
        raise NotImplementedError("the server calls reset_async")

    async def step_async(
        self, action: CoworkAction, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        """List tools, call one, answer the user (ends the turn) or finish."""
        episode = self.episode
        if episode is None:
            return CoworkObservation(task_id="", turn=None, done=True, reward=0.0, error="call reset first")
        self.steps += 1
        if action.type == "list_tools":
            tools = [
                OpenEnvTool(name=t.name, description=t.description or "", input_schema=t.input_schema)
                for t in episode.session.tools
            ]
            return ListToolsObservation(tools=tools, done=episode.done, reward=self._reward())
        if episode.done:
            return await self._end()
        if action.type == "call_tool":
            if not action.tool_name:
                return self._observation(error="call_tool needs a tool_name")
            outcome = await episode.acall(action.tool_name, action.arguments)
            return CallToolObservation(
                tool_name=action.tool_name,
                result=outcome.text
                if self.max_result_chars is None
                else bound_result(outcome.text, self.max_result_chars),
                done=False,
                reward=0.0,
                metadata={"is_error": outcome.is_error},
            )
        if action.type == "message":
            answer = episode.reply(action.content or "")
            if answer is not None:  # the agent asked: the user answers within the turn
                return self._observation(user_message=answer)
            following = await episode.anext_turn()
            if following is None:
                return await self._end()
            return self._observation(user_message=following)
        return await self._end()

    def step(self, action: CoworkAction, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        raise NotImplementedError("the server calls step_async")

    @property
    def state(self) -> State:
        episode = self.episode
        return State(
            episode_id=self.episode_id,
            step_count=self.steps,
            task_id=episode.task.id if episode else None,
            turn=episode.turn if episode else None,
            done=episode.done if episode else False,
        )

    def _reward(self) -> float:
        return self.episode.rewards()["score"] if self.episode is not None else 0.0

    def _observation(self, *, user_message: str | None = None, error: str | None = None) -> CoworkObservation:
        assert self.episode is not None
        return CoworkObservation(
            task_id=self.episode.task.id,
            turn=self.episode.turn,
            user_message=user_message,
            error=error,
            done=False,
            reward=0.0,
        )

    async def _end(self) -> CoworkObservation:
        episode = self.episode
        assert episode is not None
        await episode.averdict()
        if self.records_dir is not None and not self.recorded:
            append_record(self.records_dir, await episode.arecord())
            self.recorded = True
        rewards = episode.rewards()
        return CoworkObservation(
            task_id=episode.task.id, turn=None, done=True, reward=rewards["score"], rewards=rewards
        )


def build_app(
    tasks: Iterable[Task],
    *,
    max_sessions: int = 8,
    idle_timeout: float | None = 600,
    records_dir: str | Path | None = None,
    max_result_chars: int | None = None,
) -> Any:
    """The OpenEnv FastAPI app over these tasks: at most `max_sessions` sessions at once,
    each dropped after `idle_timeout` seconds without a message (None: never). With
    `max_result_chars`, each tool result is cut to that many characters, with a note on how
    to page (`rollout.tool_schemas.bound_result`)."""
    by_id = {t.id: t for t in tasks}
    if not by_id:
        raise ValueError("no tasks given")
    cache = SeedCache()
    folder = Path(records_dir) if records_dir is not None else None
    return create_fastapi_app(
        lambda: CoworkOpenEnv(by_id, cache, folder, max_result_chars),
        CoworkAction,
        CoworkObservation,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout),
    )
