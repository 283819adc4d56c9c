"""Rollouts: episodes of a policy on a task, through the real MCP servers."""

from .policies import POLICIES, NoopPolicy, OraclePolicy, Policy, PolicyError, resolve_refs
from .record import EpisodeRecord, Timings
from .runner import apply_event, run_episode, system_prompt
from .seeding import SeedCache, SeedError, seed_workspace
from .session import AgentSession, ToolLimitReached, ToolOutcome

__all__ = [
    "POLICIES",
    "AgentSession",
    "EpisodeRecord",
    "NoopPolicy",
    "OraclePolicy",
    "Policy",
    "PolicyError",
    "SeedCache",
    "SeedError",
    "Timings",
    "ToolLimitReached",
    "ToolOutcome",
    "apply_event",
    "resolve_refs",
    "run_episode",
    "seed_workspace",
    "system_prompt",
]
