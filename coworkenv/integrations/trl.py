"""TRL: coworkenv tasks as `GRPOTrainer` environments.

    from trl import GRPOConfig, GRPOTrainer
    from coworkenv.integrations.trl import build_dataset, component_rewards, environment_factories

    trainer = GRPOTrainer(
        model=model,
        args=GRPOConfig(...),
        train_dataset=build_dataset(tasks),
        environment_factory=environment_factories(tasks),
        reward_funcs=component_rewards(),  # optional: the score comes with the environment
    )

`environment_factories` gives one environment class per set of services among the tasks;
each dataset row names its class (`environment`), so a prompt carries only the tools of its
task's services. TRL makes one instance per rollout and calls `reset(**row)`, then the tool
methods the model calls, then `get_reward()` (the verdict's score). Tool methods are the MCP
tools of the services, with their exact argument types and enums (what transformers reads
into the prompt's tool schemas) and their bounds in the argument descriptions. Multi-turn
tasks: the model calls `finish_turn` when it has done what the user asked; the tool answers
with the user's next message (after the turn's events), so a whole workday plays inside one
TRL generation. Tasks with clarification turns also get `ask_user(question)`, which returns
the user's answer within the turn (a question about a clear request gets that there is
nothing to add). With `records_dir`, each rollout's `EpisodeRecord` is appended there, for
`coworkenv report` and `coworkenv export`.

An episode that broke (its checks could not run, or the row's task is unknown) has no
reward: `get_reward()` and the component rewards return None, which TRL masks out of the
group's statistics. Building the classes checks first that the tasks can be judged here
(`rollout.episodes.preflight`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from coworkenv.rollout.agents.tool_schemas import bound_result, tools_for_services
from coworkenv.rollout.episodes.episode import Episode
from coworkenv.rollout.episodes.preflight import check_ready
from coworkenv.rollout.episodes.records_io import append_record
from coworkenv.rollout.episodes.rewards import COMPONENTS, reward_components, reward_score
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.servers.faults import FaultPlan
from coworkenv.task import Limits, Task

from .python_tools import tool_method

__all__ = [
    "ASK_USER",
    "FINISH_TURN",
    "CoworkEnvironment",
    "build_dataset",
    "component_rewards",
    "dataset_rows",
    "environment_class",
    "environment_factories",
    "environment_name",
]

POLICY_NAME = "trl"
FINISH_TURN = "finish_turn"
ASK_USER = "ask_user"
NOTHING_MORE = "The user has nothing more to say: go on with the request."
OVER = "The conversation is over: there is nothing left to do."


class CoworkEnvironment:
    """The base of the classes `environment_class` builds (one per set of tasks)."""

    tasks: ClassVar[dict[str, Task]] = {}
    cache: ClassVar[SeedCache]
    faults: ClassVar[FaultPlan | None] = None
    limits: ClassVar[Limits | None] = None
    seed: ClassVar[int] = 0
    records_dir: ClassVar[Path | None] = None
    max_result_chars: ClassVar[int | None] = None
    _trials: ClassVar[dict[str, itertools.count[int]]]

    def __init__(self) -> None:
        self.episode: Episode | None = None
        self.problem: str | None = None
        self.recorded = False

    def reset(self, **row: Any) -> str | None:
        """Start a fresh episode of the row's task (`task_id`); the prompt is in the row."""
        if self.episode is not None:
            self.episode.close()  # its workspace serves the next episode of the task
            self.episode = None
        self.recorded = False
        task = self.tasks.get(str(row.get("task_id")))
        if task is None:
            known = ", ".join(sorted(self.tasks))
            self.problem = f"no task {row.get('task_id')!r} in this environment; its tasks: {known}"
            return None
        self.problem = None
        trial = next(self._trials.setdefault(task.id, itertools.count()))
        self.episode = Episode(
            task,
            trial=trial,
            seed=self.seed,
            faults=self.faults,
            limits=self.limits,
            cache=self.cache,
            policy=POLICY_NAME,
        )
        self.episode.reset()
        return None

    def get_reward(self) -> float | None:
        """The verdict's score; None for an episode that broke (no verdict)."""
        episode = self._judged()
        return None if episode is None else reward_score(episode.verdict())

    def _reward_components(self) -> dict[str, float] | None:
        """The verdict's components (`rollout.episodes.rewards`); None for an episode that broke."""
        episode = self._judged()
        return None if episode is None else reward_components(episode.verdict())

    def _judged(self) -> Episode | None:
        """The episode, judged and (once) recorded; None when the row's task was unknown."""
        if self.problem is not None:
            return None
        episode = self._episode()
        episode.verdict()
        if self.records_dir is not None and not self.recorded:
            append_record(self.records_dir, episode.record())
            self.recorded = True
        return episode

    def _episode(self) -> Episode:
        if self.episode is None:
            raise RuntimeError("reset() was not called before the rollout")
        return self.episode

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self.problem is not None:
            return self.problem
        episode = self._episode()
        if episode.done:
            return OVER
        text = episode.call(name, arguments).text
        return text if self.max_result_chars is None else bound_result(text, self.max_result_chars)

    def _ask_user(self, question: str) -> str:
        if self.problem is not None:
            return self.problem
        episode = self._episode()
        if episode.done:
            return OVER
        answer = episode.reply(question if "?" in question else question.rstrip(".") + "?")
        return NOTHING_MORE if answer is None else f"The user answers: {answer}"

    def _finish_turn(self) -> str:
        if self.problem is not None:
            return self.problem
        episode = self._episode()
        if episode.done:
            return OVER
        following = episode.next_turn()
        return OVER if following is None else f"The user answers: {following}"


