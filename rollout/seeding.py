"""Build a task's initial workspace from its seed, once per task, and fork it per episode."""

from __future__ import annotations

import json
import time
from collections import OrderedDict

import anyio

from coworkenv.servers import create_workspace, get_service
from coworkenv.servers.render import northwind_snapshot, rendered_snapshot
from coworkenv.state import Snapshot, Workspace, format_time
from coworkenv.state.forks import ForkPool
from coworkenv.state.tables import content_tables
from coworkenv.task import Task
from coworkenv.verifiers import Footprint
from coworkenv.world import WorkingHours, parse_world


class SeedError(ValueError):
    """The task's seed could not be loaded; the message names the part that failed."""


def seed_workspace(task: Task) -> Workspace:
    """A new workspace holding the task's initial state: procedural base, rows, then world operations."""
    services = tuple(task.services)
    proc = task.seed.procedural
    if proc.name in ("demo", "world"):
        if proc.name == "demo":
            snapshot = northwind_snapshot(int(proc.params.get("seed", 0)), services)
        else:
            params = proc.params
            if params.get("world") is not None:
                snapshot = _inline_world_snapshot(json.dumps(params["world"], sort_keys=True), services)
            else:
                snapshot = _world_snapshot(
                    params["profile"], params.get("size"), params.get("seed", 0), services
                )
        ws = snapshot.fork()
        # The seed sets the scene: task id, user and start time are the task's.
        ws.set_meta("task_id", task.id)
        ws.set_meta("user_email", task.user_email)
        ws.set_meta("clock", format_time(task.clock_start))
    else:
        ws = create_workspace(
            services, clock_start=task.clock_start, task_id=task.id, user_email=task.user_email
        )
    tables = set(content_tables(ws.conn))
    with ws.transaction():
        for table, rows in task.seed.rows.items():
            if table not in tables:
                raise SeedError(
                    f"seed.rows: no table {table!r} among the task's services ({', '.join(services)})"
                )
            try:
                ws.db[table].insert_all(rows)  # type: ignore[union-attr]
            except Exception as exc:
                raise SeedError(f"seed.rows.{table}: {type(exc).__name__}: {exc}") from exc
    for i, call in enumerate(task.seed.operations):
        if call.service not in services:
            raise SeedError(f"seed.operations[{i}]: service {call.service!r} is not in the task's services")
        try:
            get_service(call.service).world.run(ws, call.operation, call.params)
        except (KeyError, ValueError) as exc:
            raise SeedError(f"seed.operations[{i}] ({call.service}.{call.operation}): {exc}") from exc
    return ws


def _world_snapshot(profile: str, size: int | None, seed: int, services: tuple[str, ...]) -> Snapshot:
    """The seed workspace of a profile's world."""
    from coworkenv.worlds import world

    try:
        built = world(profile, size, seed)
    except ValueError as exc:
        raise SeedError(f"seed.procedural: {exc}") from exc
    return rendered_snapshot(built, services)


def _inline_world_snapshot(world_json: str, services: tuple[str, ...]) -> Snapshot:
    """The seed workspace of a world a task carries inline (see `ProceduralSeed`)."""
    return rendered_snapshot(parse_world(world_json, source="seed.procedural.params.world"), services)


_WORLD_USERS: OrderedDict[str, tuple[str | None, WorkingHours | None]] = OrderedDict()


def world_user(task: Task) -> tuple[str | None, WorkingHours | None]:
    """The time zone and working hours (their own, else the organization's) of the user in the
    task's world; None and None for a task with no world (an empty seed) or without the user
    among its people. Kept per task, so a reset pays nothing."""
    key = task.content_hash
    if key not in _WORLD_USERS:
        _WORLD_USERS[key] = _world_user(task)
        if len(_WORLD_USERS) > SEEDS_KEPT:
            _WORLD_USERS.popitem(last=False)
    return _WORLD_USERS[key]


