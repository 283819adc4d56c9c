"""The files service through a real in-memory MCP client: the tool list, listing, file
info and search. Shared by the other test_files_* modules: the `ws` fixture and `call`."""

from typing import Any

import anyio
import pytest
from mcp import Client

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.servers.files.world import AddFile, add_file
from coworkenv.state import Workspace
from tests.conftest import START

T0 = "2026-02-01T08:00:00+00:00"
T1 = "2026-02-10T12:30:00+00:00"
NOW = "2026-03-02T09:00:00+00:00"
ALICE = "alice@northwind.example"
BOB = "bob@northwind.example"
USER = "kim.lee@northwind.example"

README = "# Readme\nSecond line\nthird LINE here\n"
NOTES = "alpha\nBeta gamma\n"


@pytest.fixture
def ws() -> Workspace:
    """/docs/readme.md, /docs/notes.txt, /docs/sub/deep.md, /empty/ and /top.csv."""
    ws = create_workspace(["files"], clock_start=START, user_email=USER)
    files = [
        ("/empty", None, T0, None, ALICE),
        ("/docs/readme.md", README, T0, T1, ALICE),
        ("/docs/notes.txt", NOTES, T1, None, BOB),
        ("/docs/sub/deep.md", "deep down\n", T1, None, BOB),
        ("/top.csv", "a,b\n1,2\n", T0, None, ALICE),
    ]
    for path, content, created, modified, by in files:
        if content is None:
            apply_world_operation(
                ws, "files", "add_directory", {"path": path, "created_at": created, "modified_by": by}
            )
        else:
            params = {"path": path, "content": content, "created_at": created, "modified_by": by}
            if modified:
                params["modified_at"] = modified
            apply_world_operation(ws, "files", "add_file", params)
    return ws


async def call(ws: Workspace, tool: str, args: dict[str, Any]) -> Any:
    """The structured result of one call, or ("error", message) for an error result."""
    with anyio.fail_after(5):
        async with Client(build_server(ws, "files")) as client:
            result = await client.call_tool(tool, args)
    if result.is_error:
        text = result.content[0].text
        assert text != f"Error executing tool {tool}", f"{tool}({args}) crashed: a bug, not a ToolError"
        return ("error", text)
    return result.structured_content


def error(tool: str, message: str) -> tuple[str, str]:
    return ("error", f"Error executing tool {tool}: {message}")


def entry(path: str, kind: str, size: int, modified_at: str) -> dict[str, Any]:
    return {
        "path": path,
        "name": path.rsplit("/", 1)[1],
        "kind": kind,
        "size": size,
        "modified_at": modified_at,
    }


DOCS = entry("/docs", "dir", 0, T0)
README_E = entry("/docs/readme.md", "file", 37, T1)
NOTES_E = entry("/docs/notes.txt", "file", 17, T1)
SUB = entry("/docs/sub", "dir", 0, T1)
DEEP = entry("/docs/sub/deep.md", "file", 10, T1)
EMPTY = entry("/empty", "dir", 0, T0)
TOP = entry("/top.csv", "file", 8, T0)


# -- the tool list -----------------------------------------------------------------------------


async def test_the_server_lists_eleven_tools_with_read_only_and_destructive_hints(ws: Workspace) -> None:
    with anyio.fail_after(5):
        async with Client(build_server(ws, "files")) as client:
            tools = (await client.list_tools()).tools
    hints = {t.name: (t.annotations.read_only_hint, t.annotations.destructive_hint) for t in tools}
    assert hints == {
        "list_directory": (True, False),
        "read_file": (True, False),
        "open_document": (True, False),
        "extract_text": (True, False),
        "search_files": (True, False),
        "get_file_info": (True, False),
        "write_file": (False, True),
        "create_directory": (False, False),
        "move_path": (False, True),
        "copy_path": (False, True),
        "delete_path": (False, True),
    }


def test_a_new_workspace_holds_only_the_root_directory() -> None:
    ws = create_workspace(["files"], clock_start=START)
    assert ws.rows("files_nodes") == [
        {
            "path": "/",
            "parent": None,
            "name": "/",
            "kind": "dir",
            "content": None,
            "size": 0,
            "created_at": "1970-01-01T00:00:00+00:00",
            "modified_at": "1970-01-01T00:00:00+00:00",
            "modified_by": None,
        }
    ]


# -- list_directory ----------------------------------------------------------------------------


