"""Writing output files so that a crash leaves the old file or the new one, never part of one."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["TEMP_SUFFIX", "atomic_write_text"]

#: Temporary files end so, and start with a dot: no `*.json` glob ever picks one up.
TEMP_SUFFIX = ".tmp"


def atomic_write_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write `text` to `path` atomically: to a temporary file in the same folder, flushed to
    disk, then renamed over `path`. Readers (and a resume after a kill) see the whole old
    content or the whole new one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}{TEMP_SUFFIX}")
    try:
        with tmp.open("w", encoding=encoding) as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
