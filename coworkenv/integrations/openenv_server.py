"""OpenEnv: coworkenv tasks served as an OpenEnv environment (`coworkenv env-server`).

Built on `openenv-core`'s own server, so sessions, their bound and idle expiry, the
WebSocket protocol and the HTTP endpoints are OpenEnv's. Each session holds one `Episode`:

- reset(task_id, trial, seed): a fresh fork of the task; the observation carries the
  system prompt and the first user message. Without `trial`, each episode of a task takes
  the next trial number (after those already in `records_dir`), so records never collide;
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
score) and, at the end, the verdict's named rewards and components in `rewards`. An episode
that could not be judged (its checks could not run) or a reset with an unknown task ends
with `reward` None and `error` saying why: no reward to learn from. With `records_dir`, each
finished episode's `EpisodeRecord` is appended there, for `coworkenv report` and `export`.

Episodes are played over the WebSocket (`/ws`, what OpenEnv's clients use): a session holds
its episode between messages. OpenEnv's HTTP `/reset` and `/step` are stateless (each
request gets a fresh environment), so an HTTP `/step` has no episode and says so; `/mcp`
(HTTP and WebSocket) answers with an error that says where the tools are. `/metadata` lists
the tasks.
"""

from __future__ import annotations

import itertools
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
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

from coworkenv.rollout.agents.tool_schemas import bound_result
from coworkenv.rollout.episodes.episode import Episode
from coworkenv.rollout.episodes.preflight import check_ready
from coworkenv.rollout.episodes.records_io import append_record, read_records
from coworkenv.rollout.episodes.rewards import reward_components
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.task import Task

__all__ = ["CoworkAction", "CoworkObservation", "CoworkOpenEnv", "build_app"]

POLICY_NAME = "openenv"
NO_EPISODE = (
    "no episode in this session: call reset first. OpenEnv's HTTP /reset and /step are "
    "stateless (each request gets a fresh environment): play an episode over the WebSocket "
    "/ws, as GenericEnvClient and MCPToolClient do"
)
MCP_HERE = (
    "coworkenv's tools are served inside an episode: over the WebSocket /ws, reset(task_id=...) "
    "and then the steps list_tools and call_tool (what MCPToolClient sends); this endpoint has "
    "no episode to call them on. For a plain MCP server over HTTP, run `coworkenv serve`"
)


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
        default_factory=dict,
        description="The verdict's named rewards and components (rollout.episodes.rewards), at the end",
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
        trials: dict[str, itertools.count[int]] | None = None,
        max_result_chars: int | None = None,
    ) -> None:
        super().__init__()
        self.tasks = tasks
        self.cache = cache
        self.records_dir = records_dir
        self.trials = {} if trials is None else trials
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
        trial: int | None = None,
    ) -> Observation:
        """Start an episode of `task_id` (the only task, when the server has one); without
        `trial`, the task's next trial number."""
        if task_id is None and len(self.tasks) == 1:
            task_id = next(iter(self.tasks))
        if task_id not in self.tasks:
            known = ", ".join(sorted(self.tasks))
            return CoworkObservation(
                task_id=str(task_id),
                turn=None,
                done=True,
                reward=None,
                error=f"no task {task_id!r}; tasks: {known}",
            )
        task = self.tasks[task_id]
        if trial is None:
            trial = next(self.trials.setdefault(task.id, itertools.count()))
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
            return CoworkObservation(task_id="", turn=None, done=True, reward=None, error=NO_EPISODE)
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

    def get_metadata(self) -> EnvironmentMetadata:
        """The server's tasks: their ids (what `reset(task_id=...)` takes), titles and services."""
        rows = [
            f"| {t.id} | {t.title} | {', '.join(t.services)} | {len(t.turns)} |" for t in self.tasks.values()
        ]
        table = "\n".join(["| task_id | title | services | turns |", "| --- | --- | --- | --- |", *rows])
        return EnvironmentMetadata(
            name="coworkenv",
            description=f"{len(self.tasks)} coworkenv task(s); reset(task_id=...) with one of: "
            + ", ".join(self.tasks),
            readme_content=table,
        )

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

    def _reward(self) -> float | None:
        episode = self.episode
        if episode is None or not episode.done:
            return 0.0
        return None if episode.status == "error" else episode.rewards()["score"]

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
        verdict = await episode.averdict()
        if self.records_dir is not None and not self.recorded:
            append_record(self.records_dir, await episode.arecord())
            self.recorded = True
        if verdict is None:  # not judged (its checks could not run): no reward
            return CoworkObservation(
                task_id=episode.task.id, turn=None, done=True, reward=None, error=episode.error
            )
        rewards = episode.rewards() | (reward_components(verdict) or {})
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
    to page (`rollout.agents.tool_schemas.bound_result`). Raises `NotReady` when the tasks
    cannot be judged here."""
    tasks = list(tasks)
    check_ready(tasks)
    by_id = {t.id: t for t in tasks}
    cache = SeedCache()
    folder = Path(records_dir) if records_dir is not None else None
    trials = _next_trials(folder)
    app = create_fastapi_app(
        lambda: CoworkOpenEnv(by_id, cache, folder, trials, max_result_chars),
        CoworkAction,
        CoworkObservation,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_timeout),
    )
    # OpenEnv's /mcp serves environments that hold one MCP server for their whole life;
    # coworkenv's tools exist only inside an episode. Say so instead of "not supported".
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != "/mcp"]
    app.router.routes.insert(0, Route("/mcp", _mcp_over_http, methods=["POST"]))
    app.router.routes.insert(0, WebSocketRoute("/mcp", _mcp_over_websocket))
    return app


def _next_trials(folder: Path | None) -> dict[str, itertools.count[int]]:
    """Per task, the trial numbers new episodes take: after those recorded in `folder`."""
    last: dict[str, int] = {}
    for record in read_records(folder) if folder is not None and folder.is_dir() else []:
        if record.policy == POLICY_NAME:
            last[record.task_id] = max(last.get(record.task_id, -1), record.trial)
    return {task_id: itertools.count(trial + 1) for task_id, trial in last.items()}


def _mcp_error(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": MCP_HERE}}


async def _mcp_over_http(request: Request) -> JSONResponse:
    try:
        body = await request.json()
    except ValueError:
        body = {}
    return JSONResponse(_mcp_error(body.get("id") if isinstance(body, dict) else None))


async def _mcp_over_websocket(websocket: WebSocket) -> None:
    await websocket.accept()
    try:
        message = await websocket.receive_json()
    except ValueError:
        message = {}
    await websocket.send_json(_mcp_error(message.get("id") if isinstance(message, dict) else None))
    await websocket.close()
