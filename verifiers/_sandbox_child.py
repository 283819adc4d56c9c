"""The sandbox server, and the child it forks for each run: limits, an audit hook, the code.

`coworkenv.verifiers.sandbox` starts this file inside the OS-level boundary (bubblewrap, see
`_sandbox_boundary.py`) as `python -I -S -B -X utf8 child.py`, the init of the boundary's PID
namespace, with the private scratch folder as its working directory. It serves runs one
after another (`serve`): for each, a supervisor it forks forks a child that reads the job
from stdin, writes the inputs into the empty scratch, and runs the code; the child's report is one line,
`RESULT_MARKER` followed by a JSON object (status, value, error, stdout). In isolated mode
only the standard library is importable, so this file uses nothing else, and the parent
imports only constants from it.

The boundary is what holds; the audit hook is a second layer that names what the code tried.
Order matters: the read-only databases are opened first (the hook refuses new connections),
then the resource limits are applied, and only then is the audit hook installed (hooks cannot
be removed) and the code run.
"""

from __future__ import annotations

import _imp
import _json
import builtins
import gc
import json
import os
import posix
import resource
import select
import signal
import sqlite3
import sys
from collections.abc import Callable
from typing import Any

RESULT_MARKER = "\x1ecoworkenv-sandbox-result\x1e"
CODE_FILENAME = "<sandbox>"

# Files the code writes in its scratch directory are capped too (RLIMIT_FSIZE).
MAX_FILE_BYTES = 10 * 1024 * 1024

# Imports that only ever serve to start processes or reach native code. Sockets are guarded
# at creation instead (the `socket.*` events), because `email.utils` imports `socket`.
BLOCKED_IMPORTS = frozenset(
    {
        "ctypes",
        "_ctypes",
        "subprocess",
        "_posixsubprocess",
        "multiprocessing",
        "_multiprocessing",
        "_posixshmem",
        "_xxsubinterpreters",
        "_xxinterpchannels",
        # Already loaded; importing them again would restore the functions removed below.
        "posix",
        "_signal",
    }
)

# Events that are refused outright, with what they would have done.
BLOCKED_EVENTS = {
    "os.system": "running shell commands",
    "os.exec": "running programs",
    "os.posix_spawn": "starting processes",
    "os.spawn": "starting processes",
    "os.fork": "starting processes",
    "os.forkpty": "starting processes",
    "os.startfile": "starting processes",
    "subprocess.Popen": "starting processes",
    "pty.spawn": "starting processes",
    "webbrowser.open": "starting processes",
    "os.kill": "sending signals",
    "os.killpg": "sending signals",
    "signal.pthread_kill": "sending signals",
    "os.symlink": "creating links",
    "os.link": "creating links",
    "os.chdir": "changing the working directory",
    "sqlite3.connect": "opening new database connections",
    "sqlite3.enable_load_extension": "loading SQLite extensions",
    "sqlite3.load_extension": "loading SQLite extensions",
    "resource.setrlimit": "changing resource limits",
    "resource.prlimit": "changing resource limits",
    "sys.settrace": "tracing",
    "sys.setprofile": "profiling",
    "gc.get_objects": "walking the garbage collector",
    "gc.get_referrers": "walking the garbage collector",
    "gc.get_referents": "walking the garbage collector",
    "code.__new__": "building code objects",
    "marshal.load": "loading marshalled code",
    "marshal.loads": "loading marshalled code",
    "_imp.create_builtin": "creating builtin modules",
    "cpython.PyInterpreterState_New": "creating subinterpreters",
    "urllib.Request": "network access",
}
BLOCKED_PREFIXES = (
    ("socket.", "network access"),
    ("ctypes.", "native calls"),
    ("syslog.", "writing to syslog"),
)

