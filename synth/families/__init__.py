"""Every procedural family; importing this package registers them all in `FAMILIES`."""

from . import examples  # noqa: F401
