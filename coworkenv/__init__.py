"""coworkenv: executable, verifiable workspace environments for AI coworker agents.

The public entry point is `Episode` (see `coworkenv.rollout.episode`), loaded on first use so that
importing a subpackage (`coworkenv.state`, ...) does not load the whole runner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coworkenv.rollout.episode import Episode, Start

__all__ = ["Episode", "Start"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from coworkenv.rollout import episode

        return getattr(episode, name)
    raise AttributeError(f"module 'coworkenv' has no attribute {name!r}")
