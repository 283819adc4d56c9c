"""The capability taxonomy: what tasks are built to exercise (data in `capabilities.json`)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter


class Capability(BaseModel):
    """One thing an agent must be able to do."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    description: str
    services: list[str]
    requires: str
    turns: Literal["single", "multi"]


@lru_cache(maxsize=1)
def load_capabilities() -> dict[str, Capability]:
    """Every capability by id, in file order."""
    text = resources.files(__package__).joinpath("capabilities.json").read_text()
    items = TypeAdapter(list[Capability]).validate_python(json.loads(text))
    return {c.id: c for c in items}


def capability(capability_id: str) -> Capability:
    caps = load_capabilities()
    if capability_id not in caps:
        raise KeyError(f"unknown capability {capability_id!r}; known: {', '.join(caps)}")
    return caps[capability_id]
