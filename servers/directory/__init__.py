"""directory: people and teams. Read-only for agents."""

from .server import SERVICE, build_server

__all__ = ["SERVICE", "build_server"]
