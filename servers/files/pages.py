"""Reading a text file in parts: by lines or by bytes, at most `READ_LIMIT_BYTES` per read."""

from __future__ import annotations

from ..toolkit import ServiceError
from .schema import FileContent

READ_LIMIT_BYTES = 32_000
"""The most bytes of content one read returns; longer parts are cut and say where to go on."""


def split_lines(text: str) -> list[str]:
    """The lines of a text, each with its newline (the last one may have none)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def read_lines(path: str, text: str, start: int, end: int | None) -> FileContent:
    """Lines `start`..`end` (1-based, inclusive; `end` None or past the end: to the last line)."""
    lines = split_lines(text)
    total = len(lines)
    if start > max(total, 1):
        raise ServiceError(f"start_line {start} is past the end of {path!r}, which has {total} lines")
    if end is not None and end < start:
        raise ServiceError(f"end_line {end} is before start_line {start}; end_line must be >= start_line")
    last = total if end is None else min(end, total)
    offset = len("".join(lines[: start - 1]).encode("utf-8"))
    taken: list[str] = []
    size = 0
    for line in lines[start - 1 : last]:
        line_size = len(line.encode("utf-8"))
        if size + line_size > READ_LIMIT_BYTES:
            if not taken:
                raise ServiceError(
                    f"line {start} of {path!r} alone is {line_size} bytes, more than the {READ_LIMIT_BYTES} "
                    f"one read returns; read it in parts with offset={offset} and length={READ_LIMIT_BYTES}"
                )
            break
        taken.append(line)
        size += line_size
    truncated = start - 1 + len(taken) < last
    end_line = start + len(taken) - 1
    return FileContent(
        path=path,
        content="".join(taken),
        start_line=start,
        end_line=end_line,
        total_lines=total,
        offset=offset,
        length=size,
        total_bytes=len(text.encode("utf-8")),
        truncated=truncated,
        next_start_line=end_line + 1 if truncated else None,
        next_offset=offset + size if truncated else None,
    )


def read_bytes(path: str, text: str, offset: int, length: int | None) -> FileContent:
    """Bytes `offset`..`offset + length` of the UTF-8 text (`length` None: to the end).

    The part is widened to whole characters: its start moves back and its end forward
    to the nearest character boundary, so `offset` and `length` may differ from the request.
    """
    data = text.encode("utf-8")
    total = len(data)
    if offset > total:
        raise ServiceError(f"offset {offset} is past the end of {path!r}, which has {total} bytes")
    wanted_end = total if length is None else min(total, offset + length)
    start, end = offset, min(wanted_end, offset + READ_LIMIT_BYTES)
    while 0 < start < total and _continues_character(data[start]):
        start -= 1
    while end < total and _continues_character(data[end]):
        end += 1
    content = data[start:end].decode("utf-8")
    start_line = data[:start].count(b"\n") + 1
    if content:
        end_line = start_line + content.count("\n") - (1 if content.endswith("\n") else 0)
    else:
        end_line = start_line - 1
    truncated = end < wanted_end
    return FileContent(
        path=path,
        content=content,
        start_line=start_line,
        end_line=end_line,
        total_lines=len(split_lines(text)),
        offset=start,
        length=end - start,
        total_bytes=total,
        truncated=truncated,
        next_start_line=None,
        next_offset=end if truncated else None,
    )


def _continues_character(byte: int) -> bool:
    """True for a UTF-8 continuation byte (10xxxxxx): not the first byte of a character."""
    return byte & 0xC0 == 0x80