# For each event that names paths: (argument index, index of its dir_fd argument or None, mode).
# "w" paths must lie inside the scratch directory; "r" paths inside it or the standard library.
PATH_EVENTS: dict[str, tuple[tuple[int, int | None, str], ...]] = {
    "os.remove": ((0, 1, "w"),),
    "os.rmdir": ((0, 1, "w"),),
    "os.mkdir": ((0, 2, "w"),),
    "os.rename": ((0, 2, "w"), (1, 3, "w")),
    "os.chmod": ((0, 2, "w"),),
    "os.chown": ((0, 3, "w"),),
    "os.truncate": ((0, None, "w"),),
    "os.utime": ((0, 3, "w"),),
    "os.setxattr": ((0, None, "w"),),
    "os.removexattr": ((0, None, "w"),),
    "os.listdir": ((0, None, "r"),),
    "os.scandir": ((0, None, "r"),),
    "os.getxattr": ((0, None, "r"),),
    "os.listxattr": ((0, None, "r"),),
    "shutil.copyfile": ((0, None, "r"), (1, None, "w")),
    "shutil.copymode": ((0, None, "r"), (1, None, "w")),
    "shutil.copystat": ((0, None, "r"), (1, None, "w")),
    "shutil.copytree": ((0, None, "r"), (1, None, "w")),
    "shutil.move": ((0, None, "w"), (1, None, "w")),
    "shutil.chown": ((0, None, "w"),),
    "shutil.rmtree": ((0, 1, "w"),),
    "shutil.make_archive": ((0, None, "w"), (2, None, "r")),
    "shutil.unpack_archive": ((0, None, "r"), (1, None, "w")),
}
# Where imports look for cached bytecode: a folder that does not exist (readable, so that
# looking there is no violation).
NO_PYC_PREFIX = "/nonexistent/coworkenv-no-pyc"
TIMEZONE_DIRS = ("/usr/share/zoneinfo", "/usr/lib/zoneinfo", "/usr/share/lib/zoneinfo", "/etc/zoneinfo")


class ReturnValueError(Exception):
    """The function returned something that cannot travel back as JSON."""


class CpuTimeExceeded(BaseException):
    """Raised from the SIGXCPU handler; a BaseException so `except Exception` cannot swallow it."""


class OutputCapture:
    """A text stream that keeps the first `limit` bytes written to it and drops the rest."""

    def __init__(self, limit: int) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self._limit = limit
        self.truncated = False

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        data = text.encode("utf-8", "replace")
        room = self._limit - self._size
        if len(data) > room:
            self.truncated = True
            data = data[: max(room, 0)]
        self._parts.append(data)
        self._size += len(data)
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def getvalue(self) -> str:
        text = b"".join(self._parts).decode("utf-8", "ignore")
        return text + "\n[output truncated]" if self.truncated else text


