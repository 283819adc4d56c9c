"""sheets: spreadsheets with named sheets, cells in A1 notation and formulas."""

from .server import SERVICE, build_server

__all__ = ["SERVICE", "build_server"]
