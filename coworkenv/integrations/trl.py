"""TRL: coworkenv tasks as a `GRPOTrainer` environment.

    from trl import GRPOConfig, GRPOTrainer
    from coworkenv.integrations.trl import environment_class, build_dataset

    tasks = load_tasks(["tasks/"])
    trainer = GRPOTrainer(
        model=model,
        args=GRPOConfig(...),
        train_dataset=build_dataset(tasks),
        environment_factory=environment_class(tasks),
    )

TRL makes one instance per rollout and calls `reset(**row)` with the dataset row, then
the tool methods the model calls, then `get_reward()` (the verdict's score). Tool methods
are the MCP tools of the tasks' services, with their exact argument types and enums (what
transformers reads into the prompt's tool schemas) and their bounds in the argument
descriptions. Multi-turn tasks: the model calls `finish_turn` when it has done what the
user asked; the tool answers with the user's next message (after the turn's events), so a
whole workday plays inside one TRL generation. Tasks with clarification turns also get
`ask_user(question)`, which returns the user's answer within the turn (a question about a
clear request gets that there is nothing to add). With `records_dir`, each rollout's
`EpisodeRecord` is appended there, for `coworkenv report` and `coworkenv export`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

from coworkenv.rollout.episode import Episode
from coworkenv.rollout.records_io import append_record
from coworkenv.rollout.seeding import SeedCache
from coworkenv.rollout.tool_schemas import bound_result, tools_for_services
from coworkenv.servers.faults import FaultPlan
from coworkenv.task import Limits, Task

from .python_tools import tool_method

__all__ = [
    "ASK_USER",
    "FINISH_TURN",
    "CoworkEnvironment",
    "build_dataset",
    "dataset_rows",
    "environment_class",
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

    def reset(self, **row: Any) -> str | None:
        """Start a fresh episode of the row's task (`task_id`); the prompt is in the row."""
        task = self.tasks[row["task_id"]]
        trial = next(self._trials.setdefault(task.id, itertools.count()))
        if self.episode is not None:
            self.episode.close()  # its workspace serves the next episode of the task
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

    def get_reward(self) -> float:
        """The verdict's score (0.0 for an episode that broke); appends the record if asked."""
        episode = self._episode()
        verdict = episode.verdict()
        if self.records_dir is not None:
            append_record(self.records_dir, episode.record())
        return verdict.score if verdict is not None else 0.0

    def _episode(self) -> Episode:
        if self.episode is None:
            raise RuntimeError("reset() was not called before the rollout")
        return self.episode

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        episode = self._episode()
        if episode.done:
            return OVER
        text = episode.call(name, arguments).text
        return text if self.max_result_chars is None else bound_result(text, self.max_result_chars)

    def _ask_user(self, question: str) -> str:
        episode = self._episode()
        if episode.done:
            return OVER
        answer = episode.reply(question if "?" in question else question.rstrip(".") + "?")
        return NOTHING_MORE if answer is None else f"The user answers: {answer}"

    def _finish_turn(self) -> str:
        episode = self._episode()
        if episode.done:
            return OVER
        following = episode.next_turn()
        return OVER if following is None else f"The user answers: {following}"


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
    """A class for `GRPOTrainer(environment_factory=...)` over these tasks: one tool method
    per MCP tool of their services (the union, when tasks differ), plus `finish_turn` when
    a task has several turns (or `multi_turn=True`) and `ask_user` when a task has a
    clarification turn (or `ask_user=True`). With `max_result_chars`, each tool result the
    model reads is cut to that many characters, with a note on how to page
    (`rollout.tool_schemas.bound_result`): a small model's context holds the episode."""
    by_id = {t.id: t for t in tasks}
    if not by_id:
        raise ValueError("no tasks given")
    services = sorted({s for t in by_id.values() for s in t.services})
    namespace: dict[str, Any] = {
        "tasks": by_id,
        "cache": SeedCache(),
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
    return type("CoworkEnv", (CoworkEnvironment,), namespace)


def dataset_rows(tasks: Iterable[Task], *, repeats: int = 1) -> list[dict[str, Any]]:
    """One row per task (times `repeats`): `prompt` (system prompt and first user message,
    exactly as the episode starts) and `task_id`, which `reset` reads."""
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
        rows += [{"prompt": prompt, "task_id": task.id} for _ in range(repeats)]
    return rows


def build_dataset(tasks: Iterable[Task], *, repeats: int = 1) -> Any:
    """`dataset_rows` as a `datasets.Dataset` (the `datasets` package comes with TRL)."""
    from datasets import Dataset

    return Dataset.from_list(dataset_rows(tasks, repeats=repeats))
