"""What a task's reference run tells the verifier: the goal footprint, the outside
addresses the goal mails and what it sends them, and which earlier-turn outcomes must last
to the end."""

from __future__ import annotations

from coworkenv.checks import Check
from coworkenv.servers import get_service
from coworkenv.state import TableRules
from coworkenv.task import Task
from coworkenv.verifiers import Evidence, Footprint, Guarding, derive_footprint, evaluate_checks
from coworkenv.verifiers.collateral import external_recipients, outside_texts


def table_rules(services: list[str]) -> dict[str, TableRules]:
    """The change rules of every table of the task's services."""
    rules: dict[str, TableRules] = {}
    for name in services:
        rules.update(get_service(name).schema.changes)
    return rules


async def footprint_of_run(task: Task, evidence: Evidence) -> Footprint:
    """The footprint of a completed reference run, judged from its evidence."""
    footprint = derive_footprint(
        evidence.diff,
        evidence.initial.conn,
        evidence.final.conn,
        table_rules(list(task.services)),
        user_messages(task),
    )
    footprint.recipients = external_recipients(evidence)
    footprint.outgoing = outside_texts(evidence)
    earlier = [c for turn in task.turns[:-1] for c in turn.checks if not c.is_guard]
    footprint.lasting = [r.id for r in await evaluate_checks(earlier, evidence) if r.passed]
    return footprint


def user_messages(task: Task) -> list[str]:
    """Everything the user says in the task: each turn's message and scripted answer."""
    out = []
    for turn in task.turns:
        out.append(turn.user)
        if turn.clarification is not None:
            out.append(turn.clarification.answer)
    return out


def guarding_for(task: Task, footprint: Footprint) -> Guarding:
    return Guarding(footprint=footprint, rules=table_rules(list(task.services)), guards=task.guards)


def lasting_checks(task: Task, footprint: Footprint) -> list[Check]:
    """Earlier turns' goal checks whose outcome the reference run keeps to the end."""
    keep = set(footprint.lasting)
    return [c for turn in task.turns[:-1] for c in turn.checks if c.id in keep]
