"""`make demo`: the main job on the embedded default, offline."""

from __future__ import annotations

from coworkenv.walkthrough import scripted_session


async def run_demo(seed: int = 0) -> None:
    """Drive a scripted session through the real MCP servers of the demo workspace."""
    print("== a scripted session through the workspace's MCP servers ==")
    await scripted_session(seed)
