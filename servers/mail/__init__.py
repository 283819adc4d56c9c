"""mail: one mailbox per person with folders, threads, labels, attachments and full-text search."""

from .server import SERVICE, build_server

__all__ = ["SERVICE", "build_server"]
