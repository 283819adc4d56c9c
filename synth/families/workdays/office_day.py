"""An office day across every service (`office_day`): the CRM, the notes workspace and the
spreadsheets, each with a colleague's silent change, among mail, tickets, calendar, files and
the directory.

The day opens with one few-turn family of each of the CRM, notes and sheets in which a
colleague changes something between the turns without a word (a deal reassigned, an article
updated, a sheet row corrected) and the later turn's right answer depends on it; single-turn
families follow until every service of the workspace has had a request. Like `composed_day`
(whose planting it shares), each segment is built knowing the seeds planted before and after
it, later segments work on the state the earlier ones left, and every earlier outcome is
re-asserted at the end of the day.
"""

from __future__ import annotations

from coworkenv.servers import SERVICE_NAMES
from coworkenv.task import Task

from ...family import FAMILIES, FamilyContext, SeedDoesNotFit, family
from ..composed import SAFETY_CAPABILITIES, day_of, plant_segments

#: The services whose few-turn families bring the day's silent changes.
CHANGING_SERVICES = ("crm", "notes", "sheets")
#: Single-turn segments at most after the few-turn ones (the day stays within a workday's length).
MAX_SINGLES = 4


def _runs_here(ctx: FamilyContext, name: str) -> bool:
    fam = FAMILIES[name]
    return (ctx.on_demo or fam.worlds) and fam.capability not in SAFETY_CAPABILITIES and fam.kind != "workday"


def silent_change_in(task: Task, services: tuple[str, ...]) -> bool:
    """Whether a later turn of `task` opens on a silent event in one of `services`."""
    return any(not e.announced and e.service in services for turn in task.turns[1:] for e in turn.events)


@family(
    "office_day",
    capability_id="state_change_adaptation",
    services=list(SERVICE_NAMES),
    multi_turn=True,
    kind="workday",
    worlds=True,
)
def office_day(ctx: FamilyContext) -> Task:
    """One few-turn family with a silent change for each of crm, notes and sheets, then
    single-turn families (safety ones aside) chosen to cover the services not yet used, in one
    world and on one evolving state."""
    changing: dict[str, list[str]] = {service: [] for service in CHANGING_SERVICES}
    for name in sorted(FAMILIES):
        fam = FAMILIES[name]
        if fam.kind != "multi" or not _runs_here(ctx, name):
            continue
        for service in CHANGING_SERVICES:
            if service in fam.services:
                changing[service].append(name)
    order: list[str] = []
    for service in CHANGING_SERVICES:
        names = changing[service]
        ctx.rng.shuffle(names)
        order += [n for n in names if n not in order]
    singles = [n for n in sorted(FAMILIES) if not FAMILIES[n].multi_turn and _runs_here(ctx, n)]
    ctx.rng.shuffle(singles)

    def services_of(chosen: list[str]) -> set[str]:
        return {s for n in chosen for s in FAMILIES[n].services}

    def wanted(chosen: list[str], name: str) -> bool:
        fam = FAMILIES[name]
        if fam.multi_turn:  # one few-turn family per changing service
            return not any(s in services_of(chosen) for s in CHANGING_SERVICES if s in fam.services)
        singles_so_far = sum(not FAMILIES[n].multi_turn for n in chosen)
        return singles_so_far < MAX_SINGLES and bool(set(fam.services) - services_of(chosen))

    # the singles that bring the most services not yet used go first
    singles.sort(key=lambda n: -len(set(FAMILIES[n].services) - set(CHANGING_SERVICES)))
    chosen, segments = plant_segments(ctx, order + singles, wanted)
    for service in CHANGING_SERVICES:
        if not any(
            service in FAMILIES[n].services and silent_change_in(s, CHANGING_SERVICES)
            for n, s in zip(chosen, segments, strict=True)
        ):
            raise SeedDoesNotFit(f"no few-turn family with a silent change in {service} fits this world")
    return day_of(ctx, segments)
