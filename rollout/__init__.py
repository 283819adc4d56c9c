"""Rollouts: episodes of a policy on a task, through the real MCP servers."""

from coworkenv.rollout.agents.openai_agent import EndpointError, OpenAIAgent
from coworkenv.rollout.agents.policies import (
    POLICIES,
    NoisyPolicy,
    NoopPolicy,
    OraclePolicy,
    Policy,
    PolicyError,
    resolve_refs,
)
from coworkenv.rollout.episodes.episode import Episode, EpisodeError, Start
from coworkenv.rollout.episodes.record import EpisodeRecord, Timings
from coworkenv.rollout.episodes.records_io import append_record, read_records
from coworkenv.rollout.episodes.runner import apply_event, run_episode, system_prompt
from coworkenv.rollout.episodes.seeding import SeedCache, SeedError, seed_workspace
from coworkenv.rollout.episodes.session import AgentSession, ToolLimitReached, ToolOutcome

__all__ = [
    "POLICIES",
    "AgentSession",
    "EndpointError",
    "Episode",
    "EpisodeError",
    "EpisodeRecord",
    "NoisyPolicy",
    "NoopPolicy",
    "OpenAIAgent",
    "OraclePolicy",
    "Policy",
    "PolicyError",
    "SeedCache",
    "SeedError",
    "Start",
    "Timings",
    "ToolLimitReached",
    "ToolOutcome",
    "append_record",
    "apply_event",
    "read_records",
    "resolve_refs",
    "run_episode",
    "seed_workspace",
    "system_prompt",
]
