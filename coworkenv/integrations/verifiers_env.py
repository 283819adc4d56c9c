"""verifiers / prime-rl: coworkenv tasks as a verifiers environment (the `verifiers.v1` API).

    from coworkenv.integrations.verifiers_env import load_environment

    env = load_environment(["tasks/"], seed=0, records_dir="out/vf")
    async with env.serving():  # a verifiers `Env`, run as vf-eval runs one
        episode = await env.run_episode(next(iter(env.taskset)), vf.ModelContext(...))

Each rollout is one `coworkenv.Episode` on a fresh fork of its task's seed. The episode's
tools (the task's services, with their exact MCP schemas) are served over MCP on
127.0.0.1 for that rollout only, and every call goes through `Episode.call` (audited,
faults and the turn's tool limit enforced). The environment plays the user: the first
user message opens the conversation, and after each of the agent's turns the episode
judges it, applies the events between turns and the next user message is sent, until the
last turn. The rollout's reward is the verdict's score; the verdict's named scalars
(`Episode.rewards()`: score, success, raw_score, safety, collateral) and each turn's
pass are its metrics. With `records_dir`, each rollout's `EpisodeRecord` is appended
there, for `coworkenv report` and `coworkenv export`.

verifiers finds tasksets by id: importing this module registers it, in this process, as
the taskset `coworkenv`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mcp_types
import uvicorn
from mcp.server import MCPServer
from pydantic import Field

from coworkenv.rollout.episodes.episode import Episode, Start
from coworkenv.rollout.episodes.records_io import append_record
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.servers.faults import FaultPlan
from coworkenv.task import Limits, Task, load_task, task_files


def import_verifiers() -> Any:
    """`verifiers.v1`, from the PyPI package `verifiers`. In a coworkenv source checkout the
    folder `verifiers/` (installed as `coworkenv.verifiers`) would be found first whenever
    the checkout's root is on `sys.path` (running from it, or pytest): the import skips it."""
    from coworkenv import verifiers as ours

    root = Path(ours.__file__).resolve().parent.parent

    def shadows(entry: str) -> bool:
        with contextlib.suppress(OSError):
            return Path(entry or ".").resolve() == root
        return False

    loaded = sys.modules.get("verifiers")
    if loaded is not None and getattr(loaded, "__file__", None) == ours.__file__:
        raise ImportError(
            "`verifiers` was imported from a coworkenv checkout, not from the verifiers package"
        )
    saved = sys.path[:]
    sys.path[:] = [entry for entry in sys.path if not shadows(entry)]
    try:
        import verifiers.v1
    finally:
        sys.path[:] = saved
    return verifiers.v1


if TYPE_CHECKING:
    import verifiers.v1 as vf
else:
    vf = import_verifiers()

__all__ = [
    "TASKSET_ID",
    "CoworkEnv",
    "CoworkEnvConfig",
    "CoworkTask",
    "CoworkTaskConfig",
    "CoworkTaskData",
    "CoworkTaskset",
    "CoworkTasksetConfig",
    "import_verifiers",
    "load_environment",
]

TASKSET_ID = "coworkenv"
POLICY_NAME = "verifiers"
EXAMPLES = Path(__file__).resolve().parent.parent.parent / "tasks" / "examples"


class CoworkTaskData(vf.TaskData):
    """One coworkenv task as a verifiers row (`id` is the task id)."""

    turns: int = 1
    services: list[str] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)


class CoworkTaskConfig(vf.TaskConfig):
    """Set per rollout by the environment: where that rollout's episode serves its tools."""

    mcp_url: str | None = None


class CoworkTasksetConfig(vf.TasksetConfig):
    """Which coworkenv tasks load, and how their episodes run."""

    id: str = TASKSET_ID
    task: CoworkTaskConfig = CoworkTaskConfig()
    tasks: list[str] = Field(default_factory=list)
    """Task files, and folders searched for `*.json`; none: the examples of a checkout."""
    seed: int = 0
    """Recorded on each episode (and seeds the fault stream with `faults`)."""
    faults: FaultPlan | None = None
    limits: Limits | None = None
    """Replaces the tasks' tool-call limits."""
    records_dir: str | None = None
    """Append each rollout's `EpisodeRecord` here."""