def environment_name(task: Task) -> str:
    """The name of the environment class a task plays in: its services, e.g. `calendar+mail`."""
    return "+".join(sorted(task.services))


def environment_factories(
    tasks: Iterable[Task],
    *,
    faults: FaultPlan | None = None,
    limits: Limits | None = None,
    seed: int = 0,
    records_dir: str | Path | None = None,
    max_result_chars: int | None = None,
) -> dict[str, type[CoworkEnvironment]]:
    """For `GRPOTrainer(environment_factory=...)`: one environment class per set of services
    among the tasks (see `environment_class`), by `environment_name`, which each row of
    `build_dataset` names. A prompt then carries only its own task's tools; `max_result_chars`
    bounds each tool result as in `environment_class`. Raises
    `NotReady` when the tasks cannot be judged here (see `rollout.episodes.preflight`)."""
    tasks = list(tasks)
    check_ready(tasks)
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        groups.setdefault(environment_name(task), []).append(task)
    cache = SeedCache()
    return {
        name: _environment_class(
            group,
            name=name,
            faults=faults,
            limits=limits,
            seed=seed,
            records_dir=records_dir,
            cache=cache,
            max_result_chars=max_result_chars,
        )
        for name, group in sorted(groups.items())
    }


def environment_class(
    tasks: Iterable[Task],
    *,
    faults: FaultPlan | None = None,
    limits: Limits | None = None,
    seed: int = 0,
    records_dir: str | Path | None = None,
    multi_turn: bool | None = None,
    ask_user: bool | None = None,
    max_result_chars: int | None = None,
) -> type[CoworkEnvironment]:
    """One class for `GRPOTrainer(environment_factory=...)` over these tasks: one tool method
    per MCP tool of their services (the union, when tasks differ: `environment_factories`
    gives each set of services a class of its own), plus `finish_turn` when a task has
    several turns (or `multi_turn=True`) and `ask_user` when a task has a clarification
    turn (or `ask_user=True`). With `max_result_chars`, each tool result the model reads is
    cut to that many characters, with a note on how to page
    (`rollout.agents.tool_schemas.bound_result`): a small model's context holds the episode.
    Raises `NotReady` when the tasks cannot be judged here."""
    tasks = list(tasks)
    check_ready(tasks)
    return _environment_class(
        tasks,
        name="CoworkEnv",
        faults=faults,
        limits=limits,
        seed=seed,
        records_dir=records_dir,
        cache=SeedCache(),
        multi_turn=multi_turn,
        ask_user=ask_user,
        max_result_chars=max_result_chars,
    )


