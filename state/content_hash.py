"""A canonical hash of a workspace's content.

Two workspaces with the same rows in their content tables (and the same simulated clock)
hash the same, whatever order the rows were inserted in. Each table contributes its
multiset hash (see `state.changes`), which a tracked workspace updates from the rows it
changed since its base instead of reading every row. The audit log is left out: it records
real latencies, which differ from run to run.
"""

import hashlib
import json
import sqlite3

from .changes import table_digests
from .tables import META_TABLE


def content_hash(conn: sqlite3.Connection) -> str:
    """SHA-256 over every content table's name, columns and multiset hash, and the meta table."""
    digest = hashlib.sha256()
    for table, (cols, value) in sorted(table_digests(conn).items()):
        digest.update(f"{table}\n{cols}\n{value:064x}\n".encode())
    rows = conn.execute(f'SELECT key, value FROM "{META_TABLE}" ORDER BY key').fetchall()
    digest.update(json.dumps([META_TABLE, rows], separators=(",", ":")).encode())
    return digest.hexdigest()
