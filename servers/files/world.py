"""Files world operations: seed files and directories, and colleagues changing files
between turns. Bad input raises `ServiceError` (a `ValueError`) and changes nothing."""

from typing import Any, Literal

from pydantic import BaseModel, Field

from coworkenv.state import Workspace, format_time, parse_time

from ..toolkit import ServiceError, WorldOperations
from . import store
from .evidence.specs import DocumentSpec
from .paths import normalize_path

WORLD = WorldOperations("files")

EMAIL = r"^[^@\s]+@[^@\s]+$"


class AddFile(BaseModel):
    path: str
    content: str = ""
    modified_by: str | None = Field(default=None, pattern=EMAIL)
    created_at: str | None = Field(default=None, description="ISO 8601; default: the workspace clock")
    modified_at: str | None = Field(default=None, description="ISO 8601; default: created_at")


class AddDocument(BaseModel):
    path: str = Field(
        description="Ends with .pdf for invoices and purchase orders, .jpg or .png as the image is"
    )
    document: DocumentSpec
    modified_by: str | None = Field(default=None, pattern=EMAIL)
    created_at: str | None = Field(default=None, description="ISO 8601; default: the workspace clock")


class AddExampleDocuments(BaseModel):
    folder: str = "/examples/documents"


class AddDirectory(BaseModel):
    path: str
    modified_by: str | None = Field(default=None, pattern=EMAIL)
    created_at: str | None = Field(default=None, description="ISO 8601; default: the workspace clock")


class EditFileByColleague(BaseModel):
    path: str
    colleague: str = Field(pattern=EMAIL, description="The colleague's email")
    content: str
    mode: Literal["replace", "append"] = "replace"


class DeleteFileByColleague(BaseModel):
    path: str
    colleague: str = Field(pattern=EMAIL, description="The colleague's email")


def _time(ws: Workspace, value: str | None, field: str) -> str:
    if value is None:
        return ws.clock.now_text()
    try:
        return format_time(parse_time(value))
    except ValueError:
        raise ServiceError(
            f"{field} {value!r} is not an ISO 8601 time such as 2026-03-02T09:00:00+00:00"
        ) from None


@WORLD.operation(AddFile)
def add_file(ws: Workspace, p: AddFile) -> dict[str, Any]:
    """A file appears (a seed), with any missing parent directories."""
    path = normalize_path(p.path)
    if store.get_node(ws, path) is not None:
        raise ServiceError(f"{path!r} already exists; edit_file_by_colleague changes an existing file")
    created_at = _time(ws, p.created_at, "created_at")
    modified_at = _time(ws, p.modified_at, "modified_at") if p.modified_at is not None else created_at
    if modified_at < created_at:
        raise ServiceError(f"modified_at {modified_at} is before created_at {created_at}")
    node, _ = store.write_file(
        ws, path, p.content, mode="create", create_parents=True, at=created_at, by=p.modified_by
    )
    if modified_at != created_at:
        ws.conn.execute(f"UPDATE {store.TABLE} SET modified_at = ? WHERE path = ?", (modified_at, path))
    return {"path": path, "size": node.size}


@WORLD.operation(AddDocument)
def add_document(ws: Workspace, p: AddDocument) -> dict[str, Any]:
    """A document appears (a seed or a colleague's upload): an invoice or purchase order PDF,
    a receipt photo, a chart, an error-dialog screenshot or a filled-in form, rendered from
    the facts in `document` (the same facts, the same bytes). Attach it to a mail by its path."""
    # Imported here: the PDF library takes a while to load, and most workspaces plant no document.
    from .evidence.render import EXTENSIONS, render

    path = normalize_path(p.path)
    created_at = _time(ws, p.created_at, "created_at")
    rendered = render(p.document, parse_time(created_at))
    endings = [e for m, e in EXTENSIONS.items() if m == rendered.mime_type]
    endings += [".jpeg"] if rendered.mime_type == "image/jpeg" else []
    if not path.lower().endswith(tuple(endings)):
        raise ServiceError(
            f"{path!r} does not end with {' or '.join(endings)}, as a {p.document.kind} "
            f"rendered as {rendered.mime_type} should"
        )
    node = store.add_document(ws, path, rendered.data, at=created_at, by=p.modified_by)
    return {"path": path, "size": node.size, "mime_type": rendered.mime_type}


@WORLD.operation(AddExampleDocuments)
def add_example_documents(ws: Workspace, p: AddExampleDocuments) -> dict[str, Any]:
    """One document of each kind appears in `folder` (`evidence.examples.EXAMPLES`): a demo
    of what documents look like through open_document and extract_text."""
    from .evidence.examples import EXAMPLES, file_name

    folder = normalize_path(p.folder)
    paths = []
    for kind, document in EXAMPLES.items():
        path = f"{folder.rstrip('/')}/{file_name(kind)}"
        add_document(ws, AddDocument.model_validate({"path": path, "document": document}))
        paths.append(path)
    return {"paths": paths}


@WORLD.operation(AddDirectory)
def add_directory(ws: Workspace, p: AddDirectory) -> dict[str, Any]:
    """A directory appears (a seed), with any missing parents; an existing one is kept."""
    path = normalize_path(p.path)
    at = _time(ws, p.created_at, "created_at")
    created = store.make_directories(ws, path, parents=True, exist_ok=True, at=at, by=p.modified_by)
    return {"path": path, "created": created}


@WORLD.operation(EditFileByColleague)
def edit_file_by_colleague(ws: Workspace, p: EditFileByColleague) -> dict[str, Any]:
    """A colleague replaces a file's content or appends to it, now."""
    path = normalize_path(p.path)
    store.require_file(ws, path)
    mode: Literal["overwrite", "append"] = "overwrite" if p.mode == "replace" else "append"
    node, _ = store.write_file(
        ws, path, p.content, mode=mode, create_parents=False, at=ws.clock.now_text(), by=p.colleague
    )
    return {"path": path, "size": node.size, "modified_by": p.colleague}


@WORLD.operation(DeleteFileByColleague)
def delete_file_by_colleague(ws: Workspace, p: DeleteFileByColleague) -> dict[str, Any]:
    """A colleague deletes a file (never a directory)."""
    path = normalize_path(p.path)
    store.require_file(ws, path)
    store.delete(ws, path, recursive=False)
    return {"path": path, "deleted_by": p.colleague}
