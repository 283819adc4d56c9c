"""Coordination families: scheduling across time zones, moving a meeting out of a conflict,
chasing overdue tickets, precise document edits, meeting notes from mail and calendar, and
two multi-turn families where the workspace changes between turns (silent and announced).
"""
