"""`Episode`: the one way to run a task, for the runner, the CLI and every trainer adapter.

An episode is one run of one agent on one task (one trial), on a fresh fork of the task's
seed. `reset()` forks the seed, applies turn 0's events and returns what the agent is told
(system prompt, first user message, tools in MCP and OpenAI form); `call()` runs a tool
through the episode's MCP server (audited, faults and the turn's tool limit enforced) and
returns the text the model reads; `next_turn()` judges the turn, applies the next turn's
events and returns its user message (or `None` after the last turn); `verdict()` judges
the episode with the task's guards; `record()` is the `EpisodeRecord` that `rollout`,
`report` and `export` read.

Clarification: when the agent ends its turn with a question (a message with a `?` and no
tool call), `respond()` (and `reply()`, which calls it) gives the scripted user's answer as
the next user message within the same turn: the turn's `clarification.answer` for the first
question of an ambiguous turn, `NOTHING_TO_ADD` otherwise. Questions are counted in the
record's `agent_stats` (`clarifying_questions`, `needless_questions`); asking earns nothing
by itself, only the checks make the score. The episode keeps the audit sequence number at
which the answer came: a turn whose clarification lists `candidates` gets the guard
`asked-first-<turn>` (`verifiers.asked_first`), which fails when a write named a candidate
before then.

Every method has an async twin with an `a` prefix (`areset`, `acall`, ...). The sync
methods run the async ones on one background event loop shared by all episodes of the
process, so they work from plain code, threads and notebooks alike.

    ep = Episode(task)
    start = ep.reset()
    ep.call("tickets_search_tickets", {"query": "login"})
    answer = ep.reply("Done.")  # a reply with a question may get the user's answer
    while ep.next_turn() is not None: ...
    print(ep.verdict().score)
"""

from __future__ import annotations

import atexit
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
from anyio.from_thread import BlockingPortal, start_blocking_portal
from pydantic import BaseModel, Field

from coworkenv.servers import get_service
from coworkenv.servers.faults import FaultInjector, FaultPlan
from coworkenv.servers.toolkit import current_user
from coworkenv.state import Snapshot, Workspace
from coworkenv.state.forks import Changes
from coworkenv.state.jsontext import copy_json
from coworkenv.task import Event, Limits, Task
from coworkenv.verifiers import (
    CheckResult,
    Evidence,
    Footprint,
    Verdict,
    ahead_guards,
    asked_first,
    judge_evidence,
    judge_turn,
)
from coworkenv.world import WorkingHours

from .policies import PolicyError
from .record import EpisodeRecord, Status, Timings
from .reference import guarding_for, lasting_checks, writes
from .resume import TurnStart, step_key, turn_prefix_key
from .seeding import SeedCache, world_user
from .session import AgentSession, InProcessClient, ToolLimitReached, ToolOutcome, shared_server
from .tool_schemas import openai_tool
from .turn_changes import turn_changes

__all__ = [
    "MAX_ANSWERS_PER_TURN",
    "NOTHING_TO_ADD",
    "Episode",
    "EpisodeError",
    "Start",
    "TurnStart",
    "apply_event",
    "asks_question",
    "system_prompt",
    "turn_prefix_key",
    "user_zone",
]

T = TypeVar("T")

#: The scripted user's answer to a question on a turn whose request was not ambiguous.
NOTHING_TO_ADD = "I have nothing to add: everything you need is in my message. Please go ahead."
#: Scripted answers per turn at most, so an agent that keeps asking still ends its turn.
MAX_ANSWERS_PER_TURN = 3


def asks_question(messages: list[dict[str, Any]]) -> bool:
    """Whether the conversation's last message is the agent ending its turn with a question:
    an assistant message with a `?` in its text and no tool call."""
    if not messages:
        return False
    last = messages[-1]
    content = last.get("content")
    return (
        last.get("role") == "assistant"
        and not last.get("tool_calls")
        and isinstance(content, str)
        and "?" in content
    )


class EpisodeError(RuntimeError):
    """The episode was used out of order (a call before `reset`, a turn after the last one)."""


class Start(BaseModel):
    """What the agent is told when an episode starts."""

    system_prompt: str
    user_message: str = Field(description="The first turn's user message")
    tools: list[dict[str, Any]] = Field(description="The MCP tools, as `tools/list` sends them (camelCase)")
    openai_tools: list[dict[str, Any]] = Field(
        description="The same tools as Chat Completions `tools` entries"
    )
    turns: int = Field(description="How many turns the task has")


