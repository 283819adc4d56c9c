"""What a task's reference run tells the verifier: the goal footprint, the outside
addresses the goal mails and what it sends them, and which earlier-turn outcomes must last
to the end."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coworkenv.checks import Check, MailSent, StatesFacts
from coworkenv.servers import get_service
from coworkenv.state import AuditEntry, TableRules
from coworkenv.task import Task, Turn
from coworkenv.verifiers import (
    Evidence,
    Footprint,
    Guarding,
    derive_footprint,
    evaluate_checks,
    turn_writes,
)
from coworkenv.verifiers.collateral import external_recipients, outside_texts
from coworkenv.verifiers.evaluate import retracts


def table_rules(services: list[str]) -> dict[str, TableRules]:
    """The change rules of every table of the task's services."""
    rules: dict[str, TableRules] = {}
    for name in services:
        rules.update(get_service(name).schema.changes)
    return rules


async def footprint_of_run(task: Task, evidence: Evidence, turn_starts: Sequence[int] = ()) -> Footprint:
    """The footprint of a completed reference run, judged from its evidence; with the run's
    `turn_starts` (`Episode.turn_starts`), the writes each turn of a multi-turn task makes."""
    footprint = derive_footprint(
        evidence.diff,
        evidence.initial.conn,
        evidence.final.conn,
        table_rules(list(task.services)),
        user_messages(task),
    )
    footprint.recipients = external_recipients(evidence)
    footprint.outgoing = outside_texts(evidence)
    # guards too: what a turn had to leave as it was (a colleague's new figure on a deal)
    # must stay so at the end, unless the reference itself changed it later
    earlier = [c for turn in task.turns[:-1] for c in turn.checks]
    superseded = retracted_checks(task, evidence)
    earlier = [c for c in earlier if c.id not in superseded]
    footprint.lasting = [r.id for r in await evaluate_checks(earlier, evidence) if r.passed]
    if task.is_multi_turn and turn_starts:
        footprint.turn_writes = turn_writes(evidence.audit, turn_starts, writes=writes)
    return footprint


def writes(entry: AuditEntry) -> bool:
    """Whether the call's tool changes state (a tool no service knows counts as a write)."""
    try:
        return not get_service(entry.service).tools.is_read_only(entry.tool)
    except (ValueError, StopIteration):
        return True


def retracted_checks(task: Task, evidence: Evidence) -> set[str]:
    """Ids of earlier turns' fact checks that a later turn's message, scripted answer or
    event takes back (`verifiers.evaluate.retracts`: "it is NW-2, not NW-1"). Their outcome
    is superseded, so it is not re-asserted at the end in its old form, even where the
    reference's own rows still happen to hold the old value (a title left as it was)."""
    out: set[str] = set()
    for k, turn in enumerate(task.turns[:-1]):
        later = [text for after in task.turns[k + 1 :] for text in turn_texts(after)]
        for check in turn.checks:
            if not isinstance(check, StatesFacts | MailSent):
                continue
            if any(retracts(text, fact, evidence) for fact in check.facts for text in later):
                out.add(check.id)
    return out


def turn_texts(turn: Turn) -> list[str]:
    """What a turn tells the agent: the user's message, the scripted answer to a
    clarifying question, and every text an event carries (an arriving mail's body)."""
    out = [turn.user]
    if turn.clarification is not None:
        out.append(turn.clarification.answer)
    for event in turn.events:
        out += list(_strings(event.params))
    return out


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


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
    """Earlier turns' checks (goals and guards) whose outcome the reference run keeps to the end."""
    keep = set(footprint.lasting)
    return [c for turn in task.turns[:-1] for c in turn.checks if c.id in keep]
