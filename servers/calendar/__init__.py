"""calendar: a calendar per person; events with attendees, time zones and weekly series."""

from .server import SERVICE, build_server

__all__ = ["SERVICE", "build_server"]
