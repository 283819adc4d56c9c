"""An agent's connection to an episode: MCP tools plus the conversation transcript."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import anyio.lowlevel
from mcp import Client, MCPError
from mcp_types import CallToolResult, TextContent, Tool

from coworkenv.servers import build_workspace_server
from coworkenv.servers.faults import FaultInjector
from coworkenv.servers.toolkit import WorkspaceServer
from coworkenv.state import Workspace
from coworkenv.state.jsontext import compact_json


@dataclass
class ToolOutcome:
    """What a tool call returned, as the model will read it."""

    text: str
    structured: Any
    is_error: bool


#: A call yields to the other tasks of the event loop (other episodes) when its client has
#: not yielded for this long; other calls only let a cancellation in. A yield costs about 6%
#: of a tool call, and a scripted policy waits on nothing else, so yielding on every call
#: would cost it that much for no one: 1 ms is about six calls.
YIELD_SECONDS = 0.001

_VALIDATORS: dict[tuple[str, str], Any] = {}
_SHARED_SERVERS: dict[tuple[str, ...], WorkspaceServer] = {}


def shared_server(services: Iterable[str]) -> WorkspaceServer:
    """The combined server (prefixed tool names) for these services, one per process and
    shared by every in-process episode: each episode's `InProcessClient` names its own
    workspace on every call. Building an MCP server costs about ten forks of a demo
    workspace, so an episode's set-up no longer does."""
    key = tuple(sorted(services))
    server = _SHARED_SERVERS.get(key)
    if server is None:
        server = _SHARED_SERVERS[key] = build_workspace_server(None, key)
    return server


def share_output_validators(client: Client, tools: list[Tool]) -> None:
    """Give the client compiled output-schema validators from a process-wide cache.

    The SDK's client validates every structured result against the tool's output schema
    and compiles one validator per tool per session (a metaschema check costing tens of
    milliseconds). Episodes open a fresh session each, so without sharing, compiling
    would dominate an episode. Results are still validated on every call; only the
    compiled validators are reused, keyed by tool name and exact schema."""
    from jsonschema.validators import validator_for
    from referencing import Registry

    cache = getattr(client.session, "_tool_output_validators", None)
    if not isinstance(cache, dict):
        return  # another SDK version: it compiles its own
    for tool in tools:
        if tool.output_schema is None:
            continue
        key = (tool.name, json.dumps(tool.output_schema, sort_keys=True))
        validator = _VALIDATORS.get(key)
        if validator is None:
            validator_cls = validator_for(tool.output_schema)
            validator_cls.check_schema(tool.output_schema)
            validator = _VALIDATORS[key] = validator_cls(tool.output_schema, registry=Registry())
        cache[tool.name] = validator


class InProcessClient:
    """An episode's connection to its workspace, with no transport in between: each call
    goes through the server's whole call path (serialized, savepoint, audit, faults, clock)
    on this episode's workspace and comes back as the `CallToolResult` an MCP client
    receives, errors included (a `ToolError` as its message, any other exception as the
    SDK's "Error executing tool"). The server may be shared by many episodes
    (`shared_server`); the workspace and the fault injector are this client's own. Unlike
    a protocol session it holds no task group, so an episode can be driven from any task or
    thread, and a call costs a fraction of an in-memory `Client` round trip. The servers'
    tests run over real clients, which also check results against output schemas."""

    def __init__(
        self, server: WorkspaceServer, workspace: Workspace, faults: FaultInjector | None = None
    ) -> None:
        server.check_serves(workspace)
        self.server = server
        self.workspace = workspace
        self.faults = faults
        self._yielded = 0.0

    async def list_tools(self) -> list[Tool]:
        return list(await self.server.list_tools())

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        return (await self.call_tool_with_text(name, arguments))[0]

    async def call_tool_with_text(self, name: str, arguments: dict[str, Any]) -> tuple[CallToolResult, str]:
        """`call_tool`, returning with the result its `transcript_text`, which for a
        structured result is the JSON the audit log recorded (written once for both)."""
        # Other calls let only a cancellation in, as the workspace's lock is taken (anyio's
        # fast acquire checks for one first).
        if time.perf_counter() - self._yielded >= YIELD_SECONDS:
            await anyio.lowlevel.checkpoint()  # other episodes run now
            self._yielded = time.perf_counter()
        try:
            called = await self.server.call_on_audited(self.workspace, name, arguments, faults=self.faults)
        except MCPError:
            raise
        except Exception as exc:  # what the SDK's request handler turns an error into
            result = CallToolResult(content=[TextContent(type="text", text=str(exc))], is_error=True)
            return result, transcript_text(result)
        result = called.result
        if not isinstance(result, CallToolResult):
            raise TypeError(f"tool {name} asked for input, which episodes do not support")
        return result, transcript_text(result, called.result_json)


def transcript_text(result: CallToolResult, structured_json: str | None = None) -> str:
    """What the model reads of a tool's result: its structured content as compact JSON
    (`structured_json` when it is already written), else the text of its content."""
    if result.structured_content is not None and not result.is_error:
        return structured_json if structured_json is not None else compact_json(result.structured_content)
    return "\n".join(getattr(c, "text", "") for c in result.content)


class ToolLimitReached(Exception):
    """The turn's tool-call budget is spent."""


class AgentSession:
    """Tool calls go through a real MCP client; the transcript is kept in OpenAI Chat
    Completions format (system, user, assistant with tool_calls, tool)."""

    def __init__(
        self,
        client: Client | InProcessClient,
        tools: list[Tool],
        messages: list[dict[str, Any]],
        *,
        trial: int = 0,
    ) -> None:
        self.client = client
        self.trial = trial
        self.tools = tools
        self.messages = messages
        self.limit = 30
        self.calls_this_turn = 0
        self.truncated = False
        #: What went wrong along the way: malformed_arguments, unknown_tool, tool_errors, ...
        self.stats: dict[str, int] = {}
        #: The number of the last call id handed out (`call_<n>`).
        self.next_id = 0

    def count(self, what: str) -> None:
        self.stats[what] = self.stats.get(what, 0) + 1

    def begin_turn(self, user_message: str, limit: int) -> None:
        self.messages.append({"role": "user", "content": user_message})
        self.limit = limit
        self.calls_this_turn = 0

    def new_call_id(self) -> str:
        self.next_id += 1
        return f"call_{self.next_id}"

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Call a tool through MCP. Past the turn's limit, raises ToolLimitReached."""
        if self.calls_this_turn >= self.limit:
            self.truncated = True
            raise ToolLimitReached(f"the limit of {self.limit} tool calls per turn is reached")
        self.calls_this_turn += 1
        if isinstance(self.client, InProcessClient):
            result, text = await self.client.call_tool_with_text(name, arguments)
        else:
            result = await self.client.call_tool(name, arguments)
            text = transcript_text(result)
        return ToolOutcome(text=text, structured=result.structured_content, is_error=bool(result.is_error))

    def record_assistant(self, content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        self.messages.append(message)

    def record_tool_result(self, call_id: str, outcome: ToolOutcome | str) -> None:
        text = outcome if isinstance(outcome, str) else outcome.text
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    async def call_and_record(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """One assistant tool call and its result, appended to the transcript."""
        call_id = self.new_call_id()
        self.record_assistant(
            None,
            [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ],
        )
        outcome = await self.call_tool(name, arguments)
        self.record_tool_result(call_id, outcome)
        return outcome
