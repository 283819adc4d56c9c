"""A canonical hash of a workspace's content.

Two workspaces with the same rows in their content tables (and the same simulated clock)
hash the same, whatever order the rows were inserted in. The audit log is left out: it
records real latencies, which differ from run to run.
"""

import hashlib
import json
import sqlite3

from .tables import META_TABLE, columns, content_tables


def content_hash(conn: sqlite3.Connection) -> str:
    """SHA-256 over every content table (sorted rows, sorted columns) and the meta table."""
    digest = hashlib.sha256()
    for table in [*content_tables(conn), META_TABLE]:
        names = sorted(columns(conn, table))
        quoted = ", ".join(f'"{n}"' for n in names)
        # SQLite sorts by every column (a total order: NULL < numbers < text < blobs), so
        # the row order does not depend on insertion order; one json.dumps call per table.
        rows = conn.execute(f'SELECT {quoted} FROM "{table}" ORDER BY {quoted}').fetchall()
        digest.update(json.dumps([table, names, rows], default=_bytes_as_hex, separators=(",", ":")).encode())
    return digest.hexdigest()


def _bytes_as_hex(value: object) -> str:
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot hash a value of type {type(value).__name__}")
