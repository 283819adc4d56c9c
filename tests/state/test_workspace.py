"""Workspace semantics: snapshot, fork, restore, save/open, diff, hash, clock, audit."""

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from coworkenv.state import ServiceSchema, Workspace, WorkspaceError, diff
from tests.conftest import START

NOTES = ServiceSchema(
    name="notes",
    sql="""
CREATE TABLE notes_items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, done INTEGER DEFAULT 0);
CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, content='notes_items', content_rowid='id');
CREATE TRIGGER notes_ai AFTER INSERT ON notes_items BEGIN
  INSERT INTO notes_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
END;
CREATE TABLE notes_tags (note_id INTEGER, tag TEXT, PRIMARY KEY (note_id, tag));
""",
)


def make(**kwargs) -> Workspace:
    return Workspace.create([NOTES], clock_start=START, task_id="t1", **kwargs)


def add(ws: Workspace, id_: int, title: str, body: str = "") -> None:
    ws.conn.execute("INSERT INTO notes_items (id, title, body) VALUES (?, ?, ?)", (id_, title, body))


def search(ws: Workspace, word: str) -> list[int]:
    return [
        r[0]
        for r in ws.conn.execute("SELECT rowid FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rowid", [word])
    ]


def test_create_records_services_task_and_clock() -> None:
    ws = make()
    assert ws.services == ("notes",)
    assert ws.task_id == "t1"
    assert ws.clock.now() == START
    assert ws.meta("format") == "coworkenv-workspace/1"


def test_new_workspaces_in_memory_and_on_disk_hold_the_same_and_share_nothing(tmp_path: Path) -> None:
    first = make()
    add(first, 1, "quarterly budget")
    second = Workspace.create([NOTES], clock_start=START + timedelta(days=1), task_id="t2")
    on_disk = make(path=tmp_path / "ws.sqlite")
    assert (second.task_id, second.clock.now()) == ("t2", START + timedelta(days=1))
    assert second.conn.execute("SELECT COUNT(*) FROM notes_items").fetchone() == (0,)
    add(second, 1, "budget review")
    assert (search(first, "budget"), search(second, "review"), search(second, "quarterly")) == ([1], [1], [])
    schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
    assert make().conn.execute(schema).fetchall() == on_disk.conn.execute(schema).fetchall()
    assert make().content_hash() == on_disk.content_hash()


def test_create_rejects_a_service_listed_twice() -> None:
    with pytest.raises(WorkspaceError, match="listed twice"):
        Workspace.create([NOTES, NOTES], clock_start=START)


def test_fork_copies_state_and_full_text_search_works_after_it() -> None:
    ws = make()
    add(ws, 1, "quarterly budget", "numbers for q1")
    search(ws, "budget")  # use the index before the snapshot
    fork = ws.fork()
    add(fork, 2, "budget review", "")
    assert search(fork, "budget") == [1, 2]
    assert search(ws, "budget") == [1]


def test_two_forks_of_one_snapshot_never_see_each_others_writes() -> None:
    ws = make()
    add(ws, 1, "seed")
    snap = ws.snapshot()
    a, b = snap.fork(), snap.fork()
    add(a, 2, "only in a")
    b.conn.execute("DELETE FROM notes_items WHERE id = 1")
    assert [r["title"] for r in a.rows("notes_items")] == ["seed", "only in a"]
    assert b.rows("notes_items") == []
    assert [r["title"] for r in snap.fork().rows("notes_items")] == ["seed"]


def test_restore_returns_to_the_snapshot() -> None:
    ws = make()
    add(ws, 1, "keep")
    snap = ws.snapshot()
    add(ws, 2, "drop")
    ws.clock.advance(minutes=5)
    ws.restore(snap)
    assert [r["id"] for r in ws.rows("notes_items")] == [1]
    assert ws.clock.now() == START
    assert search(ws, "keep") == [1]


def test_restore_rejects_a_snapshot_of_other_services() -> None:
    other = Workspace.create([ServiceSchema("x", "CREATE TABLE x_t (a);")], clock_start=START)
    with pytest.raises(WorkspaceError, match=r"snapshot has services \['x'\]"):
        make().restore(other.snapshot())


def test_snapshot_refuses_an_open_transaction() -> None:
    ws = make()
    ws.conn.execute("BEGIN")
    with pytest.raises(WorkspaceError, match="middle of a transaction"):
        ws.snapshot()


