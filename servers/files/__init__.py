"""files: a virtual tree of text files and directories in the workspace database."""

from .server import SERVICE, build_server

__all__ = ["SERVICE", "build_server"]
