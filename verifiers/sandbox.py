"""Run untrusted Python (checks and scripts an LLM wrote) behind an OS-level boundary.

`run_sandboxed(code, "check", databases={"final": ...})` executes `code` inside bubblewrap
(new namespaces, an unprivileged user, a read-only view of the interpreter, a private tmpfs
scratch holding read-only copies of the inputs), calls
`check(final=<read-only sqlite3 connection>, **payload)`, and returns a `SandboxResult`: the
JSON-decoded return value, or a status saying why there is none. Bad code never raises here;
it is reported as data. Where no boundary can be had, nothing runs: the status is
`unavailable` and the error names what is missing.

Setting a boundary up and starting its interpreter costs tens of milliseconds, so a process
keeps sandbox servers waiting: each is one boundary whose interpreter forks a fresh process
for every run (which empties the scratch after it), one run at a time. What keeps one
run from the next, and what is enforced and what is not, is in docs/sandbox.md.
"""

from __future__ import annotations

import functools
import json
import keyword
import os
import queue
import select
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Literal

import anyio.to_thread
from pydantic import BaseModel, Field

from coworkenv.verifiers._sandbox_boundary import (
    SYSTEM_PATH,
    BoundaryUnavailable,
    boundary_command,
    seccomp_filter,
)
from coworkenv.verifiers._sandbox_child import END, OUTPUT, READY, REPORT, RESULT_MARKER

__all__ = [
    "DEFAULT_LIMITS",
    "MAX_ERROR_CHARS",
    "PYTHON",
    "SandboxLimits",
    "SandboxResult",
    "run_sandboxed",
    "run_sandboxed_async",
    "sandbox_problem",
    "stop_sandbox_servers",
]


# The interpreter that runs the code. The child needs only the standard library of a CPython
# >= 3.11; a deployment may point this at a system Python that any user can read.
PYTHON = sys.executable
CHILD_SCRIPT = str(Path(__file__).with_name("_sandbox_child.py"))
STDERR_TAIL_BYTES = 64 * 1024
# A server's set-up (namespaces, the interpreter's start) is given this long to say it is ready.
START_SECONDS = 30.0
# Idle servers a process keeps (per scratch size); more are ended when their run is done.
IDLE_SERVERS = 4
# An error is one line for a person or a log; code must not smuggle files out through it.
MAX_ERROR_CHARS = 2000
TRUNCATED = " [error truncated]"
# The audit hook inside the boundary; tests switch it off to show the boundary holds alone.
AUDIT_HOOK = True
# The tools that set the boundary up report their failures on stderr under these names.
SETUP_TOOLS = ("bwrap:", "unshare:", "setpriv:", "sh:", "mount:")
# `COWORKENV_SANDBOX=off` refuses every run (status `unavailable`), as on a machine without
# the boundary: how to see what every entry point does there, in a test or a drill.
SWITCH = "COWORKENV_SANDBOX"
SETUP_HINT = (
    "the sandbox needs user namespaces (sysctl user.max_user_namespaces > 0, and "
    "kernel.unprivileged_userns_clone = 1 where that exists); nothing was run"
)


class SandboxLimits(BaseModel, frozen=True):
    """Resource limits for one sandboxed run."""

    cpu_seconds: float = Field(default=2.0, gt=0)  # RLIMIT_CPU, rounded up to whole seconds
    wall_seconds: float = Field(default=10.0, gt=0)  # then the parent kills the process group
    memory_mb: int = Field(default=512, gt=0)  # RLIMIT_AS: the child's whole address space
    max_output_bytes: int = Field(default=1_000_000, gt=0)  # captured prints, and the JSON result
    scratch_mb: int = Field(default=64, gt=0)  # the private tmpfs the code may write in


DEFAULT_LIMITS = SandboxLimits()


class SandboxResult(BaseModel):
    """What came of one sandboxed run."""

    status: Literal["ok", "error", "timeout", "memory", "forbidden", "unavailable"]
    value: Any = None  # the JSON-decoded return value when status == "ok"
    # One line otherwise (at most MAX_ERROR_CHARS): "Type: message", the blocked operation, or
    # ("unavailable") what the sandbox is missing on this machine.
    error: str | None = None
    stdout: str = ""  # what the code printed (truncated to max_output_bytes)
    duration_ms: float


