"""The files tools that change the tree: write, create a directory, move, copy, delete."""

from typing import Any

import pytest

from coworkenv.state import Workspace
from tests.servers.test_files import ALICE, BOB, NOW, README, T0, T1, USER, call, error, ws

__all__ = ["ws"]

LATER = "2026-03-02T09:01:00+00:00"


def node(ws: Workspace, path: str) -> dict[str, Any] | None:
    rows = ws.rows("files_nodes", "path = ?", [path])
    return rows[0] if rows else None


def paths(ws: Workspace) -> list[str]:
    return [r["path"] for r in ws.rows("files_nodes", "1 ORDER BY path")]


def row(
    path: str, kind: str, content: str | None, created: str, modified: str, by: str | None
) -> dict[str, Any]:
    parent = path.rsplit("/", 1)[0] or "/"
    return {
        "path": path,
        "parent": parent,
        "name": path.rsplit("/", 1)[1],
        "kind": kind,
        "content": content,
        "size": len(content.encode()) if content is not None else 0,
        "created_at": created,
        "modified_at": modified,
        "modified_by": by,
    }


async def assert_unchanged(ws: Workspace, tool: str, args: dict[str, Any], message: str) -> None:
    """The call fails with exactly `message` and leaves the files and the clock as they were."""
    before = ws.content_hash()
    assert await call(ws, tool, args) == error(tool, message)
    assert ws.content_hash() == before


# -- write_file --------------------------------------------------------------------------------


async def test_write_file_creates_a_file_as_the_user_now_and_moves_the_clock(ws: Workspace) -> None:
    result = await call(ws, "write_file", {"path": "/docs/plan.md", "content": "step 1\nstep 2"})
    assert result == {
        "path": "/docs/plan.md",
        "created": True,
        "size": 13,
        "line_count": 2,
        "modified_at": NOW,
    }
    assert node(ws, "/docs/plan.md") == row("/docs/plan.md", "file", "step 1\nstep 2", NOW, NOW, USER)
    assert ws.clock.now_text() == LATER


async def test_write_file_overwrite_replaces_content_and_keeps_the_creation_time(ws: Workspace) -> None:
    result = await call(
        ws, "write_file", {"path": "/docs/readme.md", "content": "new\n", "mode": "overwrite"}
    )
    assert result == {
        "path": "/docs/readme.md",
        "created": False,
        "size": 4,
        "line_count": 1,
        "modified_at": NOW,
    }
    assert node(ws, "/docs/readme.md") == row("/docs/readme.md", "file", "new\n", T0, NOW, USER)
    created = await call(ws, "write_file", {"path": "/fresh.txt", "content": "", "mode": "overwrite"})
    assert (created["created"], created["size"], created["line_count"]) == (True, 0, 0)


async def test_write_file_append_adds_to_the_end_or_creates_the_file(ws: Workspace) -> None:
    result = await call(
        ws, "write_file", {"path": "/docs/readme.md", "content": "fourth\n", "mode": "append"}
    )
    assert result == {
        "path": "/docs/readme.md",
        "created": False,
        "size": 44,
        "line_count": 4,
        "modified_at": NOW,
    }
    assert node(ws, "/docs/readme.md")["content"] == README + "fourth\n"
    new = await call(ws, "write_file", {"path": "/log.txt", "content": "first\n", "mode": "append"})
    assert (new["created"], new["modified_at"]) == (True, LATER)
    assert node(ws, "/log.txt") == row("/log.txt", "file", "first\n", LATER, LATER, USER)


async def test_write_file_create_parents_makes_the_missing_directories(ws: Workspace) -> None:
    await call(ws, "write_file", {"path": "/a/b/c.txt", "content": "x", "create_parents": True})
    assert node(ws, "/a") == row("/a", "dir", None, NOW, NOW, USER)
    assert node(ws, "/a/b") == row("/a/b", "dir", None, NOW, NOW, USER)
    assert node(ws, "/a/b/c.txt")["parent"] == "/a/b"


async def test_write_file_refuses_to_replace_without_overwrite(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "write_file",
        {"path": "/docs/readme.md", "content": "x"},
        "'/docs/readme.md' already exists; use mode='overwrite' to replace it or mode='append' to add to it",
    )


