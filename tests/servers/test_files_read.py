"""read_file: whole files, line ranges, byte ranges, paging through large files."""

from typing import Any

from coworkenv.servers.files.world import AddFile, add_file
from coworkenv.state import Workspace
from tests.servers.test_files import README, call, error, ws

__all__ = ["ws"]

BIG_LINE = "x" * 999 + "\n"  # 1,000 bytes
BIG = BIG_LINE * 40  # 40,000 bytes: more than one read's 32,000


def content(path: str, text: str, **fields: Any) -> dict[str, Any]:
    defaults = {
        "path": path,
        "content": text,
        "start_line": 1,
        "end_line": 0,
        "total_lines": 0,
        "offset": 0,
        "length": len(text.encode()),
        "total_bytes": 0,
        "truncated": False,
        "next_start_line": None,
        "next_offset": None,
    }
    return {**defaults, **fields}


async def test_read_file_returns_the_whole_file_with_its_totals(ws: Workspace) -> None:
    assert await call(ws, "read_file", {"path": "/docs/readme.md"}) == content(
        "/docs/readme.md", README, end_line=3, total_lines=3, total_bytes=37
    )


async def test_read_file_reads_a_line_range(ws: Workspace) -> None:
    assert await call(ws, "read_file", {"path": "docs/readme.md", "start_line": 2, "end_line": 3}) == content(
        "/docs/readme.md",
        "Second line\nthird LINE here\n",
        start_line=2,
        end_line=3,
        total_lines=3,
        offset=9,
        total_bytes=37,
    )
    past_end = await call(ws, "read_file", {"path": "/docs/readme.md", "start_line": 3, "end_line": 99})
    assert (past_end["content"], past_end["end_line"]) == ("third LINE here\n", 3)
    only_end = await call(ws, "read_file", {"path": "/docs/readme.md", "end_line": 1})
    assert (only_end["content"], only_end["start_line"], only_end["end_line"]) == ("# Readme\n", 1, 1)


async def test_read_file_reads_a_byte_range(ws: Workspace) -> None:
    assert await call(ws, "read_file", {"path": "/docs/readme.md", "offset": 9, "length": 6}) == content(
        "/docs/readme.md", "Second", start_line=2, end_line=2, total_lines=3, offset=9, total_bytes=37
    )
    rest = await call(ws, "read_file", {"path": "/docs/readme.md", "offset": 21})
    assert (rest["content"], rest["start_line"], rest["end_line"], rest["length"]) == (
        "third LINE here\n",
        3,
        3,
        16,
    )
    at_end = await call(ws, "read_file", {"path": "/docs/readme.md", "offset": 37})
    assert (at_end["content"], at_end["start_line"], at_end["end_line"]) == ("", 4, 3)


async def test_read_file_widens_a_byte_range_to_whole_characters(ws: Workspace) -> None:
    add_file(ws, AddFile(path="/cafe.txt", content="café €5\n"))  # é: 2 bytes, €: 3 bytes
    inside = await call(ws, "read_file", {"path": "/cafe.txt", "offset": 4, "length": 1})
    assert (inside["content"], inside["offset"], inside["length"]) == ("é", 3, 2)
    euro = await call(ws, "read_file", {"path": "/cafe.txt", "offset": 6, "length": 2})
    assert (euro["content"], euro["offset"], euro["length"], euro["total_bytes"]) == ("€", 6, 3, 11)


async def test_read_file_reads_an_empty_file(ws: Workspace) -> None:
    add_file(ws, AddFile(path="/empty.txt", content=""))
    assert await call(ws, "read_file", {"path": "/empty.txt"}) == content("/empty.txt", "")
    assert await call(ws, "read_file", {"path": "/empty.txt", "offset": 0}) == content("/empty.txt", "")


async def test_read_file_pages_through_a_large_file_by_lines(ws: Workspace) -> None:
    add_file(ws, AddFile(path="/big.txt", content=BIG))
    first = await call(ws, "read_file", {"path": "/big.txt"})
    assert first == content(
        "/big.txt",
        BIG_LINE * 32,
        end_line=32,
        total_lines=40,
        total_bytes=40_000,
        truncated=True,
        next_start_line=33,
        next_offset=32_000,
    )
    second = await call(ws, "read_file", {"path": "/big.txt", "start_line": 33})
    assert second == content(
        "/big.txt",
        BIG_LINE * 8,
        start_line=33,
        end_line=40,
        total_lines=40,
        offset=32_000,
        total_bytes=40_000,
    )


async def test_read_file_pages_through_a_large_file_by_bytes(ws: Workspace) -> None:
    add_file(ws, AddFile(path="/big.txt", content=BIG))
    first = await call(ws, "read_file", {"path": "/big.txt", "offset": 0})
    assert (first["length"], first["truncated"], first["next_offset"], first["next_start_line"]) == (
        32_000,
        True,
        32_000,
        None,
    )
    second = await call(ws, "read_file", {"path": "/big.txt", "offset": 32_000})
    assert (second["length"], second["truncated"], second["start_line"], second["end_line"]) == (
        8_000,
        False,
        33,
        40,
    )


async def test_read_file_refuses_a_single_line_longer_than_one_read(ws: Workspace) -> None:
    add_file(ws, AddFile(path="/wide.txt", content="short\n" + "y" * 40_000 + "\n"))
    assert await call(ws, "read_file", {"path": "/wide.txt", "start_line": 2}) == error(
        "read_file",
        "line 2 of '/wide.txt' alone is 40001 bytes, more than the 32000 one read returns; "
        "read it in parts with offset=6 and length=32000",
    )
    cut = await call(ws, "read_file", {"path": "/wide.txt"})
    assert (cut["content"], cut["truncated"], cut["next_start_line"]) == ("short\n", True, 2)


async def test_read_file_explains_bad_ranges(ws: Workspace) -> None:
    path = "/docs/readme.md"
    assert await call(ws, "read_file", {"path": path, "start_line": 1, "offset": 0}) == error(
        "read_file", "give either start_line/end_line or offset/length, not both"
    )
    assert await call(ws, "read_file", {"path": path, "start_line": 5}) == error(
        "read_file", "start_line 5 is past the end of '/docs/readme.md', which has 3 lines"
    )
    assert await call(ws, "read_file", {"path": path, "start_line": 3, "end_line": 2}) == error(
        "read_file", "end_line 2 is before start_line 3; end_line must be >= start_line"
    )
    assert await call(ws, "read_file", {"path": path, "offset": 38}) == error(
        "read_file", "offset 38 is past the end of '/docs/readme.md', which has 37 bytes"
    )
    kind, text = await call(ws, "read_file", {"path": path, "length": 32_001})
    assert kind == "error" and "length" in text and "less than or equal to 32000" in text
    kind, text = await call(ws, "read_file", {"path": path, "start_line": 0})
    assert kind == "error" and "start_line" in text and "greater than or equal to 1" in text


async def test_read_file_explains_a_directory_or_a_missing_file(ws: Workspace) -> None:
    assert await call(ws, "read_file", {"path": "/docs"}) == error(
        "read_file", "'/docs' is a directory, not a file; list_directory shows what it holds"
    )
    assert await call(ws, "read_file", {"path": "/docs/README.md"}) == error(
        "read_file",
        "no file or directory at '/docs/README.md'; paths are case-sensitive: did you mean '/docs/readme.md'?",
    )
