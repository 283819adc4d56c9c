"""notes: pages in a tree, a knowledge base of articles, and databases of typed rows."""

from .server import SERVICE, build_server

__all__ = ["SERVICE", "build_server"]
