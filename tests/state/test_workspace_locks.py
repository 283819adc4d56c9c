"""A workspace file's write lock: taken at a transaction's start, and given up cleanly when
another connection holds it."""

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from coworkenv.state import ServiceSchema, Workspace
from tests.conftest import START

NOTES = ServiceSchema("notes", "CREATE TABLE notes_items (id INTEGER PRIMARY KEY, text TEXT);")


def make_file(tmp_path: Path) -> Workspace:
    return Workspace.create([NOTES], clock_start=START, path=tmp_path / "ws.db")


def test_only_a_workspace_with_a_path_is_a_file(tmp_path: Path) -> None:
    ws = make_file(tmp_path)
    assert ws.is_file
    assert not ws.fork().is_file
    assert not Workspace.create([NOTES], clock_start=START).is_file


def test_begin_write_gives_up_while_another_connection_holds_the_lock(tmp_path: Path) -> None:
    ws = make_file(tmp_path)
    other = sqlite3.connect(tmp_path / "ws.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    assert ws.try_begin_write(wait_ms=1) is False
    assert not ws.conn.in_transaction
    other.execute("ROLLBACK")
    assert ws.try_begin_write(wait_ms=1) is True
    ws.conn.execute("INSERT INTO notes_items (text) VALUES ('x')")
    assert ws.try_commit(wait_ms=1) is True
    assert other.execute("SELECT text FROM notes_items").fetchall() == [("x",)]


def test_commit_gives_up_while_a_reader_holds_the_file_and_keeps_the_transaction(tmp_path: Path) -> None:
    ws = make_file(tmp_path)
    reader = sqlite3.connect(tmp_path / "ws.db", isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM notes_items").fetchone()
    assert ws.try_begin_write(wait_ms=1) is True
    ws.conn.execute("INSERT INTO notes_items (text) VALUES ('x')")
    assert ws.try_commit(wait_ms=1) is False
    assert ws.conn.in_transaction
    reader.execute("COMMIT")
    assert ws.try_commit(wait_ms=1) is True
    assert [r["text"] for r in Workspace.open(tmp_path / "ws.db").rows("notes_items")] == ["x"]


def test_a_clock_move_outside_a_transaction_is_committed_at_once(tmp_path: Path) -> None:
    ws = make_file(tmp_path)
    ws.clock.advance(minutes=5)
    assert not ws.conn.in_transaction
    assert Workspace.open(tmp_path / "ws.db").clock.now() == START + timedelta(minutes=5)


def test_a_failed_transaction_on_a_file_leaves_nothing(tmp_path: Path) -> None:
    ws = make_file(tmp_path)
    with pytest.raises(RuntimeError, match="boom"), ws.transaction():
        ws.conn.execute("INSERT INTO notes_items (text) VALUES ('x')")
        raise RuntimeError("boom")
    assert not ws.conn.in_transaction
    assert ws.rows("notes_items") == []
    with ws.transaction():
        ws.conn.execute("INSERT INTO notes_items (text) VALUES ('y')")
    assert [r["text"] for r in Workspace.open(tmp_path / "ws.db").rows("notes_items")] == ["y"]
