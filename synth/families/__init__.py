"""Every procedural family; importing this package registers them all in `FAMILIES`."""

from . import communication, examples, operations  # noqa: F401
