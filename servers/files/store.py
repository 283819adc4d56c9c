"""The file tree in the workspace database: look up, write, move, copy and delete nodes.

Tools and world operations both go through these functions, so every write keeps the
tree whole (every node's parent exists and is a directory). Every check runs before the
first write; a failed call raises `ServiceError` and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from coworkenv.state import Workspace

from ..toolkit import ServiceError
from .paths import (
    ROOT,
    child_prefix,
    is_inside,
    is_valid_unicode,
    name_of,
    parent_of,
    tree_order,
)
from .schema import Kind

TABLE = "files_nodes"
MAX_FILE_BYTES = 1_000_000
"""The largest file, in bytes of UTF-8 (1 MB)."""
MAX_DOCUMENT_BYTES = 5_000_000
"""The largest document (PDF or image) file, in bytes (5 MB)."""

_META = "path, parent, name, kind, size, created_at, modified_at, modified_by, typeof(content) = 'blob'"


@dataclass(frozen=True)
class Node:
    """One row of `files_nodes`. `content` is None for directories, and for files when
    it was not asked for; a document's content is its bytes (a PDF, PNG or JPEG file),
    a text file's is text."""

    path: str
    parent: str | None
    name: str
    kind: Kind
    size: int
    created_at: str
    modified_at: str
    modified_by: str | None
    is_document: bool
    content: str | bytes | None = None

    @property
    def is_dir(self) -> bool:
        return self.kind == "dir"

    @property
    def text(self) -> str:
        """A text file's content ('' for a document, a directory or content not asked for)."""
        return self.content if isinstance(self.content, str) else ""


def _node(row: tuple[Any, ...]) -> Node:
    """A node from a row of `_META` columns (and the content, when read)."""
    path, parent, name, kind, size, created_at, modified_at, modified_by, is_document, *content = row
    return Node(
        path, parent, name, kind, size, created_at, modified_at, modified_by, bool(is_document), *content
    )