def run_sandboxed(
    code: str,
    function: str,
    *,
    files: dict[str, bytes] | None = None,
    databases: dict[str, bytes] | None = None,
    payload: Any = None,
    limits: SandboxLimits = DEFAULT_LIMITS,
) -> SandboxResult:
    """Run `function` from `code` in a sandboxed process and report what happened.

    `files` are written read-only into an empty scratch directory (names relative to it);
    each of `databases` (raw SQLite bytes, e.g. `conn.serialize()`) becomes `<name>.db`
    there and reaches the function as a read-only `sqlite3.Connection` keyword argument of
    that name. `payload` is a dict of further keyword arguments (JSON values). The scratch
    directory is the working directory, the one place the code may write; it is a tmpfs that
    exists only inside the sandbox and is emptied after the run, so nothing of it outlives
    the run. Never raises for anything the code does; raises TypeError for a payload that is
    not a dict of JSON values (a caller's bug).
    """
    started = time.monotonic()
    kwargs = _payload(payload)
    problem = _check_names(function, files or {}, databases or {}, kwargs)
    if problem is not None:
        return SandboxResult(status="error", error=problem, duration_ms=_ms_since(started))
    inputs = dict(files or {})
    for name, data in (databases or {}).items():
        inputs[f"{name}.db"] = _rollback_journal(data)
    job = {
        "code": code,
        "function": function,
        "databases": sorted(databases or {}),
        "payload": kwargs,
        "limits": limits.model_dump(),
        "audit_hook": AUDIT_HOOK,
        "inputs": [[name, len(data)] for name, data in inputs.items()],
    }
    head = json.dumps(job).encode()
    frame = [len(head).to_bytes(4, "big"), head, *inputs.values()]
    if os.environ.get(SWITCH, "").strip().lower() == "off":
        message = f"the sandbox is switched off ({SWITCH}=off); nothing was run"
        return SandboxResult(status="unavailable", error=message, duration_ms=_ms_since(started))
    pool = _pool()
    try:
        server = pool.take(limits.scratch_mb * 1024 * 1024)
    except _NotStarted as failed:
        return SandboxResult(status="unavailable", error=str(failed), duration_ms=_ms_since(started))
    result, serving = server.run(frame, limits, started)
    if serving:
        pool.give_back(server)
    else:
        server.close()
    if result.error is not None and len(result.error) > MAX_ERROR_CHARS:
        result.error = result.error[: MAX_ERROR_CHARS - len(TRUNCATED)] + TRUNCATED
    return result


async def run_sandboxed_async(
    code: str,
    function: str,
    *,
    files: dict[str, bytes] | None = None,
    databases: dict[str, bytes] | None = None,
    payload: Any = None,
    limits: SandboxLimits = DEFAULT_LIMITS,
) -> SandboxResult:
    """`run_sandboxed` in a worker thread, so the event loop keeps running meanwhile."""
    call = functools.partial(
        run_sandboxed, code, function, files=files, databases=databases, payload=payload, limits=limits
    )
    return await anyio.to_thread.run_sync(call)


def sandbox_problem() -> str | None:
    """Why Python checks cannot run here (the sandbox's `unavailable` error, or what else a
    trivial run came to), or None when the sandbox works. Entry points call it at start-up."""
    result = run_sandboxed("def check():\n    return 1\n", "check")
    if result.status == "ok" and result.value == 1:
        return None
    return result.error or f"a trivial sandboxed run ended with status {result.status}"


def _payload(payload: Any) -> dict[str, Any]:
    if payload is None:
        return {}
    if not isinstance(payload, dict) or not all(isinstance(key, str) for key in payload):
        raise TypeError(f"payload must be a dict with str keys, not {type(payload).__name__}")
    json.dumps(payload)  # raises TypeError for a value JSON cannot carry
    return payload


