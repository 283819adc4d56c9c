"""Files tools that read: list directories, read files, see documents and read their text,
search, and describe a path."""

from fnmatch import fnmatchcase
from typing import Annotated, cast

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from ..toolkit import ServiceError, ToolList, workspace_of
from .evidence import delivery
from .pages import READ_LIMIT_BYTES, read_bytes, read_lines
from .paths import child_prefix, normalize_path
from .schema import (
    DirectoryListing,
    DocumentType,
    DocumentView,
    Entry,
    ExtractedText,
    FileContent,
    FileInfo,
    LineMatch,
    SearchMatch,
    SearchResult,
)
from .store import (
    Node,
    child_count,
    children,
    count_lines,
    descendants,
    require_dir,
    require_document,
    require_file,
    require_node,
)

TOOLS = ToolList()

MAX_LIST_ENTRIES = 500
#: The largest line number or byte offset accepted: the schema refuses what SQLite could not hold.
MAX_POSITION = 2**53
MAX_LINES_PER_FILE = 5
EXCERPT_CHARS = 200

PathArg = Annotated[str, Field(description="Absolute path such as /shared/reports/q1.md ('/' is the top)")]


def _entry(n: Node) -> Entry:
    return Entry(path=n.path, name=n.name, kind=n.kind, size=n.size, modified_at=n.modified_at)


@TOOLS.tool(read_only=True)
async def list_directory(
    ctx: Context,
    path: Annotated[str, Field(description="The directory to list, e.g. /shared ('/' is the top)")] = "/",
    recursive: Annotated[bool, Field(description="Also list everything inside subdirectories")] = False,
    max_depth: Annotated[
        int, Field(ge=1, le=10, description="With recursive: how many levels down (1 = direct entries only)")
    ] = 3,
) -> DirectoryListing:
    """List what a directory holds: each entry's path, name, kind ('file' or 'dir'), size in
    bytes and last modified time (ISO 8601, UTC).

    Start at '/' to see the top-level folders. Direct entries are sorted by name; with
    recursive=true every entry down to `max_depth` levels is listed in tree order (a
    directory right before its contents). At most 500 entries come back: when `truncated`
    is true, list a subdirectory or lower `max_depth`.
    """
    ws = workspace_of(ctx)
    directory = normalize_path(path)
    require_dir(ws, directory)
    if recursive:
        skip = len(child_prefix(directory))
        nodes = [n for n in descendants(ws, directory) if n.path[skip:].count("/") < max_depth]
    else:
        nodes = children(ws, directory)
    return DirectoryListing(
        path=directory,
        entries=[_entry(n) for n in nodes[:MAX_LIST_ENTRIES]],
        total=len(nodes),
        truncated=len(nodes) > MAX_LIST_ENTRIES,
    )


@TOOLS.tool(read_only=True)
async def read_file(
    ctx: Context,
    path: PathArg,
    start_line: Annotated[
        int | None, Field(ge=1, le=MAX_POSITION, description="First line to read (1-based)")
    ] = None,
    end_line: Annotated[
        int | None, Field(ge=1, le=MAX_POSITION, description="Last line to read (inclusive)")
    ] = None,
    offset: Annotated[
        int | None, Field(ge=0, le=MAX_POSITION, description="Byte offset to read from (instead of lines)")
    ] = None,
    length: Annotated[
        int | None, Field(ge=1, le=READ_LIMIT_BYTES, description="How many bytes to read from `offset`")
    ] = None,
) -> FileContent:
    """Read a text file: the whole file, a range of lines, or a range of bytes.

    With no range, reads from the first line. `start_line`/`end_line` (1-based,
    inclusive) read some lines; `offset`/`length` read some bytes of the UTF-8 content
    (widened to whole characters). Use one kind of range, not both. One read returns at
    most 32,000 bytes: the result gives `total_lines` and `total_bytes`, and when
    `truncated` is true, call again with `start_line=next_start_line` (or
    `offset=next_offset`) to read on.
    """
    ws = workspace_of(ctx)
    file_path = normalize_path(path)
    node = require_file(ws, file_path)
    if node.is_document:
        raise ServiceError(
            f"{file_path!r} is a document (PDF or image), not a text file: open_document shows it, "
            "extract_text gives its text"
        )
    text = node.text
    if offset is not None or length is not None:
        if start_line is not None or end_line is not None:
            raise ServiceError("give either start_line/end_line or offset/length, not both")
        return read_bytes(file_path, text, offset or 0, length)
    return read_lines(file_path, text, start_line or 1, end_line)


PageArg = Annotated[int, Field(ge=1, le=10_000, description="First page to show (1-based); images have one")]


@TOOLS.tool(read_only=True)
async def open_document(
    ctx: Context, path: PathArg, first_page: PageArg = 1
) -> Annotated[CallToolResult, DocumentView]:
    """See a document file: a PDF (invoice, purchase order, report) or an image (receipt photo,
    scanned form, chart, screenshot), such as /shared/finance/invoice-0412.pdf.

    An image comes back as one image. A PDF comes back as an image of each page, each
    followed by that page's text layer, at most 4 pages per call: when `next_first_page`
    is set, call again with first_page=next_first_page for the rest. Images are at most
    1600 pixels on their longer side (larger ones are scaled down). Text files are read
    with read_file; extract_text gives a document's text without the images.
    """
    ws = workspace_of(ctx)
    file_path = normalize_path(path)
    node = require_document(ws, file_path)
    try:
        shown = delivery.view(file_path, cast(bytes, node.content), first_page)
    except delivery.DocumentError as exc:
        raise ServiceError(str(exc)) from None
    summary = DocumentView(
        path=file_path,
        mime_type=cast(DocumentType, shown.mime_type),
        pages=shown.pages,
        first_page=shown.first_page,
        last_page=shown.last_page,
        images=sum(1 for b in shown.blocks if b.type == "image"),
        next_first_page=shown.last_page + 1 if shown.last_page < shown.pages else None,
    )
    return CallToolResult(content=list(shown.blocks), structured_content=summary.model_dump(mode="json"))


