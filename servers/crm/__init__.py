"""crm: accounts, their contacts, deals and logged activities."""

from .server import SERVICE, build_server

__all__ = ["SERVICE", "build_server"]
