"""The episode runner: a policy plays an `Episode` turn by turn (`episode.drive`: the scripted
user answers a question within the turn, and so may a simulated user), then the episode is
judged and recorded. A failure is recorded as data, never a crash."""

from __future__ import annotations

import time

from coworkenv.servers.faults import FaultPlan
from coworkenv.task import Task
from coworkenv.verifiers import Footprint

from .episode import (
    EPISODE_TIMEOUT_SECONDS,
    Episode,
    Played,
    apply_event,
    drive,
    play,
    play_turns,
    reference_footprint,
    system_prompt,
    user_zone,
)
from .policies import Policy
from .record import EpisodeRecord
from .seeding import SeedCache
from .user_simulator import UserSimulator

__all__ = [
    "EPISODE_TIMEOUT_SECONDS",
    "Played",
    "apply_event",
    "drive",
    "play",
    "play_turns",
    "reference_footprint",
    "run_episode",
    "system_prompt",
    "user_zone",
]


async def run_episode(
    task: Task,
    policy: Policy,
    *,
    trial: int = 0,
    seed: int = 0,
    cache: SeedCache | None = None,
    faults: FaultPlan | None = None,
    user_simulator: UserSimulator | None = None,
    footprint: Footprint | None = None,
) -> EpisodeRecord:
    """Run one episode and return its record (status completed, truncated or error; an
    error episode has no verdict: it is not the agent's work that broke, and a resumed batch
    runs it again).

    The verdict applies the task's guards: every change must be explained by the goal
    footprint, which is derived once per task by playing its reference solution (pass
    `footprint` to judge against another task's, as validation does for mutants).
    With `faults`, tool calls meet seeded injected errors (see `servers.faults`); the
    stream of faults depends on (plan seed, task id, trial). With `user_simulator` (and a
    task persona), a policy that converses gets the simulated user's answers within a turn."""
    started = time.perf_counter()
    cache = cache or SeedCache()
    if footprint is None:
        footprint = await reference_footprint(task, cache)
    episode = Episode(
        task,
        trial=trial,
        seed=seed,
        cache=cache,
        faults=faults,
        footprint=footprint,
        policy=policy.name,
        actor=policy.actor,
    )
    await drive(episode, policy, user_simulator)
    record = await episode.arecord()
    episode.close()
    record.timings.total = time.perf_counter() - started
    return record
