"""Where an episode can be started again without replaying what came before: a turn start
(`TurnStart`) and the keys that say which tasks reach the same state there.

Validation plays dozens of variants of one reference solution; a variant that changes only
a later turn (or a later step of a turn) starts where it departs, from a start another
episode took (`Episode.turn_start`, `Episode.step_start`, `Episode.aresume`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from coworkenv.state import Snapshot
from coworkenv.state.forks import Changes
from coworkenv.task import Task, Turn
from coworkenv.verifiers import CheckResult

__all__ = ["TurnStart", "step_key", "turn_prefix_key"]


@dataclass(frozen=True)
class TurnStart:
    """An episode as it stood when one of its turns began (the turn's events applied, its
    user message sent, no call made yet): what `Episode.aresume` needs to play the rest of
    the episode again without replaying the turns before. Validation plays dozens of
    variants of one reference solution; a variant that changes only a later turn starts
    there. `prefix_key` names what the state depends on (`turn_prefix_key`). The state is
    kept twice: as a snapshot, and as its changes since the seed, with which a resume brings
    a warm fork of the seed there instead of forking the snapshot (a new connection reads
    its whole schema first).

    With `steps` above 0 it is a start within the turn (`Episode.step_start`): the turn's
    first `steps` reference-solution steps were played as written (`calls` tool calls),
    nothing was asked or replied yet. Only a policy that plays the reference solution
    reaches it, so only such a policy may go on from it (see `rollout.replay`)."""

    turn: int
    prefix_key: str
    workspace: Snapshot
    messages: list[dict[str, Any]]
    boundaries: list[int]
    user_replies: list[int]
    event_errors: list[str]
    turn_results: list[list[CheckResult]]
    turn_seconds: list[float]
    seq: int
    turn_starts: list[int]
    stats: dict[str, int]
    truncated: bool
    next_call_id: int
    changes: Changes | None = None
    steps: int = 0
    calls: int = 0


def turn_prefix_key(task: Task, turn: int, steps: int = 0) -> str:
    """A hash of everything the state at the start of `turn` depends on: the seed, the tool
    limits, every earlier turn (messages, events, solution, checks) and this turn's events
    and user message. Two tasks with the same key reach the same state there. With `steps`,
    the state after the turn's first `steps` reference-solution steps, played before any
    question (`step_key`)."""
    key = _turn_key(task, turn)
    for played in range(1, steps + 1):
        key = step_key(key, task.turns[turn], played)
    return key


def step_key(previous: str, turn: Turn, played: int) -> str:
    """The prefix key after the turn's first `played` reference-solution steps, from the key
    after the first `played - 1`: it adds step `played - 1` and whether the turn asks its
    question before it (then that state is not reached without a question). A task whose
    turn has fewer steps gets a key no state has."""
    if played > len(turn.solution):
        return hashlib.sha256(f"{previous}\0no step {played}".encode()).hexdigest()
    asks_first = turn.clarification is not None and turn.clarification.after < played
    step = json.dumps(turn.solution[played - 1].model_dump(mode="json"), sort_keys=True, default=str)
    return hashlib.sha256(f"{previous}\0{step}\0{asks_first}".encode()).hexdigest()


def _turn_key(task: Task, turn: int) -> str:
    current = task.turns[turn]
    opening = {"events": [e.model_dump(mode="json") for e in current.events], "user": current.user}
    digest = hashlib.sha256()
    for part in (
        task.seed_hash,
        json.dumps(task.limits.model_dump(mode="json"), sort_keys=True),
        *(t.canonical_json for t in task.turns[:turn]),
        json.dumps(opening, sort_keys=True, default=str),
    ):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()