_TOOL_FORMS: dict[tuple[str, ...], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}


def _tool_forms(tools: list[Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The tools as `tools/list` sends them and as Chat Completions entries, built once per
    tool set (a server's tools do not change; dumping them was a quarter of a scripted
    episode's cost). Shared between episodes: read them, do not change them."""
    key = tuple(t.name for t in tools)
    if key not in _TOOL_FORMS:
        _TOOL_FORMS[key] = (
            [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools],
            [openai_tool(t) for t in tools],
        )
    return _TOOL_FORMS[key]


def system_prompt(task: Task, workspace: Workspace) -> str:
    """The task's context as the agent's system prompt."""
    ctx = task.context
    lines = [ctx.role]
    if ctx.company:
        lines.append(f"Company: {ctx.company}.")
    who = f"{ctx.user_name} <{task.user_email}>" if ctx.user_name else task.user_email
    lines.append(f"You act for {who}: mail you send comes from this address.")
    lines.append(f"The current date and time is {workspace.clock.now_text()} (UTC).")
    world_zone, world_hours = world_user(task)
    zone = user_zone(workspace) or world_zone
    if zone is not None:
        hours = world_hours or WorkingHours()
        name = ctx.user_name or "Your user"
        lines.append(
            f"{name}'s time zone is {zone}; their working hours are "
            f"{hours.start:%H:%M}-{hours.end:%H:%M} on weekdays, local time."
        )
    if ctx.rules:
        lines.append("Rules you must follow:")
        lines += [f"- {rule}" for rule in ctx.rules]
    return "\n".join(lines)


def user_zone(workspace: Workspace) -> str | None:
    """The user's time zone, from the directory's row for them; None without one."""
    if "directory" not in workspace.services:
        return None
    row = workspace.conn.execute(
        "SELECT time_zone FROM directory_people WHERE lower(email) = lower(?)", (current_user(workspace),)
    ).fetchone()
    return None if row is None else str(row[0])


def apply_event(workspace: Workspace, event: Event) -> None:
    """Move the clock if the event says so, then apply its world operation (audited as an event)."""
    if event.advance_minutes:
        workspace.clock.advance(timedelta(minutes=event.advance_minutes))
    get_service(event.service).world.apply(workspace, event.operation, event.params)


@dataclass
class _TurnInPlay:
    """The turn being played: which, since when, and how its clarification went."""

    index: int
    started: float
    """`time.perf_counter()` as the turn began."""
    seq: int
    """The last audit sequence number before the turn began: its calls come after."""
    answers: int = 0
    """Scripted answers given in the turn."""
    clarified: bool = False
    """Whether the turn's clarification was answered."""
    answered_after: int | None = None
    """The last audit sequence number logged before that answer."""


@dataclass
class _Run:
    """What one run (from `reset` or `resume` to the next) has played and judged so far."""

    started: float = 0.0
    """`time.perf_counter()` as the run began."""
    status: Status = "completed"
    error: str | None = None
    timings: Timings = field(default_factory=Timings)
    boundaries: list[int] = field(default_factory=list)
    user_replies: list[int] = field(default_factory=list)
    event_errors: list[str] = field(default_factory=list)
    turn_results: list[list[CheckResult]] = field(default_factory=list)
    turn_starts: list[int] = field(default_factory=list)
    judged: tuple[tuple[int, int], Evidence] | None = None
    """The state key and evidence the last turn was judged on, while the state stays so."""
    evidence: Evidence | None = None
    """What the verdict was judged on."""
    verdict: Verdict | None = None
    verdict_done: bool = False
    judging_seconds: float = 0.0
    footprint_seconds: float = 0.0


class Episode:
    """One run of one agent on one task. See the module docstring for the life cycle.

    `trial` and `seed` identify the run in its record (and seed the fault stream with
    `faults`); `limits` replaces the task's tool-call limits; `footprint` judges against a
    given goal footprint instead of the one derived from the task's reference solution;
    `policy` names the agent in the record; `actor` is who the audit log says acted.
    With `judge_turns` False the turns are played but never judged (`turn_results` stays
    empty and there is no verdict): a run played only for the state it ends in, as the
    reference run the goal footprint is derived from."""

    def __init__(
        self,
        task: Task,
        *,
        trial: int = 0,
        seed: int = 0,
        faults: FaultPlan | None = None,
        limits: Limits | None = None,
        cache: SeedCache | None = None,
        footprint: Footprint | None = None,
        policy: str = "agent",
        actor: str = "agent",
        judge_turns: bool = True,
    ) -> None:
        self.task = task
        self.judge_turns = judge_turns
        self.trial = trial
        self.seed = seed
        self.faults = faults
        self.limits = limits or task.limits
        self.cache = cache or SeedCache()
        self.footprint = footprint
        self.policy = policy
        self.actor = actor
        # The run: a session, the agent's workspace and the shared read-only seed, from
        # `reset`/`resume` until `close` gives the workspace back.
        self._session: AgentSession | None = None
        self._initial: Workspace | None = None
        self._workspace: Workspace | None = None
        self._closed = False
        self._run = _Run()
        self._turn: _TurnInPlay | None = None
        # The latest turn start's (turn, steps, prefix key): the next step start's key follows.
        self._last_key: tuple[int, int, str] | None = None

    @property
    def status(self) -> Status:
        """`completed`, or `error` once `fail` marked the run broken."""
        return self._run.status

    @property
    def error(self) -> str | None:
        """What broke the run (`fail`), or None."""
        return self._run.error

    @property
    def timings(self) -> Timings:
        """Where the run's time went so far."""
        return self._run.timings

    @property
    def boundaries(self) -> list[int]:
        """The index in `messages` at which each turn began."""
        return self._run.boundaries

    @property
    def user_replies(self) -> list[int]:
        """The index in `messages` of each answer the user gave within a turn."""
        return self._run.user_replies

    @property
    def event_errors(self) -> list[str]:
        """The between-turn events that could not apply, and why."""
        return self._run.event_errors

    @property
    def turn_results(self) -> list[list[CheckResult]]:
        """Each judged turn's check results."""
        return self._run.turn_results

    @property
    def turn_starts(self) -> list[int]:
        """The last audit sequence number before each turn began (`verifiers.ahead`)."""
        return self._run.turn_starts

    # -- state -------------------------------------------------------------------------

    @property
    def session(self) -> AgentSession:
        """The agent's connection and transcript (what scripted policies act through)."""
        if self._session is None:
            raise EpisodeError("the episode has not started: call reset() first")
        return self._session

    @property
    def workspace(self) -> Workspace:
        """The episode's live workspace (read it, do not write it: writes bypass the audit)."""
        if self._workspace is None:
            raise EpisodeError(self._not_open())
        return self._workspace

    @property
    def initial(self) -> Workspace:
        """The episode's workspace as it was at reset, before turn 0's events: the seed,
        read-only (a write raises `sqlite3.OperationalError`) and shared by every episode
        of the task on the same seed cache (`ForkPool.read_only`)."""
        if self._initial is None:
            raise EpisodeError(self._not_open())
        return self._initial

    def _not_open(self) -> str:
        if self._closed:
            return (
                "the episode is closed: its workspace went back to the seed cache; reset() starts a new run"
            )
        return "the episode has not started: call reset() first"

    def close(self) -> None:
        """End the run: its workspace goes back to the seed cache, put back to the seed,
        for the next episode of the task to start from without a new fork (see
        `state.forks`). Take what you need first (`record()`, `workspace.snapshot()`):
        from now on `workspace` and `initial` raise, and a workspace object kept from
        `workspace` is closed (one kept from `initial`, the shared read-only seed, stays
        readable). The transcript stays readable. `reset()` and `resume()` close the
        previous run themselves; closing twice does nothing."""
        if self._workspace is None and self._initial is None:
            return
        if self._workspace is not None:
            self.cache.forks(self.task).give_back(self._workspace)
        self._workspace = self._initial = None
        self._closed = True

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation so far, in Chat Completions format."""
        return self.session.messages

    @property
    def turn(self) -> int | None:
        """The index of the turn in play, or None before `reset` and after the last turn."""
        return None if self._turn is None else self._turn.index

    @property
    def done(self) -> bool:
        """True once every turn was played, the episode was judged or it failed."""
        return self._session is not None and (self._turn is None or self._run.verdict_done)

    # -- async API ---------------------------------------------------------------------

    async def areset(self) -> Start:
        """Fork the seed, apply turn 0's events and start turn 0. A seed that cannot load
        raises `SeedError`. Resetting again starts over on a fresh fork."""
        await anyio.lowlevel.checkpoint()  # let other episodes run (and cancellation in)
        started = time.perf_counter()
        faults = None
        if self.faults is not None:
            faults = FaultInjector(self.faults, stream=f"{self.task.id}:{self.trial}")
        messages: list[dict[str, Any]] = []
        tools = await self._open(started, self.cache.snapshot(self.task), messages, faults)
        prompt = system_prompt(self.task, self.workspace)
        messages.append({"role": "system", "content": prompt})
        self._begin_turn(0)
        mcp_forms, openai_forms = _tool_forms(tools)
        return Start(
            system_prompt=prompt,
            user_message=self.task.turns[0].user,
            tools=mcp_forms,
            openai_tools=openai_forms,
            turns=len(self.task.turns),
        )

    def turn_start(self) -> TurnStart:
        """How the episode stands now, at the start of the turn in play (after `reset` or
        `next_turn`, before any call or reply of the turn)."""
        session = self._active()
        if session.calls_this_turn or self._playing().answers or session.messages[-1].get("role") != "user":
            raise EpisodeError("a turn start is taken before the turn's first call or reply")
        return self._start(0)

    def step_start(self, steps: int) -> TurnStart:
        """How the episode stands now, within the turn in play, after its first `steps`
        reference-solution steps were played as written and before any reply: a start from
        which `aresume` lets a policy play the rest of a solution that shares those steps (the
        oracle, playing validation's variants). That the turn's calls so far were those steps
        is the caller's word: the start's key names them (`turn_prefix_key`)."""
        session = self._active()
        if steps < 1 or self._playing().answers or session.messages[-1].get("role") != "tool":
            raise EpisodeError("a step start is taken after a tool call of the turn, before any reply")
        return self._start(steps)

    def _start(self, steps: int) -> TurnStart:
        session, play, run = self.session, self._playing(), self._run
        turn = play.index
        # Starts are taken step after step: each key follows from the one before.
        last = self._last_key
        if steps and last is not None and last[:2] == (turn, steps - 1):
            key = step_key(last[2], self.task.turns[turn], steps)
        else:
            key = turn_prefix_key(self.task, turn, steps)
        self._last_key = (turn, steps, key)
        return TurnStart(
            turn=turn,
            prefix_key=key,
            workspace=self.workspace.snapshot(),
            messages=copy_json(session.messages),
            boundaries=list(run.boundaries),
            user_replies=list(run.user_replies),
            event_errors=list(run.event_errors),
            turn_results=[list(r) for r in run.turn_results],
            turn_seconds=list(run.timings.turns),
            seq=play.seq,
            turn_starts=list(run.turn_starts),
            stats=dict(session.stats),
            truncated=session.truncated,
            next_call_id=session.next_id,
            changes=self.cache.forks(self.task).changes_of(self.workspace),
            steps=steps,
            calls=session.calls_this_turn,
        )

    async def aresume(self, start: TurnStart) -> None:
        """Start the episode at `start` (taken from an episode of a task that is the same up
        to that turn: `turn_prefix_key` must match) instead of at turn 0: the earlier turns'
        transcript, audit, events and verdicts are theirs, the rest is played on this task.
        A step start (`step_start`) goes on within its turn, for the policy that plays the
        rest of the turn's solution. Not with `faults`: their stream would not be where a
        full replay leaves it."""
        if self.faults is not None:
            raise EpisodeError("an episode with faults cannot resume from a turn start")
        if turn_prefix_key(self.task, start.turn, start.steps) != start.prefix_key:
            where = f"step {start.steps} of turn {start.turn}" if start.steps else f"turn {start.turn}"
            raise EpisodeError(
                f"the turn start was taken on a task that differs from this one before {where}"
            )
        await anyio.lowlevel.checkpoint()
        started = time.perf_counter()
        await self._open(started, start.workspace, copy_json(start.messages), None, start.changes)
        session = self.session
        session.stats, session.truncated, session.next_id = (
            dict(start.stats),
            start.truncated,
            start.next_call_id,
        )
        session.limit, session.calls_this_turn = self.limits.max_tool_calls_per_turn, start.calls
        run = self._run
        run.timings.turns = list(start.turn_seconds)
        run.boundaries = list(start.boundaries)
        run.user_replies = list(start.user_replies)
        run.event_errors = list(start.event_errors)
        run.turn_results = [list(r) for r in start.turn_results]
        run.turn_starts = list(start.turn_starts)
        self._turn = _TurnInPlay(start.turn, started=time.perf_counter(), seq=start.seq)

    async def _open(
        self,
        started: float,
        state: Snapshot,
        messages: list[dict[str, Any]],
        faults: FaultInjector | None,
        changes: Changes | None = None,
    ) -> list[Any]:
        """Fork `state` for the agent (a warm fork from the seed cache where it is the
        seed, or one brought there by `changes`, its changes since the seed) beside the
        shared read-only seed the verifier reads, connect a session that starts from
        `messages`, and clear what a previous run left, giving its workspace back; returns
        the tools. `started` is when the run began (`time.perf_counter()`)."""
        self.close()
        self._closed = False
        forks = self.cache.forks(self.task)
        self._initial = forks.read_only()
        if state is forks.snapshot:
            self._workspace = forks.take()
        else:
            warm = forks.take_at(changes) if changes is not None else None
            self._workspace = warm if warm is not None else state.fork()
        ws = self._workspace
        seeded = time.perf_counter()
        ws.actor = self.actor
        client = InProcessClient(shared_server(ws.services), ws, faults)
        tools = await client.list_tools()
        self._session = AgentSession(client, tools, messages, trial=self.trial)
        self._run = _Run(started=started, timings=Timings(seed=seeded - started))
        self._turn = None
        return tools

    async def acall(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> ToolOutcome:
        """Call a tool as the agent: the call and its result join the transcript (with
        `call_id`, or a new id), and the outcome is what the model reads. Past the turn's
        tool limit nothing runs, the outcome is an error saying so and the episode is
        truncated. Unknown tools and invalid arguments are error outcomes too (audited)."""
        session = self._active()
        call_id = call_id or session.new_call_id()
        session.record_assistant(
            None,
            [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ],
        )
        try:
            outcome = await session.call_tool(name, arguments)
        except ToolLimitReached as exc:
            outcome = ToolOutcome(
                text=f"{exc}: no more tool calls this turn; answer the user.", structured=None, is_error=True
            )
        session.record_tool_result(call_id, outcome)
        return outcome

    def reply(self, content: str) -> str | None:
        """The agent's message to the user (what it says when it has finished acting, or a
        question). Returns the user's answer within the turn when the message asks a question
        (see `respond`), else None: then the turn is the agent's to end (`next_turn`)."""
        self._active().record_assistant(content)
        return self.respond()

    def respond(self, *, needless: bool = True) -> str | None:
        """The scripted user's answer when the agent's last message ends its turn with a
        question, appended as a user message within the turn; None when it does not ask, or
        after `MAX_ANSWERS_PER_TURN` answers in the turn. The first question of a turn with a
        `clarification` gets its answer; any other question gets `NOTHING_TO_ADD` (with
        `needless=False`, None instead: a simulated user answers those)."""
        session = self._active()
        play = self._playing()
        if not asks_question(session.messages) or play.answers >= MAX_ANSWERS_PER_TURN:
            return None
        clarification = self.task.turns[play.index].clarification
        if clarification is not None and not play.clarified:
            play.clarified = True
            play.answered_after = self.workspace.audit.last_seq()
            session.count("clarifying_questions")
            answer = clarification.answer
        elif needless:
            session.count("needless_questions")
            answer = NOTHING_TO_ADD
        else:
            return None
        play.answers += 1
        self.user_says(answer)
        return answer

    def user_says(self, content: str) -> None:
        """A simulated user's answer within the turn (it does not start a new turn)."""
        session = self._active()
        self._run.user_replies.append(len(session.messages))
        session.messages.append({"role": "user", "content": content})

    async def anext_turn(self) -> str | None:
        """Judge the turn in play, then apply the next turn's events and return its user
        message, or None when that was the last turn."""
        self._active()
        play = self._playing()
        if self.judge_turns:
            await self._judge_current()
        else:
            self._run.timings.turns.append(time.perf_counter() - play.started)
        following = play.index + 1
        if following >= len(self.task.turns):
            self._turn = None
            return None
        self._begin_turn(following)
        return self.task.turns[following].user

    async def averdict(self) -> Verdict | None:
        """The episode's verdict (computed once; later calls return it). The turn in play is
        judged as if it ended now; turns never reached count as failed, judged on the final
        state. An episode that failed (`fail`) has no verdict: None."""
        if self._session is None:
            raise EpisodeError("the episode has not started: call reset() first")
        run = self._run
        if run.verdict_done:
            return run.verdict
        if not self.judge_turns:
            raise EpisodeError("the episode was played without judging its turns: it has no verdict")
        if run.status == "error":
            run.verdict_done = True
            return None
        if self._turn is not None:
            await self._judge_current()
            self._turn = None
        started = time.perf_counter()
        footprint = self.footprint
        if footprint is None:
            footprint = self.footprint = await _reference_footprint(self.task, self.cache)
        verify_started = time.perf_counter()
        task, ws, initial = self.task, self.workspace, self._initial
        assert initial is not None
        # The turns not played and the episode are judged on one state, often the one the
        # last turn was judged on: what was read of it is read once. When nothing was
        # logged before that turn began, its calls are all the episode's.
        last = run.judged
        if last is not None and last[0] == _state_key(ws):
            evidence = last[1] if run.turn_starts[-1] == 0 else last[1].with_audit(ws.audit.entries())
        else:
            evidence = Evidence(initial, ws, ws.audit.entries(), task.user_email)
        run.evidence = evidence
        audit = evidence.audit
        for i in range(len(run.turn_results), len(task.turns)):
            run.turn_results.append(
                await judge_turn(
                    task.turns[i].checks, initial, ws, audit, task.user_email, i, evidence=evidence
                )
            )
        ahead = ahead_guards(audit, run.turn_starts, footprint.turn_writes, writes=writes)
        for j, guard in ahead.items():
            run.turn_results[j] = [*run.turn_results[j], guard]
        run.verdict = await judge_evidence(
            task.checks,
            task.safety,
            evidence,
            run.turn_results,
            guarding_for(task, footprint),
            lasting_checks(task, footprint),
        )
        run.verdict_done = True
        run.judging_seconds += time.perf_counter() - verify_started
        run.footprint_seconds = verify_started - started
        return run.verdict

    async def arecord(self, *, hashed: bool = True) -> EpisodeRecord:
        """The episode's `EpisodeRecord` (judging it first if needed); without `hashed`, its
        `final_hash` is None (validation's variants are judged, never compared by hash)."""
        await self.averdict()
        ws, task, run = self.workspace, self.task, self._run
        finished = time.perf_counter()
        if run.status == "error" or run.evidence is None:
            evidence = Evidence(self.initial, ws, ws.audit.entries(), task.user_email)
        else:
            evidence = run.evidence
        final_hash = ws.content_hash() if hashed else None
        diff_summary = evidence.diff.summary()
        timings = run.timings.model_copy(deep=True)
        timings.verify = run.judging_seconds + time.perf_counter() - finished
        timings.total = time.perf_counter() - run.started - run.footprint_seconds
        session = self.session
        status = run.status
        if status == "completed" and session.truncated:
            status = "truncated"
        return EpisodeRecord(
            task_id=task.id,
            task_hash=task.content_hash,
            policy=self.policy,
            trial=self.trial,
            seed=self.seed,
            status=status,
            error=run.error,
            messages=session.messages,
            turn_boundaries=run.boundaries,
            user_replies=run.user_replies,
            event_errors=run.event_errors,
            tool_calls=evidence.audit,
            verdict=run.verdict,
            initial_hash=self.cache.initial_hash(task),
            final_hash=final_hash,
            diff_summary=diff_summary,
            timings=timings,
            agent_stats=dict(session.stats),
            capabilities=list(task.capabilities),
            services=list(task.services),
            turn_changes=turn_changes(task),
            turn_events=[[e.model_dump(mode="json") for e in turn.events] for turn in task.turns],
        )

    def fail(self, error: BaseException | str) -> None:
        """Mark the episode as broken by something that is not the agent's work (an
        endpoint that kept failing, a timeout): its record has status `error` and no
        verdict, so a resumed batch runs it again."""
        self._run.status = "error"
        if isinstance(error, str):
            self._run.error = error
            return
        cause = _leaf(error)
        if isinstance(cause, PolicyError):
            self._run.error = str(cause)
        else:
            self._run.error = f"{type(cause).__name__}: {cause}"

    def rewards(self) -> dict[str, float]:
        """Named scalars of the verdict for trainers (all 0.0 before it is judged or when
        the episode failed): score, success, raw_score, safety, collateral."""
        verdict = self._run.verdict
        if verdict is None:
            return {"score": 0.0, "success": 0.0, "raw_score": 0.0, "safety": 0.0, "collateral": 0.0}
        return {
            "score": float(verdict.score),
            "success": float(verdict.success),
            "raw_score": float(verdict.raw_score),
            "safety": float(not verdict.safety_violations),
            "collateral": float(len(verdict.collateral)),
        }

    # -- sync API ----------------------------------------------------------------------

    def reset(self) -> Start:
        """Sync `areset`."""
        return _run(self.areset)

    def resume(self, start: TurnStart) -> None:
        """Sync `aresume`."""
        _run(lambda: self.aresume(start))

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> ToolOutcome:
        """Sync `acall`."""
        return _run(lambda: self.acall(name, arguments, call_id=call_id))

    def next_turn(self) -> str | None:
        """Sync `anext_turn`."""
        return _run(self.anext_turn)

    def verdict(self) -> Verdict | None:
        """Sync `averdict`."""
        return _run(self.averdict)

    def record(self) -> EpisodeRecord:
        """Sync `arecord`."""
        return _run(self.arecord)

    # -- internals ---------------------------------------------------------------------

    def _active(self) -> AgentSession:
        session = self.session
        if self._turn is None or self._run.verdict_done:
            raise EpisodeError("the episode is over: every turn was played or it was judged")
        return session

    def _playing(self) -> _TurnInPlay:
        if self._turn is None:
            raise EpisodeError("the episode is over: every turn was played or it was judged")
        return self._turn

    def _begin_turn(self, i: int) -> None:
        turn, ws, session, run = self.task.turns[i], self.workspace, self.session, self._run
        started = time.perf_counter()
        for k, event in enumerate(turn.events):
            try:
                apply_event(ws, event)
            except (KeyError, ValueError) as exc:
                # The world moves on: an event that cannot apply (often because the agent did
                # not do the earlier turn's work) is recorded, not fatal.
                run.event_errors.append(f"turns[{i}].events[{k}] ({event.service}.{event.operation}): {exc}")
        run.boundaries.append(len(session.messages))
        session.begin_turn(turn.user, self.limits.max_tool_calls_per_turn)
        seq = ws.audit.last_seq()
        run.turn_starts.append(seq)
        self._turn = _TurnInPlay(i, started=started, seq=seq)

    async def _judge_current(self) -> None:
        play, ws, task, run, initial = self._playing(), self.workspace, self.task, self._run, self.initial
        i = play.index
        judged = time.perf_counter()
        key = _state_key(ws)
        evidence = Evidence(initial, ws, ws.audit.entries(since=play.seq), task.user_email)
        results = await judge_turn(
            task.turns[i].checks, initial, ws, evidence.audit, task.user_email, i, evidence=evidence
        )
        guard = asked_first(
            task.turns[i].clarification, evidence.calls, play.answered_after, i, writes=writes
        )
        if guard is not None:
            results.append(guard)
        run.judged = None if key is None or key != _state_key(ws) else (key, evidence)
        run.turn_results.append(results)
        run.judging_seconds += time.perf_counter() - judged
        run.timings.turns.append(time.perf_counter() - play.started)


def _state_key(ws: Workspace) -> tuple[int, int] | None:
    """What tells the workspace's state apart from a later one: the rows its connection has
    written (SQLite's count, triggers included) and its schema's version. None within a
    transaction, which may still be rolled back (a rollback does not change the count)."""
    if ws.conn.in_transaction:
        return None
    (version,) = ws.conn.execute("PRAGMA schema_version").fetchone()
    return ws.conn.total_changes, int(version)


async def _reference_footprint(task: Task, cache: SeedCache) -> Footprint:
    # The reference run is itself an episode, played by the oracle: the runner, which drives
    # episodes with policies, derives it (and imports this module, hence the late import).
    from .runner import reference_footprint

    return await reference_footprint(task, cache)


def _leaf(exc: BaseException) -> BaseException:
    """The first real exception inside (possibly nested) exception groups from task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


_portal: BlockingPortal | None = None
_portal_lock = threading.Lock()


def _run(fn: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine function on the process's background event loop and wait for it."""
    global _portal
    with _portal_lock:
        if _portal is None:
            manager = start_blocking_portal()
            _portal = manager.__enter__()
            atexit.register(manager.__exit__, None, None, None)
    return _portal.call(fn)