def _check_names(
    function: str, files: dict[str, bytes], databases: dict[str, bytes], payload: dict[str, Any]
) -> str | None:
    """Why this job cannot run (names come from task files, so they are checked), or None."""
    if not function.isidentifier() or keyword.iskeyword(function):
        return f"ValueError: function name {function!r} is not a Python identifier"
    for name in databases:
        if not name.isidentifier() or keyword.iskeyword(name):
            return f"ValueError: database name {name!r} is not a Python identifier"
        if name in payload:
            return f"ValueError: {name!r} is both a database and a payload argument"
    reserved = {f"{name}.db" for name in databases}
    for name in files:
        parts = name.split("/")
        if not name or name.startswith("/") or "\x00" in name or any(p in ("", ".", "..") for p in parts):
            return f"ValueError: file name {name!r} must be a plain relative path"
        if name in reserved:
            return f"ValueError: file {name!r} would overwrite a database"
    return None


def _memory_file(name: str, data: bytes, opened: list[int]) -> int:
    """A descriptor of an anonymous in-memory file holding `data`, read from its start."""
    fd = os.memfd_create(f"coworkenv-{name}".replace("/", "-"), os.MFD_CLOEXEC)
    opened.append(fd)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _rollback_journal(data: bytes) -> bytes:
    """A serialized WAL database would need a -shm file beside it to open read-only: mark it
    rollback-journal instead (bytes 18-19 of the header), which is exact for a serialized image."""
    if data[:16] == b"SQLite format 3\x00" and data[18:20] == b"\x02\x02":
        return data[:18] + b"\x01\x01" + data[20:]
    return data


class _NotStarted(Exception):
    """A sandbox server could not be started: the run is `unavailable`, for this reason."""


class _Server:
    """One sandbox (bubblewrap and the child script's `serve`) that runs jobs one at a time.

    Each run is a child of a supervisor the server forks: the child reads the job, writes
    the inputs into the empty scratch and runs the code; the supervisor relays what it
    writes in frames and empties the scratch after it (see `_sandbox_child.py`). A server
    that cannot empty it, whose run passes a deadline, writes too much, or ends without a
    report, is not used again.
    """

    def __init__(self, proc: subprocess.Popen[bytes], scratch_bytes: int) -> None:
        self.proc, self.scratch_bytes = proc, scratch_bytes
        assert proc.stdin is not None and proc.stdout is not None
        os.set_blocking(
            proc.stdin.fileno(), False
        )  # a run that stops reading cannot hold us past its deadline
        self._frames = _FrameReader(proc.stdout.fileno())

    @classmethod
    def start(cls, scratch_bytes: int, spawner: _Spawner) -> _Server:
        descriptors: list[int] = []
        try:
            child = _memory_file("child.py", Path(CHILD_SCRIPT).read_bytes(), descriptors)
            program = seccomp_filter()
            seccomp = None if program is None else _memory_file("seccomp", program, descriptors)
            try:
                argv = boundary_command(PYTHON, child, seccomp, scratch_bytes)
            except BoundaryUnavailable as missing:
                raise _NotStarted(str(missing)) from None
            try:
                proc = spawner.popen(argv, descriptors)
            except OSError as error:
                raise _NotStarted(f"the sandbox could not be started: {error}") from None
        finally:
            for fd in descriptors:
                os.close(fd)
        server = cls(proc, scratch_bytes)
        try:
            kind, _ = server._frames.next(time.monotonic() + START_SECONDS)
        except _ServerEnded:
            kind = None
        if kind != READY:
            stderr = server.close()
            raise _NotStarted(_start_failure(proc.returncode, stderr))
        return server

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, frame: list[bytes], limits: SandboxLimits, started: float) -> tuple[SandboxResult, bool]:
        """Run one job; the result, and whether the server can take another."""
        deadline = time.monotonic() + limits.wall_seconds
        # The report: the value (at most max_output_bytes of JSON) and the prints (at most as
        # many bytes of UTF-8, up to six times longer once escaped), plus slack.
        report_cap = 7 * limits.max_output_bytes + 65536
        report, output = bytearray(), bytearray()
        end: dict[str, Any] | None = None
        try:
            self._send(frame, deadline)
            while end is None:
                kind, data = self._frames.next(deadline)
                if kind == REPORT:
                    report += data
                    if len(report) > report_cap:
                        message = f"ValueError: the sandbox wrote more than {report_cap} bytes of output"
                        return SandboxResult(
                            status="error", error=message, duration_ms=_ms_since(started)
                        ), False
                elif kind == OUTPUT:
                    output += data
                    del output[:-STDERR_TAIL_BYTES]
                elif kind == END:
                    end = json.loads(data)
                else:
                    raise _ServerEnded
        except _Deadline:
            message = f"wall-clock time limit of {limits.wall_seconds:g}s exceeded"
            return SandboxResult(status="timeout", error=message, duration_ms=_ms_since(started)), False
        except (_ServerEnded, OSError, ValueError):
            tail = _last_line(bytes(output))
            detail = f": {tail}" if tail else ""
            message = f"RuntimeError: the sandbox ended without a result{detail}"
            return SandboxResult(status="error", error=message, duration_ms=_ms_since(started)), False
        duration = _ms_since(started)
        parsed = _parse_report(bytes(report))
        if parsed is None:
            # A child that ended without a report may not have read all of its job: the rest
            # would reach the next child as its job. Its server is not used again.
            return _without_report(end["returncode"], end["cpu"], bytes(output), limits, duration), False
        return SandboxResult(**parsed, duration_ms=duration), bool(end["serving"])

    def _send(self, frame: list[bytes], deadline: float) -> None:
        assert self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        for part in frame:
            view = memoryview(part)
            while view:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _Deadline
                if poller.poll(remaining * 1000):
                    try:
                        view = view[os.write(fd, view) :]
                    except BlockingIOError:
                        continue

    def close(self) -> bytes:
        """End the server and everything in its namespaces; what it wrote on stderr."""
        if self.proc.poll() is None:  # not reaped: its pid and group id are still its own
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
        self.proc.wait()
        assert self.proc.stderr is not None
        os.set_blocking(self.proc.stderr.fileno(), False)
        try:
            stderr = self.proc.stderr.read() or b""
        except OSError:
            stderr = b""
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        return stderr[-STDERR_TAIL_BYTES:]


