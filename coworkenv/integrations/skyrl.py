"""SkyRL: coworkenv tasks as a skyrl-gym text environment (`BaseTextEnv`).

    from coworkenv.integrations.skyrl import dataset_rows, register_env

    register_env()  # in each process that makes environments (SkyRL's generator workers)
    rows = dataset_rows(["tasks/examples"], records_dir="out/skyrl")  # SkyRL's prompt dataset

SkyRL's generator makes one environment per trajectory with `skyrl_gym.make("coworkenv",
env_config=..., extras=row)`. A row of `dataset_rows` holds the prompt, `env_class`, the
`task_id` and, under `coworkenv`, where the environment loads its tasks from (`tasks`) and
the `seed` and `records_dir` of its episodes (SkyRL's typed config has no place for them;
keys of the same names in `env_config` win). Each environment plays one `coworkenv.Episode`
on a fresh fork of the task's seed, from the model's text (`TextEpisode`): `init` gives the
prompt (the task's system prompt with its tools in Hermes form, and the first user
message), each `step(text)` runs the text's `<tool_call>` blocks, or takes it as the answer
to the user and moves to the next turn after its events. The last step's reward is the
verdict's score (0.0 before); its metadata and `get_metrics()` hold the named rewards.
SkyRL's `max_turns` (in the extras) bounds the steps: past it the episode is judged as it
stands. With `records_dir`, each episode's record is appended there when it ends. With
`max_result_chars` (a `dataset_rows` argument, or a key of `env_config`), each tool result
the model reads is cut to that many characters, with a note on how to page.

An episode that has no verdict (its checks could not run) raises `UnscoredEpisode` at its
last step: SkyRL has no way to leave one trajectory out of its group's statistics, and a
made-up 0.0 would be learned from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from skyrl_gym import register, registry
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType

from coworkenv.rollout.episodes.episode import Episode
from coworkenv.rollout.episodes.records_io import append_record

from .task_sets import task_set
from .text_episode import TextEpisode, UnscoredEpisode

__all__ = ["ENV_ID", "CoworkTextEnv", "dataset_rows", "register_env"]

ENV_ID = "coworkenv"
POLICY_NAME = "skyrl"


def register_env(env_id: str = ENV_ID) -> None:
    """Register the environment with skyrl-gym under `env_id` (once; again does nothing)."""
    if env_id not in registry:
        register(id=env_id, entry_point=f"{__name__}:CoworkTextEnv")


def dataset_rows(
    paths: str | Path | Iterable[str | Path],
    *,
    seed: int = 0,
    records_dir: str | Path | None = None,
    max_result_chars: int | None = None,
    env_id: str = ENV_ID,
) -> list[dict[str, Any]]:
    """One SkyRL prompt-dataset row per task of these task files and folders: the prompt
    the environment starts from, the environment class, the task id and the settings the
    environment reads (`coworkenv`: the task paths, `seed`, `records_dir`, made absolute, and
    `max_result_chars` when one is given)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    settings: dict[str, Any] = {
        "tasks": [str(Path(p).resolve()) for p in paths],
        "seed": seed,
        "records_dir": None if records_dir is None else str(Path(records_dir).resolve()),
    }
    if max_result_chars is not None:
        settings["max_result_chars"] = max_result_chars
    tasks = task_set(settings["tasks"])
    rows = []
    for task in tasks.tasks.values():
        text_episode = TextEpisode(Episode(task, cache=tasks.cache))
        prompt = text_episode.reset()
        text_episode.episode.close()
        rows.append({"prompt": prompt, "env_class": env_id, "task_id": task.id, "coworkenv": settings})
    return rows


class CoworkTextEnv(BaseTextEnv):
    """One coworkenv episode as a skyrl-gym text environment. See the module docstring."""

    def __init__(self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None):
        super().__init__()
        extras = dict(extras or {})
        config = {
            **(extras.get("coworkenv") or {}),
            **{k: v for k, v in dict(env_config or {}).items() if v is not None},
        }
        if not config.get("tasks"):
            raise ValueError(
                "the coworkenv environment needs `tasks` (files or folders): in the row's `coworkenv` "
                "(dataset_rows puts them there) or in its env_config"
            )
        tasks = task_set(config["tasks"])
        task = tasks.task(extras.get("task_id"))
        max_steps = int(extras["max_turns"]) if extras.get("max_turns") else None
        self.max_turns = max_steps or 0
        self.records_dir = config.get("records_dir")
        episode = Episode(
            task,
            trial=tasks.next_trial(task.id),
            seed=int(config.get("seed", 0)),
            cache=tasks.cache,
            policy=POLICY_NAME,
        )
        bound = config.get("max_result_chars")
        self.text_episode = TextEpisode(
            episode, max_steps=max_steps, max_result_chars=None if bound is None else int(bound)
        )
        self.metrics: dict[str, Any] = {}

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Start the episode; the prompt is the episode's own (`dataset_rows` gives the same)."""
        messages = self.text_episode.reset()
        return messages, {"task_id": self.text_episode.episode.task.id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Play the model's reply: its tool calls, or its answer to the user."""
        self.turns += 1
        step = self.text_episode.step(action)
        if not step.done:
            return BaseTextEnvStepOutput(observations=step.observation, reward=0.0, done=False, metadata={})
        episode = self.text_episode.episode
        record = episode.record()
        if self.records_dir is not None:
            append_record(self.records_dir, record)
        if step.reward is None:
            raise UnscoredEpisode(f"episode of {episode.task.id} has no verdict: {record.error}")
        self.metrics = dict(step.info["rewards"])
        metadata = {"rewards": step.info["rewards"], "status": step.info["status"]}
        return BaseTextEnvStepOutput(
            observations=step.observation, reward=step.reward, done=True, metadata=metadata
        )

    def get_metrics(self) -> dict[str, Any]:
        """The verdict's named rewards once the episode is over (score, success, ...)."""
        return dict(self.metrics)

    def close(self) -> None:
        """The episode's workspace goes back to the seed cache, for the next episode."""
        self.text_episode.episode.close()
