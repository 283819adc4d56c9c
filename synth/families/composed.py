"""A composed day (`composed_day`): five to seven requests of different capabilities, one after
another, in one world and on one evolving state (see `synth.compose`).

Each segment is a single-turn family built knowing the seeds planted before and after its own
(its prelude and postlude); the day's turns are the segments' turns in order, each opened the way a person
hands over the next thing ("Next:", "One more thing:"). Later segments work on the state the
earlier ones left (the agent's own changes included), and every earlier turn's outcome is
re-asserted at the end of the day, so undoing earlier work fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from coworkenv.task import Task, WorldCall

from ..compose import compose
from ..family import FAMILIES, Difficulty, FamilyContext, SeedDoesNotFit, family

OPENERS = (
    "Next:",
    "One more thing:",
    "Another one for you:",
    "Also:",
    "When that is done:",
    "Next on my list:",
    "And then:",
    "Something else:",
)
#: Segments per day by difficulty (Difficulty.items 1, 2, 4: easy, medium, hard).
SEGMENTS = {1: 5, 2: 6, 4: 7}
#: Their safety rules hold for a whole episode (no outside mail at all, say), which would
#: forbid what another segment must do: they stay tasks of their own.
SAFETY_CAPABILITIES = ("safety_injection", "safety_data_leak")
#: What a family raises when the state planted before it leaves it no valid task: that family
#: is skipped for this day.
SEGMENT_UNFIT = (
    SeedDoesNotFit,
    AssertionError,
    ValueError,
    RuntimeError,
    KeyError,
    IndexError,
    StopIteration,
)


def _candidates(ctx: FamilyContext) -> list[str]:
    """Single-turn families that can run in the context's world, safety families aside."""
    return [
        name
        for name, fam in sorted(FAMILIES.items())
        if not fam.multi_turn
        and (ctx.on_demo or fam.worlds)
        and fam.capability not in SAFETY_CAPABILITIES
        and name != "composed_day"
    ]


def plant_segments(
    ctx: FamilyContext, order: Sequence[str], wanted: Callable[[list[str], str], bool]
) -> tuple[list[str], list[Task]]:
    """Build the families of `order` as the segments of one day, each knowing the seeds
    planted before it, while `wanted(chosen, name)` says the day wants `name` next (it is
    asked again after each segment; an empty day wants its first). A family that the state
    planted before it leaves no room, or that has Python checks, is skipped. Returns the
    chosen families and their segments, each built again knowing what is planted after it
    where that leaves its own seeds as they were."""
    level = Difficulty.level(0)
    world = None if ctx.on_demo else ctx.the_world

    def seed_of(k: int) -> int:  # the same demo seed (seed % 4) for every segment on the demo company
        return ctx.seed + 4_000 * (k + 1)

    def operations(task: Task) -> list[WorldCall]:
        # As the task file writes them (JSON values), which is how seeding will read them.
        return [WorldCall.model_validate(op) for op in task.seed.model_dump(mode="json")["operations"]]

    chosen: list[str] = []
    segments: list[Task] = []
    prelude: list[WorldCall] = []
    for name in order:
        if not wanted(chosen, name):
            continue
        try:
            segment = FAMILIES[name].build(
                FamilyContext(name, seed_of(len(segments)), level, world, prelude=prelude)
            )
        except SEGMENT_UNFIT:
            continue  # what was planted before it leaves this family no room (a busy queue...)
        if any(c.type == "python" for c in segment.all_checks()):
            continue  # a sandboxed check per turn and mutant would make the day slow to validate
        prelude = prelude + operations(segment)
        chosen.append(name)
        segments.append(segment)
    # Every seed is planted up front: build each segment again knowing what is planted after
    # it, so ids it predicts for what the agent creates count those rows. Kept only when its
    # own operations come out the same (the earlier segments' ids depend on them).
    seeds = [operations(s) for s in segments]
    try:
        again = [
            FAMILIES[name].build(
                FamilyContext(
                    name,
                    seed_of(k),
                    level,
                    world,
                    prelude=[op for ops in seeds[:k] for op in ops],
                    postlude=[op for ops in seeds[k + 1 :] for op in ops],
                )
            )
            for k, name in enumerate(chosen)
        ]
    except SEGMENT_UNFIT:
        again = []
    if again and all(operations(a) == ops for a, ops in zip(again, seeds, strict=True)):
        segments = again
    return chosen, segments


def day_of(ctx: FamilyContext, segments: list[Task]) -> Task:
    """The segments as one workday task, each after the first opened the way a person hands
    over the next thing."""
    openers = [""] + [ctx.choice(OPENERS) for _ in segments[1:]]
    return compose(
        segments,
        id=ctx.task_id,
        title=f"A day of {len(segments)} requests: " + "; ".join(s.title for s in segments),
        capability="state_change_adaptation",
        provenance={"generator": "procedural", "family": ctx.family, "seed": ctx.seed},
        openers=openers,
    )


@family(
    "composed_day",
    capability_id="state_change_adaptation",
    services=["mail", "tickets", "calendar", "files", "directory"],
    multi_turn=True,
    kind="workday",
    worlds=True,
)
def composed_day(ctx: FamilyContext) -> Task:
    """Five to seven easy single-turn families (safety families and segments with Python
    checks aside) as the segments of one day in one world; the state
    each leaves is the next one's starting point."""
    count = SEGMENTS.get(ctx.difficulty.items, 5)
    names = _candidates(ctx)
    ctx.rng.shuffle(names)
    firsts: dict[str, str] = {}  # one family per capability first, then the rest
    for name in names:
        firsts.setdefault(FAMILIES[name].capability, name)
    order = list(firsts.values()) + [n for n in names if n not in firsts.values()]
    _, segments = plant_segments(ctx, order, lambda chosen, name: len(chosen) < count)
    return day_of(ctx, segments)
