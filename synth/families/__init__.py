"""Every procedural family; importing this package registers them all in `FAMILIES`."""

from . import communication, examples  # noqa: F401
