"""tickets: the help desk: queues, tickets with a status workflow, comments and links."""

from .server import SERVICE, build_server

__all__ = ["SERVICE", "build_server"]
