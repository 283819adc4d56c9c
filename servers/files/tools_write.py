"""Files tools that change the tree: write files, create directories, move, copy, delete.

Every change is recorded as made now (the workspace clock) by the current user.
"""

from typing import Annotated, Literal

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ToolList, current_user, workspace_of
from . import store
from .paths import normalize_path
from .schema import DeleteResult, DirectoryCreated, TransferResult, WriteResult

TOOLS = ToolList()


@TOOLS.tool(read_only=False, destructive=True)
async def write_file(
    ctx: Context,
    path: Annotated[str, Field(description="Absolute path of the file, e.g. /shared/notes/plan.md")],
    content: Annotated[str, Field(description="The text to write (UTF-8 text, at most 1 MB in all)")],
    mode: Annotated[
        Literal["create", "overwrite", "append"],
        Field(description="create: a new file only; overwrite: create or replace; append: add to the end"),
    ] = "create",
    create_parents: Annotated[bool, Field(description="Create missing parent directories too")] = False,
) -> WriteResult:
    """Write a text file.

    mode='create' (the default) makes a new file and fails if the path exists;
    'overwrite' replaces the whole content (or creates the file); 'append' adds the text
    at the end (or creates the file), so include a leading newline if you need one. The
    parent directory must exist unless create_parents=true. Returns the new size and
    line count.
    """
    ws = workspace_of(ctx)
    node, created = store.write_file(
        ws,
        normalize_path(path),
        content,
        mode=mode,
        create_parents=create_parents,
        at=ws.clock.now_text(),
        by=current_user(ws),
    )
    return WriteResult(
        path=node.path,
        created=created,
        size=node.size,
        line_count=store.count_lines(node.text),
        modified_at=node.modified_at,
    )


@TOOLS.tool(read_only=False)
async def create_directory(
    ctx: Context,
    path: Annotated[str, Field(description="Absolute path of the new directory, e.g. /projects/atlas/notes")],
    parents: Annotated[bool, Field(description="Also create missing parent directories")] = False,
    exist_ok: Annotated[
        bool, Field(description="Succeed without change if the directory already exists")
    ] = False,
) -> DirectoryCreated:
    """Create a directory. Its parent must exist unless parents=true. By default an
    existing directory is an error; with exist_ok=true the call succeeds and `created`
    is empty."""
    ws = workspace_of(ctx)
    directory = normalize_path(path)
    created = store.make_directories(
        ws, directory, parents=parents, exist_ok=exist_ok, at=ws.clock.now_text(), by=current_user(ws)
    )
    return DirectoryCreated(path=directory, created=created)


@TOOLS.tool(read_only=False, destructive=True)
async def move_path(
    ctx: Context,
    source: Annotated[str, Field(description="The file or directory to move")],
    destination: Annotated[
        str, Field(description="Its full new path (not just the folder), e.g. /archive/2025/q4.md")
    ],
    overwrite: Annotated[bool, Field(description="Replace an existing file at the destination")] = False,
) -> TransferResult:
    """Move or rename a file, or a directory with everything in it.

    `destination` is the exact new path: to move /a/x.md into /b, pass /b/x.md. Its
    parent directory must exist. An existing file at the destination is only replaced
    with overwrite=true; an existing directory is never replaced or merged. Modified
    times and authors are kept.
    """
    ws = workspace_of(ctx)
    src, dst = normalize_path(source), normalize_path(destination)
    node, entries, replaced = store.move(ws, src, dst, overwrite=overwrite)
    return TransferResult(source=src, destination=dst, kind=node.kind, entries=entries, replaced=replaced)


@TOOLS.tool(read_only=False, destructive=True)
async def copy_path(
    ctx: Context,
    source: Annotated[str, Field(description="The file or directory to copy")],
    destination: Annotated[str, Field(description="The full path of the copy, e.g. /shared/q4-draft.md")],
    overwrite: Annotated[bool, Field(description="Replace an existing file at the destination")] = False,
) -> TransferResult:
    """Copy a file, or a directory with everything in it, to a new path.

    `destination` is the exact path of the copy, and its parent directory must exist.
    An existing file there is only replaced with overwrite=true; an existing directory is
    never replaced or merged. The copies count as created now by you.
    """
    ws = workspace_of(ctx)
    src, dst = normalize_path(source), normalize_path(destination)
    node, entries, replaced = store.copy(
        ws, src, dst, overwrite=overwrite, at=ws.clock.now_text(), by=current_user(ws)
    )
    return TransferResult(source=src, destination=dst, kind=node.kind, entries=entries, replaced=replaced)


@TOOLS.tool(read_only=False, destructive=True)
async def delete_path(
    ctx: Context,
    path: Annotated[str, Field(description="The file or directory to delete")],
    recursive: Annotated[
        bool, Field(description="Required to delete a directory that is not empty, with all it holds")
    ] = False,
) -> DeleteResult:
    """Delete a file or a directory. There is no undo and no trash.

    A directory that holds anything is only deleted with recursive=true, together with
    everything inside it. The root '/' cannot be deleted.
    """
    ws = workspace_of(ctx)
    node, deleted = store.delete(ws, normalize_path(path), recursive=recursive)
    return DeleteResult(path=node.path, kind=node.kind, deleted=deleted)