async def test_write_file_needs_an_existing_parent_directory(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "write_file",
        {"path": "/docs/new/x.md", "content": "x"},
        "the parent directory '/docs/new' does not exist; create it with create_directory, "
        "or pass create_parents=true",
    )
    await assert_unchanged(
        ws,
        "write_file",
        {"path": "/top.csv/x.md", "content": "x", "create_parents": True},
        "'/top.csv' is a file, not a directory, so '/top.csv/x.md' cannot be created",
    )


async def test_write_file_cannot_write_over_a_directory(ws: Workspace) -> None:
    for path in ("/docs", "/"):
        message = f"{path!r} is a directory; write to a file path inside it, such as {path.rstrip('/') + '/notes.md'!r}"
        await assert_unchanged(ws, "write_file", {"path": path, "content": "x", "mode": "overwrite"}, message)


async def test_write_file_takes_one_megabyte_and_no_more(ws: Workspace) -> None:
    result = await call(ws, "write_file", {"path": "/max.txt", "content": "é" * 500_000})
    assert result["size"] == 1_000_000
    await assert_unchanged(
        ws,
        "write_file",
        {"path": "/max.txt", "content": "!", "mode": "append"},
        "the file would be 1000001 bytes; a file may hold at most 1000000 bytes (1 MB)",
    )


async def test_write_file_accepts_text_only(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "write_file",
        {"path": "/bin.dat", "content": "a\x00b"},
        "the content contains NUL characters; only text files are supported",
    )
    await assert_unchanged(
        ws,
        "write_file",
        {"path": "/bad.txt", "content": "x\ud800"},
        "the content is not valid Unicode text; only text files are supported",
    )


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "the path is empty; give an absolute path such as '/shared/notes.md' ('/' is the root)"),
        ("   ", "the path is empty; give an absolute path such as '/shared/notes.md' ('/' is the root)"),
        (
            "/../etc/passwd",
            "path '/../etc/passwd' climbs above the root '/'; paths must stay inside the file tree",
        ),
        ("../../x", "path '../../x' climbs above the root '/'; paths must stay inside the file tree"),
        ("/a/../../x", "path '/a/../../x' climbs above the root '/'; paths must stay inside the file tree"),
        (
            "/a\x00b",
            "path '/a\\x00b' contains the control character '\\x00'; paths may only hold printable characters",
        ),
        (
            "/a\nb",
            "path '/a\\nb' contains the control character '\\n'; paths may only hold printable characters",
        ),
        ("/a/ /b", "path '/a/ /b' contains an empty name; every name needs a visible character"),
        ("/a/ b", "name ' b' in path '/a/ b' starts or ends with a space; remove the spaces"),
        ("/\ud800", "path '/\\ud800' is not valid Unicode text"),
        ("/" + "n" * 256, f"name {'n' * 40!r}... is 256 characters long; a name may have at most 255"),
        ("/d" * 520 + "/f", f"path {'/d' * 20!r}... is 1042 characters long; a path may have at most 1024"),
    ],
)
async def test_write_file_rejects_bad_paths(ws: Workspace, path: str, message: str) -> None:
    await assert_unchanged(ws, "write_file", {"path": path, "content": "x", "create_parents": True}, message)


async def test_write_file_normalizes_the_path(ws: Workspace) -> None:
    result = await call(ws, "write_file", {"path": "docs//./sub/../x.md", "content": "x"})
    assert result["path"] == "/docs/x.md"
    assert node(ws, "/docs/x.md")["parent"] == "/docs"


# -- create_directory --------------------------------------------------------------------------


async def test_create_directory_creates_one_directory(ws: Workspace) -> None:
    assert await call(ws, "create_directory", {"path": "/docs/new"}) == {
        "path": "/docs/new",
        "created": ["/docs/new"],
    }
    assert node(ws, "/docs/new") == row("/docs/new", "dir", None, NOW, NOW, USER)
    assert ws.clock.now_text() == LATER


async def test_create_directory_with_parents_creates_the_chain(ws: Workspace) -> None:
    assert await call(ws, "create_directory", {"path": "/x/y/z", "parents": True}) == {
        "path": "/x/y/z",
        "created": ["/x", "/x/y", "/x/y/z"],
    }
    assert paths(ws)[-3:] == ["/x", "/x/y", "/x/y/z"]


async def test_create_directory_on_an_existing_directory(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "create_directory",
        {"path": "/docs"},
        "the directory '/docs' already exists; pass exist_ok=true to accept that",
    )
    assert await call(ws, "create_directory", {"path": "/docs", "exist_ok": True}) == {
        "path": "/docs",
        "created": [],
    }