def make_guard(
    scratch: str, read_roots: tuple[str, ...], report_fd: int, pathlib: Any = None
) -> Callable[..., None]:
    """Build the audit hook, which ends the run as `forbidden` at the first forbidden event.

    `pathlib` is the module when the code names it (`uses_pathlib`), imported before the
    code runs so that the hook holds pathlib's own methods: its paths are then read as the
    paths they name. Otherwise a pathlib path is refused like any other path-like object
    (the hook cannot know that its class is pathlib's). The server imports pathlib ahead
    (`serve`), so no run pays for the import.

    It never raises: an exception raised here would carry this frame in its traceback, and
    with it the closure. It writes the report itself and ends the process, so nothing the
    code does afterwards (catching, clearing a list) can undo the verdict. It never runs code
    the code could have replaced: everything it uses is a C function captured here, and it
    inspects only arguments of exact built-in types (a `str` subclass could run code from
    `__eq__` or `__repr__` while this frame is on the stack).
    """
    _str, _bytes, _int, _type, _len, _any, _issubclass = str, bytes, int, type, len, any, issubclass
    _str_repr, _str_add = str.__repr__, str.__add__
    _oserror, _attribute_error = OSError, AttributeError
    _readlink, _stat, _write, _exit = posix.readlink, posix.stat, posix.write, posix._exit
    _quote = _json.encode_basestring_ascii
    _path_types: tuple[type, ...] = ()
    _fspath: Any = None
    _path_str: Any = None
    _cached_str: Any = None
    if pathlib is not None:
        _path_types = (pathlib.PosixPath, pathlib.PurePosixPath)
        _fspath, _path_str = pathlib.PurePath.__fspath__, pathlib.PurePath.__str__
        _cached_str = pathlib.PurePath._str.__get__
    blocked_events = dict(BLOCKED_EVENTS)
    blocked_prefixes = BLOCKED_PREFIXES
    blocked_imports = BLOCKED_IMPORTS
    path_events = dict(PATH_EVENTS)
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    scratch_roots = (scratch,)
    readable = (scratch, *read_roots)
    marker = RESULT_MARKER.encode()
    unsupported = "a path with '..' or of an unsupported type"

    def text(value: Any) -> str | None:
        """An exact str for a str (of any class) or bytes, without running code; else None."""
        kind = _type(value)
        if kind is _bytes:
            return value.decode("utf-8", "surrogateescape")
        if kind is _str or _issubclass(kind, _str):
            return _str_add("", value)
        return None

    def resolve(path: Any, dir_fd: Any) -> str | None:
        """The absolute path an event's argument names, or None when it cannot be told safely."""
        kind = _type(path)
        if kind is _int:
            # A descriptor: ask the kernel where it points (works for the fd of any open file).
            try:
                target = _readlink("/proc/self/fd/" + _int.__repr__(path))
            except _oserror:
                return None
            return target if target.startswith("/") else None
        if kind in _path_types:
            # Only a path whose class still converts the way pathlib does, already converted.
            if kind.__fspath__ is not _fspath or kind.__str__ is not _path_str:
                return None
            try:
                path = _cached_str(path)
            except _attribute_error:
                return None
        path = text(path)
        if path is None or "\x00" in path:
            return None
        if not path.startswith("/"):
            base: str | None
            if dir_fd is None or (_type(dir_fd) is _int and dir_fd == -1):
                base = scratch  # the working directory, which the code cannot change
            elif _type(dir_fd) is _int:
                base = resolve(dir_fd, None)
                if base is None:
                    return None
            else:
                return None
            path = base + "/" + path
        parts = []
        for part in path.split("/"):
            if part == "..":
                return None  # refused rather than resolved: ".." through a symlink goes elsewhere
            if part and part != ".":
                parts.append(part)
        return "/" + "/".join(parts)

    def inside(path: str | None, roots: tuple[str, ...]) -> bool:
        """Whether `path` is one of `roots` or lies below one."""
        if path is None:
            return False
        return _any(path == root or path.startswith(root + "/") for root in roots)

    def check_open(path: Any, mode: Any, flags: Any) -> str | None:
        """Why this open is refused, or None."""
        if _type(path) is _int:
            return None  # wraps a descriptor that was itself opened through this check
        resolved = resolve(path, None)
        writing = _type(flags) is not _int or (flags & write_flags) != 0
        mode_text = text(mode)
        if mode_text is not None:
            for char in mode_text:
                writing = writing or char in "wax+"
        # os.open (mode None) can open directories, and a directory descriptor given as dir_fd
        # to a later os.open escapes every path check (its event omits dir_fd): scratch only.
        scratch_only = writing or mode is None
        if resolved is not None and inside(resolved, scratch_roots if scratch_only else readable):
            in_scratch = inside(resolved, scratch_roots)
            try:
                kind = _stat(resolved).st_mode & 0o170000
            except _oserror:
                kind = 0
            if not (in_scratch and kind in (0o020000, 0o060000)):  # no device nodes
                return None
        if writing:
            rule = "writing is only allowed inside the scratch directory"
        elif mode is None:
            rule = "os.open is only allowed inside the scratch directory"
        else:
            rule = "reading is only allowed inside the scratch directory or the stdlib"
        shown = _str_repr(resolved) if resolved is not None else unsupported
        shown_mode = _str_repr(mode_text) if mode_text is not None else "None"
        return f"sandbox blocked open({shown}, {shown_mode}): {rule}"

    def check_paths(event: str, args: tuple[Any, ...]) -> str | None:
        """Why this file-system event is refused, or None."""
        for index, fd_index, access in path_events[event]:
            if index >= _len(args) or args[index] is None:
                continue
            dir_fd = args[fd_index] if fd_index is not None and fd_index < _len(args) else None
            resolved = resolve(args[index], dir_fd)
            if not inside(resolved, scratch_roots if access == "w" else readable):
                shown = _str_repr(resolved) if resolved is not None else unsupported
                where = "the scratch directory" if access == "w" else "the scratch directory or the stdlib"
                return f"sandbox blocked {event}({shown}): only paths inside {where} are allowed"
        return None

    def forbid(message: str) -> None:
        """Write the `forbidden` report and end the process here and now."""
        error = _quote("PermissionError: " + message)
        line = (
            marker
            + b'{"status": "forbidden", "error": '
            + error.encode()
            + b', "stdout": "", "value": null}\n'
        )
        while line:
            try:
                line = line[_write(report_fd, line) :]
            except _oserror:
                break
        _exit(0)

    def guard(event: str, args: tuple[Any, ...]) -> None:
        message = None
        reason = blocked_events.get(event)
        for prefix, prefix_reason in blocked_prefixes:
            if reason is None and event.startswith(prefix):
                reason = prefix_reason
        if reason is not None:
            message = f"sandbox blocked {event}: {reason} is not allowed"
        elif event == "import":
            name = text(args[0]) or ""
            # Every component: an extension module loads by its last one ("x._posixsubprocess").
            if _any(part in blocked_imports for part in name.split(".")):
                message = f"sandbox blocked import of module {_str_repr(name)}"
        elif event == "open":
            message = check_open(args[0], args[1], args[2])
        elif event in path_events:
            message = check_paths(event, args)
        if message is not None:
            forbid(message)

    return guard


