"""Files world operations, path normalization and the demo files."""

import csv
import io
import re
from typing import Any

import pytest

from coworkenv.servers import apply_world_operation, create_workspace
from coworkenv.servers.files.paths import MAX_NAME_LENGTH, MAX_PATH_LENGTH, FileTreeError, normalize_path
from coworkenv.servers.render import northwind_workspace
from coworkenv.state import Workspace
from coworkenv.worlds import northwind
from tests.conftest import START
from tests.servers.test_files import ALICE, BOB, NOW, README, T0, T1, ws

__all__ = ["ws"]


def node(ws: Workspace, path: str) -> dict[str, Any] | None:
    rows = ws.rows("files_nodes", "path = ?", [path])
    return rows[0] if rows else None


def apply(ws: Workspace, name: str, params: dict[str, Any]) -> Any:
    return apply_world_operation(ws, "files", name, params)


# -- normalize_path ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("/", "/"),
        ("", None),
        (".", "/"),
        ("//shared///reports/", "/shared/reports"),
        ("shared/./reports/../q1.md", "/shared/q1.md"),
        ("  /a/b  ", "/a/b"),
        ("/a/../..", None),
        ("/a/...", "/a/..."),
        ("/a b/c", "/a b/c"),
        ("/" + "n" * MAX_NAME_LENGTH, "/" + "n" * MAX_NAME_LENGTH),
        ("/n" * (MAX_PATH_LENGTH // 2), "/n" * (MAX_PATH_LENGTH // 2)),
        ("/n" * (MAX_PATH_LENGTH // 2) + "/x", None),
    ],
)
def test_normalize_path_gives_one_canonical_absolute_form(raw: str, normalized: str | None) -> None:
    if normalized is None:
        with pytest.raises(FileTreeError):
            normalize_path(raw)
    else:
        assert normalize_path(raw) == normalized


def test_file_tree_errors_are_tool_errors_and_value_errors() -> None:
    from coworkenv.servers import ToolError

    with pytest.raises(ToolError):
        normalize_path("/../x")
    with pytest.raises(ValueError, match="climbs above the root"):
        normalize_path("/../x")


# -- add_file and add_directory ----------------------------------------------------------------


def test_add_file_creates_parents_with_the_given_times_and_author(ws: Workspace) -> None:
    result = apply(
        ws,
        "add_file",
        {"path": "/x/y/z.md", "content": "hi\n", "created_at": "2026-01-05T10:00:00Z", "modified_by": BOB},
    )
    assert result == {"path": "/x/y/z.md", "size": 3}
    assert node(ws, "/x/y/z.md") == {
        "path": "/x/y/z.md",
        "parent": "/x/y",
        "name": "z.md",
        "kind": "file",
        "content": "hi\n",
        "size": 3,
        "created_at": "2026-01-05T10:00:00+00:00",
        "modified_at": "2026-01-05T10:00:00+00:00",
        "modified_by": BOB,
    }
    assert (node(ws, "/x")["kind"], node(ws, "/x")["created_at"], node(ws, "/x")["modified_by"]) == (
        "dir",
        "2026-01-05T10:00:00+00:00",
        BOB,
    )
    last = ws.audit.entries()[-1]
    assert (last.actor, last.tool, last.is_error) == ("event", "add_file", False)


def test_add_file_defaults_to_the_clock_and_no_author() -> None:
    ws = create_workspace(["files"], clock_start=START)
    apply(ws, "add_file", {"path": "/a.txt"})
    assert node(ws, "/a.txt") == {
        "path": "/a.txt",
        "parent": "/",
        "name": "a.txt",
        "kind": "file",
        "content": "",
        "size": 0,
        "created_at": NOW,
        "modified_at": NOW,
        "modified_by": None,
    }


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"path": "/docs/readme.md"},
            "'/docs/readme.md' already exists; edit_file_by_colleague changes an existing file",
        ),
        ({"path": "/docs"}, "'/docs' already exists; edit_file_by_colleague changes an existing file"),
        ({"path": "/top.csv/x"}, "'/top.csv' is a file, not a directory, so '/top.csv/x' cannot be created"),
        ({"path": "/x", "created_at": "yesterday"}, "created_at 'yesterday' is not an ISO 8601 time"),
        ({"path": "/x", "modified_at": "2026-13-01"}, "modified_at '2026-13-01' is not an ISO 8601 time"),
        (
            {"path": "/x", "created_at": T1, "modified_at": T0},
            f"modified_at {T0} is before created_at {T1}",
        ),
        ({"path": "/x", "modified_by": "not an email"}, "String should match pattern"),
        ({"path": "/../x"}, "climbs above the root"),
        ({"path": "/x", "content": "a\x00"}, "only text files are supported"),
    ],
)
def test_add_file_rejects_bad_input_and_changes_nothing(ws: Workspace, params: dict, message: str) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError, match=re.escape(message)):
        apply(ws, "add_file", params)
    assert ws.content_hash() == before
    assert ws.audit.entries()[-1].is_error


def test_add_directory_creates_parents_and_keeps_an_existing_directory(ws: Workspace) -> None:
    assert apply(ws, "add_directory", {"path": "/p/q", "created_at": T0}) == {
        "path": "/p/q",
        "created": ["/p", "/p/q"],
    }
    assert node(ws, "/p/q")["created_at"] == T0
    assert apply(ws, "add_directory", {"path": "/docs"}) == {"path": "/docs", "created": []}
    with pytest.raises(ValueError, match=re.escape("'/top.csv' already exists and is a file")):
        apply(ws, "add_directory", {"path": "/top.csv"})


# -- colleagues' edits -------------------------------------------------------------------------


