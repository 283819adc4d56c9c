"""Rollouts: episodes of a policy on a task, through the real MCP servers."""

from .batch import BatchState, arun_batch, run_batch
from .episode import Episode, EpisodeError, Start
from .openai_agent import EndpointError, OpenAIAgent
from .policies import POLICIES, NoisyPolicy, NoopPolicy, OraclePolicy, Policy, PolicyError, resolve_refs
from .preflight import NotReady, check_ready
from .record import EpisodeRecord, Timings
from .records_io import append_record, read_records
from .runner import apply_event, run_episode, system_prompt
from .seeding import SeedCache, SeedError, seed_workspace
from .session import AgentSession, ToolLimitReached, ToolOutcome

__all__ = [
    "POLICIES",
    "AgentSession",
    "BatchState",
    "EndpointError",
    "Episode",
    "EpisodeError",
    "EpisodeRecord",
    "NoisyPolicy",
    "NoopPolicy",
    "NotReady",
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
    "arun_batch",
    "check_ready",
    "read_records",
    "resolve_refs",
    "run_batch",
    "run_episode",
    "seed_workspace",
    "system_prompt",
]
