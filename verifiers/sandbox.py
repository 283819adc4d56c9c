"""Run untrusted Python (checks and scripts an LLM wrote) behind an OS-level boundary.

`run_sandboxed(code, "check", databases={"final": ...})` executes `code` in a fresh
interpreter inside bubblewrap (new namespaces, an unprivileged user, a read-only view of the
interpreter and the inputs, a private tmpfs scratch), calls
`check(final=<read-only sqlite3 connection>, **payload)`, and returns a `SandboxResult`: the
JSON-decoded return value, or a status saying why there is none. Bad code never raises here;
it is reported as data. Where no boundary can be had, nothing runs: the status is
`unavailable` and the error names what is missing. What is enforced, and what is not, is in
docs/sandbox.md.
"""

from __future__ import annotations

import functools
import json
import keyword
import logging
import os
import selectors
import signal
import subprocess
import sys
import time
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
from coworkenv.verifiers._sandbox_child import RESULT_MARKER

__all__ = [
    "DEFAULT_LIMITS",
    "MAX_ERROR_CHARS",
    "PYTHON",
    "SandboxLimits",
    "SandboxResult",
    "run_sandboxed",
    "run_sandboxed_async",
]

logger = logging.getLogger(__name__)

# The interpreter that runs the code. The child needs only the standard library of a CPython
# >= 3.11; a deployment may point this at a system Python that any user can read.
PYTHON = sys.executable
CHILD_SCRIPT = str(Path(__file__).with_name("_sandbox_child.py"))
STDERR_TAIL_BYTES = 64 * 1024
# An error is one line for a person or a log; code must not smuggle files out through it.
MAX_ERROR_CHARS = 2000
TRUNCATED = " [error truncated]"
# The audit hook inside the boundary; tests switch it off to show the boundary holds alone.
AUDIT_HOOK = True
# The tools that set the boundary up report their failures on stderr under these names.
SETUP_TOOLS = ("bwrap:", "unshare:", "setpriv:", "sh:", "mount:")
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
    """Run `function` from `code` in a sandboxed subprocess and report what happened.

    `files` are written read-only into a fresh scratch directory (names relative to it);
    each of `databases` (raw SQLite bytes, e.g. `conn.serialize()`) becomes `<name>.db`
    there and reaches the function as a read-only `sqlite3.Connection` keyword argument of
    that name. `payload` is a dict of further keyword arguments (JSON values). The scratch
    directory is the working directory, the one place the code may write; it is a tmpfs that
    exists only inside the sandbox, so nothing of it outlives the run. Never raises for
    anything the code does; raises TypeError for a payload that is not a dict of JSON values
    (a caller's bug).
    """
    started = time.monotonic()
    kwargs = _payload(payload)
    problem = _check_names(function, files or {}, databases or {}, kwargs)
    if problem is not None:
        return SandboxResult(status="error", error=problem, duration_ms=_ms_since(started))
    entries = dict(files or {})
    for name, data in (databases or {}).items():
        entries[f"{name}.db"] = _rollback_journal(data)
    descriptors: list[int] = []
    try:
        inputs = {name: _memory_file(name, data, descriptors) for name, data in entries.items()}
        child = _memory_file("child.py", Path(CHILD_SCRIPT).read_bytes(), descriptors)
        program = seccomp_filter()
        seccomp = None if program is None else _memory_file("seccomp", program, descriptors)
        try:
            argv = boundary_command(PYTHON, inputs, child, seccomp, limits.scratch_mb * 1024 * 1024)
        except BoundaryUnavailable as missing:
            return SandboxResult(status="unavailable", error=str(missing), duration_ms=_ms_since(started))
        job = {
            "code": code,
            "function": function,
            "databases": sorted(databases or {}),
            "payload": kwargs,
            "limits": limits.model_dump(),
            "audit_hook": AUDIT_HOOK,
        }
        result = _execute(argv, descriptors, json.dumps(job).encode(), limits, started)
    finally:
        for fd in descriptors:
            os.close(fd)
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


def _execute(
    argv: list[str], descriptors: list[int], job: bytes, limits: SandboxLimits, started: float
) -> SandboxResult:
    """Start the child, feed it the job, collect its report, and map every ending to a result."""
    deadline = time.monotonic() + limits.wall_seconds
    # The report: the value (at most max_output_bytes of JSON) and the prints (at most as many
    # bytes of UTF-8, up to six times longer once escaped), plus slack.
    stdout_cap = 7 * limits.max_output_bytes + 65536
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd="/",
            env={"PATH": SYSTEM_PATH},
            pass_fds=descriptors,
            start_new_session=True,
        )
    except OSError as error:
        message = f"the sandbox could not be started: {error}"
        return SandboxResult(status="unavailable", error=message, duration_ms=_ms_since(started))
    cpu_used: float | None = None
    try:
        stdout, stderr, ended = _exchange(proc, job, deadline, stdout_cap)
    finally:
        # The group id is the child's pid, reserved until it is reaped: kill the group first.
        _kill_group(proc)
        if proc.returncode is None:
            cpu_used = _reap(proc)
    duration = _ms_since(started)
    if ended == "wall":
        message = f"wall-clock time limit of {limits.wall_seconds:g}s exceeded"
        return SandboxResult(status="timeout", error=message, duration_ms=duration)
    if ended == "overflow":
        message = f"ValueError: the sandbox wrote more than {stdout_cap} bytes of output"
        return SandboxResult(status="error", error=message, duration_ms=duration)
    report = _parse_report(stdout)
    if report is not None:
        return SandboxResult(**report, duration_ms=duration)
    return _without_report(proc.returncode, cpu_used, stderr, limits, duration)


