"""Variants of a task's reference solution, for the two-sided validation contract: what
they are and how they are built. The wrong ones are in `synth.validation.mutants`, the right ones
in `synth.validation.acceptance`. Every variant is a task whose solution differs; validation judges
it against the ORIGINAL task's footprint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from coworkenv.servers import get_service
from coworkenv.state import Workspace
from coworkenv.task import SolutionStep, Task
from coworkenv.verifiers import Footprint
from coworkenv.verifiers.footprint import row_key

Side = Literal["reject", "accept"]

FREE_TEXT = ("body", "content", "note", "description", "subject", "title")


@dataclass(frozen=True)
class Variant:
    side: Side
    kind: str
    description: str
    task: Task
    position: tuple[int, int] | None = None


def tool_kind(tool: str) -> tuple[bool, bool]:
    """(read_only, idempotent) of a combined tool name; unknown tools count as writes."""
    service, _, bare = tool.partition("_")
    try:
        spec = get_service(service).tools
        return spec.is_read_only(bare), bare.startswith(("update_", "mark_", "move_", "add_label"))
    except (ValueError, StopIteration):
        return False, False


def write_steps(task: Task) -> list[tuple[int, int]]:
    """(turn, step) positions of solution steps whose tool changes state."""
    return [
        (i, j)
        for i, turn in enumerate(task.turns)
        for j, step in enumerate(turn.solution)
        if not tool_kind(step.tool)[0] and not step.expect_error
    ]


def with_solution(task: Task, turn: int, steps: list[SolutionStep]) -> Task:
    """`task` with turn `turn`'s solution replaced by `steps` (the turn's other fields and
    the other turns shared, not copied: models are frozen)."""
    turns = list(task.turns)
    turns[turn] = turns[turn].model_copy(update={"solution": list(steps)})
    return task.model_copy(update={"turns": turns})


def replace_step(task: Task, i: int, j: int, *new: SolutionStep) -> Task:
    steps = list(task.turns[i].solution)
    return with_solution(task, i, [*steps[:j], *new, *steps[j + 1 :]])


def append_steps(task: Task, i: int, *new: SolutionStep) -> Task:
    return with_solution(task, i, [*task.turns[i].solution, *new])


def prepend_steps(task: Task, i: int, *new: SolutionStep) -> Task:
    return with_solution(task, i, [*new, *task.turns[i].solution])


def step_of(tool: str, **arguments: Any) -> SolutionStep:
    return SolutionStep(tool=tool, arguments=arguments)


UPDATE_KEYS = {
    "tickets_update_ticket": "ticket_id",
    "calendar_update_event": "event_id",
    "crm_update_account": "account_id",
    "crm_update_contact": "contact_id",
    "crm_update_deal": "deal_id",
    "notes_update_page": "page_id",
    "notes_update_database_row": "row_id",
}
"""Per update tool, the argument naming the row it changes (only the arguments given change)."""


def unrelated(seed: Workspace, footprint: Footprint, table: str, query: str, key: str) -> Any | None:
    """The first row of a query the goal leaves alone (its key value), or None."""
    for (value,) in seed.conn.execute(query):
        if not footprint.touches(table, row_key({key: value})):
            return value
    return None