async def test_list_directory_lists_direct_entries_by_name(ws: Workspace) -> None:
    assert await call(ws, "list_directory", {}) == {
        "path": "/",
        "entries": [DOCS, EMPTY, TOP],
        "total": 3,
        "truncated": False,
    }
    assert await call(ws, "list_directory", {"path": "docs/"}) == {
        "path": "/docs",
        "entries": [NOTES_E, README_E, SUB],
        "total": 3,
        "truncated": False,
    }
    assert (await call(ws, "list_directory", {"path": "/empty"}))["entries"] == []


async def test_list_directory_recursive_goes_down_in_tree_order_to_max_depth(ws: Workspace) -> None:
    full = await call(ws, "list_directory", {"path": "/", "recursive": True})
    assert full["entries"] == [DOCS, NOTES_E, README_E, SUB, DEEP, EMPTY, TOP]
    assert full["total"] == 7
    two = await call(ws, "list_directory", {"path": "/", "recursive": True, "max_depth": 2})
    assert [e["path"] for e in two["entries"]] == [
        "/docs",
        "/docs/notes.txt",
        "/docs/readme.md",
        "/docs/sub",
        "/empty",
        "/top.csv",
    ]
    one = await call(ws, "list_directory", {"path": "/", "recursive": True, "max_depth": 1})
    assert one["entries"] == [DOCS, EMPTY, TOP]


async def test_list_directory_truncates_at_500_entries_and_says_so(ws: Workspace) -> None:
    for i in range(501):
        add_file(ws, AddFile(path=f"/many/f{i:03d}.txt", content="x"))
    listing = await call(ws, "list_directory", {"path": "/many"})
    assert (listing["total"], listing["truncated"], len(listing["entries"])) == (501, True, 500)
    assert listing["entries"][-1]["path"] == "/many/f499.txt"


async def test_list_directory_explains_bad_paths(ws: Workspace) -> None:
    assert await call(ws, "list_directory", {"path": "/docs/missing/deeper"}) == error(
        "list_directory",
        "no file or directory at '/docs/missing/deeper'; list_directory on '/docs' shows what is there",
    )
    assert await call(ws, "list_directory", {"path": "/DOCS"}) == error(
        "list_directory", "no file or directory at '/DOCS'; paths are case-sensitive: did you mean '/docs'?"
    )
    assert await call(ws, "list_directory", {"path": "/top.csv"}) == error(
        "list_directory", "'/top.csv' is a file, not a directory; use read_file or get_file_info on it"
    )
    assert await call(ws, "list_directory", {"path": "/../etc"}) == error(
        "list_directory", "path '/../etc' climbs above the root '/'; paths must stay inside the file tree"
    )
    kind, text = await call(ws, "list_directory", {"path": "/", "recursive": True, "max_depth": 0})
    assert kind == "error" and "max_depth" in text and "greater than or equal to 1" in text


# -- get_file_info -----------------------------------------------------------------------------


async def test_get_file_info_describes_a_file(ws: Workspace) -> None:
    assert await call(ws, "get_file_info", {"path": "/docs/readme.md"}) == {
        "path": "/docs/readme.md",
        "name": "readme.md",
        "kind": "file",
        "size": 37,
        "line_count": 3,
        "entry_count": None,
        "created_at": T0,
        "modified_at": T1,
        "modified_by": ALICE,
    }


async def test_get_file_info_counts_a_directorys_entries(ws: Workspace) -> None:
    assert await call(ws, "get_file_info", {"path": "/docs"}) == {
        "path": "/docs",
        "name": "docs",
        "kind": "dir",
        "size": 0,
        "line_count": None,
        "entry_count": 3,
        "created_at": T0,
        "modified_at": T0,
        "modified_by": ALICE,
    }
    root = await call(ws, "get_file_info", {"path": "/"})
    assert (root["name"], root["entry_count"], root["modified_by"]) == ("/", 3, None)


async def test_get_file_info_counts_a_last_line_without_newline(ws: Workspace) -> None:
    add_file(ws, AddFile(path="/two.txt", content="one\ntwo"))
    add_file(ws, AddFile(path="/none.txt", content=""))
    assert (await call(ws, "get_file_info", {"path": "/two.txt"}))["line_count"] == 2
    assert (await call(ws, "get_file_info", {"path": "/none.txt"}))["line_count"] == 0


async def test_get_file_info_explains_a_missing_path(ws: Workspace) -> None:
    assert await call(ws, "get_file_info", {"path": "/docs/sub/nothing.md"}) == error(
        "get_file_info",
        "no file or directory at '/docs/sub/nothing.md'; list_directory on '/docs/sub' shows what is there",
    )