def uses_pathlib(code: str) -> bool:
    """Whether the code names pathlib: the child then imports it before the code runs (see
    `make_guard`)."""
    return "pathlib" in code


def set_limits(limits: dict[str, Any]) -> None:
    """Apply the CPU, memory, file-size, process and core-dump limits to this process."""
    cpu = max(1, -int(-limits["cpu_seconds"] // 1))  # RLIMIT_CPU counts whole seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    memory = limits["memory_mb"] * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # No new processes or threads (root is exempt from this limit; the hook still blocks forks).
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))


def deny_attach(action: int, *_args: Any) -> int:
    """SQLite authorizer: ATTACH could open (even create) any database file on the system."""
    return (
        sqlite3.SQLITE_DENY if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH) else sqlite3.SQLITE_OK
    )


def open_databases(names: list[str]) -> dict[str, sqlite3.Connection]:
    """Open each `<name>.db` in the working directory read-only, with ATTACH refused."""
    connections = {}
    for name in names:
        connection = sqlite3.connect(f"file:{name}.db?mode=ro", uri=True)
        connection.set_authorizer(deny_attach)
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        connections[name] = connection
    return connections


def close_import_back_doors() -> None:
    """Take away the ways to (re)create modules that raise no `import` audit event.

    `_imp.create_builtin` makes a fresh copy of any builtin module (`posix` with every function,
    say): every builtin module that is allowed is imported now, and the function replaced. Imports
    read no `.pyc` (the cache prefix names a folder that does not exist), so that unmarshalling
    code, a classic way round an audit hook, can be refused outright.
    """
    for name in sys.builtin_module_names:
        if name not in BLOCKED_IMPORTS and name not in sys.modules:
            __import__(name)

    def create_builtin(spec: Any, _audit: Callable[..., None] = sys.audit) -> Any:
        _audit("_imp.create_builtin", spec.name)  # refused by the hook, which ends the run
        raise ImportError(f"sandbox blocked creating the builtin module {spec.name!r}")

    _imp.create_builtin = create_builtin
    sys.pycache_prefix = NO_PYC_PREFIX
    for module in (os, posix):
        for name in ("pidfd_open", "mknod"):
            if hasattr(module, name):
                delattr(module, name)


def read_roots() -> tuple[str, ...]:
    """Where the code may read besides its scratch directory: the stdlib and time zone data."""
    roots = [os.path.realpath(entry) for entry in sys.path if os.path.isdir(entry)]
    roots += [path for path in TIMEZONE_DIRS if os.path.isdir(path)]
    roots.append(NO_PYC_PREFIX)
    return tuple(dict.fromkeys(roots))


def describe(error: BaseException) -> str:
    """`Type: message`, plus the line of the sandboxed code where it was raised."""
    if isinstance(error, SyntaxError) and error.filename == CODE_FILENAME:
        return f"{type(error).__name__}: {error.msg} (line {error.lineno})"
    line = None
    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code.co_filename == CODE_FILENAME:
            line = traceback.tb_lineno
        traceback = traceback.tb_next
    text = f"{type(error).__name__}: {error}"
    return f"{text} (line {line})" if line is not None else text


