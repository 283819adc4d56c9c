"""The episode runner: fork the task's seed, play each turn (events, user message, policy,
turn checks), then judge the episode. A failure is recorded as data, never a crash."""

from __future__ import annotations

import time
from datetime import timedelta

import anyio
from mcp import Client

from coworkenv.servers import build_workspace_server, get_service
from coworkenv.servers.faults import FaultInjector, FaultPlan
from coworkenv.state import Workspace
from coworkenv.task import Event, Task
from coworkenv.verifiers import CheckResult, Evidence, judge_evidence, judge_turn

from .policies import Policy, PolicyError
from .record import EpisodeRecord, Status, Timings
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


async def run_episode(
    task: Task,
    policy: Policy,
    *,
    trial: int = 0,
    seed: int = 0,
    cache: SeedCache | None = None,
    faults: FaultPlan | None = None,
    user_simulator: UserSimulator | None = None,
) -> EpisodeRecord:
    """Run one episode and return its record (status completed, truncated or error).

    With `faults`, tool calls meet seeded injected errors (see `servers.faults`); the
    stream of faults depends on (plan seed, task id, trial). With `user_simulator` (and a
    task persona), a policy that converses gets the simulated user's answers within a turn."""
    started = time.perf_counter()
    timings = Timings()
    cache = cache or SeedCache()
    snapshot = cache.snapshot(task)
    initial = snapshot.fork()
    ws = snapshot.fork()
    timings.seed = time.perf_counter() - started
    messages = [{"role": "system", "content": system_prompt(task, ws)}]
    boundaries: list[int] = []
    user_replies: list[int] = []
    event_errors: list[str] = []
    turn_results: list[list[CheckResult]] = []
    status: Status = "completed"
    error: str | None = None
    ws.actor = policy.actor
    session: AgentSession | None = None
    try:
        with anyio.fail_after(EPISODE_TIMEOUT_SECONDS):
            server = build_workspace_server(ws)
            if faults is not None:
                server.faults = FaultInjector(faults, stream=f"{task.id}:{trial}")
            async with Client(server) as client:
                tools = (await client.list_tools()).tools
                share_output_validators(client, tools)
                session = AgentSession(client, tools, messages, trial=trial)
                for i, turn in enumerate(task.turns):
                    turn_started = time.perf_counter()
                    for k, event in enumerate(turn.events):
                        try:
                            apply_event(ws, event)
                        except (KeyError, ValueError) as exc:
                            # The world moves on: an event that cannot apply (often because the
                            # agent did not do the earlier turn's work) is recorded, not fatal.
                            event_errors.append(
                                f"turns[{i}].events[{k}] ({event.service}.{event.operation}): {exc}"
                            )
                    boundaries.append(len(messages))
                    session.begin_turn(turn.user, task.limits.max_tool_calls_per_turn)
                    seq = ws.audit.last_seq()
                    await policy.run_turn(session, task, i)
                    if (
                        user_simulator is not None
                        and task.persona is not None
                        and getattr(policy, "converses", False)
                    ):
                        for _ in range(user_simulator.max_replies_per_turn):
                            answer = await user_simulator.reply(task, i, messages)
                            if answer is None:
                                break
                            user_replies.append(len(messages))
                            messages.append({"role": "user", "content": answer})
                            await policy.run_turn(session, task, i)
                    turn_audit = ws.audit.entries(since=seq)
                    turn_results.append(
                        await judge_turn(turn.checks, initial, ws, turn_audit, task.user_email, i)
                    )
                    timings.turns.append(time.perf_counter() - turn_started)
        if session is not None and session.truncated:
            status = "truncated"
    except Exception as raised:  # recorded as data: a bad episode is a record, not a crash
        cause = _leaf(raised)
        status = "error"
        if isinstance(cause, PolicyError):
            error = str(cause)
        elif isinstance(cause, TimeoutError):
            error = f"the episode ran past {EPISODE_TIMEOUT_SECONDS} s"
        else:
            error = f"{type(cause).__name__}: {cause}"
    verify_started = time.perf_counter()
    audit = ws.audit.entries()
    # Turns never reached count as failed: their checks are evaluated on the final state.
    for i in range(len(turn_results), len(task.turns)):
        turn_results.append(await judge_turn(task.turns[i].checks, initial, ws, audit, task.user_email, i))
    evidence = Evidence(initial, ws, audit, task.user_email)
    verdict = await judge_evidence(task.checks, task.safety, evidence, turn_results)
    timings.verify = time.perf_counter() - verify_started
    timings.total = time.perf_counter() - started
    return EpisodeRecord(
        task_id=task.id,
        task_hash=task.content_hash,
        policy=policy.name,
        trial=trial,
        seed=seed,
        status=status,
        error=error,
        messages=messages,
        turn_boundaries=boundaries,
        user_replies=user_replies,
        event_errors=event_errors,
        tool_calls=evidence.audit,
        verdict=verdict,
        initial_hash=cache.initial_hash(task),
        final_hash=ws.content_hash(),
        diff_summary=evidence.diff.summary(),
        timings=timings,
        agent_stats=dict(session.stats) if session is not None else {},
        capabilities=list(task.capabilities),
        services=list(task.services),
    )


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups from task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
