"""Evaluate declarative checks (and Python checks, in the sandbox) against evidence."""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Sequence
from datetime import date
from typing import Any

from coworkenv.checks import (
    BoundedDiff,
    CallOrder,
    Check,
    CountIs,
    Fact,
    FieldContains,
    FieldEquals,
    MailSent,
    PythonCheck,
    RowAbsent,
    RowExists,
    SqlEquals,
    StatesFacts,
    ToolCalled,
    ToolNotCalled,
    Unchanged,
)
from coworkenv.state import AuditEntry

from . import claims
from . import facts as fact_matchers
from .collateral import DELIVERIES, delivery_text, new_deliveries
from .evidence import Evidence
from .python_checks import python_verdicts
from .sql_query import run_read_only_query, run_read_only_query_async
from .verdict import CheckResult
from .where import CheckSpecError, matches, validate_where

COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}


async def evaluate_checks(
    checks: list[Check], evidence: Evidence, *, turn: int | None = None
) -> list[CheckResult]:
    """Evaluate each check. A check that raises fails with the exception recorded; it never passes silently.
    The values the checks' facts and contexts list may stand beside any of their facts."""
    results = []
    listed = listed_facts(checks)
    python = [c for c in checks if isinstance(c, PythonCheck)]
    judged = (
        dict(zip(map(id, python), await python_verdicts(python, evidence), strict=True)) if python else {}
    )
    for check in checks:
        try:
            if isinstance(check, PythonCheck):
                verdict = judged[id(check)]
                if isinstance(verdict, Exception):
                    raise verdict
                passed, message = verdict
            elif isinstance(check, SqlEquals):  # bounded, and off the event loop
                actual = await run_read_only_query_async(evidence.conn(check.state), check.query)
                passed, message = _sql_result(check, actual)
            else:
                passed, message = evaluate_declarative(check, evidence, listed)
            results.append(
                CheckResult(
                    id=check.id,
                    type=check.type,
                    passed=passed,
                    weight=check.weight,
                    message=message,
                    turn=turn,
                    role="guard" if check.is_guard else "goal",
                )
            )
        except Exception as exc:  # a broken check is a failed check, recorded, never a pass
            results.append(
                CheckResult(
                    id=check.id,
                    type=check.type,
                    passed=False,
                    weight=check.weight,
                    message="the check could not be evaluated",
                    error=f"{type(exc).__name__}: {exc}",
                    turn=turn,
                    role="guard" if check.is_guard else "goal",
                )
            )
    return results


def listed_facts(checks: Sequence[Check]) -> list[Fact]:
    """Every fact and context value the fact checks among `checks` list: a text may state
    one of them beside another check's fact without contradicting it (a reply that gives
    both figures two checks ask for)."""
    return [f for c in checks if isinstance(c, StatesFacts | MailSent) for f in (*c.facts, *c.context)]


def evaluate_declarative(check: Check, ev: Evidence, listed: Sequence[Fact] = ()) -> tuple[bool, str]:
    """(passed, message) for a declarative check; `listed` as in `listed_facts`."""
    if isinstance(check, RowExists | RowAbsent | CountIs | FieldEquals | FieldContains):
        validate_where(check.where, ev.columns(check.table), check.table)
        found = ev.matching(check.table, check.where)
        if isinstance(check, RowExists):
            return bool(found), f"{len(found)} matching row(s) in {check.table}"
        if isinstance(check, RowAbsent):
            return not found, f"{len(found)} matching row(s) in {check.table}"
        if isinstance(check, CountIs):
            return COMPARE[check.op](
                len(found), check.value
            ), f"count {len(found)}, expected {check.op} {check.value}"
        if check.column not in ev.columns(check.table):
            raise CheckSpecError(f"table {check.table} has no column {check.column!r}")
        if isinstance(check, FieldEquals):
            if len(found) != 1:
                return False, f"expected exactly one matching row in {check.table}, found {len(found)}"
            actual = found[0][check.column]
            return _same(actual, check.value), f"{check.column} is {actual!r}, expected {check.value!r}"
        needle = check.text if check.case_sensitive else check.text.casefold()
        for row in found:
            value = row[check.column]
            hay = "" if value is None else str(value)
            if needle in (hay if check.case_sensitive else hay.casefold()):
                return True, f"{check.column} contains {check.text!r}"
        return (
            False,
            f"no matching row's {check.column} contains {check.text!r} ({len(found)} row(s) matched)",
        )
    if isinstance(check, StatesFacts):
        return _states_facts(check, ev, listed)
    if isinstance(check, MailSent):
        return _mail_sent(check, ev, listed)
    if isinstance(check, SqlEquals):
        return _sql_result(check, run_read_only_query(ev.conn(check.state), check.query))
    if isinstance(check, ToolCalled):
        hits = [
            c for c in ev.successful_calls if _call_matches(c, check.tool, check.service, check.arguments)
        ]
        return len(hits) >= check.min_times, f"{check.tool} called {len(hits)} time(s) as specified"
    if isinstance(check, ToolNotCalled):
        hits = [
            c for c in ev.successful_calls if _call_matches(c, check.tool, check.service, check.arguments)
        ]
        return not hits, f"{check.tool} called {len(hits)} time(s) as specified"
    if isinstance(check, CallOrder):
        remaining = list(check.tools)
        for call in ev.successful_calls:
            if remaining and call.tool == remaining[0]:
                remaining.pop(0)
        return not remaining, "in order" if not remaining else f"missing, in order: {remaining}"
    if isinstance(check, Unchanged):
        changed = []
        for table in check.tables:
            validate_where(check.where, ev.columns(table), table)
            table_diff = ev.diff.tables.get(table)
            if table_diff is None:
                continue
            rows = [*table_diff.added, *table_diff.removed]
            rows += [_after(ev, table, c.key) or {} for c in table_diff.changed]
            rows += [_before(ev, table, c.key) or {} for c in table_diff.changed]
            if any(matches(r, check.where) for r in rows):
                changed.append(table)
        return not changed, "unchanged" if not changed else f"changed: {', '.join(changed)}"
    if isinstance(check, BoundedDiff):
        return _bounded(check, ev)
    raise CheckSpecError(f"no evaluator for check type {check.type!r}")