async def test_create_directory_explains_what_is_in_the_way(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "create_directory",
        {"path": "/top.csv", "exist_ok": True},
        "'/top.csv' already exists and is a file; choose another name for the directory",
    )
    await assert_unchanged(
        ws,
        "create_directory",
        {"path": "/a/b"},
        "the parent directory '/a' does not exist; pass parents=true to create it too",
    )
    await assert_unchanged(
        ws,
        "create_directory",
        {"path": "/top.csv/sub", "parents": True},
        "'/top.csv' is a file, not a directory, so '/top.csv/sub' cannot be created",
    )


# -- move_path ---------------------------------------------------------------------------------


async def test_move_path_renames_a_file_and_keeps_its_times(ws: Workspace) -> None:
    result = await call(ws, "move_path", {"source": "/top.csv", "destination": "/docs/table.csv"})
    assert result == {
        "source": "/top.csv",
        "destination": "/docs/table.csv",
        "kind": "file",
        "entries": 1,
        "replaced": False,
    }
    assert node(ws, "/top.csv") is None
    assert node(ws, "/docs/table.csv") == row("/docs/table.csv", "file", "a,b\n1,2\n", T0, T0, ALICE)


async def test_move_path_moves_a_directory_with_everything_in_it(ws: Workspace) -> None:
    result = await call(ws, "move_path", {"source": "/docs", "destination": "/empty/old-docs"})
    assert (result["kind"], result["entries"]) == ("dir", 5)
    assert paths(ws) == [
        "/",
        "/empty",
        "/empty/old-docs",
        "/empty/old-docs/notes.txt",
        "/empty/old-docs/readme.md",
        "/empty/old-docs/sub",
        "/empty/old-docs/sub/deep.md",
        "/top.csv",
    ]
    assert node(ws, "/empty/old-docs/sub/deep.md") == row(
        "/empty/old-docs/sub/deep.md", "file", "deep down\n", T1, T1, BOB
    )
    assert node(ws, "/empty/old-docs")["parent"] == "/empty"


async def test_move_path_overwrites_a_file_only_when_asked(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "move_path",
        {"source": "/top.csv", "destination": "/docs/notes.txt"},
        "'/docs/notes.txt' already exists; pass overwrite=true to replace it, or choose another destination",
    )
    result = await call(
        ws, "move_path", {"source": "/top.csv", "destination": "/docs/notes.txt", "overwrite": True}
    )
    assert result["replaced"] is True
    assert node(ws, "/docs/notes.txt")["content"] == "a,b\n1,2\n"
    assert node(ws, "/top.csv") is None


async def test_move_path_refuses_impossible_moves(ws: Workspace) -> None:
    cases = [
        ({"source": "/", "destination": "/x"}, "cannot move the root directory '/'"),
        (
            {"source": "/docs", "destination": "/docs/sub/docs"},
            "cannot move the directory '/docs' into itself ('/docs/sub/docs' is inside it)",
        ),
        (
            {"source": "/docs", "destination": "docs/"},
            "the source and the destination are the same path '/docs'",
        ),
        (
            {"source": "/nope", "destination": "/x"},
            "no file or directory at '/nope'; list_directory on '/' shows what is there",
        ),
        (
            {"source": "/top.csv", "destination": "/empty"},
            "'/empty' already exists and is a directory; give the full new path, such as '/empty/top.csv'",
        ),
        (
            {"source": "/empty", "destination": "/top.csv", "overwrite": True},
            "'/top.csv' already exists and is a file; a directory cannot replace a file, so choose another destination",
        ),
        (
            {"source": "/top.csv", "destination": "/new/top.csv"},
            "the parent directory '/new' does not exist; create it with create_directory first",
        ),
        (
            {"source": "/top.csv", "destination": "/../top.csv"},
            "path '/../top.csv' climbs above the root '/'; paths must stay inside the file tree",
        ),
    ]
    for args, message in cases:
        await assert_unchanged(ws, "move_path", args, message)


# -- copy_path ---------------------------------------------------------------------------------


