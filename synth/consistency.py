"""Does a draft answer the request it was written for? Its capability, services and number
of turns must match what the slot asked, or it would be counted under the wrong capability."""

from __future__ import annotations

from coworkenv.synth.capabilities import capability
from coworkenv.task import Task

#: Services a task may always use besides the requested ones: people are looked up everywhere.
ALWAYS_ALLOWED = ("directory",)


def consistency_problems(task: Task, capability_id: str, services: list[str] | None = None) -> list[str]:
    """What in the draft does not match the request, each with what to write instead."""
    cap = capability(capability_id)
    allowed = set(services or cap.services) | set(ALWAYS_ALLOWED)
    out = []
    if capability_id not in task.capabilities:
        out.append(
            f"$.capabilities is {task.capabilities}, but the request was for {capability_id!r}: "
            f'write a task that exercises it and list it ("capabilities": ["{capability_id}"])'
        )
    stray = [s for s in task.services if s not in allowed]
    if stray:
        out.append(
            f"$.services has {', '.join(stray)}, outside the requested {', '.join(sorted(allowed))}: "
            "use only the requested services"
        )
    turns = len(task.turns)
    if cap.turns == "single" and turns != 1:
        out.append(f"$.turns has {turns} turns; {capability_id} is single-turn: write exactly one turn")
    if cap.turns == "multi" and turns < 2:
        out.append(
            f"$.turns has {turns} turn; {capability_id} is multi-turn: write two or three turns, "
            "with events that change the workspace between them"
        )
    return out
