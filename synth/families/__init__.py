"""Every procedural family; importing this package registers them all in `FAMILIES`."""

from . import communication, coordination, examples, operations, workdays  # noqa: F401
