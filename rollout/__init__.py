"""Rollouts: episodes of a policy on a task, through the real MCP servers."""

from .episode import Episode, EpisodeError, Start
from .openai_agent import EndpointError, OpenAIAgent
from .policies import POLICIES, NoisyPolicy, NoopPolicy, OraclePolicy, Policy, PolicyError, resolve_refs
from .record import EpisodeRecord, Timings
from .records_io import append_record, read_records
from .runner import apply_event, run_episode, system_prompt
from .seeding import SeedCache, SeedError, seed_workspace
from .session import AgentSession, ToolLimitReached, ToolOutcome

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