class _Deadline(Exception):
    pass


class _ServerEnded(Exception):
    pass


class _FrameReader:
    """The frames a server writes: a kind byte, a 4-byte big-endian length, the bytes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pending = bytearray()
        self.poller = select.poll()  # poll, not select: a busy process's descriptors pass 1024
        self.poller.register(fd, select.POLLIN)

    def next(self, deadline: float) -> tuple[bytes, bytes]:
        while True:
            if len(self.pending) >= 5:
                size = int.from_bytes(self.pending[1:5], "big")
                if len(self.pending) >= 5 + size:
                    kind, data = bytes(self.pending[:1]), bytes(self.pending[5 : 5 + size])
                    del self.pending[: 5 + size]
                    return kind, data
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Deadline
            if self.poller.poll(remaining * 1000):
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    raise _ServerEnded
                self.pending += chunk


class _Spawner:
    """Starts the servers from one thread that lives as long as the process. The kernel ends
    a sandbox when the thread that started it ends (`--die-with-parent`), and the threads
    runs come from (anyio's workers, say) end when they idle."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[list[str], list[int], Future[subprocess.Popen[bytes]]]] = (
            queue.SimpleQueue()
        )
        threading.Thread(target=self._serve, name="coworkenv-sandbox-spawner", daemon=True).start()

    def popen(self, argv: list[str], descriptors: list[int]) -> subprocess.Popen[bytes]:
        done: Future[subprocess.Popen[bytes]] = Future()
        self._requests.put((argv, descriptors, done))
        return done.result()

    def _serve(self) -> None:
        while True:
            argv, descriptors, done = self._requests.get()
            try:
                done.set_result(
                    subprocess.Popen(
                        argv,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        cwd="/",
                        env={"PATH": SYSTEM_PATH},
                        pass_fds=descriptors,
                        start_new_session=True,
                    )
                )
            except BaseException as error:
                done.set_exception(error)