def _exchange(
    proc: subprocess.Popen[bytes], job: bytes, deadline: float, stdout_cap: int
) -> tuple[bytes, bytes, str]:
    """Write the job, read both outputs until the child exits; 'exit', 'wall' or 'overflow'."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    stdout, stderr = bytearray(), bytearray()
    pending = memoryview(job)
    exit_fd = _pidfd(proc.pid)
    with selectors.DefaultSelector() as selector:
        os.set_blocking(proc.stdin.fileno(), False)
        selector.register(proc.stdin, selectors.EVENT_WRITE)
        selector.register(proc.stdout, selectors.EVENT_READ)
        selector.register(proc.stderr, selectors.EVENT_READ)
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        exited = exit_fd is None  # without a pidfd, the end of both outputs stands for the exit
        try:
            while not exited or any(
                f in selector.get_map() for f in (proc.stdout.fileno(), proc.stderr.fileno())
            ):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return bytes(stdout), bytes(stderr), "wall"
                for key, _events in selector.select(remaining):
                    if key.fileobj is proc.stdin:
                        try:
                            pending = pending[os.write(proc.stdin.fileno(), pending[:65536]) :]
                        except BrokenPipeError:
                            pending = pending[:0]
                        if not pending:
                            selector.unregister(proc.stdin)
                            proc.stdin.close()
                    elif key.fileobj == exit_fd:
                        selector.unregister(exit_fd)
                        exited = True
                    else:
                        chunk = os.read(key.fd, 65536)
                        if not chunk:
                            selector.unregister(key.fileobj)
                        elif key.fileobj is proc.stdout:
                            stdout += chunk
                            if len(stdout) > stdout_cap:
                                return bytes(stdout), bytes(stderr), "overflow"
                        else:
                            stderr += chunk
                            del stderr[:-STDERR_TAIL_BYTES]
            if exit_fd is None:
                proc.wait(timeout=max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            return bytes(stdout), bytes(stderr), "wall"
        finally:
            if exit_fd is not None:
                os.close(exit_fd)
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                pipe.close()
    return bytes(stdout), bytes(stderr), "exit"


def _pidfd(pid: int) -> int | None:
    """A descriptor that turns readable when the process exits (Linux >= 5.3), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.returncode is not None:
        return  # reaped already: its group id may belong to someone else by now
    # Raw kills: Popen.kill() would poll, and so reap the child before wait4 reads its CPU time.
    for kill in (os.killpg, os.kill):
        try:
            kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            continue


def _reap(proc: subprocess.Popen[bytes]) -> float | None:
    """Wait for the child and return the CPU seconds it used (None where wait4 is missing)."""
    if not hasattr(os, "wait4"):
        proc.wait()
        return None
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


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
    returncode: int | None, cpu_used: float | None, stderr: bytes, limits: SandboxLimits, duration: float
) -> SandboxResult:
    """Name the cause when the child ended without a report: a limit, or a crash."""
    cpu_limit = max(1, -int(-limits.cpu_seconds // 1))
    text = stderr.decode("utf-8", "replace")
    last_line = next((line for line in reversed(text.splitlines()) if line.strip()), "").strip()
    if returncode == 1 and last_line.startswith(SETUP_TOOLS):
        message = f"the sandbox could not be set up ({last_line}); {SETUP_HINT}"
        return SandboxResult(status="unavailable", error=message, duration_ms=duration)
    if returncode is not None and returncode > 128:
        returncode = 128 - returncode  # bwrap exits with 128 + the signal that ended the child
    if returncode == -signal.SIGXCPU or (
        # The kernel's SIGKILL at the hard CPU limit. The child's CPU time is lost with the
        # namespace's init, so its run time stands in: it can only be longer than its CPU time.
        returncode == -signal.SIGKILL and max(cpu_used or 0, duration / 1000) >= cpu_limit
    ):
        message = f"CPU time limit of {limits.cpu_seconds:g}s exceeded"
        return SandboxResult(status="timeout", error=message, duration_ms=duration)
    if "MemoryError" in text or "Cannot allocate memory" in text or "out of memory" in text:
        message = f"MemoryError: memory limit of {limits.memory_mb} MB exceeded"
        return SandboxResult(status="memory", error=message, duration_ms=duration)
    if returncode is not None and returncode < 0:
        how = f"was killed by {_signal_name(-returncode)}"
    else:
        how = f"exited with code {returncode}"
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
