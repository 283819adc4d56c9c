"""Workspace state: one SQLite database per episode, with snapshots, diffs, hashes, a
simulated clock and an audit log. This package knows no service by name."""

from .audit import AuditEntry, AuditLog
from .clock import Clock, format_time, parse_time
from .diff import ColumnChange, RowChange, TableDiff, WorkspaceDiff
from .errors import WorkspaceError
from .schema import FollowUp, ServiceSchema, TableRules
from .workspace import Snapshot, Workspace, diff

__all__ = [
    "AuditEntry",
    "AuditLog",
    "Clock",
    "ColumnChange",
    "FollowUp",
    "RowChange",
    "ServiceSchema",
    "Snapshot",
    "TableDiff",
    "TableRules",
    "Workspace",
    "WorkspaceDiff",
    "WorkspaceError",
    "diff",
    "format_time",
    "parse_time",
]