class _Pool:
    """The idle servers of this process, by scratch size."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.idle: dict[int, list[_Server]] = {}
        self.spawner = _Spawner()

    def take(self, scratch_bytes: int) -> _Server:
        with self.lock:
            waiting = self.idle.get(scratch_bytes, [])
            while waiting:
                server = waiting.pop()
                if server.alive:
                    return server
                server.close()
        return _Server.start(scratch_bytes, self.spawner)

    def give_back(self, server: _Server) -> None:
        with self.lock:
            waiting = self.idle.setdefault(server.scratch_bytes, [])
            if len(waiting) < IDLE_SERVERS:
                waiting.append(server)
                return
        server.close()

    def close(self) -> None:
        with self.lock:
            servers = [s for waiting in self.idle.values() for s in waiting]
            self.idle.clear()
        for server in servers:
            server.close()


_POOL: _Pool | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> _Pool:
    """This process's pool (a forked process makes its own: the servers are its parent's)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL.pid != os.getpid():
            _POOL = _Pool()
        return _POOL


def stop_sandbox_servers() -> None:
    """End this process's idle sandbox servers; the next run starts a new one (its set-up is
    read again: tests change it this way)."""
    _pool().close()


def _start_failure(returncode: int | None, stderr: bytes) -> str:
    """Why a server ended before it was ready: the kernel refused the namespaces, or else."""
    last_line = _last_line(stderr)
    if returncode == 1 and last_line.startswith(SETUP_TOOLS):
        return f"the sandbox could not be set up ({last_line}); {SETUP_HINT}"
    detail = f": {last_line}" if last_line else ""
    return f"the sandbox could not be started (exit code {returncode}){detail}"


def _last_line(output: bytes) -> str:
    text = output.decode("utf-8", "replace")
    return next((line for line in reversed(text.splitlines()) if line.strip()), "").strip()


def _parse_report(stdout: bytes) -> dict[str, Any] | None:
    """The last marked line the child wrote, checked field by field; None if there is none."""
    marker = RESULT_MARKER.encode()
    start = stdout.rfind(marker)
    if start < 0:
        return None
    line = stdout[start + len(marker) :].split(b"\n", 1)[0]
    try:
        report = json.loads(line)
    except ValueError:
        return None
    if not isinstance(report, dict) or report.get("status") not in (
        "ok",
        "error",
        "timeout",
        "memory",
        "forbidden",
    ):
        return None
    error, printed = report.get("error"), report.get("stdout", "")
    if not (error is None or isinstance(error, str)) or not isinstance(printed, str):
        return None
    value = report.get("value") if report["status"] == "ok" else None
    return {"status": report["status"], "value": value, "error": error, "stdout": printed}


def _without_report(
    returncode: int, cpu_used: float, output: bytes, limits: SandboxLimits, duration: float
) -> SandboxResult:
    """Name the cause when the child ended without a report: a limit, or a crash."""
    cpu_limit = max(1, -int(-limits.cpu_seconds // 1))
    text = output.decode("utf-8", "replace")
    if returncode == -signal.SIGXCPU or (returncode == -signal.SIGKILL and cpu_used >= cpu_limit):
        # SIGKILL: the kernel's, at the hard CPU limit, one second after the soft one.
        message = f"CPU time limit of {limits.cpu_seconds:g}s exceeded"
        return SandboxResult(status="timeout", error=message, duration_ms=duration)
    if "MemoryError" in text or "Cannot allocate memory" in text or "out of memory" in text:
        message = f"MemoryError: memory limit of {limits.memory_mb} MB exceeded"
        return SandboxResult(status="memory", error=message, duration_ms=duration)
    how = f"was killed by {_signal_name(-returncode)}" if returncode < 0 else f"exited with code {returncode}"
    last_line = _last_line(output)
    detail = f": {last_line}" if last_line else ""
    message = f"RuntimeError: the sandbox process {how} without a result{detail}"
    return SandboxResult(status="error", error=message, duration_ms=duration)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _ms_since(started: float) -> float:
    return (time.monotonic() - started) * 1000
