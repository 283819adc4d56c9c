"""Workday families: one simulated day of several turns over one evolving workspace, where
replies arrive, plans change and later requests lean on earlier results and facts.
Importing this package registers them all.
"""

from . import meeting_day, support_day  # noqa: F401
