"""coworkenv: executable, verifiable workspace environments for AI coworker agents.

The public entry point is `Episode` (see `coworkenv.rollout.episodes.episode`), loaded on first use so that
importing a subpackage (`coworkenv.state`, ...) does not load the whole runner. `CoworkTaskset`,
`CoworkEnv` and `OwnPythonChatHarness` are the verifiers taskset, environment and chat
harness (`coworkenv.integrations.verifiers_env`, with the `[verifiers]` extra); they are
listed here so that verifiers finds them by the id `coworkenv` (`vf-eval coworkenv`,
prime-rl). `from coworkenv import *` hence
needs verifiers installed; import the names you use instead."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coworkenv.integrations.verifiers_env import CoworkEnv, CoworkTaskset, OwnPythonChatHarness
    from coworkenv.rollout.episodes.episode import Episode, Start

__all__ = ["CoworkEnv", "CoworkTaskset", "Episode", "OwnPythonChatHarness", "Start"]
_VERIFIERS = ("CoworkEnv", "CoworkTaskset", "OwnPythonChatHarness")


def __getattr__(name: str) -> Any:
    if name in _VERIFIERS:
        from coworkenv.integrations import verifiers_env

        return getattr(verifiers_env, name)
    if name in __all__:
        from coworkenv.rollout.episodes import episode

        return getattr(episode, name)
    raise AttributeError(f"module 'coworkenv' has no attribute {name!r}")