def run(job: dict[str, Any], scratch: str, report_fd: int) -> dict[str, Any]:
    """Set everything up, run the code, and return the report (never raises).

    A forbidden event does not come back here: the hook writes its report and ends the process.
    """
    limits = job["limits"]
    try:
        connections = open_databases(job["databases"])
    except sqlite3.Error as failure:
        return {"status": "error", "error": f"could not open the databases: {describe(failure)}"}
    pathlib = __import__("pathlib") if uses_pathlib(job["code"]) else None
    set_limits(limits)
    close_import_back_doors()
    try:
        code = compile(job["code"], CODE_FILENAME, "exec")
    except (SyntaxError, ValueError) as failure:
        return {"status": "error", "error": describe(failure)}
    kwargs = {**connections, **job["payload"]}
    capture = OutputCapture(limits["max_output_bytes"])
    cpu_exceeded: list[bool] = []

    def on_sigxcpu(_signum: int, _frame: Any) -> None:
        # Raise once: the kernel repeats SIGXCPU every second until the hard limit kills us,
        # and a second raise could land while the report is being written.
        if not cpu_exceeded:
            cpu_exceeded.append(True)
            raise CpuTimeExceeded

    signal.signal(signal.SIGXCPU, on_sigxcpu)
    reserve = bytearray(1 << 20)  # freed after a MemoryError, so the report can still be written
    sys.stdout = capture
    if job.get("audit_hook", True):
        sys.addaudithook(make_guard(scratch, read_roots(), report_fd, pathlib))
    try:
        status, value, error = call(code, job["function"], kwargs, limits["max_output_bytes"])
    except CpuTimeExceeded:  # raised while an exception of the code was being handled
        status, value, error = "timeout", None, None
    finally:
        # Ignored from now on: the hard limit (one second later) still ends a runaway report.
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        sys.stdout = sys.__stdout__
        del reserve
    if cpu_exceeded:
        status, value = "timeout", None
        error = f"CPU time limit of {limits['cpu_seconds']:g}s exceeded"
    elif status == "memory":
        error = f"MemoryError: memory limit of {limits['memory_mb']} MB exceeded"
    return {"status": status, "value_json": value, "error": error, "stdout": capture.getvalue()}


def call(code: Any, name: str, kwargs: dict[str, Any], limit: int) -> tuple[str, str | None, str | None]:
    """Run the module code, call the function, encode its value: (status, value JSON, error).

    Everything the code left behind (its globals, the frames of a traceback) is released when
    this returns, which is what lets a report follow a MemoryError.
    """
    namespace: dict[str, Any] = {"__name__": "__sandbox__", "__builtins__": builtins}
    try:
        exec(code, namespace)
        function = namespace.get(name)
        if not callable(function):
            raise NameError(f"the code defines no function named {name!r}")
        return "ok", encode(function(**kwargs), limit), None
    except CpuTimeExceeded:
        return "timeout", None, None
    except MemoryError:
        return "memory", None, None
    except ReturnValueError as caught:
        return "error", None, f"{type(caught).__name__}: {caught}"
    except BaseException as caught:
        return "error", None, describe(caught)


def encode(value: Any, limit: int) -> str:
    """The return value as JSON text, or ReturnValueError saying why it cannot be."""
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:
        raise ReturnValueError(f"the return value is not JSON-serializable: {error}") from None
    if len(text) > limit:
        raise ReturnValueError(f"the return value is {len(text)} bytes of JSON, over the {limit}-byte limit")
    return text


def emit(fd: int, report: dict[str, Any]) -> None:
    """Write the report as one marked line: the value goes through as the JSON it already is."""
    value_json = report.pop("value_json", None) or "null"
    report.setdefault("stdout", "")
    head = json.dumps(report, ensure_ascii=True)
    line = f'{RESULT_MARKER}{head[:-1]}, "value": {value_json}}}\n'.encode()
    view = memoryview(line)
    while view:
        view = view[os.write(fd, view) :]


# -- the sandbox server ------------------------------------------------------------------------
#
# The server learns nothing of any run. For each job it forks a supervisor and waits for it;
# the supervisor forks the child that reads the job and runs it, relays what the child writes
# (its report, and its stdout and stderr together) to the parent in frames, waits for it,
# empties the scratch and exits, its memory with it. All the server hears back is whether
# to go on (the supervisor's exit code). So each supervisor and child start from the same
# memory, the server's as it was before the first job. Frames are a kind byte, a 4-byte
# big-endian length and the bytes: READY once, then per run REPORT and OUTPUT chunks and one
# END (`{"returncode": ..., "cpu": ..., "serving": ...}`: the child's exit code and CPU
# seconds, and whether the server takes another run).

READY, REPORT, OUTPUT, END = b"r", b"o", b"e", b"x"
NO_JOB = 75  # the child's exit code when stdin ended before a job: the parent is gone
CHILD_FAILED = 70  # the child's exit code when setting up a run failed (a traceback on stderr)
RELAY_BYTES = 1 << 16
PR_SET_DUMPABLE = 4
MAX_DESCRIPTORS = 1 << 16


