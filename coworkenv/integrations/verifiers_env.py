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
last turn. The rollout's reward is the verdict's score; its metrics are the verdict's named
scalars (`Episode.rewards()`: score, success, raw_score, safety, collateral) and reward
components (`rollout.episodes.rewards`: goals, guards, turns, no_collateral), named alike for every
task, so `vf-eval`'s averages over tasks mean what they say. A rollout that could not be
judged (its model endpoint or harness broke, or its checks could not run) gets no reward
and no metrics: its scoring fails with the reason. With `records_dir`, each rollout's
`EpisodeRecord` is appended there, for `coworkenv report` and `coworkenv export`.

verifiers finds tasksets and harnesses by id: importing this module registers it, in this
process, as the taskset `coworkenv` and the harness `coworkenv` (`OwnPythonChatHarness`:
verifiers' chat harness run by this Python, so a rollout downloads nothing).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import Field

from coworkenv.rollout.episodes.episode import Episode
from coworkenv.rollout.episodes.preflight import check_ready
from coworkenv.rollout.episodes.records_io import append_record
from coworkenv.rollout.episodes.rewards import reward_components
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.servers.faults import FaultPlan
from coworkenv.task import Limits, Task, example_tasks_dir, load_task, task_files

from .episode_server import serve_episode


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
    from verifiers.v1.harnesses.null.harness import NullHarness as _NullHarness
else:
    vf = import_verifiers()
    from verifiers.v1.harnesses.null.harness import NullHarness as _NullHarness

__all__ = [
    "HARNESS_ID",
    "TASKSET_ID",
    "CoworkEnv",
    "CoworkEnvConfig",
    "CoworkTask",
    "CoworkTaskConfig",
    "CoworkTaskData",
    "CoworkTaskset",
    "CoworkTasksetConfig",
    "OwnPythonChatHarness",
    "import_verifiers",
    "load_environment",
]

TASKSET_ID = "coworkenv"
POLICY_NAME = "verifiers"


class Unjudged(RuntimeError):
    """The rollout's episode has no verdict (it broke): no reward, no metrics."""


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
    """Task files, and folders searched for `*.json`; none: the example tasks."""
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
        """The reward `score`: the verdict's score."""
        verdict = await self._verdict()
        return {"score": float(verdict.score)}

    @vf.metric
    async def verdict(self) -> dict[str, float]:
        """The verdict's named scalars (`Episode.rewards()`) and reward components
        (`rollout.episodes.rewards`): the same names for every task."""
        verdict = await self._verdict()
        assert self.episode is not None
        return self.episode.rewards() | (reward_components(verdict) or {})

    async def _verdict(self) -> Any:
        verdict = None if self.episode is None else await self.episode.averdict()
        if verdict is None:
            reason = "no episode" if self.episode is None else self.episode.error
            raise Unjudged(f"the episode could not be judged: {reason}")
        return verdict


class CoworkTaskset(vf.Taskset[CoworkTask, CoworkTasksetConfig]):
    """coworkenv tasks, one row each, in file order."""

    def __init__(self, config: CoworkTasksetConfig) -> None:
        super().__init__(config)
        tasks = _load(config.tasks)
        check_ready(tasks)
        self.tasks = {t.id: t for t in tasks}
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


class _ScriptsOnThisPython:
    """A runtime whose PEP 723 scripts run on this interpreter, not in a uv environment:
    the script is written where the runtime keeps scripts, and its argv is this Python and
    that file. Everything else is the runtime's own."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def prepare_uv_script(
        self, script: str | bytes, env: dict[str, str] | None = None, *, activate: bool = True
    ) -> list[str]:
        data = script.encode() if isinstance(script, str) else script
        path = f"{self._runtime.scripts_dir}/{hashlib.sha256(data).hexdigest()}.py"
        await self._runtime.write(path, data)
        return [sys.executable, path]


class OwnPythonChatHarness(_NullHarness):
    """verifiers' chat harness (`null`: the model and the task's MCP tools), run by the
    Python coworkenv runs on. verifiers runs that chat program as a uv script, whose packages
    (openai, mcp, httpx, httpx2, tenacity, certifi) uv fetches from the package index on a
    machine's first rollout, which an air-gapped cluster cannot reach; the `[verifiers]`
    extra installs them beside coworkenv, so here the same program runs on this interpreter.
    For the `subprocess` runtime only: in a container or remote runtime this interpreter
    does not exist (choose verifiers' `null` harness there)."""

    async def setup(self, runtime: Any) -> None:
        """Nothing to install: the chat program's packages come with the `[verifiers]` extra."""

    async def launch(self, ctx: Any, trace: Any, runtime: Any, *args: Any, **kwargs: Any) -> Any:
        return await super().launch(ctx, trace, _ScriptsOnThisPython(runtime), *args, **kwargs)


# verifiers resolves a harness id to a module (`verifiers.v1.harnesses.<id>`, else `<id>`)
# that exports one Harness subclass: this module (whose only one is the harness above),
# under the id `coworkenv`, as for the taskset below. Registered here, before the agent
# config below names it.
HARNESS_ID = "coworkenv"
sys.modules.setdefault(f"verifiers.v1.harnesses.{HARNESS_ID}", sys.modules[__name__])


class CoworkEnvConfig(vf.EnvConfig):
    """One agent: verifiers' chat harness with MCP tools, run as a local process by this
    Python (`OwnPythonChatHarness`; the episode's tools are served on 127.0.0.1, which a
    remote sandbox cannot reach)."""

    agent: vf.AgentConfig = vf.AgentConfig(harness={"id": HARNESS_ID}, runtime={"type": "subprocess"})


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
        async with serve_episode(episode) as url:
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


def _load(paths: Iterable[str]) -> list[Task]:
    paths = list(paths)
    if not paths:
        paths = [str(example_tasks_dir())]
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
    none) the example tasks that come with coworkenv. Raises `NotReady` when the tasks
    cannot be judged here (see `rollout.episodes.preflight`). `env` sets other `CoworkEnvConfig` fields
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
