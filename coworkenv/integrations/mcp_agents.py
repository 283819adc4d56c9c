"""A scored batch for any MCP agent: agents built on the OpenAI Agents SDK, pydantic-ai or
any MCP client, one fresh workspace per episode, each recorded and judged.

An agent is an async function that receives a `Conversation`: the URL of the episode's MCP
endpoint (its tools, served over streamable HTTP on 127.0.0.1), the instructions (the
task's system prompt) and the first user message. It works with the tools, and answers the
user with `await conversation.reply(text)`, which returns the user's next message: the
answer to a question within the turn, or the next turn's message (after that turn's
events), or None once the last turn is over. It may instead return its final answer.

    async def agent(conversation: Conversation) -> str | None:
        async with MCPServerStreamableHttp(params={"url": conversation.mcp_url}) as tools:
            bot = Agent(name="assistant", instructions=conversation.instructions, mcp_servers=[tools])
            result = await Runner.run(bot, conversation.prompt)
            return str(result.final_output)

    state = await run_agent_batch(tasks, agent, trials=2, out_dir="out/sdk")

Each episode's `EpisodeRecord` is appended to `out_dir/records.jsonl` as it finishes
(`coworkenv report` and `coworkenv export` read it) and the batch resumes as `coworkenv
rollout` does. An agent that raises, or runs past `EPISODE_TIMEOUT_SECONDS`, ends its
episode with status `error`: no verdict, and a resumed batch runs it again. Turns the agent
never reached count as failed. `coworkenv rollout-mcp` runs this from the command line.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio

from coworkenv.rollout.episodes.batch import BatchState, Progress, pending_episodes
from coworkenv.rollout.episodes.episode import EPISODE_TIMEOUT_SECONDS, Episode
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.records_io import append_record, repair
from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.servers.faults import FaultPlan
from coworkenv.task import Task

from .episode_server import serve_episode

__all__ = ["Conversation", "McpAgent", "load_agent", "run_agent_batch", "run_agent_episode"]


@dataclass
class Conversation:
    """One episode as an MCP agent sees it. See the module docstring."""

    mcp_url: str
    """The episode's tools: a streamable HTTP MCP endpoint on 127.0.0.1."""
    instructions: str
    """The task's system prompt (who the agent acts for, the date, the rules)."""
    prompt: str
    """The first user message."""
    task_id: str
    turns: int
    """How many user turns the task has."""
    episode: Episode

    async def reply(self, text: str) -> str | None:
        """Answer the user: returns the user's next message (the answer to a question, or
        the next turn's message), or None when the conversation is over."""
        answer = self.episode.reply(text)
        if answer is not None:
            return answer
        return await self.episode.anext_turn()


McpAgent = Callable[[Conversation], Awaitable[str | None]]


def load_agent(spec: str) -> McpAgent:
    """The agent named `module:function` (an async function of a `Conversation`)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ValueError(f"an agent is named as module:function, e.g. my_agents:triage, not {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import the agent's module {module_name!r}: {exc}") from exc
    agent = getattr(module, attribute, None)
    if agent is None:
        raise ValueError(f"the module {module_name!r} has no {attribute!r}")
    if not inspect.iscoroutinefunction(agent):
        raise ValueError(f"the agent {spec} must be an async function: async def {attribute}(conversation)")
    return agent


async def run_agent_episode(
    task: Task,
    agent: McpAgent,
    *,
    policy: str,
    trial: int = 0,
    seed: int = 0,
    cache: SeedCache | None = None,
    faults: FaultPlan | None = None,
) -> EpisodeRecord:
    """Play one episode of the task with the agent over MCP and return its judged record.
    With `faults`, its tool calls meet seeded injected errors (see `servers.faults`)."""
    episode = Episode(task, trial=trial, seed=seed, cache=cache, faults=faults, policy=policy)
    start = await episode.areset()
    try:
        with anyio.fail_after(EPISODE_TIMEOUT_SECONDS):
            async with serve_episode(episode) as url:
                conversation = Conversation(
                    mcp_url=url,
                    instructions=start.system_prompt,
                    prompt=start.user_message,
                    task_id=task.id,
                    turns=start.turns,
                    episode=episode,
                )
                final = await agent(conversation)
        if final is not None and not episode.done:
            episode.reply(final)  # its last answer; a question it asks now goes unanswered
    except TimeoutError:
        episode.fail(f"the episode ran past {EPISODE_TIMEOUT_SECONDS} s")
    except Exception as raised:  # recorded as data: a broken agent is an error record, not a crash
        episode.fail(raised)
    record = await episode.arecord()
    episode.close()
    return record


async def run_agent_batch(
    tasks: list[Task],
    agent: McpAgent,
    *,
    trials: int,
    out_dir: str | Path,
    name: str | None = None,
    concurrency: int = 4,
    seed: int = 0,
    faults: FaultPlan | None = None,
    progress: Progress | None = None,
) -> BatchState:
    """Run every pending (task, trial) episode with the agent, at most `concurrency` at a
    time, appending each record to `out_dir/records.jsonl` as it finishes. `name` is the
    policy in the records (default: `mcp:<module>:<function>`); resuming skips the (task,
    trial) pairs that already have a record of that policy, except errors. `faults` as in
    `run_agent_episode`."""
    policy = name or f"mcp:{agent.__module__}:{agent.__qualname__}"
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    repair(out)
    todo = pending_episodes(tasks, policy, trials, out)
    state = BatchState(total=len(todo), skipped=len(tasks) * trials - len(todo))
    cache = SeedCache()
    limiter = anyio.CapacityLimiter(max(1, concurrency))

    async def one(task: Task, trial: int) -> None:
        async with limiter:
            record = await run_agent_episode(
                task, agent, policy=policy, trial=trial, seed=seed, cache=cache, faults=faults
            )
        append_record(out, record)
        state.done += 1
        state.successes += record.success
        state.errors += record.status == "error"
        state.records.append(record)
        if progress is not None:
            progress(state, record)

    async with anyio.create_task_group() as group:
        for task, trial in todo:
            group.start_soon(one, task, trial)
    return state
