"""Files tables: one virtual tree of directories and files, and the tool output models.

Every node is keyed by its normalized absolute path (`/shared/reports/q1.md`); other
services (mail attachments) refer to files by that path. A text file's `content` is text;
a document's (a PDF, PNG or JPEG file) is its bytes, stored as a BLOB in the same column. The root "/" exists in every
workspace, created at a fixed time so that fresh workspaces hash the same.
"""

from typing import Literal

from pydantic import BaseModel, Field

from coworkenv.state import ServiceSchema, TableRules

ROOT_CREATED_AT = "1970-01-01T00:00:00+00:00"

SCHEMA = ServiceSchema(
    name="files",
    sql=f"""
CREATE TABLE files_nodes (
    path TEXT PRIMARY KEY,
    parent TEXT,
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('file', 'dir')),
    content TEXT,
    size INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    modified_at TEXT NOT NULL,
    modified_by TEXT,
    CHECK ((path = '/') = (parent IS NULL)),
    CHECK ((kind = 'file') = (content IS NOT NULL))
);
CREATE INDEX files_nodes_parent ON files_nodes(parent);
INSERT INTO files_nodes (path, parent, name, kind, content, size, created_at, modified_at, modified_by)
VALUES ('/', NULL, '/', 'dir', NULL, 0, '{ROOT_CREATED_AT}', '{ROOT_CREATED_AT}', NULL);
""",
    changes={
        "files_nodes": TableRules(
            match=("kind",),
            bookkeeping=("modified_at", "modified_by", "size"),
            # The path is the file's key; its folder and name are read off it.
            free=("parent", "name", "created_at"),
            free_text=("content",),
        ),
    },
)

Kind = Literal["file", "dir"]


class Entry(BaseModel):
    """One file or directory in a listing."""

    path: str
    name: str
    kind: Kind
    size: int = Field(
        description="Bytes of UTF-8 text, or of a document file (PDF, image); 0 for directories"
    )
    modified_at: str


class DirectoryListing(BaseModel):
    """The entries below a directory, in tree order. `total` counts every entry within the
    depth asked for; `truncated` is true when only the first `len(entries)` are shown."""

    path: str
    entries: list[Entry]
    total: int
    truncated: bool


class FileContent(BaseModel):
    """A part (or all) of a text file.

    `content` is lines `start_line`..`end_line` of `total_lines` (1-based, inclusive),
    which are bytes `offset`..`offset + length` of `total_bytes`. `truncated` is true when
    the size limit of one read cut the part short; then read on from `next_start_line`
    (line reads) or `next_offset` (byte reads).
    """

    path: str
    content: str
    start_line: int
    end_line: int
    total_lines: int
    offset: int
    length: int
    total_bytes: int
    truncated: bool
    next_start_line: int | None = None
    next_offset: int | None = None


class WriteResult(BaseModel):
    """A file after a write: `created` is true when the file did not exist before."""

    path: str
    created: bool
    size: int
    line_count: int
    modified_at: str


class DirectoryCreated(BaseModel):
    """The directory asked for, and every directory the call created (parents first);
    `created` is empty when it already existed."""

    path: str
    created: list[str]


class TransferResult(BaseModel):
    """A move or copy: `entries` counts the files and directories moved or copied (the
    source itself included); `replaced` is true when an existing file was overwritten."""

    source: str
    destination: str
    kind: Kind
    entries: int
    replaced: bool


class DeleteResult(BaseModel):
    """A deletion: `deleted` counts the files and directories removed (the path itself included)."""

    path: str
    kind: Kind
    deleted: int


class LineMatch(BaseModel):
    """One line that contains the searched text (long lines are cut around the match)."""

    line: int
    text: str


class SearchMatch(BaseModel):
    """A file or directory that matched. For content searches, `match_count` counts the
    matching lines and `lines` shows the first few of them."""

    path: str
    kind: Kind
    size: int
    modified_at: str
    match_count: int
    lines: list[LineMatch]


class SearchResult(BaseModel):
    """Matches in tree order; `total` counts every match, `truncated` says some are not shown."""

    directory: str
    total: int
    truncated: bool
    matches: list[SearchMatch]


class FileInfo(BaseModel):
    """Everything about one file or directory except its content."""

    path: str
    name: str
    kind: Kind
    size: int
    line_count: int | None = Field(description="Lines of a text file; null for a directory or a document")
    entry_count: int | None = Field(description="Direct entries of a directory; null for a file")
    created_at: str
    modified_at: str
    modified_by: str | None = Field(description="Email of whoever last changed it")


DocumentType = Literal["application/pdf", "image/png", "image/jpeg"]


class DocumentView(BaseModel):
    """What open_document showed: pages `first_page`..`last_page` of `pages` (an image is one
    page). The images themselves (and a PDF's text layer) are in the result's content."""

    path: str
    mime_type: DocumentType
    pages: int
    first_page: int
    last_page: int
    images: int = Field(description="Images in the content, one per page shown")
    next_first_page: int | None = Field(description="Where to go on in a longer PDF; null when all was shown")


class ExtractedText(BaseModel):
    """Text taken from a document. method 'text_layer': a PDF's own text, exactly; 'ocr': read
    off the image's pixels, so it can hold misread characters (0/O, 1/l, 5/S...)."""

    path: str
    mime_type: DocumentType
    method: Literal["text_layer", "ocr"]
    pages: int
    first_page: int
    last_page: int
    text: str
    truncated: bool = Field(
        description="True when the text was cut at 32,000 characters: ask for fewer pages"
    )
