"""Episode records on disk: one JSON line per finished episode in `<dir>/records.jsonl`.

Lines are appended whole (one write, flushed and fsynced), so an interrupted run leaves
every finished record intact. A torn last line (from a crash mid-write) is ignored when
reading and cut off before the next append, so a resumed run never builds on it.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from .record import EpisodeRecord

RECORDS_FILE = "records.jsonl"


def records_path(directory: str | Path) -> Path:
    return Path(directory) / RECORDS_FILE


def read_records(directory: str | Path) -> list[EpisodeRecord]:
    """Every complete record in the directory's records file (none if it does not exist)."""
    path = records_path(directory)
    if not path.exists():
        return []
    records = []
    for line in path.read_bytes().split(b"\n"):
        if not line.strip():
            continue
        try:
            records.append(EpisodeRecord.model_validate_json(line))
        except ValidationError:
            continue  # a torn line from an interrupted write
    return records


def repair(directory: str | Path) -> None:
    """Cut a torn (unterminated) last line off the records file, if there is one."""
    path = records_path(directory)
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)


def append_record(directory: str | Path, record: EpisodeRecord) -> None:
    """Append one record as one line, durably."""
    path = records_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = record.model_dump_json().encode() + b"\n"
    with path.open("ab") as f:
        f.write(line)
        f.flush()
        os.fsync(f.fileno())
