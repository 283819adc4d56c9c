"""Play variants of a task's reference solution from where they part from it.

Validation plays the reference solution, then dozens of wrong and right variants of it
(`mutants`, `acceptance`). A variant that changes only turn 4 of a workday reaches the
start of turn 4 in exactly the state the reference did: the same seed, the same earlier
turns, the same events (see `turn_prefix_key`). So the reference run keeps a `TurnStart`
at every turn, with the results its steps had produced so far (what later `$ref`s read),
and each variant resumes at the latest one it shares instead of replaying the turns before.
Within a turn too: most variants keep the first steps of the turn they change (a dropped
or altered step keeps the ones before it, a collateral action comes after all of them), so
the reference keeps a start after each step of a turn's solution played before its question
(`Episode.step_start`), and a variant sharing those steps goes on from there.
A resumed variant's record equals the one a full replay gives, timings aside.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from coworkenv.state.jsontext import copy_json
from coworkenv.task import Task
from coworkenv.verifiers import Footprint

from .episode import Episode
from .policies import OraclePolicy
from .record import EpisodeRecord
from .resume import TurnStart, step_key, turn_prefix_key
from .runner import play_turns
from .seeding import SeedCache

__all__ = ["ReferenceStart", "play_reference", "play_variant"]


@dataclass(frozen=True)
class ReferenceStart:
    """A turn start of the reference run, with the results of its steps so far."""

    episode: TurnStart
    results: dict[str, Any]


async def play_reference(
    task: Task, cache: SeedCache, footprint: Footprint
) -> tuple[EpisodeRecord, list[ReferenceStart]]:
    """`run_episode(task, OraclePolicy())`, keeping a `ReferenceStart` at every turn the
    reference reached."""
    started = time.perf_counter()
    policy = OraclePolicy()
    episode = Episode(task, cache=cache, footprint=footprint, policy=policy.name, actor=policy.actor)
    starts: list[ReferenceStart] = []

    def keep(ep: Episode, turn: int) -> None:
        results = copy_json(policy.progress(ep.session, turn).results)
        starts.append(ReferenceStart(ep.turn_start(), results))

    def keep_step(turn: int, steps: int) -> None:
        results = copy_json(policy.progress(episode.session, turn).results)
        starts.append(ReferenceStart(episode.step_start(steps), results))

    policy.on_step = keep_step
    await episode.areset()
    await play_turns(episode, policy, 0, on_turn_start=keep)
    record = await episode.arecord()
    episode.close()
    record.timings.total = time.perf_counter() - started
    return record, starts


def latest_shared(task: Task, starts: list[ReferenceStart]) -> ReferenceStart | None:
    """The latest start past the seed (a turn start after the first, or a step start) that
    `task` reaches in the same state, if any."""
    shared = None
    key, keyed_turn, keyed_steps = "", -1, 0
    for start in starts:
        turn, steps = start.episode.turn, start.episode.steps
        if turn >= len(task.turns):
            break
        if turn != keyed_turn:
            key, keyed_turn, keyed_steps = turn_prefix_key(task, turn), turn, 0
        while keyed_steps < steps:  # the variant's key after as many steps, one step at a time
            keyed_steps += 1
            key = step_key(key, task.turns[turn], keyed_steps)
        if key != start.episode.prefix_key:
            break
        if turn > 0 or steps > 0:
            shared = start
    return shared


async def play_variant(
    task: Task,
    starts: list[ReferenceStart],
    cache: SeedCache,
    footprint: Footprint,
    *,
    until_failed: bool = False,
    hashed: bool = True,
) -> EpisodeRecord:
    """The oracle's record on `task`, a variant of the reference `starts` were kept from:
    resumed at the latest turn start it shares, else played from the seed. With
    `until_failed`, play stops after the first turn with a failed check: the episode can no
    longer succeed (mutants need to know no more), and the turns not played are judged on
    the state it stopped in. Without `hashed` the record has no `final_hash`."""
    started = time.perf_counter()
    policy = OraclePolicy()
    episode = Episode(task, cache=cache, footprint=footprint, policy=policy.name, actor=policy.actor)
    start = latest_shared(task, starts)
    if start is None:
        turn = 0
        await episode.areset()
    else:
        turn = start.episode.turn
        await episode.aresume(start.episode)
        progress = policy.progress(episode.session, turn)
        progress.results.update(copy_json(start.results))
        progress.done = start.episode.steps
    await play_turns(episode, policy, turn, stop_after=_has_failed if until_failed else None)
    record = await episode.arecord(hashed=hashed)
    episode.close()
    record.timings.total = time.perf_counter() - started
    return record


def _has_failed(episode: Episode) -> bool:
    return any(not r.passed for r in episode.turn_results[-1])
