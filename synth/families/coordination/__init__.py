"""Coordination families: scheduling across time zones, moving a meeting out of a conflict,
chasing overdue tickets, precise document edits, meeting notes from mail and calendar, and
two multi-turn families where the workspace changes between turns (silent and announced).
Importing this package registers them all.
"""

from . import (  # noqa: F401
    document_editing,
    follow_up_reminder,
    scheduling_constraints,
    state_change_adaptation,
)
