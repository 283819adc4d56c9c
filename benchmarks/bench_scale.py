"""Verification as the workspace grows: the demo workspace, and 10x and 100x copies of its
mail, tickets and calendar. A 3-row change is judged (row checks, the collateral guard and
the default rules, the final content hash) on each size; each is printed against a fork of
the same size, and the growth from 1x to 100x is printed with its target.

Also the content hash after the change against hashing the same state from scratch."""

import statistics
import time

import anyio
from pydantic import TypeAdapter

from coworkenv.checks import Check, Guards
from coworkenv.rollout.reference import table_rules
from coworkenv.servers.render import northwind_workspace
from coworkenv.state import Snapshot, Workspace
from coworkenv.state.changes import BASE_TABLE
from coworkenv.verifiers import Evidence, Guarding, judge_evidence
from coworkenv.verifiers.footprint import derive_footprint

from .timing import median_us

SERVICES = ("mail", "tickets", "calendar", "files", "directory")
#: Integer columns that name a row of the copied tables: shifted with their copy.
REFERENCES = {
    "mail_messages": ("id", "thread_id", "in_reply_to", "forwarded_from"),
    "mail_recipients": ("message_id",),
    "mail_labels": ("message_id",),
    "mail_attachments": ("message_id",),
    "mail_deliveries": ("id", "message_id"),
    "tickets_tickets": ("id",),
    "tickets_tags": ("ticket_id",),
    "tickets_comments": ("id", "ticket_id"),
    "tickets_links": ("source_id", "target_id"),
    "calendar_events": ("id",),
    "calendar_attendees": ("event_id",),
    "calendar_cancelled_occurrences": ("event_id",),
}
SHIFT = 1_000_000
CHANGE = [
    "UPDATE tickets_tickets SET priority = 'urgent' WHERE id = 1",
    "UPDATE tickets_tickets SET queue = 'Engineering' WHERE id = 2",
    "UPDATE mail_messages SET is_read = 1 WHERE id = 3",
]


def scaled(factor: int) -> Snapshot:
    """The demo workspace with `factor` copies of its mail, tickets and calendar rows."""
    ws = northwind_workspace(seed=0, services=SERVICES)
    ws.conn.execute("PRAGMA foreign_keys = OFF")
    for table, shifted in REFERENCES.items():
        names = [r[1] for r in ws.conn.execute(f'PRAGMA table_info("{table}")')]
        original = ws.conn.execute(f'SELECT {", ".join(names)} FROM "{table}"').fetchall()
        for k in range(1, factor):
            rows = [
                tuple(
                    v + k * SHIFT if n in shifted and v is not None else v
                    for n, v in zip(names, row, strict=True)
                )
                for row in original
            ]
            ws.conn.executemany(
                f'INSERT INTO "{table}" ({", ".join(names)}) VALUES ({", ".join("?" * len(names))})', rows
            )
    ws.conn.execute("PRAGMA foreign_keys = ON")
    ws.mark_base()
    return ws.snapshot()


CHECKS = [
    {"id": "urgent", "type": "field_equals", "table": "tickets_tickets", "where": {"id": 1},
     "column": "priority", "value": "urgent"},
    {"id": "moved", "type": "row_exists", "table": "tickets_tickets", "where": {"id": 2, "queue": "Engineering"}},
]  # fmt: skip


async def verify(initial: Workspace, final: Workspace, guarding: Guarding, checks: list[Check]) -> None:
    """Everything a verdict of this change costs: the checks, the guards, the final hash."""
    evidence = Evidence(initial, final, final.audit.entries(), "kimberly.smith@northwind.example")
    verdict = await judge_evidence(checks, [], evidence, [], guarding)
    assert verdict.success, verdict
    final.content_hash()


async def measure(factor: int) -> tuple[float, float, int]:
    """(verification us, fork us, rows) for one size."""
    snapshot = scaled(factor)
    initial = snapshot.fork()
    final = snapshot.fork()
    for sql in CHANGE:
        final.conn.execute(sql)
    rows = sum(initial.conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in REFERENCES)
    rules = table_rules(list(SERVICES))
    footprint = derive_footprint(Evidence(initial, final, [], "").diff, initial.conn, final.conn, rules)
    guarding = Guarding(footprint=footprint, rules=rules, guards=Guards())
    checks = [TypeAdapter(Check).validate_python(c) for c in CHECKS]
    samples = []
    for _ in range(30):
        started = time.perf_counter()
        await verify(initial, final, guarding, checks)
        samples.append(time.perf_counter() - started)
    fork = median_us(lambda: snapshot.fork().close(), repeat=50, warmup=3)
    return statistics.median(samples) * 1e6, fork, rows


def run() -> dict:
    results = {}
    for factor in (1, 10, 100):
        v, f, rows = anyio.run(measure, factor)
        results[factor] = v
        print(
            f"{f'verification of a 3-row change, {factor}x ({rows} rows)':<52} {v:9.1f} us   "
            f"{'fork of the same workspace':<28} {f:9.1f} us   ratio {v / f:6.2f}x"
            + ("  (target <= 10x: " + ("met)" if v / f <= 10 else "MISSED)") if factor == 1 else "")
        )
    growth = results[100] / results[1]
    print(
        f"{'growth of verification from 1x to 100x':<52} {growth:6.2f}x  (target <= 1.5x: {'met' if growth <= 1.5 else 'MISSED'})"
    )
    snapshot = scaled(100)
    changed = snapshot.fork()
    for sql in CHANGE:
        changed.conn.execute(sql)
    scratch = changed.fork()
    scratch.conn.execute(f"DELETE FROM {BASE_TABLE}")
    ours = median_us(changed.content_hash, repeat=20, warmup=2)
    floor = median_us(scratch.content_hash, repeat=5, warmup=1)
    print(
        f"{'content hash, 100x after a 3-row change':<52} {ours:9.1f} us   {'hashing it from scratch':<28} {floor:9.1f} us   "
        f"ratio {ours / floor:6.3f}x  (target <= 0.05x: {'met' if ours / floor <= 0.05 else 'MISSED'})"
    )
    return {"growth": growth, "hash_ratio": ours / floor}
