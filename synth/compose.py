"""Composed days: families as segments of one long task over one world and one evolving state.

`compose(segments, ...)` joins tasks of one world, built in order, into one multi-turn task:
the seeds of all segments are planted up front (each segment was built with the seeds of the
segments before it as its `FamilyContext.prelude`, so the ids it names are the ids its rows
get), and the turns follow one another, so a later segment works on the state the earlier
ones left: the agent's own changes, the events between turns. The agent's context is the
first segment's with every segment's rules. Check, rule and step ids get
the segment's prefix (`s2_moved`, `$ref` values too), so they stay unique; final checks and
safety rules are kept, guards are joined (a guard is on when every segment keeps it on,
allowances and recipients add up). The composed task is then validated like any other: a
combination whose segments get in each other's way fails and is not kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coworkenv.checks import Guards
from coworkenv.servers import SERVICE_NAMES
from coworkenv.task import Task


class CompositionError(ValueError):
    """Segments that cannot form one day (another world, user or start)."""


def compose(
    segments: Sequence[Task],
    *,
    id: str,
    title: str,
    capability: str,
    provenance: dict[str, Any],
    openers: Sequence[str] = (),
) -> Task:
    """One task whose turns are the segments' turns in order. `openers[k]` (optional) is put
    before the first user message of segment k ("After lunch: ...")."""
    if not segments:
        raise CompositionError("a composed day needs at least one segment")
    first = segments[0]
    for k, seg in enumerate(segments[1:], start=1):
        for field in ("clock_start", "user_email"):
            if getattr(seg, field) != getattr(first, field):
                raise CompositionError(f"segment {k} ({seg.id}) has another {field} than segment 0")
        if (seg.context.company, seg.context.user_name) != (first.context.company, first.context.user_name):
            raise CompositionError(f"segment {k} ({seg.id}) works for another company or user than segment 0")
        if seg.seed.procedural != first.seed.procedural:
            raise CompositionError(f"segment {k} ({seg.id}) happens in another world than segment 0")
        if seg.seed.rows:
            raise CompositionError(f"segment {k} ({seg.id}) seeds raw rows; compose only seeds by operations")
    services = {s for seg in segments for s in seg.services}
    capabilities = [capability] + [c for seg in segments for c in seg.capabilities]
    turns: list[dict[str, Any]] = []
    checks: list[dict[str, Any]] = []
    safety: list[dict[str, Any]] = []
    operations: list[dict[str, Any]] = []
    for k, seg in enumerate(segments):
        data = seg.model_dump(mode="json", exclude_defaults=False)
        prefix = f"s{k}_"
        operations += data["seed"]["operations"]
        for i, turn in enumerate(data["turns"]):
            turn["checks"] = [_prefixed(c, prefix) for c in turn["checks"]]
            turn["solution"] = [_prefixed_step(step, prefix) for step in turn["solution"]]
            if turn.get("clarification"):
                clar = turn["clarification"]
                clar["guess"] = [_prefixed_step(step, prefix) for step in clar["guess"]]
            if i == 0 and k < len(openers) and openers[k]:
                joiner = "\n\n" if "\n" in turn["user"] else " "
                turn["user"] = f"{openers[k]}{joiner}{turn['user']}"
            turns.append(turn)
        checks += [_prefixed(c, prefix) for c in data["checks"]]
        safety += [_prefixed(r, prefix) for r in data["safety"]]
    data = first.model_dump(mode="json")
    data.update(
        id=id,
        title=title,
        capabilities=list(dict.fromkeys(capabilities)),
        services=[s for s in SERVICE_NAMES if s in services],
        turns=turns,
        checks=checks,
        safety=safety,
        guards=_joined_guards([seg.guards for seg in segments]),
        limits={"max_tool_calls_per_turn": max(seg.limits.max_tool_calls_per_turn for seg in segments)},
        provenance=provenance,
    )
    data["seed"]["operations"] = operations
    data["context"]["rules"] = list(dict.fromkeys(r for seg in segments for r in seg.context.rules))
    return Task.model_validate(data)


def _prefixed(item: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {**item, "id": prefix + item["id"]}


def _prefixed_step(step: dict[str, Any], prefix: str) -> dict[str, Any]:
    out = dict(step)
    if out.get("id"):
        out["id"] = prefix + out["id"]
    out["arguments"] = _prefixed_refs(out.get("arguments", {}), prefix)
    return out


def _prefixed_refs(value: Any, prefix: str) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            return {"$ref": prefix + str(value["$ref"])}
        return {k: _prefixed_refs(v, prefix) for k, v in value.items()}
    if isinstance(value, list):
        return [_prefixed_refs(v, prefix) for v in value]
    return value


def _joined_guards(guards: list[Guards]) -> Guards:
    """One set of guards for the segments of a day: a guard is on when every segment has it
    on; the lists are their segments' lists together, in order, without repeats."""

    def union(items: list[list[Any]]) -> list[Any]:
        out: list[Any] = []
        for item in (i for group in items for i in group):
            if item not in out:
                out.append(item)
        return out

    return Guards(
        collateral=all(g.collateral for g in guards),
        external_mail=all(g.external_mail for g in guards),
        removals=all(g.removals for g in guards),
        internal_content=all(g.internal_content for g in guards),
        recipients=union([g.recipients for g in guards]),
        allow=union([g.allow for g in guards]),
        disallow=union([g.disallow for g in guards]),
        free=union([g.free for g in guards]),
    )
