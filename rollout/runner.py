"""The episode runner: fork the task's seed, play each turn (events, user message, policy,
turn checks), then judge the episode. A failure is recorded as data, never a crash."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import timedelta

import anyio
from mcp import Client

from coworkenv.servers import build_workspace_server, get_service
from coworkenv.servers.faults import FaultInjector, FaultPlan
from coworkenv.state import Workspace
from coworkenv.task import Event, Task
from coworkenv.verifiers import CheckResult, Evidence, Footprint, judge_evidence, judge_turn

from .policies import OraclePolicy, Policy, PolicyError
from .record import EpisodeRecord, Status, Timings
from .reference import footprint_of_run, guarding_for, lasting_checks
from .seeding import SeedCache
from .session import AgentSession, share_output_validators
from .user_simulator import UserSimulator

EPISODE_TIMEOUT_SECONDS = 600


def system_prompt(task: Task, workspace: Workspace) -> str:
    """The task's context as the agent's system prompt."""
    ctx = task.context
    lines = [ctx.role]
    if ctx.company:
        lines.append(f"Company: {ctx.company}.")
    who = f"{ctx.user_name} <{task.user_email}>" if ctx.user_name else task.user_email
    lines.append(f"You act for {who}: mail you send comes from this address.")
    lines.append(f"The current date and time is {workspace.clock.now_text()} (UTC).")
    if ctx.rules:
        lines.append("Rules you must follow:")
        lines += [f"- {rule}" for rule in ctx.rules]
    return "\n".join(lines)


def apply_event(workspace: Workspace, event: Event) -> None:
    """Move the clock if the event says so, then apply its world operation (audited as an event)."""
    if event.advance_minutes:
        workspace.clock.advance(timedelta(minutes=event.advance_minutes))
    get_service(event.service).world.apply(workspace, event.operation, event.params)


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
    judging: float = 0.0
    """Seconds spent on turn checks while playing (part of verification, not of acting)."""


async def play(
    task: Task,
    policy: Policy,
    *,
    trial: int = 0,
    cache: SeedCache | None = None,
    faults: FaultPlan | None = None,
    user_simulator: UserSimulator | None = None,
) -> Played:
    """Fork the seed and play every turn (events, user message, policy, turn checks).
    A failure is recorded in the result, never raised."""
    started = time.perf_counter()
    cache = cache or SeedCache()
    snapshot = cache.snapshot(task)
    initial = snapshot.fork()
    ws = snapshot.fork()
    played = Played(initial, ws, [{"role": "system", "content": system_prompt(task, ws)}], Timings())
    played.timings.seed = time.perf_counter() - started
    ws.actor = policy.actor
    try:
        with anyio.fail_after(EPISODE_TIMEOUT_SECONDS):
            server = build_workspace_server(ws)
            if faults is not None:
                server.faults = FaultInjector(faults, stream=f"{task.id}:{trial}")
            async with Client(server) as client:
                tools = (await client.list_tools()).tools
                share_output_validators(client, tools)
                played.session = AgentSession(client, tools, played.messages, trial=trial)
                for i in range(len(task.turns)):
                    await _play_turn(task, i, policy, played, user_simulator)
        if played.session is not None and played.session.truncated:
            played.status = "truncated"
    except Exception as raised:  # recorded as data: a bad episode is a record, not a crash
        cause = _leaf(raised)
        played.status = "error"
        if isinstance(cause, PolicyError):
            played.error = str(cause)
        elif isinstance(cause, TimeoutError):
            played.error = f"the episode ran past {EPISODE_TIMEOUT_SECONDS} s"
        else:
            played.error = f"{type(cause).__name__}: {cause}"
    return played


async def _play_turn(
    task: Task, i: int, policy: Policy, played: Played, user_simulator: UserSimulator | None
) -> None:
    turn, ws, session = task.turns[i], played.workspace, played.session
    assert session is not None
    turn_started = time.perf_counter()
    for k, event in enumerate(turn.events):
        try:
            apply_event(ws, event)
        except (KeyError, ValueError) as exc:
            # The world moves on: an event that cannot apply (often because the agent did
            # not do the earlier turn's work) is recorded, not fatal.
            played.event_errors.append(f"turns[{i}].events[{k}] ({event.service}.{event.operation}): {exc}")
    played.boundaries.append(len(played.messages))
    session.begin_turn(turn.user, task.limits.max_tool_calls_per_turn)
    seq = ws.audit.last_seq()
    await policy.run_turn(session, task, i)
    if user_simulator is not None and task.persona is not None and getattr(policy, "converses", False):
        for _ in range(user_simulator.max_replies_per_turn):
            answer = await user_simulator.reply(task, i, played.messages)
            if answer is None:
                break
            played.user_replies.append(len(played.messages))
            played.messages.append({"role": "user", "content": answer})
            await policy.run_turn(session, task, i)
    judged = time.perf_counter()
    turn_audit = ws.audit.entries(since=seq)
    played.turn_results.append(
        await judge_turn(turn.checks, played.initial, ws, turn_audit, task.user_email, i)
    )
    played.judging += time.perf_counter() - judged
    played.timings.turns.append(time.perf_counter() - turn_started)


async def reference_footprint(task: Task, cache: SeedCache) -> Footprint:
    """The task's goal footprint, derived once per task (and cache) by playing its reference
    solution through the same tools an agent uses."""
    key = task.content_hash
    if key not in cache.footprints:
        played = await play(task, OraclePolicy(), cache=cache)
        if played.status != "completed":
            cache.footprints[key] = Footprint(
                error=f"the reference solution did not complete: {played.error}"
            )
        else:
            evidence = Evidence(
                played.initial, played.workspace, played.workspace.audit.entries(), task.user_email
            )
            cache.footprints[key] = await footprint_of_run(task, evidence)
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
    played = await play(task, policy, trial=trial, cache=cache, faults=faults, user_simulator=user_simulator)
    verify_started = time.perf_counter()
    ws = played.workspace
    audit = ws.audit.entries()
    evidence = Evidence(played.initial, ws, audit, task.user_email)
    verdict = None
    if played.status != "error":  # an episode that broke is rerun on resume, not judged
        # Turns never reached count as failed: their checks are evaluated on the final state.
        for i in range(len(played.turn_results), len(task.turns)):
            played.turn_results.append(
                await judge_turn(task.turns[i].checks, played.initial, ws, audit, task.user_email, i)
            )
        verdict = await judge_evidence(
            task.checks,
            task.safety,
            evidence,
            played.turn_results,
            guarding_for(task, footprint),
            lasting_checks(task, footprint),
        )
    final_hash = ws.content_hash()
    timings = played.timings
    timings.verify = played.judging + time.perf_counter() - verify_started
    timings.total = time.perf_counter() - started
    return EpisodeRecord(
        task_id=task.id,
        task_hash=task.content_hash,
        policy=policy.name,
        trial=trial,
        seed=seed,
        status=played.status,
        error=played.error,
        messages=played.messages,
        turn_boundaries=played.boundaries,
        user_replies=played.user_replies,
        event_errors=played.event_errors,
        tool_calls=evidence.audit,
        verdict=verdict,
        initial_hash=cache.initial_hash(task),
        final_hash=final_hash,
        diff_summary=evidence.diff.summary(),
        timings=timings,
        agent_stats=dict(played.session.stats) if played.session is not None else {},
        capabilities=list(task.capabilities),
        services=list(task.services),
    )


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups from task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
