"""Worlds: the demo company and procedurally generated organizations of 30+ industries.

`world(name, size, seed)` gives a `World` from a profile (the data files of `profiles/`) or
`northwind`, the demo company (`northwind.json`, its people drawn from the seed);
`world_from_spec("law_firm:40:3")` or a JSON file path does the same from one string.
Generation is offline and deterministic; results are cached per (profile, size, seed).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from coworkenv.world import World, load_world

from .generate import MAX_SIZE, MIN_SIZE, START, generate_world
from .northwind import NAME as DEMO
from .northwind import northwind
from .profile import Profile, ProfileFileError, ProfileFolder, QueueSpec, TeamSpec, load_profile

__all__ = [
    "DEMO",
    "MAX_SIZE",
    "MIN_SIZE",
    "PROFILES",
    "START",
    "Profile",
    "ProfileFileError",
    "ProfileFolder",
    "QueueSpec",
    "TeamSpec",
    "UnknownWorldError",
    "generate_world",
    "load_profile",
    "northwind",
    "profile_names",
    "world",
    "world_from_spec",
]

PROFILES: Mapping[str, Profile] = ProfileFolder(Path(str(files(__name__) / "profiles")))
"""The built-in profiles by key: the files of `coworkenv/worlds/profiles/`."""


class UnknownWorldError(ValueError):
    """A world name that is neither a profile nor a readable world file."""


def profile_names() -> list[str]:
    """Every world name: the demo company first, then the profiles in alphabetical order."""
    return [DEMO, *sorted(PROFILES)]


@lru_cache(maxsize=64)
def world(name: str, size: int | None = None, seed: int = 0) -> World:
    """The world of profile `name` with `size` colleagues (default: the profile's) from `seed`.
    `northwind` is the demo company of demo seed `seed`; its size is fixed."""
    if name == DEMO:
        built = northwind(seed)
        if size is not None and size != len(built.staff):
            raise ValueError(f"the {DEMO} world has {len(built.staff)} colleagues; it takes no other size")
        return built
    profile = PROFILES.get(name)
    if profile is None:
        raise UnknownWorldError(f"no world profile {name!r}; known: {', '.join(profile_names())}")
    return generate_world(profile, size, seed)


def world_from_spec(spec: str) -> World:
    """A world from `NAME[:SIZE[:SEED]]` (e.g. `law_firm:40:3`) or the path of a world JSON file."""
    path = Path(spec)
    if spec.endswith(".json") or path.is_file():
        if not path.is_file():
            raise UnknownWorldError(f"no world file {spec}")
        return load_world(path)
    name, *rest = spec.split(":")
    if len(rest) > 2 or not all(part.isdigit() for part in rest):
        raise UnknownWorldError(f"a world is NAME[:SIZE[:SEED]] with whole numbers; got {spec!r}")
    size = int(rest[0]) if rest and rest[0] else None
    seed = int(rest[1]) if len(rest) > 1 else 0
    return world(name, size, seed)
