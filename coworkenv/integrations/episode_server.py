"""One episode's tools as an MCP server over streamable HTTP, for any MCP client.

    episode = Episode(task)
    await episode.areset()
    async with serve_episode(episode) as url:  # http://127.0.0.1:PORT/mcp
        ...  # an agent (OpenAI Agents SDK, pydantic-ai, mcp.Client) connects to url

The server lists the episode's tools with the servers' exact schemas and names
(`tickets_update_ticket`) and makes every call through `Episode.acall`, so each is audited,
the turn's tool limit and any faults apply, and the call joins the episode's transcript.
Once the episode is over, a call gets an error result saying so. It binds 127.0.0.1 on a
free port and stops when the block ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import mcp_types
import uvicorn
from mcp.server import MCPServer

from coworkenv.rollout.episodes.episode import Episode

__all__ = ["OVER", "EpisodeServer", "serve_episode"]

#: What a tool call after the end of the episode answers.
OVER = "The conversation is over: there is nothing left to do."


class EpisodeServer(MCPServer[Any]):
    """An MCP server whose tools are a started episode's, each call made through
    `Episode.acall`."""

    def __init__(self, episode: Episode) -> None:
        super().__init__(name="coworkenv", log_level="WARNING")
        self.episode = episode
        self._tools = list(episode.session.tools)

    async def list_tools(self) -> list[mcp_types.Tool]:
        return self._tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if self.episode.done:
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=OVER)], is_error=True
            )
        outcome = await self.episode.acall(name, arguments)
        return mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text=outcome.text)],
            structured_content=outcome.structured if isinstance(outcome.structured, dict) else None,
            is_error=outcome.is_error,
        )


@contextlib.asynccontextmanager
async def serve_episode(episode: Episode) -> AsyncIterator[str]:
    """Serve a started episode's tools on 127.0.0.1 while the block runs; yields the URL."""
    server = EpisodeServer(episode)
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # a client that keeps a stream open must not hold the episode: connections get 5 s to close
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    web = uvicorn.Server(config)
    serving = asyncio.create_task(web.serve(sockets=[sock]))
    try:
        while not web.started:
            if serving.done():
                serving.result()  # raises what stopped it
                raise RuntimeError("the episode's MCP endpoint stopped before it started")
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        web.should_exit = True
        await serving
        sock.close()