def _sql_result(check: SqlEquals, actual: Any) -> tuple[bool, str]:
    return _same(actual, check.expected), f"query returned {actual!r}, expected {check.expected!r}"


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) and isinstance(actual, int):
        return bool(actual) == expected
    return json.loads(json.dumps(actual, default=str)) == json.loads(json.dumps(expected, default=str))


def normal_value(value: Any) -> Any:
    """A tool argument as calls are compared: strings trimmed and case-folded, lists as multisets."""
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, list):
        return sorted(
            (normal_value(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, default=str)
        )
    if isinstance(value, dict):
        return {k: normal_value(v) for k, v in value.items()}
    return value


def _call_matches(call: AuditEntry, tool: str, service: str | None, arguments: dict[str, Any]) -> bool:
    """Same tool (and service), and every expected argument present with an equal value
    (strings compared case-insensitively and trimmed; lists as multisets)."""
    if call.tool != tool or (service is not None and call.service != service):
        return False
    return all(
        key in call.arguments and normal_value(call.arguments[key]) == normal_value(v)
        for key, v in arguments.items()
    )


def _after(ev: Evidence, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    return ev.row_by_key(table, key, "final")


def _before(ev: Evidence, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    return ev.row_by_key(table, key, "initial")


def _bounded(check: BoundedDiff, ev: Evidence) -> tuple[bool, str]:
    for allowed in check.allowed:
        validate_where(allowed.where, ev.columns(allowed.table), allowed.table)
    outside: list[str] = []
    for table, table_diff in ev.diff.tables.items():
        if table == DELIVERIES:
            continue  # the outgoing-mail log: the sent message itself is what is judged
        rules = [a for a in check.allowed if a.table == table]

        def ok(kind: str, *rows: dict[str, Any] | None, rules: list = rules) -> bool:
            return any(
                kind in a.kinds and any(r is not None and matches(r, a.where) for r in rows) for a in rules
            )

        outside += [f"{table}: added {r}" for r in table_diff.added if not ok("added", r)]
        outside += [f"{table}: removed {r}" for r in table_diff.removed if not ok("removed", r)]
        outside += [
            f"{table}: changed {c.key} ({', '.join(c.columns)})"
            for c in table_diff.changed
            if not ok("changed", _after(ev, table, c.key), _before(ev, table, c.key))
        ]
    if outside:
        shown = "; ".join(outside[:5]) + (f"; and {len(outside) - 5} more" if len(outside) > 5 else "")
        return False, f"{len(outside)} change(s) outside the allowed set: {shown}"
    return True, "every change is within the allowed set"


CLAIMS_KEPT = 4096
"""Judged claims remembered: validation judges the same texts again for every variant."""
_judged: OrderedDict[tuple[Any, ...], claims.Claim] = OrderedDict()


def fact_claim(text: str, fact: Fact, ev: Evidence, others: Sequence[Fact] = ()) -> claims.Claim:
    """What `text` claims of `fact` (see `verifiers.claims`): the values of `others` (the
    check's other facts and its context) may stand beside it without contradicting it."""
    if fact.ticket_where is not None or any(o.ticket_where is not None for o in others):
        return _fact_claim(text, fact, ev, others)  # the ticket is looked up in the state
    # what the evidence adds: the user's zone (times), the person's name (people)
    seen = (
        ev.user_zone if fact.time is not None and not fact.zones else None,
        (fact.name or ev.person_name(fact.person)) if fact.person is not None else None,
    )
    key = (text, fact.key(), tuple(o.key() for o in others), seen)
    found = _judged.get(key)
    if found is None:
        found = _judged[key] = _fact_claim(text, fact, ev, others)
        if len(_judged) > CLAIMS_KEPT:
            _judged.popitem(last=False)
    return found


def _fact_claim(text: str, fact: Fact, ev: Evidence, others: Sequence[Fact]) -> claims.Claim:
    t = fact_matchers.prepare(text)
    return claims.judge_claim(
        t,
        fact_mentions(t, fact, ev, others),
        fact.label(),
        ranges_are_alternatives=fact.number is not None or fact.kind == "ticket",
        measured=fact.number is not None or fact.date is not None or fact.time is not None,
    )


TICKETS = "tickets_tickets"


def ticket_of(fact: Fact, ev: Evidence) -> int | None:
    """The ticket a ticket fact names: `ticket`, or the lowest id of the tickets that match
    `ticket_where` in the final state (None when none does)."""
    if fact.ticket is not None:
        return fact.ticket
    assert fact.ticket_where is not None
    validate_where(fact.ticket_where, ev.columns(TICKETS), TICKETS)
    ids = [int(r["id"]) for r in ev.matching(TICKETS, fact.ticket_where)]
    return min(ids, default=None)


def retracts(text: str, fact: Fact, ev: Evidence) -> bool:
    """Whether `text` names `fact`'s value only to take it back: every mention of the value
    is negated or the old value of a change ("it is NW-2, not NW-1", "moved from 9 March").
    A later message that retracts an earlier turn's fact supersedes that turn's outcome."""
    t = fact_matchers.prepare(text)
    mentions = fact_mentions(t, fact, ev)
    if not any(m.wanted for m in mentions):
        return False
    return not fact_claim(text, fact, ev).asserted


def fact_mentions(t: str, fact: Fact, ev: Evidence, others: Sequence[Fact] = ()) -> list[claims.Mention]:
    """The mentions of `fact`'s kind in prepared text `t` (`facts.prepare`): which name its
    value, which name a value of `others`, and what they compete with."""
    if fact.number is not None:
        allowed = [fact_matchers.as_decimal(o.number) for o in others if o.number is not None]
        return claims.number_mentions(t, fact_matchers.as_decimal(fact.number), fact.unit, allowed)
    if fact.date is not None:
        allowed_days = [date.fromisoformat(o.date) for o in others if o.date is not None]
        allowed_days += [o.time.date() for o in others if o.time is not None]
        return claims.date_mentions(t, date.fromisoformat(fact.date), allowed_days)
    if fact.time is not None:
        zones = [fact_matchers.zone_of(z) for z in (fact.zones or [ev.user_zone])]
        return claims.time_mentions(
            t,
            fact.time,
            zones,
            fact.date_required,
            [o.time for o in others if o.time is not None],
            [date.fromisoformat(o.date) for o in others if o.date is not None],
        )
    if fact.kind == "ticket":
        number = ticket_of(fact, ev)
        tickets = [n for o in others if o.kind == "ticket" and (n := ticket_of(o, ev)) is not None]
        return claims.ticket_mentions(t, -1 if number is None else number, tickets)
    if fact.person is not None:
        name = fact.name or ev.person_name(fact.person) or ""
        return claims.person_mentions(t, name, fact.person)
    assert fact.text is not None
    return claims.text_mentions(t, fact.text, [o.text for o in others if o.text is not None])


def _facts_missing(
    text: str, facts: list[Fact], absent: list[Fact], listed: Sequence[Fact], ev: Evidence
) -> list[str]:
    """Why `text` does not state every fact alone and unnegated, or states an absent one."""
    missing = []
    for fact in facts:
        claim = fact_claim(text, fact, ev, [*(f for f in facts if f is not fact), *listed])
        if not claim.stated:
            missing.append(claim.reason)
    for fact in absent:
        if fact_claim(text, fact, ev, [*facts, *listed]).asserted:
            missing.append(f"states {fact.label()}, which it must not")
    return missing


def _states_facts(check: StatesFacts, ev: Evidence, listed: Sequence[Fact]) -> tuple[bool, str]:
    known = ev.columns(check.table)
    validate_where(check.where, known, check.table)
    for column in check.columns:
        if column not in known:
            raise CheckSpecError(f"table {check.table} has no column {column!r}")
    found = ev.matching(check.table, check.where)
    if not found:
        return False, f"no row of {check.table} matches the filter"
    allowed = [*check.context, *listed]

    def text_of(row: dict[str, Any]) -> str:
        return "\n".join("" if row[c] is None else str(row[c]) for c in check.columns)

    # What the matching rows of the same owner (the comments of one ticket) say that the seed
    # did not: a row that states the facts counts only with these beside it, so a second
    # note that gives another value or denies the first is a contradiction, not a second chance.
    owner = ev.owner_column(check.table)
    seeded = {text_of(r) for r in ev.matching(check.table, check.where, "initial")} if owner else set()
    best: list[str] = []
    for row in found:
        text = text_of(row)
        missing = _facts_missing(text, check.facts, check.absent, allowed, ev)
        others = [
            t
            for r in found
            if owner and r is not row and r[owner] == row[owner]
            for t in [text_of(r)]
            if t not in seeded and t != text
        ]
        if not missing and others:
            together = _facts_missing("\n\n".join([text, *others]), check.facts, check.absent, allowed, ev)
            missing = [f"{m}, with the other new rows beside it" for m in together]
        if not missing:
            return True, f"a matching row of {check.table} states every fact"
        if not best or len(missing) < len(best):
            best = missing
    return False, f"no matching row of {check.table} states the facts: closest {'; '.join(best)}"


def _sent_in_span(ev: Evidence) -> set[Any]:
    """Ids of the messages the calls of the judged span sent (a turn's calls for a turn's
    checks, the episode's for the episode's)."""
    return {
        e.result.get("id")
        for e in ev.calls
        if e.service == "mail" and not e.is_error and isinstance(e.result, dict)
    }


def written_text(delivery: dict[str, Any], ev: Evidence) -> str:
    """What the user wrote in a sent mail (`delivery_text`), less a subject the thread gave
    it: the "Re: ..." of a reply repeats the answered mail's subject, which is not the
    reply's claim."""
    message = ev.row_by_key("mail_messages", {"id": delivery["message_id"]}, "final")
    parent_id = message and (message["in_reply_to"] or message["forwarded_from"])
    parent = ev.row_by_key("mail_messages", {"id": parent_id}, "final") if parent_id else None
    if parent is not None and _bare_subject(delivery["subject"]) == _bare_subject(parent["subject"]):
        return delivery_text({**delivery, "subject": ""})
    return delivery_text(delivery)


def _bare_subject(subject: Any) -> str:
    return re.sub(r"^(?:\s*(?:re|fwd?|fw)\s*:)+", "", str(subject or ""), flags=re.I).strip().casefold()


def _mail_sent(check: MailSent, ev: Evidence, listed: Sequence[Fact]) -> tuple[bool, str]:
    wanted = {a.lower() for a in check.to}
    thread = None
    if check.thread_of is not None:
        row = ev.row_by_key("mail_messages", {"id": check.thread_of}, "initial")
        if row is None:
            raise CheckSpecError(f"thread_of: no message {check.thread_of} in the seed")
        thread = row["thread_id"]
    closest = "no mail was sent"
    sent = _sent_in_span(ev)
    for delivery in new_deliveries(ev):
        if delivery["message_id"] not in sent:
            continue  # sent before the judged turn began: a later turn's mail is that turn's
        recipients = {a.lower() for a in str(delivery["recipients"]).split()}
        if not wanted <= recipients:
            closest = f"no mail went to {', '.join(sorted(wanted - recipients))}"
            continue
        if check.reply:
            message = ev.row_by_key("mail_messages", {"id": delivery["message_id"]}, "final")
            if message is None or message["thread_id"] != thread or message["in_reply_to"] is None:
                closest = f"the mail to {', '.join(sorted(wanted))} is not a reply in the thread of {check.thread_of}"
                continue
        paths = {f["path"] for f in json.loads(delivery["attachments"])}
        missing_files = [p for p in check.attachments if p not in paths]
        if missing_files:
            closest = f"the mail lacks the attachment(s) {', '.join(missing_files)}"
            continue
        missing = _facts_missing(
            written_text(delivery, ev), check.facts, check.absent, [*check.context, *listed], ev
        )
        if missing:
            closest = "the mail " + "; ".join(missing)
            continue
        return True, f"a mail to {', '.join(sorted(wanted))} states what was asked"
    return False, closest