@TOOLS.tool(read_only=True)
async def extract_text(
    ctx: Context,
    path: PathArg,
    first_page: PageArg = 1,
    last_page: Annotated[
        int | None, Field(ge=1, le=10_000, description="Last page (inclusive); default: the last one")
    ] = None,
) -> ExtractedText:
    """Get the text of a document file (PDF or image) as plain text, for when you cannot
    look at images.

    A PDF gives its own text layer, exactly (method 'text_layer'), page by page. An image
    (receipt photo, scanned form, chart, screenshot) is read by optical character
    recognition (method 'ocr'): expect some misread characters, more on noisy scans
    (0 read as O, 1 as l, 5 as S, 8 as B, a dropped letter), so check figures that matter,
    e.g. that the items add up to the total. At most 32,000 characters come back.
    """
    ws = workspace_of(ctx)
    file_path = normalize_path(path)
    node = require_document(ws, file_path)
    try:
        found = delivery.extract_text(file_path, cast(bytes, node.content), first_page, last_page)
    except delivery.DocumentError as exc:
        raise ServiceError(str(exc)) from None
    return ExtractedText(
        path=file_path,
        mime_type=cast(DocumentType, found.mime_type),
        method=found.method,
        pages=found.pages,
        first_page=found.first_page,
        last_page=found.last_page,
        text=found.text,
        truncated=found.truncated,
    )


@TOOLS.tool(read_only=True)
async def search_files(
    ctx: Context,
    directory: Annotated[str, Field(description="Search below this directory, e.g. /teams/sales")] = "/",
    name_glob: Annotated[
        str | None,
        Field(
            min_length=1, max_length=200, description="Name pattern such as '*.md' or 'q?-report*' (any case)"
        ),
    ] = None,
    content: Annotated[
        str | None,
        Field(min_length=1, max_length=1000, description="Text that a line must contain (any case)"),
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="Most matches to return")] = 20,
) -> SearchResult:
    """Find files (and directories) below a directory by name pattern, by text they
    contain, or both (then both must match).

    `name_glob` is matched against the name only (not the folders above it) with '*',
    '?' and '[abc]' wildcards. `content` finds text files with a line containing that text,
    ignoring case, and shows the first 5 matching lines with their line numbers (read the
    rest with read_file); documents (PDFs, images) are found by name only. Matches come in
    tree order; `total` counts them all.
    """
    if name_glob is None and content is None:
        raise ServiceError("give name_glob, content or both: e.g. name_glob='*.csv' or content='invoice'")
    if content is not None and ("\n" in content or "\r" in content):
        raise ServiceError("content is matched within one line; search for text without line breaks")
    ws = workspace_of(ctx)
    root = normalize_path(directory)
    require_dir(ws, root)
    pattern = name_glob.casefold() if name_glob is not None else None
    needle = content.casefold() if content is not None else None
    matches: list[SearchMatch] = []
    for n in descendants(ws, root, content=needle is not None):
        if pattern is not None and not fnmatchcase(n.name.casefold(), pattern):
            continue
        count, lines = _line_matches(n, needle) if needle is not None else (0, [])
        if needle is not None and not count:
            continue
        matches.append(
            SearchMatch(
                path=n.path,
                kind=n.kind,
                size=n.size,
                modified_at=n.modified_at,
                match_count=count,
                lines=lines,
            )
        )
    return SearchResult(
        directory=root, total=len(matches), truncated=len(matches) > limit, matches=matches[:limit]
    )


def _line_matches(n: Node, needle: str) -> tuple[int, list[LineMatch]]:
    """How many lines of a file contain `needle` (casefolded), and the first few of them."""
    shown: list[LineMatch]
    count, shown = 0, []
    for number, line in enumerate(n.text.split("\n"), start=1):
        pos = line.casefold().find(needle)
        if pos < 0:
            continue
        count += 1
        if len(shown) < MAX_LINES_PER_FILE:
            shown.append(LineMatch(line=number, text=_excerpt(line.rstrip("\r"), pos, len(needle))))
    return count, shown


def _excerpt(line: str, pos: int, width: int) -> str:
    """The line, or for a long one the `EXCERPT_CHARS` around the match, marked with '…'."""
    if len(line) <= EXCERPT_CHARS:
        return line
    start = max(0, min(pos - (EXCERPT_CHARS - width) // 2, len(line) - EXCERPT_CHARS))
    end = start + EXCERPT_CHARS
    return ("…" if start > 0 else "") + line[start:end] + ("…" if end < len(line) else "")


@TOOLS.tool(read_only=True)
async def get_file_info(ctx: Context, path: PathArg) -> FileInfo:
    """Describe a file or directory without reading it: kind, size in bytes, number of
    lines (files) or entries (directories), when it was created and last modified, and
    the email of whoever modified it last."""
    ws = workspace_of(ctx)
    node_path = normalize_path(path)
    node = require_node(ws, node_path, content=True)
    return FileInfo(
        path=node.path,
        name=node.name,
        kind=node.kind,
        size=node.size,
        line_count=None if node.is_dir or node.is_document else count_lines(node.text),
        entry_count=child_count(ws, node.path) if node.is_dir else None,
        created_at=node.created_at,
        modified_at=node.modified_at,
        modified_by=node.modified_by,
    )