def _world_user(task: Task) -> tuple[str | None, WorkingHours | None]:
    from coworkenv.worlds import DEMO, world

    proc = task.seed.procedural
    try:
        if proc.name == "demo":
            built = world(DEMO, None, int(proc.params.get("seed", 0)))
        elif proc.name == "world" and proc.params.get("world") is not None:
            built = parse_world(json.dumps(proc.params["world"]), source="seed.procedural.params.world")
        elif proc.name == "world":
            built = world(str(proc.params["profile"]), proc.params.get("size"), proc.params.get("seed", 0))
        else:
            return None, None
    except (KeyError, ValueError):
        return None, None  # the seed stage reports a world that cannot be built
    person = next((p for p in built.people if p.email == task.user_email), None)
    return (None, None) if person is None else (person.time_zone, built.hours(person))


def seed_snapshot(task: Task) -> Snapshot:
    """The task's seeded state as a snapshot, marked as the base that every episode's diffs
    and hashes are relative to. Raises `SeedError` when the seed cannot load."""
    seeded = seed_workspace(task)
    seeded.mark_base()
    return seeded.snapshot()


#: Seeded snapshots a `SeedCache` keeps (the least recently used is dropped first).
SEEDS_KEPT = 256
#: How often (seconds, at most) a `SeedCache` closes the warm forks left idle too long.
SWEEP_SECONDS = 1.0


class SeedCache:
    """Snapshots of seeded workspaces keyed by what the seed is built from (`Task.seed_hash`:
    a task's variants share one), so each episode is a cheap fork, and each task's goal
    footprint, derived once."""

    def __init__(self) -> None:
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._pools: dict[str, ForkPool] = {}
        self._swept = time.monotonic()
        self._hashes: dict[str, str] = {}
        self.footprints: dict[str, Footprint] = {}
        """Goal footprints by task hash (see `runner.reference_footprint`)."""
        self.reference_hashes: dict[str, str] = {}
        """By task hash, the content hash of the state the run a footprint was derived from
        ended in: validation's second run of the reference solution must end there too."""
        self.deriving: dict[str, anyio.Event] = {}
        """Footprints being derived now, by task hash: later episodes of the task wait on them."""

    def snapshot(self, task: Task) -> Snapshot:
        key = task.seed_hash
        snapshot = self._snapshots.get(key)
        if snapshot is None:
            snapshot = seed_snapshot(task)
            self.keep(task, snapshot)
        else:
            self._snapshots.move_to_end(key)
        return snapshot

    def keep(self, task: Task, snapshot: Snapshot) -> None:
        """Use `snapshot` as the task's seeded state: one `seed_snapshot(task)` built
        elsewhere (another process builds the seed once and hands it to the validating
        worker). The `SEEDS_KEPT` most recently used are kept."""
        key = task.seed_hash
        self._snapshots[key] = snapshot
        self._snapshots.move_to_end(key)
        if key in self._pools and self._pools[key].snapshot is not snapshot:
            self._pools.pop(key).close()
        if len(self._snapshots) > SEEDS_KEPT:
            dropped, _ = self._snapshots.popitem(last=False)
            if dropped in self._pools:
                self._pools.pop(dropped).close()

    def forks(self, task: Task) -> ForkPool:
        """The warm forks of the task's seeded state: episodes take their workspaces from
        it and give them back when closed (see `state.forks`)."""
        snapshot = self.snapshot(task)
        pool = self._pools.get(task.seed_hash)
        if pool is None:
            pool = self._pools[task.seed_hash] = ForkPool(snapshot)
        now = time.monotonic()
        if now - self._swept > SWEEP_SECONDS:
            self._swept = now
            for each in list(self._pools.values()):
                each.close_idle()
        return pool

    def close_forks(self) -> None:
        """Close every warm fork now (they are made again as episodes close), freeing the
        memory they hold; idle ones are closed after `forks.IDLE_SECONDS` anyway."""
        for pool in self._pools.values():
            pool.close()

    def fork(self, task: Task) -> Workspace:
        """A new fork of the task's seeded state, the caller's to keep."""
        return self.snapshot(task).fork()

    def initial_hash(self, task: Task) -> str:
        """The content hash of the task's seeded state (computed once)."""
        key = task.seed_hash
        if key not in self._hashes:
            self._hashes[key] = self.fork(task).content_hash()
        return self._hashes[key]
