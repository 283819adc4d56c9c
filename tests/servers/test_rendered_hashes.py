"""Rendered worlds are pinned by their content hash, as tool schemas are by a snapshot: a change
to how a seed is rendered (a planner, a generator, an optimization that was meant to change
nothing) shows up here as a reviewed diff, not as tasks that quietly differ. And a process
renders each seed once while it has room for it, and a set of services put together from
the services' parts is exactly that set rendered whole."""

import sqlite3
from itertools import combinations

import pytest

from coworkenv.servers import SERVICE_NAMES, render
from coworkenv.servers.render import (
    forget_snapshots,
    northwind_snapshot,
    northwind_workspace,
    render_workspace,
    rendered_snapshot,
)
from coworkenv.state import Workspace
from coworkenv.worlds import northwind, world

PINNED = {
    ("demo", None, 0): "b76a4bef70de78212a0e507b565055e45c81ae7d7f0ccc4330b8ac44a7a328f6",
    ("demo", None, 1): "f5e2ff513edd3c2efdf526cc8c2d3eccffce780e772e35a55439f06a319e8ba6",
    ("accounting_firm", None, 0): "15ce3b524856da53c3c1c4debee921e52d0ebe1376fe53fe79e6a5c4051aded6",
    ("city_council", None, 1): "93dd77bdc849fcf9d94b0a82cad5466e27b3b495aeca21a6a9881d1048e7ee47",
    ("accounting_firm", 150, 3): "df5749e04814e21d3d6078c37bd0540a5c6eac46fb4b529541d722a394682470",
}


@pytest.mark.parametrize("profile, size, seed", list(PINNED), ids=lambda v: str(v))
def test_a_rendered_world_has_its_pinned_content_hash(profile: str, size: int | None, seed: int) -> None:
    ws = northwind_workspace(seed) if profile == "demo" else render_workspace(world(profile, size, seed))
    assert ws.content_hash() == PINNED[(profile, size, seed)]


def test_rendered_seeds_are_kept_by_recency_within_their_byte_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    forget_snapshots()
    first = northwind_snapshot(0, ["tickets"])
    assert northwind_snapshot(0, ["tickets"]) is first  # rendered once
    # Room for two of these: the least recently used goes when a third comes.
    monkeypatch.setattr(render, "SNAPSHOT_BYTES_KEPT", 2 * len(first.data) + len(first.data) // 2)
    second = northwind_snapshot(1, ["tickets"])
    assert northwind_snapshot(0, ["tickets"]) is first  # now the most recent
    northwind_snapshot(2, ["tickets"])
    assert northwind_snapshot(0, ["tickets"]) is first
    assert northwind_snapshot(1, ["tickets"]) is not second  # dropped, rendered again
    forget_snapshots()
    assert northwind_snapshot(0, ["tickets"]) is not first


def _all_rows(ws: Workspace) -> dict[str, list[tuple]]:
    """Every table's rows with their row ids, the search index's shadow tables and the meta
    table included: what "the same workspace" means, beyond its content hash."""
    out = {}
    for (table,) in ws.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        if table == "mail_search":
            continue  # the virtual table itself: its shadow tables hold what it stores
        try:
            out[table] = ws.conn.execute(f'SELECT rowid, * FROM "{table}" ORDER BY rowid').fetchall()
        except sqlite3.OperationalError:  # a WITHOUT ROWID shadow table of the search index
            out[table] = sorted(ws.conn.execute(f'SELECT * FROM "{table}"').fetchall())
    return out


SERVICE_SETS = [tuple(sorted(c)) for n in range(1, 6) for c in combinations(SERVICE_NAMES, n)]


@pytest.mark.parametrize("profile, seed", [("demo", 4), ("city_council", 2)])
def test_every_set_of_services_put_together_from_parts_is_the_set_rendered_whole(
    profile: str, seed: int
) -> None:
    forget_snapshots()
    w = northwind(seed) if profile == "demo" else world(profile, None, seed)
    for services in SERVICE_SETS:
        made = rendered_snapshot(w, services).fork()
        rendered = render_workspace(w, services)
        assert _all_rows(made) == _all_rows(rendered), services
        assert made.content_hash() == rendered.content_hash()
    for services in [("files", "mail", "tickets"), ("calendar", "directory")]:
        assert _all_rows(northwind_snapshot(seed, services).fork()) == _all_rows(
            northwind_workspace(seed, services)
        )


def test_a_set_put_together_without_what_mail_reads_would_differ(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above can fail: mail rendered without the files it attaches differs."""
    forget_snapshots()
    monkeypatch.setattr(render, "SEED_READS", {})
    w = northwind(4)
    made, rendered = (
        rendered_snapshot(w, ("files", "mail", "tickets")).fork(),
        render_workspace(w, ("files", "mail", "tickets")),
    )
    assert _all_rows(made)["mail_attachments"] == []
    assert _all_rows(rendered)["mail_attachments"] != []
    assert made.content_hash() != rendered.content_hash()
    forget_snapshots()