def count_lines(text: str) -> int:
    """Lines of a text: newline characters, plus one for a last line without one."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def check_content(text: str) -> int:
    """The size in bytes of a valid file content; raises for binary or oversized content."""
    if "\x00" in text:
        raise ServiceError("the content contains NUL characters; only text files are supported")
    if not is_valid_unicode(text):
        raise ServiceError("the content is not valid Unicode text; only text files are supported")
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise ServiceError(
            f"the file would be {size} bytes; a file may hold at most {MAX_FILE_BYTES} bytes (1 MB)"
        )
    return size


# -- reading ---------------------------------------------------------------------------------


def get_node(ws: Workspace, path: str, *, content: bool = False) -> Node | None:
    """The node at a normalized path, or None."""
    cols = _META + (", content" if content else "")
    row = ws.conn.execute(f"SELECT {cols} FROM {TABLE} WHERE path = ?", (path,)).fetchone()
    return _node(row) if row else None


def require_node(ws: Workspace, path: str, *, content: bool = False) -> Node:
    """The node at `path`; a miss names the closest directory that exists."""
    node = get_node(ws, path, content=content)
    if node is None:
        raise ServiceError(_missing(ws, path))
    return node


def require_file(ws: Workspace, path: str) -> Node:
    """The file at `path`, with its content."""
    node = require_node(ws, path, content=True)
    if node.is_dir:
        raise ServiceError(f"{path!r} is a directory, not a file; list_directory shows what it holds")
    return node


def require_dir(ws: Workspace, path: str) -> Node:
    """The directory at `path`."""
    node = require_node(ws, path)
    if not node.is_dir:
        raise ServiceError(f"{path!r} is a file, not a directory; use read_file or get_file_info on it")
    return node


def descendants(ws: Workspace, path: str, *, content: bool = False) -> list[Node]:
    """Every node strictly below the directory `path`, in tree order."""
    prefix = child_prefix(path)
    cols = _META + (", content" if content else "")
    rows = ws.conn.execute(
        f"SELECT {cols} FROM {TABLE} WHERE path <> ? AND substr(path, 1, ?) = ?", (path, len(prefix), prefix)
    ).fetchall()
    return sorted((_node(r) for r in rows), key=lambda n: tree_order(n.path))


def children(ws: Workspace, path: str) -> list[Node]:
    """The nodes directly inside the directory `path`, by name."""
    rows = ws.conn.execute(f"SELECT {_META} FROM {TABLE} WHERE parent = ? ORDER BY name", (path,)).fetchall()
    return [_node(r) for r in rows]


def child_count(ws: Workspace, path: str) -> int:
    """How many nodes are directly inside the directory `path`."""
    return int(ws.conn.execute(f"SELECT COUNT(*) FROM {TABLE} WHERE parent = ?", (path,)).fetchone()[0])


def _missing(ws: Workspace, path: str) -> str:
    message = f"no file or directory at {path!r}"
    same = ws.conn.execute(
        f"SELECT path FROM {TABLE} WHERE lower(path) = lower(?) ORDER BY path LIMIT 1", (path,)
    ).fetchone()
    if same:
        return f"{message}; paths are case-sensitive: did you mean {same[0]!r}?"
    ancestor = parent_of(path)
    while ancestor is not None and get_node(ws, ancestor) is None:
        ancestor = parent_of(ancestor)
    return f"{message}; list_directory on {ancestor!r} shows what is there"


# -- writing ---------------------------------------------------------------------------------


def _insert(ws: Workspace, node: Node) -> None:
    ws.conn.execute(
        f"INSERT INTO {TABLE} (path, parent, name, kind, content, size, created_at, modified_at, modified_by) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            node.path,
            node.parent,
            node.name,
            node.kind,
            node.content,
            node.size,
            node.created_at,
            node.modified_at,
            node.modified_by,
        ),
    )


def _new(
    path: str, kind: Kind, at: str, by: str | None, content: str | bytes | None = None, size: int = 0
) -> Node:
    return Node(
        path, parent_of(path), name_of(path), kind, size, at, at, by, isinstance(content, bytes), content
    )


def _missing_parents(ws: Workspace, path: str, *, create: bool, hint: str) -> list[str]:
    """The directories above `path` that do not exist yet (topmost first).

    Raises when one of the ancestors is a file, or when a parent is missing and `create`
    is false (the message ends with `hint`, what to do about it).
    """
    missing: list[str] = []
    ancestor = parent_of(path)
    while ancestor is not None:
        node = get_node(ws, ancestor)
        if node is not None:
            if not node.is_dir:
                raise ServiceError(f"{ancestor!r} is a file, not a directory, so {path!r} cannot be created")
            break
        missing.append(ancestor)
        ancestor = parent_of(ancestor)
    if missing and not create:
        raise ServiceError(f"the parent directory {parent_of(path)!r} does not exist; {hint}")
    return missing[::-1]


def make_directories(
    ws: Workspace, path: str, *, parents: bool, exist_ok: bool, at: str, by: str | None
) -> list[str]:
    """Create the directory `path` (and missing parents when `parents`); the paths created."""
    node = get_node(ws, path)
    if node is not None:
        if not node.is_dir:
            raise ServiceError(
                f"{path!r} already exists and is a file; choose another name for the directory"
            )
        if exist_ok:
            return []
        raise ServiceError(f"the directory {path!r} already exists; pass exist_ok=true to accept that")
    created = [*_missing_parents(ws, path, create=parents, hint="pass parents=true to create it too"), path]
    for directory in created:
        _insert(ws, _new(directory, "dir", at, by))
    return created


def write_file(
    ws: Workspace,
    path: str,
    text: str,
    *,
    mode: Literal["create", "overwrite", "append"],
    create_parents: bool,
    at: str,
    by: str | None,
) -> tuple[Node, bool]:
    """Create, replace or extend the file at `path`; the file after the write and whether it is new."""
    node = get_node(ws, path, content=True)
    if node is not None and node.is_dir:
        raise ServiceError(
            f"{path!r} is a directory; write to a file path inside it, such as {child_prefix(path) + 'notes.md'!r}"
        )
    if node is not None and mode == "create":
        raise ServiceError(
            f"{path!r} already exists; use mode='overwrite' to replace it or mode='append' to add to it"
        )
    if node is not None and node.is_document and mode == "append":
        raise ServiceError(
            f"{path!r} is a document (PDF or image), not a text file; text cannot be appended to it"
        )
    new_text = node.text + text if node is not None and mode == "append" else text
    size = check_content(new_text)
    if node is None:
        hint = "create it with create_directory, or pass create_parents=true"
        for directory in _missing_parents(ws, path, create=create_parents, hint=hint):
            _insert(ws, _new(directory, "dir", at, by))
        created = _new(path, "file", at, by, new_text, size)
        _insert(ws, created)
        return created, True
    ws.conn.execute(
        f"UPDATE {TABLE} SET content = ?, size = ?, modified_at = ?, modified_by = ? WHERE path = ?",
        (new_text, size, at, by, path),
    )
    return replace(node, content=new_text, size=size, modified_at=at, modified_by=by), False


def add_document(ws: Workspace, path: str, data: bytes, *, at: str, by: str | None) -> Node:
    """Create the document file (a PDF, PNG or JPEG) at `path`, with missing parent directories."""
    if get_node(ws, path) is not None:
        raise ServiceError(f"{path!r} already exists; choose another path for the document")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ServiceError(
            f"the document is {len(data)} bytes; a document may hold at most {MAX_DOCUMENT_BYTES} bytes (5 MB)"
        )
    for directory in _missing_parents(ws, path, create=True, hint=""):
        _insert(ws, _new(directory, "dir", at, by))
    created = _new(path, "file", at, by, data, len(data))
    _insert(ws, created)
    return created


def require_document(ws: Workspace, path: str) -> Node:
    """The document (PDF or image) at `path`, with its bytes."""
    node = require_file(ws, path)
    if not isinstance(node.content, bytes):
        raise ServiceError(f"{path!r} is a text file, not a document or image; read it with read_file")
    return node


def _check_transfer(
    ws: Workspace, source: str, destination: str, *, overwrite: bool, verb: str
) -> tuple[Node, bool]:
    """The source node and whether the destination is an existing file to replace."""
    if source == ROOT:
        raise ServiceError(f"cannot {verb} the root directory '/'")
    node = require_node(ws, source, content=True)
    if destination == source:
        raise ServiceError(f"the source and the destination are the same path {source!r}")
    if node.is_dir and is_inside(destination, source):
        raise ServiceError(
            f"cannot {verb} the directory {source!r} into itself ({destination!r} is inside it)"
        )
    target = get_node(ws, destination)
    if target is not None:
        if target.is_dir:
            raise ServiceError(
                f"{destination!r} already exists and is a directory; give the full new path, "
                f"such as {child_prefix(destination) + node.name!r}"
            )
        if node.is_dir:
            raise ServiceError(
                f"{destination!r} already exists and is a file; a directory cannot replace a file, "
                "so choose another destination"
            )
        if not overwrite:
            raise ServiceError(
                f"{destination!r} already exists; pass overwrite=true to replace it, or choose another destination"
            )
    _missing_parents(ws, destination, create=False, hint="create it with create_directory first")
    return node, target is not None


def move(ws: Workspace, source: str, destination: str, *, overwrite: bool) -> tuple[Node, int, bool]:
    """Rename a file or a directory with everything in it; (source node, entries moved, replaced).

    Times and authors stay as they are: a move changes where a file is, not what it holds.
    """
    node, replaced = _check_transfer(ws, source, destination, overwrite=overwrite, verb="move")
    if replaced:
        ws.conn.execute(f"DELETE FROM {TABLE} WHERE path = ?", (destination,))
    moving = [node, *descendants(ws, source)] if node.is_dir else [node]
    for n in moving:
        new_path = destination + n.path[len(source) :]
        ws.conn.execute(
            f"UPDATE {TABLE} SET path = ?, parent = ?, name = ? WHERE path = ?",
            (new_path, parent_of(new_path), name_of(new_path), n.path),
        )
    return node, len(moving), replaced


def copy(
    ws: Workspace, source: str, destination: str, *, overwrite: bool, at: str, by: str | None
) -> tuple[Node, int, bool]:
    """Copy a file or a directory with everything in it; (source node, entries copied, replaced).

    The copies are new: created and modified now, by `by`.
    """
    node, replaced = _check_transfer(ws, source, destination, overwrite=overwrite, verb="copy")
    if replaced:
        ws.conn.execute(f"DELETE FROM {TABLE} WHERE path = ?", (destination,))
    copying = [node, *descendants(ws, source, content=True)] if node.is_dir else [node]
    for n in copying:
        _insert(ws, _new(destination + n.path[len(source) :], n.kind, at, by, n.content, n.size))
    return node, len(copying), replaced


def delete(ws: Workspace, path: str, *, recursive: bool) -> tuple[Node, int]:
    """Delete a file, or a directory (a non-empty one only when `recursive`); (node, entries deleted)."""
    if path == ROOT:
        raise ServiceError("cannot delete the root directory '/'")
    node = require_node(ws, path)
    below = descendants(ws, path) if node.is_dir else []
    if below and not recursive:
        raise ServiceError(
            f"the directory {path!r} is not empty ({len(below)} entries below it); "
            "pass recursive=true to delete it with everything in it"
        )
    for n in [*below, node]:
        ws.conn.execute(f"DELETE FROM {TABLE} WHERE path = ?", (n.path,))
    return node, len(below) + 1