class _EpisodeTools(vf.Toolset[vf.ToolsetConfig]):
    """The rollout's tools, served by the environment (the harness gets the URL)."""

    TOOL_PREFIX = None  # tool names exactly as the task's MCP servers name them


class CoworkTask(vf.Task[CoworkTaskData, vf.State, CoworkTaskConfig]):
    """A coworkenv task in verifiers. Scoring reads the verdict of the rollout's episode."""

    def __init__(self, data: CoworkTaskData, config: CoworkTaskConfig | None = None) -> None:
        super().__init__(data, config)
        self.episode: Episode | None = None

    @classmethod
    def toolsets(cls, config: CoworkTaskConfig) -> list[Any]:
        """The episode's MCP endpoint, once the environment has started it."""
        return [] if config.mcp_url is None else [_EpisodeTools(vf.ToolsetConfig(url=config.mcp_url))]

    @property
    def key(self) -> str:
        return self.data.id or self.hash

    @vf.reward
    async def verdict_score(self) -> dict[str, float]:
        """The reward `score`: the verdict's score (0.0 for an episode that broke)."""
        verdict = None if self.episode is None else await self.episode.averdict()
        return {"score": float(verdict.score) if verdict is not None else 0.0}

    @vf.metric
    async def verdict(self) -> dict[str, float]:
        """The verdict's named scalars (`Episode.rewards()`), `check/<id>` for each final
        check and `turn/<i>` for each turn (1.0 when it passed)."""
        if self.episode is None:
            return {}
        verdict = await self.episode.averdict()
        metrics = self.episode.rewards()
        if verdict is not None:
            metrics |= {name: value for name, value in verdict.rewards().items() if name.startswith("check/")}
            metrics |= {f"turn/{turn.turn}": float(turn.success) for turn in verdict.turns}
        return metrics


class CoworkTaskset(vf.Taskset[CoworkTask, CoworkTasksetConfig]):
    """coworkenv tasks, one row each, in file order."""

    def __init__(self, config: CoworkTasksetConfig) -> None:
        super().__init__(config)
        self.tasks = {t.id: t for t in _load(config.tasks)}
        self.cache = SeedCache()
        self.trials: dict[str, itertools.count[int]] = {}

    def load(self) -> Iterator[CoworkTask]:
        for task in self.tasks.values():
            data = CoworkTaskData(
                id=task.id,
                name=task.id,
                description=task.title,
                prompt=task.turns[0].user,
                turns=len(task.turns),
                services=list(task.services),
                capabilities=list(task.capabilities),
            )
            yield CoworkTask(data, self.config.task)


class CoworkEnvConfig(vf.EnvConfig):
    """One agent: verifiers' chat harness with MCP tools (`null`), run as a local process
    (the episode's tools are served on 127.0.0.1, which a remote sandbox cannot reach)."""

    agent: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"}, runtime={"type": "subprocess"})


class CoworkEnv(vf.Env[CoworkEnvConfig]):
    """Plays one coworkenv episode per rollout, the environment being the user."""

    async def run(self, task: CoworkTask, agents: Any) -> None:
        taskset = cast(CoworkTaskset, self.taskset)
        config: CoworkTasksetConfig = taskset.config
        cowork = taskset.tasks[task.data.id or ""]
        episode = Episode(
            cowork,
            trial=next(taskset.trials.setdefault(cowork.id, itertools.count())),
            seed=config.seed,
            faults=config.faults,
            limits=config.limits,
            cache=taskset.cache,
            policy=POLICY_NAME,
        )
        start = await episode.areset()
        async with _serve_episode(episode, start) as url:
            played = CoworkTask(
                task.data.model_copy(update={"prompt": None, "system_prompt": start.system_prompt}),
                task.config.model_copy(update={"mcp_url": url}),
            )
            played.episode = episode
            async with agents.agent.interaction(played) as chat:
                await _play(episode, chat, start.user_message)
        if chat.trace.errors:
            # the model endpoint or the harness broke, not the agent's work: no verdict, and
            # the record says so (as `coworkenv rollout` does), so it is not read as a score
            episode.fail("; ".join(f"{e.type}: {e.message}" for e in chat.trace.errors))
        await episode.averdict()  # judged now, so its workspace can go back to the cache
        if config.records_dir is not None:
            append_record(config.records_dir, await episode.arecord())
        episode.close()