# -- search_files ------------------------------------------------------------------------------


def match(e: dict[str, Any], count: int = 0, lines: list[tuple[int, str]] = ()) -> dict[str, Any]:
    return {
        "path": e["path"],
        "kind": e["kind"],
        "size": e["size"],
        "modified_at": e["modified_at"],
        "match_count": count,
        "lines": [{"line": n, "text": t} for n, t in lines],
    }


async def test_search_files_by_name_glob_ignores_case_and_finds_directories(ws: Workspace) -> None:
    assert await call(ws, "search_files", {"name_glob": "*.MD"}) == {
        "directory": "/",
        "total": 2,
        "truncated": False,
        "matches": [match(README_E), match(DEEP)],
    }
    found = await call(ws, "search_files", {"name_glob": "s?b"})
    assert found["matches"] == [match(SUB)]


async def test_search_files_by_content_shows_matching_lines(ws: Workspace) -> None:
    assert await call(ws, "search_files", {"content": "LINE"}) == {
        "directory": "/",
        "total": 1,
        "truncated": False,
        "matches": [match(README_E, 2, [(2, "Second line"), (3, "third LINE here")])],
    }
    both = await call(ws, "search_files", {"content": "a", "name_glob": "*.txt"})
    assert both["matches"] == [match(NOTES_E, 2, [(1, "alpha"), (2, "Beta gamma")])]


async def test_search_files_stays_below_the_directory(ws: Workspace) -> None:
    result = await call(ws, "search_files", {"directory": "/docs/sub", "content": "d"})
    assert result == {
        "directory": "/docs/sub",
        "total": 1,
        "truncated": False,
        "matches": [match(DEEP, 1, [(1, "deep down")])],
    }
    assert (await call(ws, "search_files", {"directory": "/empty", "name_glob": "*"}))["matches"] == []


async def test_search_files_limits_matches_and_lines_per_file(ws: Workspace) -> None:
    add_file(ws, AddFile(path="/log.txt", content="".join(f"hit {i}\n" for i in range(1, 9))))
    result = await call(ws, "search_files", {"content": "hit"})
    assert result["matches"] == [
        match(entry("/log.txt", "file", 48, NOW), 8, [(i, f"hit {i}") for i in range(1, 6)])
    ]
    limited = await call(ws, "search_files", {"name_glob": "*", "limit": 2})
    assert (limited["total"], limited["truncated"]) == (8, True)
    assert [m["path"] for m in limited["matches"]] == ["/docs", "/docs/notes.txt"]


async def test_search_files_cuts_long_lines_around_the_match(ws: Workspace) -> None:
    add_file(ws, AddFile(path="/long.txt", content="a" * 300 + "NEEDLE" + "b" * 300 + "\n"))
    result = await call(ws, "search_files", {"directory": "/", "content": "needle"})
    text = result["matches"][0]["lines"][0]["text"]
    assert text == "…" + "a" * 97 + "NEEDLE" + "b" * 97 + "…"


async def test_search_files_explains_bad_requests(ws: Workspace) -> None:
    assert await call(ws, "search_files", {}) == error(
        "search_files", "give name_glob, content or both: e.g. name_glob='*.csv' or content='invoice'"
    )
    assert await call(ws, "search_files", {"content": "a\nb"}) == error(
        "search_files", "content is matched within one line; search for text without line breaks"
    )
    assert await call(ws, "search_files", {"directory": "/nope", "name_glob": "*"}) == error(
        "search_files", "no file or directory at '/nope'; list_directory on '/' shows what is there"
    )
    assert await call(ws, "search_files", {"directory": "/top.csv", "content": "a"}) == error(
        "search_files", "'/top.csv' is a file, not a directory; use read_file or get_file_info on it"
    )
    kind, text = await call(ws, "search_files", {"content": ""})
    assert kind == "error" and "content" in text and "at least 1 character" in text


async def test_read_only_tools_leave_state_and_clock_alone(ws: Workspace) -> None:
    before = ws.content_hash()
    await call(ws, "list_directory", {"recursive": True})
    await call(ws, "read_file", {"path": "/docs/readme.md"})
    await call(ws, "search_files", {"content": "a"})
    await call(ws, "get_file_info", {"path": "/missing"})
    assert ws.content_hash() == before
    assert ws.clock.now_text() == NOW
    assert [(e.tool, e.is_error) for e in ws.audit.entries(actor="agent")] == [
        ("list_directory", False),
        ("read_file", False),
        ("search_files", False),
        ("get_file_info", True),
    ]
