"""Whether an agent did a later turn's work before the user asked for it.

A multi-turn task asks for work turn by turn, and events change the world between turns. An
agent that does turn 3's work in turn 2 ends in the same final state as one that waited,
so the final state cannot tell them apart; the audit log can. The reference run says which
writes each turn asks for (`Footprint.turn_writes`: each write call's tool and the values it
was given, less the text the agent words itself). A write the agent makes in turn j that
matches a reference write of a later turn, and no reference write of turn j or before, was
done ahead of the request: the guard `in-turn-<j>` fails that turn.

A call matches a reference write when it names the same tool and every value it gives
(ids, statuses, queues, recipients, times) is the reference's for that argument: a split
update or a call with fewer fields matches too. Calls that match no reference write at all
are the collateral guard's to judge.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Any

from coworkenv.state import AuditEntry

from .evaluate import normal_value
from .verdict import CheckResult

IN_TURN = "in-turn"
"""Id prefix of the guard; the turn's index follows (`in-turn-2`)."""

WORDED = frozenset({"body", "content", "note", "description", "subject", "title", "query", "location"})
"""Arguments the agent words itself: their text is no part of what a write does."""


def write_signature(entry: AuditEntry) -> str:
    """A write call as the guard compares it: its tool and the values it was given."""
    values = {k: normal_value(v) for k, v in sorted(entry.arguments.items()) if k not in WORDED}
    return json.dumps([f"{entry.service}.{entry.tool}", values], sort_keys=True, default=str)


def turn_writes(
    calls: Sequence[AuditEntry], turn_starts: Sequence[int], *, writes: Callable[[AuditEntry], bool]
) -> list[list[str]]:
    """Per turn, the signatures of the successful writes made in it (`turn_starts`: the last
    audit sequence number before each turn began)."""
    out: list[list[str]] = [[] for _ in turn_starts]
    for entry in calls:
        if entry.actor == "event" or entry.is_error or not writes(entry):
            continue
        turn = turn_of(entry.seq, turn_starts)
        if turn >= 0:
            out[turn].append(write_signature(entry))
    return [sorted(set(t)) for t in out]


def turn_of(seq: int, turn_starts: Sequence[int]) -> int:
    """The turn a call with sequence number `seq` was made in (-1: before the first)."""
    return bisect_left(list(turn_starts), seq) - 1


def ahead_guards(
    calls: Sequence[AuditEntry],
    turn_starts: Sequence[int],
    reference: Sequence[Sequence[str]],
    *,
    writes: Callable[[AuditEntry], bool],
) -> dict[int, CheckResult]:
    """The failing `in-turn` guard of each turn in which the agent did a later turn's work;
    nothing for a single-turn task or one whose reference writes were not recorded."""
    if len(reference) < 2:
        return {}
    parsed = [[json.loads(s) for s in turn] for turn in reference]
    found: dict[int, CheckResult] = {}
    for entry in calls:
        if entry.actor == "event" or entry.is_error or not writes(entry):
            continue
        j = turn_of(entry.seq, turn_starts)
        if j < 0 or j in found or j >= len(parsed) - 1:
            continue
        tool, values = json.loads(write_signature(entry))
        later = [k for k in range(j + 1, len(parsed)) if any(_within(tool, values, r) for r in parsed[k])]
        if later and not any(_within(tool, values, r) for k in range(j + 1) for r in parsed[k]):
            found[j] = CheckResult(
                id=f"{IN_TURN}-{j}",
                type="in_turn",
                passed=False,
                weight=1.0,
                message=f"{tool} with {values} does turns[{later[0]}]'s work in turns[{j}], before it was asked",
                turn=j,
                role="guard",
            )
    return found


def _within(tool: str, values: dict[str, Any], written: list[Any]) -> bool:
    ref_tool, ref_values = written
    return tool == ref_tool and all(k in ref_values and ref_values[k] == v for k, v in values.items())