def test_save_and_open_round_trip_and_open_writes_in_place(tmp_path: Path) -> None:
    ws = make()
    add(ws, 1, "saved")
    path = ws.save(tmp_path / "ws.db")
    opened = Workspace.open(path)
    assert opened.services == ("notes",)
    assert opened.content_hash() == ws.content_hash()
    add(opened, 2, "written through")
    opened.close()
    assert [r["id"] for r in Workspace.open(path).rows("notes_items")] == [1, 2]


def test_save_keeps_an_existing_file_unless_told(tmp_path: Path) -> None:
    target = tmp_path / "ws.db"
    target.write_text("precious")
    with pytest.raises(WorkspaceError, match="already exists"):
        make().save(target)
    assert target.read_text() == "precious"
    make().save(target, overwrite=True)
    assert Workspace.open(target).task_id == "t1"


def test_open_rejects_files_that_are_not_workspaces_and_leaves_them_alone(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(WorkspaceError, match="is not a coworkenv workspace"):
        Workspace.open(text)
    assert text.read_text() == "hello"
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (a)").connection.close()
    before = other.read_bytes()
    with pytest.raises(WorkspaceError, match="is not a coworkenv workspace"):
        Workspace.open(other)
    assert other.read_bytes() == before
    with pytest.raises(WorkspaceError, match="no workspace file"):
        Workspace.open(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_create_at_a_path_refuses_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "ws.db").write_text("x")
    with pytest.raises(WorkspaceError, match="already exists"):
        make(path=tmp_path / "ws.db")


def test_hash_ignores_insertion_order_and_the_audit_log() -> None:
    a, b = make(), make()
    add(a, 1, "one")
    add(a, 2, "two")
    add(b, 2, "two")
    add(b, 1, "one")
    b.audit.record(
        time="t",
        actor="agent",
        service="notes",
        tool="x",
        arguments={},
        result=None,
        error=None,
        latency_ms=1.5,
    )
    assert a.content_hash() == b.content_hash()


def test_hash_changes_with_content_and_with_the_clock() -> None:
    a, b = make(), make()
    add(a, 1, "one")
    add(b, 1, "One")
    assert a.content_hash() != b.content_hash()
    c = make()
    add(c, 1, "one")
    c.clock.advance(seconds=1)
    assert a.content_hash() != c.content_hash()


def test_diff_reports_added_removed_and_changed_rows_by_primary_key() -> None:
    before = make()
    add(before, 1, "stay")
    add(before, 2, "go")
    add(before, 3, "edit")
    before.conn.execute("INSERT INTO notes_tags VALUES (3, 'x')")
    after = before.fork()
    after.conn.execute("DELETE FROM notes_items WHERE id = 2")
    after.conn.execute("UPDATE notes_items SET title = 'edited', done = 1 WHERE id = 3")
    add(after, 4, "new")
    after.clock.advance(minutes=1)  # meta and audit are not content
    result = diff(before, after)
    assert result.summary() == {"notes_items": {"added": 1, "removed": 1, "changed": 1}}
    items = result.tables["notes_items"]
    assert items.added == [{"id": 4, "title": "new", "body": "", "done": 0}]
    assert items.removed == [{"id": 2, "title": "go", "body": "", "done": 0}]
    assert items.changed[0].key == {"id": 3}
    assert {k: (v.before, v.after) for k, v in items.changed[0].columns.items()} == {
        "done": (0, 1),
        "title": ("edit", "edited"),
    }
    assert before.diff(before.fork()).is_empty


def test_diff_of_snapshots_and_internal_tables_when_asked() -> None:
    ws = make()
    snap = ws.snapshot()
    ws.clock.advance(minutes=1)
    assert diff(snap, ws).is_empty
    internal = snap.fork().diff(ws, include_internal=True)
    change = internal.tables["workspace_meta"].changed[0]
    assert change.key == {"key": "clock"}
    assert change.columns["value"].after == "2026-03-02T09:01:00+00:00"


def test_clock_moves_forward_only() -> None:
    ws = make()
    assert ws.clock.advance(timedelta(hours=1), minutes=30) == START + timedelta(hours=1, minutes=30)
    with pytest.raises(ValueError, match="cannot move backwards"):
        ws.clock.set(START)
    with pytest.raises(ValueError, match="only moves forward"):
        ws.clock.advance(seconds=-1)
    ws.clock.set(datetime(2026, 3, 3, 12, 0, tzinfo=UTC))
    assert ws.clock.now_text() == "2026-03-03T12:00:00+00:00"


def test_transaction_keeps_all_or_nothing() -> None:
    ws = make()
    with pytest.raises(RuntimeError), ws.transaction():
        add(ws, 1, "half")
        raise RuntimeError("boom")
    assert ws.rows("notes_items") == []
    with ws.transaction():
        add(ws, 1, "whole")
    assert len(ws.rows("notes_items")) == 1


def test_audit_log_reads_back_entries_in_order_and_by_actor() -> None:
    ws = make()
    ws.audit.record(
        time="a",
        actor="oracle",
        service="notes",
        tool="t1",
        arguments={"x": 1},
        result={"ok": True},
        error=None,
        latency_ms=0.5,
    )
    ws.audit.record(
        time="b",
        actor="agent",
        service="notes",
        tool="t2",
        arguments={},
        result=None,
        error="bad",
        latency_ms=0.1,
    )
    entries = ws.audit.entries()
    assert [(e.seq, e.tool, e.is_error, e.error) for e in entries] == [
        (1, "t1", False, None),
        (2, "t2", True, "bad"),
    ]
    assert entries[0].arguments == {"x": 1} and entries[0].result == {"ok": True}
    assert [e.tool for e in ws.audit.entries(actor="agent")] == ["t2"]
    assert [e.tool for e in ws.audit.entries(since=1)] == ["t2"]
    assert ws.audit.last_seq() == 2


def test_an_audit_entry_without_a_time_takes_the_clocks_and_keeps_a_written_result() -> None:
    ws = make()
    ws.clock.set(datetime(2026, 3, 2, 9, 30, tzinfo=UTC))
    ws.audit.record(
        time=None,
        actor="agent",
        service="notes",
        tool="t",
        arguments={"b": 2, "a": 1},
        result={"ignored": True},
        result_json='{"as":"written"}',
        error=None,
        latency_ms=0.5,
    )
    assert ws.conn.execute("SELECT time, arguments, result FROM audit_log").fetchall() == [
        ("2026-03-02T09:30:00+00:00", '{"a":1,"b":2}', '{"as":"written"}')
    ]


def test_identical_tables_are_found_by_their_pages_and_changed_ones_are_not() -> None:
    from coworkenv.state.diff import identical_tables

    before = make()
    for i in range(50):
        add(before, i, f"note {i}", "x" * 500)  # several pages, some overflow
    before.conn.execute("INSERT INTO notes_tags VALUES (1, 'a')")
    after = before.fork()
    assert {"notes_items", "notes_tags"} <= identical_tables(before.conn, after.conn)
    after.conn.execute("UPDATE notes_items SET done = 1 WHERE id = 42")
    same = identical_tables(before.conn, after.conn)
    assert "notes_items" not in same and "notes_tags" in same
    assert diff(before, after).summary() == {"notes_items": {"added": 0, "removed": 0, "changed": 1}}
    # the same change made the other way round leaves identical content, found again
    after.conn.execute("UPDATE notes_items SET done = 0 WHERE id = 42")
    assert diff(before, after).is_empty


def test_a_connection_remembers_its_schema_until_the_schema_changes() -> None:
    from coworkenv.state.tables import WorkspaceConnection, columns, content_tables, primary_key

    ws = Workspace.create([], clock_start=START)
    assert isinstance(ws.conn, WorkspaceConnection)
    before = content_tables(ws.conn)
    assert "notes" not in before and columns(ws.conn, "notes") == []
    ws.conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    assert content_tables(ws.conn) == sorted([*before, "notes"])
    assert (columns(ws.conn, "notes"), primary_key(ws.conn, "notes")) == (["id", "body"], ["id"])
    ws.conn.execute("ALTER TABLE notes ADD COLUMN author TEXT")
    assert columns(ws.conn, "notes") == ["id", "body", "author"]
    fork = ws.snapshot().fork()
    assert isinstance(fork.conn, WorkspaceConnection)
    assert columns(fork.conn, "notes") == ["id", "body", "author"]
    ws.conn.execute("DROP TABLE notes")
    assert content_tables(ws.conn) == before