def _environment_class(
    tasks: list[Task],
    *,
    name: str,
    faults: FaultPlan | None,
    limits: Limits | None,
    seed: int,
    records_dir: str | Path | None,
    cache: SeedCache,
    multi_turn: bool | None = None,
    ask_user: bool | None = None,
    max_result_chars: int | None = None,
) -> type[CoworkEnvironment]:
    by_id = {t.id: t for t in tasks}
    services = sorted({s for t in by_id.values() for s in t.services})
    namespace: dict[str, Any] = {
        "tasks": by_id,
        "cache": cache,
        "faults": faults,
        "limits": limits,
        "seed": seed,
        "records_dir": Path(records_dir) if records_dir is not None else None,
        "max_result_chars": max_result_chars,
        "_trials": {},
        "__doc__": f"coworkenv episodes of {len(by_id)} task(s) over {', '.join(services)}.",
    }
    for tool in tools_for_services(services):
        fn = tool["function"]
        namespace[fn["name"]] = tool_method(
            fn["name"], fn["description"], fn["parameters"], CoworkEnvironment._call
        )
    if multi_turn or (multi_turn is None and any(len(t.turns) > 1 for t in by_id.values())):
        namespace[FINISH_TURN] = tool_method(
            FINISH_TURN,
            "Call this when you have done everything the user asked in their latest message. "
            "It returns the user's next message, or says that the conversation is over.",
            {"type": "object", "properties": {}},
            lambda self, name, arguments: self._finish_turn(),
        )
    if ask_user or (ask_user is None and any(t.clarification for task in by_id.values() for t in task.turns)):
        namespace[ASK_USER] = tool_method(
            ASK_USER,
            "Ask the user a question when their request is ambiguous, before acting on it. "
            "It returns the user's answer. Do not ask when the request is clear.",
            {
                "type": "object",
                "properties": {"question": {"type": "string", "description": "The question to the user"}},
                "required": ["question"],
            },
            lambda self, name, arguments: self._ask_user(str(arguments["question"])),
        )
    return type(name, (CoworkEnvironment,), namespace)


def dataset_rows(tasks: Iterable[Task], *, repeats: int = 1) -> list[dict[str, Any]]:
    """One row per task (times `repeats`): `prompt` (system prompt and first user message,
    exactly as the episode starts), `task_id`, which `reset` reads, and `environment`, the
    name of its class among `environment_factories`."""
    rows = []
    cache = SeedCache()
    for task in tasks:
        episode = Episode(task, cache=cache)
        start = episode.reset()
        episode.close()
        prompt = [
            {"role": "system", "content": start.system_prompt},
            {"role": "user", "content": start.user_message},
        ]
        row = {"prompt": prompt, "task_id": task.id, "environment": environment_name(task)}
        rows += [dict(row) for _ in range(repeats)]
    return rows


def build_dataset(tasks: Iterable[Task], *, repeats: int = 1) -> Any:
    """`dataset_rows` as a `datasets.Dataset` (the `datasets` package comes with TRL)."""
    from datasets import Dataset

    return Dataset.from_list(dataset_rows(tasks, repeats=repeats))


def component_rewards() -> list[Callable[..., list[float | None]]]:
    """Reward functions for `GRPOTrainer(reward_funcs=...)`, one per component of
    `rollout.episodes.rewards` (`goals`, `guards`, `turns`, `safety`, `no_collateral`), each named
    after it, so TRL logs and, with `multi_objective_aggregation="normalize_then_sum"`,
    normalises each on its own. A rollout that broke gets None from each."""

    def component(name: str) -> Callable[..., list[float | None]]:
        def reward(environments: list[CoworkEnvironment], **kwargs: Any) -> list[float | None]:
            out: list[float | None] = []
            for environment in environments:
                components = environment._reward_components()
                out.append(None if components is None else components[name])
            return out

        reward.__name__ = reward.__qualname__ = name
        return reward

    return [component(name) for name in COMPONENTS]