async def _play(episode: Episode, chat: Any, message: str) -> None:
    """The turns: send the user's message, let the agent work, then judge the turn and go on
    with the next one (after its events) until the last turn or until the agent stops."""
    following: str | None = message
    while following is not None:
        segment = await chat.turn(following)
        if segment.terminated:
            return  # the verdict counts the turns it never reached as failed
        if segment.last_reply:
            episode.reply(segment.last_reply)
        following = await episode.anext_turn()


class _EpisodeServer(MCPServer[Any]):
    """An MCP server whose tools are the episode's: listed with their exact schemas, each
    call made through `Episode.acall`."""

    def __init__(self, episode: Episode, start: Start) -> None:
        super().__init__(name="coworkenv", log_level="WARNING")
        self.episode = episode
        self._tools = [mcp_types.Tool.model_validate(t) for t in start.tools]

    async def list_tools(self) -> list[mcp_types.Tool]:
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self.episode.done:
            text = "The conversation is over: there is nothing left to do."
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=text)], is_error=True
            )
        outcome = await self.episode.acall(name, arguments)
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=outcome.text)],
            structured_content=outcome.structured if isinstance(outcome.structured, dict) else None,
            is_error=outcome.is_error,
        )


@contextlib.asynccontextmanager
async def _serve_episode(episode: Episode, start: Start) -> AsyncIterator[str]:
    """Serve the episode's tools over streamable HTTP on 127.0.0.1 while the rollout runs."""
    server = _EpisodeServer(episode, start)
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(web.serve(sockets=[sock]))
    try:
        while not web.started:
            if serving.done():
                serving.result()  # raises what stopped it
                raise RuntimeError("the episode's MCP endpoint stopped before it started")
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        web.should_exit = True
        await serving
        sock.close()


def _load(paths: Iterable[str]) -> list[Task]:
    paths = list(paths)
    if not paths:
        if not EXAMPLES.is_dir():
            raise ValueError(
                "no tasks given, and this installation has no examples: pass task files or folders"
            )
        paths = [str(EXAMPLES)]
    files = task_files(list(paths))
    if not files:
        raise ValueError(f"no task files in {paths}")
    return [load_task(p) for p in files]


def load_environment(
    tasks: str | Path | Iterable[str | Path] = (),
    *,
    seed: int = 0,
    faults: FaultPlan | None = None,
    limits: Limits | None = None,
    records_dir: str | Path | None = None,
    **env: Any,
) -> CoworkEnv:
    """A verifiers environment over coworkenv tasks: task files, folders of them, or (with
    none) the examples of a source checkout. `env` sets other `CoworkEnvConfig` fields
    (e.g. `agent={"harness": {"id": "null"}, "max_turns": 20}`)."""
    if isinstance(tasks, str | Path):
        tasks = [tasks]
    taskset = CoworkTasksetConfig(
        tasks=[str(p) for p in tasks],
        seed=seed,
        faults=faults,
        limits=limits,
        records_dir=None if records_dir is None else str(records_dir),
    )
    config = CoworkEnvConfig(taskset=taskset, **env)
    return cast(CoworkEnv, vf.load_environment(config))


# verifiers resolves a taskset id to a module (`verifiers.v1.tasksets.<id>`, else `<id>`)
# that exports one Taskset and one Env subclass: this module, under the id `coworkenv`.
sys.modules.setdefault(f"verifiers.v1.tasksets.{TASKSET_ID}", sys.modules[__name__])
