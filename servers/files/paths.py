"""Paths of the virtual file tree: normalization and limits.

Pure functions over strings; nothing here touches the database (or the host file system).
"""

from __future__ import annotations

from ..toolkit import ServiceError

ROOT = "/"
MAX_PATH_LENGTH = 1024
"""Characters in a normalized path."""
MAX_NAME_LENGTH = 255
"""Characters in one name (a path component)."""


def normalize_path(path: str) -> str:
    """The canonical absolute form of `path`: "/" or "/a/b", no "//", "." or "..".

    A relative path is taken relative to the root. Raises `ServiceError` for an empty
    path, a control character (NUL, newline, ...), text that is not valid Unicode, a
    blank name or one with surrounding spaces, a ".." that climbs above the root, or a
    path or name over the length limits.
    """
    text = path.strip()
    if not text:
        raise ServiceError(
            "the path is empty; give an absolute path such as '/shared/notes.md' ('/' is the root)"
        )
    bad = next((c for c in text if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise ServiceError(
            f"path {path!r} contains the control character {bad!r}; paths may only hold printable characters"
        )
    if not is_valid_unicode(text):
        raise ServiceError(f"path {path!r} is not valid Unicode text")
    parts: list[str] = []
    for name in text.split("/"):
        if name in ("", "."):
            continue
        if name == "..":
            if not parts:
                raise ServiceError(
                    f"path {path!r} climbs above the root '/'; paths must stay inside the file tree"
                )
            parts.pop()
            continue
        if not name.strip():
            raise ServiceError(f"path {path!r} contains an empty name; every name needs a visible character")
        if name != name.strip():
            raise ServiceError(
                f"name {name!r} in path {path!r} starts or ends with a space; remove the spaces"
            )
        if len(name) > MAX_NAME_LENGTH:
            raise ServiceError(
                f"name {name[:40]!r}... is {len(name)} characters long; a name may have at most {MAX_NAME_LENGTH}"
            )
        parts.append(name)
    normalized = ROOT + "/".join(parts)
    if len(normalized) > MAX_PATH_LENGTH:
        raise ServiceError(
            f"path {normalized[:40]!r}... is {len(normalized)} characters long; "
            f"a path may have at most {MAX_PATH_LENGTH}"
        )
    return normalized


def is_valid_unicode(text: str) -> bool:
    """False for text with lone surrogates, which cannot be stored as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parent_of(path: str) -> str | None:
    """The parent of a normalized path; None for the root."""
    if path == ROOT:
        return None
    head = path.rsplit("/", 1)[0]
    return head or ROOT


def name_of(path: str) -> str:
    """The last name of a normalized path ("/" for the root)."""
    return ROOT if path == ROOT else path.rsplit("/", 1)[1]


def child_prefix(path: str) -> str:
    """The prefix every path below the directory `path` starts with."""
    return ROOT if path == ROOT else path + "/"


def is_inside(path: str, ancestor: str) -> bool:
    """True when `path` lies strictly below the directory `ancestor`."""
    return path != ancestor and path.startswith(child_prefix(ancestor))


def join(directory: str, name: str) -> str:
    """The path of `name` inside the normalized directory `directory`."""
    return child_prefix(directory) + name


def tree_order(path: str) -> tuple[str, ...]:
    """A sort key that lists a directory right before its contents ("/a", "/a/b", "/a-c")."""
    return tuple(path.split("/"))
