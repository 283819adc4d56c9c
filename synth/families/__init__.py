"""Every procedural family; importing this package registers them all in `FAMILIES`."""

from . import communication, composed, coordination, examples, operations, workdays  # noqa: F401
