"""The episode runner: a policy plays an `Episode` turn by turn (the scripted user answers a
question within the turn, and so may a simulated user), then the episode is judged. A failure
is recorded as data, never a crash."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio

from coworkenv.servers.faults import FaultPlan
from coworkenv.state import Workspace
from coworkenv.task import Task
from coworkenv.verifiers import CheckResult, Evidence, Footprint

from .episode import Episode, apply_event, system_prompt, user_zone
from .policies import OraclePolicy, Policy
from .record import EpisodeRecord, Status, Timings
from .reference import footprint_of_run
from .seeding import SeedCache
from .session import AgentSession
from .user_simulator import UserSimulator

__all__ = [
    "EPISODE_TIMEOUT_SECONDS",
    "Played",
    "apply_event",
    "play",
    "reference_footprint",
    "run_episode",
    "system_prompt",
    "user_zone",
]

EPISODE_TIMEOUT_SECONDS = 600


@dataclass
class Played:
    """An episode played but not yet judged: the workspaces, the conversation and what went wrong."""

    initial: Workspace
    workspace: Workspace
    messages: list[dict]
    timings: Timings
    boundaries: list[int] = field(default_factory=list)
    user_replies: list[int] = field(default_factory=list)
    event_errors: list[str] = field(default_factory=list)
    turn_results: list[list[CheckResult]] = field(default_factory=list)
    status: Status = "completed"
    error: str | None = None
    session: AgentSession | None = None
    episode: Episode | None = None


async def drive(episode: Episode, policy: Policy, user_simulator: UserSimulator | None = None) -> None:
    """Reset the episode and let the policy play every turn. A failure marks the episode
    as an error (see `Episode.fail`), never raises; a seed that cannot load raises."""
    await episode.areset()
    await play_turns(episode, policy, 0, user_simulator)


async def play_turns(
    episode: Episode,
    policy: Policy,
    first: int,
    user_simulator: UserSimulator | None = None,
    on_turn_start: Callable[[Episode, int], None] | None = None,
    stop_after: Callable[[Episode], bool] | None = None,
) -> None:
    """Let the policy play the episode's turns from `first` (the turn in play) to the last;
    `on_turn_start` sees each turn begin, before the policy acts, and play stops early after
    a turn (judged, the next one begun) for which `stop_after` says so. A failure marks the
    episode as an error, never raises."""
    try:
        with anyio.fail_after(EPISODE_TIMEOUT_SECONDS):
            for i in range(first, len(episode.task.turns)):
                if on_turn_start is not None:
                    on_turn_start(episode, i)
                await _play_turn(episode, policy, i, user_simulator)
                await episode.anext_turn()
                if stop_after is not None and stop_after(episode):
                    return
    except TimeoutError:
        episode.fail(f"the episode ran past {EPISODE_TIMEOUT_SECONDS} s")
    except Exception as raised:  # recorded as data: a bad episode is a record, not a crash
        episode.fail(raised)


async def _play_turn(episode: Episode, policy: Policy, i: int, user_simulator: UserSimulator | None) -> None:
    """The policy acts; while it ends with a question the user answers (the scripted answer of
    an ambiguous turn, or that there is nothing to add), and with a user simulator, a policy
    that converses gets the persona's answers too. Each answer lets the policy act again."""
    task, session = episode.task, episode.session
    converses = task.persona is not None and getattr(policy, "converses", False)
    simulator = user_simulator if converses else None
    await policy.run_turn(session, task, i)
    replies = 0
    while True:
        answer = episode.respond(needless=simulator is None)
        if answer is None and simulator is not None and replies < simulator.max_replies_per_turn:
            answer = await simulator.reply(task, i, session.messages)
            replies += 1
            if answer is not None:
                episode.user_says(answer)
        if answer is None:
            return
        await policy.run_turn(session, task, i)


async def play(
    task: Task,
    policy: Policy,
    *,
    trial: int = 0,
    cache: SeedCache | None = None,
    faults: FaultPlan | None = None,
    user_simulator: UserSimulator | None = None,
    judge_turns: bool = True,
) -> Played:
    """Fork the seed and play every turn (events, user message, policy, and the turn checks
    unless `judge_turns` is False), not judging the episode. A failure is recorded in the
    result, never raised."""
    episode = Episode(
        task,
        trial=trial,
        cache=cache,
        faults=faults,
        policy=policy.name,
        actor=policy.actor,
        judge_turns=judge_turns,
    )
    await drive(episode, policy, user_simulator)
    session = episode.session
    return Played(
        initial=episode.initial,
        workspace=episode.workspace,
        messages=session.messages,
        timings=episode.timings,
        boundaries=episode.boundaries,
        user_replies=episode.user_replies,
        event_errors=episode.event_errors,
        turn_results=episode.turn_results,
        status="truncated" if episode.status == "completed" and session.truncated else episode.status,
        error=episode.error,
        session=session,
        episode=episode,
    )


async def reference_footprint(task: Task, cache: SeedCache) -> Footprint:
    """The task's goal footprint, derived once per task (and cache) by playing its reference
    solution through the same tools an agent uses. Episodes of the task that start while it
    is being derived wait for it instead of deriving it again."""
    key = task.content_hash
    if key in cache.footprints:
        return cache.footprints[key]
    deriving = cache.deriving.get(key)
    if deriving is not None:
        await deriving.wait()
        if key in cache.footprints:
            return cache.footprints[key]
    done = cache.deriving[key] = anyio.Event()
    try:
        # Only the state the run ends in and its audit log are read: its turns go unjudged.
        played = await play(task, OraclePolicy(), cache=cache, judge_turns=False)
        if played.status != "completed":
            cache.footprints[key] = Footprint(
                error=f"the reference solution did not complete: {played.error}"
            )
        else:
            evidence = Evidence(
                played.initial, played.workspace, played.workspace.audit.entries(), task.user_email
            )
            assert played.episode is not None
            cache.footprints[key] = await footprint_of_run(task, evidence, played.episode.turn_starts)
            cache.reference_hashes[key] = played.workspace.content_hash()
        assert played.episode is not None
        played.episode.close()
    finally:
        del cache.deriving[key]
        done.set()
    return cache.footprints[key]


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
