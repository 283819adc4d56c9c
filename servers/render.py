"""Render a world into a workspace: every service's seed rows, made from a `World`.

Each service fills its own tables from a world in its `demo.py` (`populate(workspace,
world, rng)`); `render_workspace` runs them in order (directory, files, mail, tickets,
calendar), so later services may refer to what earlier ones created (mail attachments point
at files). The same world gives the same content hash. `northwind_workspace(seed)` is the
demo company's (`coworkenv.worlds.northwind`): 18 colleagues in 5 teams and 8 outside
contacts, 200 mails in threads, 60 tickets, 80 calendar events and 40 files.
"""

from __future__ import annotations

import importlib
import random
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import nullcontext

from coworkenv.state import Snapshot, Workspace
from coworkenv.state.changes import base_digests
from coworkenv.state.tables import content_tables
from coworkenv.world import World
from coworkenv.worlds.northwind import northwind

from . import SERVICE_NAMES, create_workspace
from .mail.store import search_index_written_at_end

POPULATE_ORDER = ("directory", "files", "mail", "tickets", "calendar")
SEED_READS: dict[str, tuple[str, ...]] = {"mail": ("files",)}
"""What a service's `populate` reads of the services rendered before it, when they are
there (mail attaches files of the files service); the others read only their own tables.
`rendered_snapshot` relies on it: it renders each service once per world and what it reads."""


def render_workspace(
    world: World, services: tuple[str, ...] = SERVICE_NAMES, *, task_id: str | None = None
) -> Workspace:
    """A fresh in-memory workspace holding every service's seed data rendered from `world`;
    the same world gives the same content hash. The task id defaults to `world-{world.key}`."""
    ws = create_workspace(
        services, clock_start=world.start, task_id=task_id or f"world-{world.key}", user_email=world.user
    )
    with ws.transaction():
        for name in POPULATE_ORDER:
            if name in services:
                module = importlib.import_module(f"{__package__}.{name}.demo")
                module.populate(ws, world, random.Random(f"{world.seed}:{name}"))
    ws.mark_base()  # forks diff and hash against the rendered world, reading only what they change
    return ws


def northwind_workspace(seed: int = 0, services: tuple[str, ...] = SERVICE_NAMES) -> Workspace:
    """The demo company's workspace for `seed` (task id `demo-{seed}`): a fresh in-memory
    workspace; the same seed gives the same content hash."""
    return render_workspace(northwind(seed), services, task_id=f"demo-{seed}")


#: Bytes of seeds kept per process, services' parts and sets of services alike (the least
#: recently used is dropped first). A synthesis run over the default 50 worlds keeps about
#: 280 of 0.3 MB on average (83 MB), however many slots it fills; with room for fewer, a run
#: cycling through its worlds would render each again on every pass.
SNAPSHOT_BYTES_KEPT = 512 * 2**20
_SNAPSHOTS: OrderedDict[tuple[str, tuple[str, ...], str | None], Snapshot] = OrderedDict()


def rendered_snapshot(world: World, services: Iterable[str], *, task_id: str | None = None) -> Snapshot:
    """`render_workspace(world, services, task_id=task_id)` as a snapshot, made once per
    process per world (by content hash), set of services and task id. Families planning a
    task and seeding it for validation share it.

    A run asks for many sets of services of each world, so a set is rendered whole only
    when it is one service's part: the service with what its rendering reads
    (`SEED_READS`), like ("tickets",) or ("files", "mail"). Any other set is put together
    from its services' parts, each made once: the same rows, row ids and search index as
    rendering the set whole, for about a fifth of the cost of rendering it."""
    chosen = tuple(sorted(services))
    return _kept((world.content_hash, chosen, task_id), lambda: _made(world, chosen, task_id))


def northwind_snapshot(seed: int, services: Iterable[str]) -> Snapshot:
    """`northwind_workspace(seed, services)` as a snapshot, made once per process."""
    return rendered_snapshot(northwind(seed), services, task_id=f"demo-{seed}")


def _part(name: str, services: tuple[str, ...]) -> tuple[str, ...]:
    """The services rendered to make service `name`'s tables in a workspace of `services`."""
    return tuple(sorted({name, *(s for s in SEED_READS.get(name, ()) if s in services)}))


def _made(world: World, services: tuple[str, ...], task_id: str | None = None) -> Workspace:
    """`render_workspace(world, services, task_id=task_id)`, rendered whole or copied
    together from the services' parts (see `rendered_snapshot`)."""
    parts = {name: _part(name, services) for name in POPULATE_ORDER if name in services}
    if set(services) in [set(p) for p in parts.values()]:
        return render_workspace(world, services, task_id=task_id)
    ws = create_workspace(
        services, clock_start=world.start, task_id=task_id or f"world-{world.key}", user_email=world.user
    )
    known: dict[str, tuple[str, int]] = {}  # each table's hash, as its part's base holds it
    for name, part in parts.items():  # attached outside the transaction: SQLite detaches only outside one
        ws.conn.execute(f"ATTACH ':memory:' AS part_{name}")
        ws.conn.deserialize(rendered_snapshot(world, part).data, name=f"part_{name}")
        known |= {t: v for t, v in base_digests(ws.conn, f"part_{name}").items() if t.startswith(f"{name}_")}
    try:
        with ws.transaction():
            ws.conn.execute("PRAGMA defer_foreign_keys = ON")  # tables are copied in name order
            tables = content_tables(ws.conn)
            for name in parts:
                # Mail's search index is written once at the end, as its populate writes it.
                with search_index_written_at_end(ws) if name == "mail" else nullcontext():
                    for table in (t for t in tables if t.startswith(f"{name}_")):
                        ws.conn.execute(f'DELETE FROM main."{table}"')  # rows the schema itself made
                        ws.conn.execute(
                            f'INSERT INTO main."{table}" SELECT * FROM part_{name}."{table}" ORDER BY rowid'
                        )
    finally:
        for name in parts:
            ws.conn.execute(f"DETACH part_{name}")
    ws.mark_base(known)  # the rows are the parts': their hashes are not computed again
    return ws


def forget_snapshots() -> None:
    """Drop the rendered seeds this process keeps (a benchmark measures a cold start so)."""
    _SNAPSHOTS.clear()


def _kept(key: tuple[str, tuple[str, ...], str | None], build: Callable[[], Workspace]) -> Snapshot:
    snapshot = _SNAPSHOTS.get(key)
    if snapshot is not None:
        _SNAPSHOTS.move_to_end(key)
        return snapshot
    snapshot = _SNAPSHOTS[key] = build().snapshot()
    kept = sum(len(s.data) for s in _SNAPSHOTS.values())
    while kept > SNAPSHOT_BYTES_KEPT and len(_SNAPSHOTS) > 1:
        _, dropped = _SNAPSHOTS.popitem(last=False)
        kept -= len(dropped.data)
    return snapshot
