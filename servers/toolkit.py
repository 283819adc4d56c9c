"""The shared machinery of every service: tool sets, world operations, and the audited,
transactional MCP server that serves a workspace.

A service is a `ServiceSpec`: its tables (`ServiceSchema`), its agent-facing tools (a
`ToolSet`) and its world operations (`WorldOperations`). `WorkspaceServer` serves one or
more services over one workspace; every call is audited and all-or-nothing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeVar, cast
from weakref import WeakKeyDictionary

import anyio
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp_types import CallToolResult, ToolAnnotations
from mcp_types import Tool as MCPTool
from pydantic import BaseModel, ValidationError

from coworkenv.state import ServiceSchema, Workspace
from coworkenv.state.jsontext import compact_json

from .faults import FaultInjector

__all__ = [
    "ServiceError",
    "ServiceSpec",
    "ToolDef",
    "ToolError",
    "ToolList",
    "ToolSet",
    "UnexpectedToolError",
    "WorkspaceServer",
    "WorldOperations",
    "current_user",
    "workspace_of",
]

try:
    from mcp.server.mcpserver.exceptions import UnexpectedToolError
except ImportError:  # mcp < 2.3 wraps a crash in a plain ToolError that carries its text

    class UnexpectedToolError(ToolError):  # type: ignore[no-redef]
        """A tool crashed (raised something other than `ToolError`): the SDK's class
        where it has one; the same message and meaning on older SDKs."""


F = TypeVar("F", bound=Callable[..., Any])
P = TypeVar("P", bound=BaseModel)

#: The workspace whose call is running in this task (see `workspace_of`).
_SERVED: ContextVar[Workspace | None] = ContextVar("coworkenv_served_workspace", default=None)
_WORKSPACE_LOCKS: WeakKeyDictionary[Workspace, anyio.Lock] = WeakKeyDictionary()

#: Simulated time that one successful write call takes.
WRITE_CALL_DURATION_SECONDS = 60

#: How long, in all, a call on a workspace file waits for other processes' calls to finish
#: before it answers `BUSY_MESSAGE` (the default of `WorkspaceServer.busy_wait_seconds`).
BUSY_WAIT_SECONDS = 10.0
BUSY_MESSAGE = "the workspace is busy; retry the call"
# One attempt at the file's lock blocks the event loop at most this long; between attempts
# the call sleeps without blocking.
_LOCK_ATTEMPT_MS = 20
_RETRY_PAUSE_SECONDS = (0.002, 0.02)


USER_EMAIL_KEY = "user_email"
DEFAULT_USER_EMAIL = "me@northwind.example"


def current_user(ws: Workspace) -> str:
    """The email of the person the agent works for (meta key `user_email`)."""
    try:
        return ws.meta(USER_EMAIL_KEY)
    except KeyError:
        return DEFAULT_USER_EMAIL


def workspace_of(ctx: Context) -> Workspace:
    """The workspace behind the server that received this tool call.

    `WorkspaceServer.call_on` names it for the duration of the call (reading it from
    `ctx.mcp_server` costs a few microseconds of pydantic attribute lookups per call)."""
    ws = _SERVED.get()
    if ws is None:
        raise RuntimeError("workspace tools must be served by a WorkspaceServer")
    return ws


class ServiceError(ValueError):
    """A broken domain rule: no such ticket, a status change the workflow forbids, a path
    outside the tree. The message says what to do instead, for whoever reads it next.

    Stores and tools raise it; the call wrapper (`WorkspaceServer`) answers the tool call
    with its text as the error the model reads (`Error executing tool <name>: <text>`) and
    audits it. World operations and seeds let it out as the `ValueError` it is. Anything
    else a tool raises is a bug: the model only sees `Error executing tool <name>`.
    """


@dataclass(frozen=True)
class ToolDef:
    """One agent-facing tool: its function and its MCP annotations."""

    fn: Callable[..., Any]
    read_only: bool
    destructive: bool
    idempotent: bool

    @property
    def name(self) -> str:
        return self.fn.__name__


class ToolList:
    """The tools one module defines, in the order it defines them.

    A tool module starts with `TOOLS = ToolList()` and marks each tool with
    `@TOOLS.tool(...)`; the service's `server.py` passes the lists of its `tools_read` and
    `tools_write` to its `ToolSet`. Nothing is registered anywhere else.
    """

    def __init__(self) -> None:
        self.defs: list[ToolDef] = []

    def tool(
        self, *, read_only: bool, destructive: bool = False, idempotent: bool = False
    ) -> Callable[[F], F]:
        """Add a tool. `read_only` tools change nothing; `destructive` ones remove or overwrite."""

        def decorator(fn: F) -> F:
            if not fn.__doc__:
                raise ValueError(f"tool {fn.__name__} needs a docstring: it is what the model reads")
            self.defs.append(ToolDef(fn, read_only, destructive and not read_only, idempotent or read_only))
            return fn

        return decorator


class ToolSet:
    """The agent-facing tools of one service: its read tools, then its write tools.

    Tools are `async def` functions whose first parameter is `ctx: Context` (use
    `workspace_of(ctx)`), with typed parameters and a pydantic return type. The MCP
    tool objects (schemas) are built once per prefix and shared by every server.
    """

    def __init__(self, service: str, *, read: ToolList, write: ToolList) -> None:
        self.service = service
        for tool in read.defs:
            if not tool.read_only:
                raise ValueError(f"{service} tool {tool.name} changes state: it belongs with the write tools")
        for tool in write.defs:
            if tool.read_only:
                raise ValueError(f"{service} tool {tool.name} is read-only: it belongs with the read tools")
        self._defs: list[ToolDef] = [*read.defs, *write.defs]
        seen: set[str] = set()
        for tool in self._defs:
            if tool.name in seen:
                raise ValueError(f"{service} has two tools named {tool.name}")
            seen.add(tool.name)
        self._built: dict[str, list[Tool]] = {}

    @property
    def names(self) -> list[str]:
        return [d.name for d in self._defs]

    def is_read_only(self, name: str) -> bool:
        return next(d.read_only for d in self._defs if d.name == name)

    def mcp_tools(self, prefix: str = "") -> list[Tool]:
        """The MCP tool objects, named `prefix + function name`."""
        if prefix not in self._built:
            self._built[prefix] = [
                Tool.from_function(
                    d.fn,
                    name=prefix + d.name,
                    annotations=ToolAnnotations(
                        read_only_hint=d.read_only,
                        destructive_hint=d.destructive,
                        idempotent_hint=d.idempotent,
                        open_world_hint=False,
                    ),
                )
                for d in self._defs
            ]
        return self._built[prefix]


@dataclass
class _WorldOp:
    name: str
    params: type[BaseModel]
    fn: Callable[[Workspace, Any], dict[str, Any]]
    description: str


class WorldOperations:
    """Changes to a service's state that no agent makes: seeds and between-turn events
    (an inbound mail arrives, an organizer moves a meeting). Not visible to agents.

    Each operation is a function `(workspace, params) -> result`, where `params` is a
    pydantic model; the result is a small JSON-able dict (e.g. the id of a new row).
    """

    def __init__(self, service: str) -> None:
        self.service = service
        self.ops: dict[str, _WorldOp] = {}

    def operation(self, params: type[P]) -> Callable[[Callable[[Workspace, P], dict[str, Any]]], Any]:
        def decorator(
            fn: Callable[[Workspace, P], dict[str, Any]],
        ) -> Callable[[Workspace, P], dict[str, Any]]:
            self.ops[fn.__name__] = _WorldOp(fn.__name__, params, fn, (fn.__doc__ or "").strip())
            return fn

        return decorator

    def get(self, name: str) -> _WorldOp:
        if name not in self.ops:
            raise KeyError(f"{self.service} has no world operation {name!r}; known: {sorted(self.ops)}")
        return self.ops[name]

    def run(self, workspace: Workspace, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """Validate `params` and run the operation atomically, without an audit entry (for seeds)."""
        op = self.get(name)
        try:
            model = op.params.model_validate(params)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(all)'}: {e['msg']}" for e in exc.errors()
            )
            raise ValueError(f"invalid parameters for {self.service}.{name}: {problems}") from None
        with workspace.transaction():
            return op.fn(workspace, model)

    def apply(self, workspace: Workspace, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """Validate `params`, run the operation atomically and record it in the audit log as an event."""
        self.get(name)
        started = time.perf_counter()
        error: str | None = None
        result: dict[str, Any] = {}
        try:
            result = self.run(workspace, name, params)
        except ValueError as exc:  # pydantic's ValidationError and ServiceError among them
            error = str(exc)
            raise
        finally:
            workspace.audit.record(
                time=None,
                actor="event",
                service=self.service,
                tool=name,
                arguments=params,
                result=None if error else result,
                error=error,
                latency_ms=(time.perf_counter() - started) * 1000,
            )
        return result


@dataclass(frozen=True)
class ServiceSpec:
    """Everything one service contributes: tables, tools, world operations, instructions."""

    name: str
    schema: ServiceSchema
    tools: ToolSet
    world: WorldOperations
    instructions: str
    extra: dict[str, Any] = field(default_factory=dict)


class WorkspaceServer(MCPServer[Any]):
    """An MCP server over one workspace, serving one or more services (or, built with no
    workspace, a server that in-process episodes share, each calling `call_on` with its own).

    Every tool call (including calls to unknown tools and calls with invalid arguments)
    is recorded in the workspace's audit log with the current actor, and runs inside a
    savepoint: a call that fails leaves no write behind. Calls on one workspace are
    serialized, so concurrent clients never interleave inside one call. A successful write call moves
    the simulated clock forward by `WRITE_CALL_DURATION_SECONDS`.

    Each call is one transaction: its clock move, its writes and its audit entry are kept
    together or not at all. On a workspace file, which other processes may serve too, the
    transaction holds the file's write lock from its start (`BEGIN IMMEDIATE`); a call that
    cannot get it within `busy_wait_seconds` changes nothing and answers `BUSY_MESSAGE`.
    """

    def __init__(
        self,
        workspace: Workspace | None,
        services: list[ServiceSpec],
        *,
        name: str,
        prefixed: bool = False,
        instructions: str | None = None,
    ) -> None:
        self.services = [s.name for s in services]
        if workspace is not None:
            self.check_serves(workspace)
        tools: list[Tool] = []
        # MCP name -> (service, bare tool name, read-only). The audit log records the bare
        # name, so checks read the same whatever server (single or combined) was used.
        self._tool_info: dict[str, tuple[str, str, bool]] = {}
        for spec in services:
            prefix = f"{spec.name}_" if prefixed else ""
            for tool in spec.tools.mcp_tools(prefix):
                tools.append(tool)
                bare = tool.name[len(prefix) :]
                self._tool_info[tool.name] = (spec.name, bare, spec.tools.is_read_only(bare))
        super().__init__(
            name=name,
            instructions=instructions or "\n\n".join(s.instructions for s in services),
            tools=tools,
            log_level="WARNING",
        )
        #: The workspace `call_tool` serves; None for a server shared by in-process episodes,
        #: which name theirs on every call (`call_on`).
        self.workspace = workspace
        #: Optional seeded fault injection (see `servers.faults`); None injects nothing.
        self.faults: FaultInjector | None = None
        #: How long a call on a workspace file waits for other processes before it gives up.
        self.busy_wait_seconds = BUSY_WAIT_SECONDS
        self._listed: list[MCPTool] | None = None
        # The context of a call made outside any MCP request (an in-process episode's, or
        # `call_tool` from code): no request, no session, so the same for every such call.
        # `MCPServer.call_tool` builds this one per call, a few percent of a tool call.
        self._direct_context: Context[Any, Any] = Context(
            mcp_server=self, subscriptions=getattr(self, "_subscriptions", None)
        )

    async def list_tools(self) -> list[MCPTool]:
        """The tools as MCP lists them, built on the first call: a server's tools never
        change after it is built."""
        if self._listed is None:
            self._listed = await super().list_tools()
        return list(self._listed)

    def check_serves(self, workspace: Workspace) -> None:
        """Raise `ValueError` unless `workspace` has the tables of every service served here."""
        missing = [name for name in self.services if name not in workspace.services]
        if missing:
            raise ValueError(
                f"the workspace has no tables for {missing}; it was created with {list(workspace.services)}"
            )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        if self.workspace is None:
            raise RuntimeError("this server is shared by in-process episodes: use call_on(workspace, ...)")
        return await self.call_on(self.workspace, name, arguments, faults=self.faults, context=context)

    async def call_on(
        self,
        workspace: Workspace,
        name: str,
        arguments: dict[str, Any],
        *,
        faults: FaultInjector | None = None,
        context: Context[Any, Any] | None = None,
    ) -> Any:
        """Call a tool on `workspace` through the whole path `call_tool` takes (serialized,
        one transaction, savepoint, audit, clock, `faults`). One server can serve any number
        of workspaces this way, each episode naming its own: building a server costs far
        more than forking a workspace. The workspace must have this server's services
        (`check_serves`)."""
        called = await self.call_on_audited(workspace, name, arguments, faults=faults, context=context)
        return called.result

    async def call_on_audited(
        self,
        workspace: Workspace,
        name: str,
        arguments: dict[str, Any],
        *,
        faults: FaultInjector | None = None,
        context: Context[Any, Any] | None = None,
    ) -> AuditedResult:
        """`call_on`, returning with the result the compact JSON the audit log recorded of
        it, for a caller that shows the model the same text (an episode's transcript)."""
        # One lock per workspace, shared by every server over it (a single-service server
        # and the combined one may serve the same workspace side by side). Taking it is
        # where a call lets a cancellation in: a cancelled call does not run.
        lock = _WORKSPACE_LOCKS.get(workspace)
        if lock is None:
            lock = _WORKSPACE_LOCKS[workspace] = anyio.Lock(fast_acquire=True)
        async with lock:
            ws = workspace
            call = _Call()
            if ws.conn.in_transaction:
                # The caller's own transaction: it keeps or drops this call together with it.
                return await self._audited_call(ws, faults, name, arguments, context, call, "caller")
            if faults is None and not ws.is_file and self._reads_only(name):
                # A read of an in-memory workspace: it writes nothing to roll back, and no
                # one else writes meanwhile, so it needs no transaction; its audit entry is
                # one statement, committed as it is written.
                return await self._audited_call(ws, faults, name, arguments, context, call, "none")
            await self._begin(ws, name)
            try:
                result = await self._audited_call(ws, faults, name, arguments, context, call, "own")
            except BaseException:
                # A failed call that was audited keeps its audit entry (its writes were
                # rolled back before it was written); anything else leaves nothing behind.
                if call.audited:
                    await self._commit(ws, name)
                else:
                    ws.conn.execute("ROLLBACK")
                raise
            await self._commit(ws, name)
            return result

    def _reads_only(self, name: str) -> bool:
        info = self._tool_info.get(name)
        return info is not None and info[2]

    async def _begin(self, ws: Workspace, tool: str) -> None:
        if not ws.is_file:
            ws.conn.execute("BEGIN")
            return
        deadline = anyio.current_time() + self.busy_wait_seconds
        while not ws.try_begin_write(wait_ms=_LOCK_ATTEMPT_MS):
            await self._pause_or_give_up(tool, deadline)

    async def _commit(self, ws: Workspace, tool: str) -> None:
        if not ws.is_file:
            ws.conn.execute("COMMIT")
            return
        deadline = anyio.current_time() + self.busy_wait_seconds
        try:
            while not ws.try_commit(wait_ms=_LOCK_ATTEMPT_MS):
                await self._pause_or_give_up(tool, deadline)
        except BaseException:
            ws.conn.execute("ROLLBACK")
            raise

    @staticmethod
    async def _pause_or_give_up(tool: str, deadline: float) -> None:
        if anyio.current_time() >= deadline:
            raise ToolError(f"Error executing tool {tool}: {BUSY_MESSAGE}")
        # Jitter, so processes that collided do not retry in lockstep.
        await anyio.sleep(random.uniform(*_RETRY_PAUSE_SECONDS))

    async def _audited_call(
        self,
        ws: Workspace,
        faults: FaultInjector | None,
        name: str,
        arguments: dict[str, Any],
        context: Context[Any, Any] | None,
        call: _Call,
        transaction: Literal["own", "caller", "none"],
    ) -> AuditedResult:
        """Run the tool and audit it, in the transaction open on `ws` (this call's `own`
        or the `caller`'s), or with `none` (a read: see `call_on`). A tool that fails leaves
        no write behind but its audit entry: in a transaction of its own on an in-memory
        workspace with nothing written yet, by rolling it back and beginning again (two
        statements fewer on every call that succeeds); else by rolling back to a savepoint
        taken before the tool ran. The entry's time is the clock's as the entry is written:
        a tool does not move the clock, and a write's call moves it only after its entry."""
        started = time.perf_counter()

        def audit(
            service: str, tool: str, *, result_json: str | None = None, error: str | None = None
        ) -> None:
            ws.audit.record(
                time=None,
                actor=ws.actor,
                service=service,
                tool=tool,
                arguments=arguments,
                result=None,
                result_json=result_json,
                error=error,
                latency_ms=(time.perf_counter() - started) * 1000,
            )
            call.audited = True

        if name not in self._tool_info:
            error = f"Unknown tool {name!r}. Available tools: {', '.join(sorted(self._tool_info))}"
            audit("unknown", name, error=error)
            raise ToolError(error)
        service, tool_name, read_only = self._tool_info[name]
        fault = faults.draw(service, tool_name) if faults is not None else None
        if faults is not None and fault is not None and fault.kind == "latency":
            ws.clock.advance(seconds=faults.plan.latency_seconds)
        elif fault is not None:
            audit(service, tool_name, error=fault.message)
            raise ToolError(f"Error executing tool {name}: {fault.message}")
        # Nothing written yet (a latency fault moves the clock first): a rollback then undoes the tool alone.
        savepoint = transaction == "caller" or ws.is_file or fault is not None
        if savepoint:
            ws.conn.execute("SAVEPOINT tool_call")
        served = _SERVED.set(ws)
        try:
            result = await super().call_tool(
                name, arguments, context if context is not None else self._direct_context
            )
        except BaseException as raised:
            if savepoint:
                ws.conn.execute("ROLLBACK TO tool_call")
                ws.conn.execute("RELEASE tool_call")
            elif transaction == "own":
                ws.conn.execute("ROLLBACK")
                ws.conn.execute("BEGIN")
            exc = _readable(raised, name)
            if isinstance(exc, Exception):
                audit(service, tool_name, error=str(exc))
            if exc is not raised:
                raise exc from exc.__cause__
            raise
        finally:
            _SERVED.reset(served)
        if savepoint:
            ws.conn.execute("RELEASE tool_call")
        payload = _result_payload(result)
        result_json = None if payload is None else compact_json(payload)
        audit(service, tool_name, result_json=result_json)
        if not read_only:
            ws.clock.advance(seconds=WRITE_CALL_DURATION_SECONDS)
        return AuditedResult(result, result_json)


class AuditedResult(NamedTuple):
    """A tool call's result, and its compact JSON as the audit log recorded it."""

    result: Any
    result_json: str | None


@dataclass
class _Call:
    """What the transaction around one call needs to know of it."""

    audited: bool = False


def _readable(exc: BaseException, tool: str) -> BaseException:
    """The one place a tool's failure becomes the error the model reads. A `ServiceError`
    becomes `Error executing tool <name>: <its text>`. Invalid arguments become one short
    message that says what to fix (the SDK's text is pydantic's multi-line report with
    documentation links). A crash says only
    `Error executing tool <name>`, whatever the SDK's version: mcp 2.3 keeps the crash's
    own text on the server; older versions put it after the prefix, so it is cut here."""
    cause = exc.__cause__
    if isinstance(exc, ToolError) and isinstance(cause, ServiceError):
        domain = ToolError(f"Error executing tool {tool}: {cause}")
        domain.__cause__ = cause
        return domain
    if (
        type(exc) is ToolError
        and cause is not None
        and not isinstance(cause, ToolError | ResourceError | MCPError | ValidationError)
    ):
        crash = UnexpectedToolError(f"Error executing tool {tool}")
        crash.__cause__ = cause
        return crash
    if not (isinstance(exc, ToolError) and isinstance(cause, ValidationError)):
        return exc
    problems = []
    for error in cause.errors():
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        text = f"{where}: {error['msg']}"
        if error["type"] != "missing":
            given = repr(error.get("input"))
            text += f" (got {given[:60] + '...' if len(given) > 60 else given})"
        problems.append(text)
    return ToolError(
        f"Error executing tool {tool}: invalid arguments. {'; '.join(problems)}. Fix these arguments and call again."
    )


def _result_payload(result: Any) -> Any:
    if isinstance(result, CallToolResult):
        if result.structured_content is not None:
            return result.structured_content
        return [c.model_dump(mode="json", exclude_none=True) for c in result.content]
    return cast(Any, result)