async def test_copy_path_copies_a_file_as_new(ws: Workspace) -> None:
    result = await call(ws, "copy_path", {"source": "/docs/readme.md", "destination": "/readme-copy.md"})
    assert result == {
        "source": "/docs/readme.md",
        "destination": "/readme-copy.md",
        "kind": "file",
        "entries": 1,
        "replaced": False,
    }
    assert node(ws, "/readme-copy.md") == row("/readme-copy.md", "file", README, NOW, NOW, USER)
    assert node(ws, "/docs/readme.md") == row("/docs/readme.md", "file", README, T0, T1, ALICE)


async def test_copy_path_copies_a_directory_tree(ws: Workspace) -> None:
    result = await call(ws, "copy_path", {"source": "/docs", "destination": "/backup"})
    assert (result["kind"], result["entries"]) == ("dir", 5)
    assert [p for p in paths(ws) if p.startswith("/backup")] == [
        "/backup",
        "/backup/notes.txt",
        "/backup/readme.md",
        "/backup/sub",
        "/backup/sub/deep.md",
    ]
    assert node(ws, "/backup/sub/deep.md") == row(
        "/backup/sub/deep.md", "file", "deep down\n", NOW, NOW, USER
    )
    assert node(ws, "/docs/sub/deep.md") == row("/docs/sub/deep.md", "file", "deep down\n", T1, T1, BOB)


async def test_copy_path_overwrites_a_file_only_when_asked(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "copy_path",
        {"source": "/top.csv", "destination": "/docs/notes.txt"},
        "'/docs/notes.txt' already exists; pass overwrite=true to replace it, or choose another destination",
    )
    result = await call(
        ws, "copy_path", {"source": "/top.csv", "destination": "/docs/notes.txt", "overwrite": True}
    )
    assert result["replaced"] is True
    assert node(ws, "/docs/notes.txt") == row("/docs/notes.txt", "file", "a,b\n1,2\n", NOW, NOW, USER)
    assert node(ws, "/top.csv")["content"] == "a,b\n1,2\n"


async def test_copy_path_refuses_to_copy_a_directory_into_itself(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "copy_path",
        {"source": "/docs", "destination": "/docs/sub/again"},
        "cannot copy the directory '/docs' into itself ('/docs/sub/again' is inside it)",
    )
    await assert_unchanged(
        ws, "copy_path", {"source": "/", "destination": "/all"}, "cannot copy the root directory '/'"
    )


# -- delete_path -------------------------------------------------------------------------------


async def test_delete_path_deletes_a_file_and_an_empty_directory(ws: Workspace) -> None:
    assert await call(ws, "delete_path", {"path": "/top.csv"}) == {
        "path": "/top.csv",
        "kind": "file",
        "deleted": 1,
    }
    assert await call(ws, "delete_path", {"path": "/empty"}) == {
        "path": "/empty",
        "kind": "dir",
        "deleted": 1,
    }
    assert paths(ws) == ["/", "/docs", "/docs/notes.txt", "/docs/readme.md", "/docs/sub", "/docs/sub/deep.md"]


async def test_delete_path_needs_recursive_for_a_directory_with_content(ws: Workspace) -> None:
    await assert_unchanged(
        ws,
        "delete_path",
        {"path": "/docs"},
        "the directory '/docs' is not empty (4 entries below it); pass recursive=true to delete it with everything in it",
    )
    assert await call(ws, "delete_path", {"path": "/docs", "recursive": True}) == {
        "path": "/docs",
        "kind": "dir",
        "deleted": 5,
    }
    assert paths(ws) == ["/", "/empty", "/top.csv"]


async def test_delete_path_refuses_the_root_and_explains_a_missing_path(ws: Workspace) -> None:
    await assert_unchanged(
        ws, "delete_path", {"path": "/", "recursive": True}, "cannot delete the root directory '/'"
    )
    await assert_unchanged(ws, "delete_path", {"path": "/docs/.."}, "cannot delete the root directory '/'")
    await assert_unchanged(
        ws,
        "delete_path",
        {"path": "/docs/gone.md"},
        "no file or directory at '/docs/gone.md'; list_directory on '/docs' shows what is there",
    )


async def test_failed_writes_are_audited_and_leave_the_clock_alone(ws: Workspace) -> None:
    await call(ws, "delete_path", {"path": "/"})
    await call(ws, "write_file", {"path": "/ok.txt", "content": "ok"})
    assert ws.clock.now_text() == LATER
    assert [(e.tool, e.is_error, e.time) for e in ws.audit.entries(actor="agent")] == [
        ("delete_path", True, NOW),
        ("write_file", False, NOW),
    ]