def serve() -> None:
    """Serve runs until stdin ends, a supervisor fails, or the scratch cannot be emptied."""
    _become_undumpable()
    for number in (signal.SIGINT, signal.SIGTERM):  # handled, a child's kill would reach init
        signal.signal(number, signal.SIG_DFL)
    for name in sys.builtin_module_names:  # imported once here, not in every child
        if name not in BLOCKED_IMPORTS and name not in sys.modules:
            __import__(name)
    __import__("pathlib")  # for the runs whose code names it (`make_guard`)
    scratch = os.getcwd()
    _frame(1, READY, b"")
    while True:
        select.select([0], [], [])  # a job (or the end of stdin) is there: the child reads it
        pid = os.fork()
        if pid == 0:
            _supervise(scratch)  # never returns
        _pid, status = os.waitpid(pid, 0)
        if status != 0:  # retire: the scratch is not empty, or the supervisor died mid-run
            os._exit(0)


def _supervise(scratch: str) -> None:
    """One run, in a process of its own: the child, its frames, the scratch emptied after it."""
    try:
        buffer = bytearray(RELAY_BYTES)
        report_r, report_w = os.pipe()
        output_r, output_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(report_r)
            os.close(output_r)
            _serve_one(report_w, output_w)  # never returns
        os.close(report_w)
        os.close(output_w)
        _relay({report_r: REPORT, output_r: OUTPUT}, buffer)
        _pid, status, usage = os.wait4(pid, 0)
        returncode = os.waitstatus_to_exitcode(status)
        serving = returncode != NO_JOB and removed_all(scratch)
        end = {"returncode": returncode, "cpu": usage.ru_utime + usage.ru_stime, "serving": serving}
        _frame(1, END, json.dumps(end).encode())
    except BaseException:
        os._exit(1)
    os._exit(0 if serving else 1)


def _become_undumpable() -> None:
    """Make this process undumpable, so that a child (the same user) cannot open its memory
    or descriptors under /proc; then forget ctypes, which the children must not find loaded."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE) failed")
    del libc, ctypes
    for name in [m for m in sys.modules if m in ("ctypes", "_ctypes") or m.startswith("ctypes.")]:
        del sys.modules[name]
    gc.collect()


def _serve_one(report_fd: int, output_fd: int) -> None:
    """In the forked child: take the job from stdin, run it, write the report, exit."""
    try:
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.closerange(3, report_fd)  # all else it inherited (the frame channel): the code gets none
        os.closerange(report_fd + 1, MAX_DESCRIPTORS)
        job = _read_job(0, os.getcwd())
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)  # the code cannot read the next job
        os.close(null)
        if job is None:
            os._exit(NO_JOB)
        report = run(job, os.getcwd(), report_fd)
    except BaseException:
        import traceback

        traceback.print_exc()
        os._exit(CHILD_FAILED)
    emit(report_fd, report)
    os._exit(0)


def _read_job(fd: int, scratch: str) -> dict[str, Any] | None:
    """The job frame: a 4-byte length and the job's JSON, then each input's bytes in the
    order of `job["inputs"]` ([name, size] pairs), written read-only into `scratch`."""
    head = _read_exactly(fd, 4)
    if head is None:
        return None
    job = json.loads(_read_exactly(fd, int.from_bytes(head, "big")) or b"")
    for name, size in job.pop("inputs"):
        path = os.path.join(scratch, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        left = size
        while left:
            chunk = os.read(fd, min(left, RELAY_BYTES))
            if not chunk:
                raise EOFError("the job ended inside an input")
            os.write(out, chunk)
            left -= len(chunk)
        os.close(out)
    return job


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts, left = [], size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            if left == size:
                return None
            raise EOFError("the job ended early")
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _relay(sources: dict[int, bytes], buffer: bytearray) -> None:
    """Forward what the child writes on each descriptor as frames of its kind, until each ends."""
    view = memoryview(buffer)
    while sources:
        readable, _, _ = select.select(list(sources), [], [])
        for fd in readable:
            count = os.readv(fd, [buffer])
            if count == 0:
                os.close(fd)
                del sources[fd]
            else:
                _frame(1, sources[fd], view[:count])


def _frame(fd: int, kind: bytes, data: bytes | memoryview) -> None:
    for part in (kind + len(data).to_bytes(4, "big"), data):
        view = memoryview(part)
        while view:
            view = view[os.write(fd, view) :]


def removed_all(folder: str) -> bool:
    """Remove everything inside `folder`, locked folders included; whether it is empty now."""
    try:
        _remove_below(folder)
        return not os.listdir(folder)
    except OSError:
        return False


def _remove_below(folder: str) -> None:
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            os.chmod(entry.path, 0o700)  # a folder the code locked (mode 0) is the same user's to open
            _remove_below(entry.path)
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


if __name__ == "__main__":
    serve()