def test_edit_file_by_colleague_replaces_content_now_as_the_colleague(ws: Workspace) -> None:
    result = apply(
        ws, "edit_file_by_colleague", {"path": "/docs/readme.md", "colleague": BOB, "content": "v2\n"}
    )
    assert result == {"path": "/docs/readme.md", "size": 3, "modified_by": BOB}
    row = node(ws, "/docs/readme.md")
    assert (row["content"], row["created_at"], row["modified_at"], row["modified_by"]) == (
        "v2\n",
        T0,
        NOW,
        BOB,
    )


def test_edit_file_by_colleague_appends(ws: Workspace) -> None:
    apply(
        ws,
        "edit_file_by_colleague",
        {"path": "docs/readme.md", "colleague": BOB, "content": "more\n", "mode": "append"},
    )
    assert node(ws, "/docs/readme.md")["content"] == README + "more\n"
    assert node(ws, "/docs/readme.md")["size"] == 42


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"path": "/docs/gone.md", "colleague": BOB, "content": "x"},
            "no file or directory at '/docs/gone.md'",
        ),
        ({"path": "/docs", "colleague": BOB, "content": "x"}, "'/docs' is a directory, not a file"),
        ({"path": "/docs/readme.md", "colleague": "bob", "content": "x"}, "String should match pattern"),
        (
            {"path": "/docs/readme.md", "colleague": BOB, "content": "x", "mode": "merge"},
            "Input should be 'replace'",
        ),
        ({"path": "/docs/readme.md", "colleague": BOB, "content": "x" * 1_000_001}, "at most 1000000 bytes"),
    ],
)
def test_edit_file_by_colleague_rejects_bad_input(ws: Workspace, params: dict, message: str) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError, match=re.escape(message)):
        apply(ws, "edit_file_by_colleague", params)
    assert ws.content_hash() == before


def test_delete_file_by_colleague_deletes_one_file_only(ws: Workspace) -> None:
    assert apply(ws, "delete_file_by_colleague", {"path": "/top.csv", "colleague": ALICE}) == {
        "path": "/top.csv",
        "deleted_by": ALICE,
    }
    assert node(ws, "/top.csv") is None
    with pytest.raises(ValueError, match="'/docs/sub' is a directory, not a file"):
        apply(ws, "delete_file_by_colleague", {"path": "/docs/sub", "colleague": ALICE})
    with pytest.raises(ValueError, match=re.escape("no file or directory at '/top.csv'")):
        apply(ws, "delete_file_by_colleague", {"path": "/top.csv", "colleague": ALICE})
    assert node(ws, "/docs/sub/deep.md") is not None


# -- the demo files ----------------------------------------------------------------------------

DEMO = northwind_workspace(seed=0, services=("directory", "files"))


def test_the_demo_files_are_the_same_for_the_same_seed_and_differ_for_another() -> None:
    again = northwind_workspace(seed=0, services=("directory", "files"))
    other = northwind_workspace(seed=1, services=("directory", "files"))
    assert again.content_hash() == DEMO.content_hash()
    assert other.content_hash() != DEMO.content_hash()
    assert [r["path"] for r in other.rows("files_nodes", "1 ORDER BY path")] == [
        r["path"] for r in DEMO.rows("files_nodes", "1 ORDER BY path")
    ]


def test_the_demo_has_40_files_in_a_whole_tree_with_one_empty_directory() -> None:
    rows = {r["path"]: r for r in DEMO.rows("files_nodes")}
    files = sorted(p for p, r in rows.items() if r["kind"] == "file")
    dirs = sorted(p for p, r in rows.items() if r["kind"] == "dir")
    assert len(files) == 40
    assert len(dirs) == 23
    for path, r in rows.items():
        if path != "/":
            assert rows[r["parent"]]["kind"] == "dir", path
            assert normalize_path(path) == path
    assert [d for d in dirs if not any(r["parent"] == d for r in rows.values())] == ["/shared/archive"]
    for expected in (
        "/shared/policies/travel-policy.md",
        "/shared/price-list-2026.csv",
        "/shared/onboarding/onboarding-checklist.md",
        "/shared/reports/2025-q1-figures.csv",
        "/teams/support/meeting-notes/2026-02-23-weekly.md",
        "/projects/customer-portal/plan.md",
    ):
        assert expected in files


def test_the_demo_files_were_written_by_staff_before_the_clock_start() -> None:
    company = northwind(0)
    staff = {p.email for p in company.staff}
    for r in DEMO.rows("files_nodes", "path <> '/'"):
        assert r["created_at"] <= r["modified_at"] < NOW, r["path"]
        assert r["modified_by"] in staff, r["path"]
        if r["kind"] == "file":
            assert r["size"] == len(r["content"].encode()) > 0, r["path"]


def test_the_demo_annual_report_adds_up_the_quarterly_figures() -> None:
    revenue = 0
    for q in (1, 2, 3, 4):
        text = node(DEMO, f"/shared/reports/2025-q{q}-figures.csv")["content"]
        rows = list(csv.DictReader(io.StringIO(text)))
        assert len(rows) == 3
        revenue += sum(int(r["revenue_eur"]) for r in rows)
    report = node(DEMO, "/shared/reports/2025-annual-report.md")["content"]
    total_row = next(line for line in report.splitlines() if line.startswith("| 2025 |"))
    assert total_row.split(" | ")[1] == str(revenue)


def test_the_demo_price_list_and_travel_policy_hold_numbers() -> None:
    prices = list(csv.DictReader(io.StringIO(node(DEMO, "/shared/price-list-2026.csv")["content"])))
    assert [p["sku"] for p in prices][:2] == ["NW-C100", "NW-C200"]
    assert all(float(p["price_eur"]) > 0 for p in prices)
    travel = node(DEMO, "/shared/policies/travel-policy.md")["content"]
    assert "Hotel: at most EUR " in travel and "per night" in travel
