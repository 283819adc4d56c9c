"""The EpisodeRecord: one canonical record per episode, one JSON line each.

Every export (SFT demonstrations, RL rollouts) is a function of it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from coworkenv.state import AuditEntry
from coworkenv.verifiers import Verdict

Status = Literal["completed", "truncated", "error"]


class Timings(BaseModel):
    """Wall-clock seconds spent in each phase (metadata, not domain time)."""

    seed: float = 0.0
    turns: list[float] = Field(default_factory=list)
    verify: float = Field(
        default=0.0,
        description="All of verification: turn checks, final checks, safety, collateral, final hash",
    )
    total: float = 0.0


class EpisodeRecord(BaseModel):
    """One run of one policy on one task (one trial)."""

    task_id: str
    task_hash: str
    policy: str
    trial: int
    seed: int
    status: Status
    error: str | None = None
    messages: list[dict[str, Any]] = Field(description="The conversation in OpenAI Chat Completions format")
    turn_boundaries: list[int] = Field(
        default_factory=list, description="Index in `messages` of each turn's user message"
    )
    user_replies: list[int] = Field(
        default_factory=list, description="Index in `messages` of each simulated user's answer within a turn"
    )
    event_errors: list[str] = Field(
        default_factory=list,
        description="Events that could not apply (e.g. on something the agent never created)",
    )
    tool_calls: list[AuditEntry] = Field(default_factory=list, description="The audit log of the episode")
    verdict: Verdict | None = None
    initial_hash: str
    final_hash: str | None = None
    diff_summary: dict[str, dict[str, int]] = Field(default_factory=dict)
    timings: Timings = Field(default_factory=Timings)
    agent_stats: dict[str, int] = Field(
        default_factory=dict,
        description="malformed_arguments, unknown_tool, tool_errors, endpoint_retries, ...",
    )
    capabilities: list[str] = Field(default_factory=list)
    services: list[str] = Field(default_factory=list)
    turn_changes: list[list[str]] = Field(
        default_factory=list,
        description="Per turn, what changed before it (see rollout.episodes.turn_changes): announced, silent, ...",
    )
    turn_events: list[list[dict[str, Any]]] = Field(
        default_factory=list,
        description="Per turn, the events applied before it: service, operation, params, announced",
    )

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.policy, self.trial)

    @property
    def score(self) -> float:
        return self.verdict.score if self.verdict else 0.0

    @property
    def success(self) -> bool:
        return bool(self.verdict and self.verdict.success)
