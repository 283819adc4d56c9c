"""The base of the task and world models: frozen pydantic models whose copies stay honest.

Tasks and worlds cache derived values (their content hash, a world's staff) as
`functools.cached_property`, which pydantic keeps in the instance's `__dict__`. A
`model_copy(update=...)` copies that dict, so without care the copy would keep the cached
values of the original: a renamed task with the old task's hash. `FrozenModel.model_copy`
drops them when fields change.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any, Self

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        if update:
            for klass in type(self).__mro__:
                for name, value in vars(klass).items():
                    if isinstance(value, cached_property):
                        copied.__dict__.pop(name, None)
        return copied
