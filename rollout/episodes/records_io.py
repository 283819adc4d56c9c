"""Episode records on disk: one JSON line per finished episode in `<dir>/records.jsonl`.

Lines are appended whole (one write, flushed and fsynced), so an interrupted run leaves
every finished record intact. A torn last line (from a crash mid-write) is ignored when
reading and cut off before the next append, so a resumed run never builds on it.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import ValidationError

from coworkenv.rollout.episodes.record import EpisodeRecord

RECORDS_FILE = "records.jsonl"


def records_path(directory: str | Path) -> Path:
    return Path(directory) / RECORDS_FILE


def read_records(directory: str | Path) -> list[EpisodeRecord]:
    """Every complete record in the directory's records file (none if the file does not exist).

    A directory that does not exist is an error (`FileNotFoundError`), not an empty run: a
    mistyped folder would otherwise export nothing, silently."""
    if not Path(directory).is_dir():
        raise FileNotFoundError(f"no rollout folder {directory}")
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


def latest_records(records: list[EpisodeRecord]) -> list[EpisodeRecord]:
    """The last record of each (policy, task, trial), in order of first appearance.

    A resumed run appends a new record for an episode that ended in an error; the new one
    supersedes the old, so reports count each episode once."""
    latest: dict[tuple[str, str, int], EpisodeRecord] = {}
    for record in records:
        key = (record.policy, record.task_id, record.trial)
        latest.pop(key, None)  # re-inserted at the end: the order follows the records file
        latest[key] = record
    return list(latest.values())


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
