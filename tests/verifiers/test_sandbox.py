"""The sandbox runs untrusted checks: exact values back, and every escape attempt reported as data."""

import base64
import dis
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from coworkenv.verifiers import _sandbox_boundary as boundary
from coworkenv.verifiers import sandbox
from coworkenv.verifiers._sandbox_child import make_guard
from coworkenv.verifiers.sandbox import SandboxLimits, SandboxResult, run_sandboxed, run_sandboxed_async

# The wall limit is generous so that the CPU limit is what fires, even on a busy machine;
# no test asserts how long anything took (shared machines are noisy).
FAST = SandboxLimits(cpu_seconds=1, wall_seconds=30, memory_mb=256)


def database(*rows: tuple[int, str]) -> bytes:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE tickets (id INTEGER PRIMARY KEY, status TEXT)")
    connection.executemany("INSERT INTO tickets VALUES (?, ?)", rows)
    connection.commit()
    return connection.serialize()


@pytest.fixture(scope="module")
def databases() -> dict[str, bytes]:
    return {"initial": database((1, "open"), (2, "open")), "final": database((1, "open"), (2, "closed"))}


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        yield server


def test_a_check_reads_both_read_only_databases_and_returns_the_exact_value(
    databases: dict[str, bytes],
) -> None:
    code = """
def check(initial, final, ticket_id):
    before = initial.execute("SELECT status FROM tickets WHERE id = ?", (ticket_id,)).fetchone()[0]
    after = final.execute("SELECT status FROM tickets WHERE id = ?", (ticket_id,)).fetchone()[0]
    print("checked", ticket_id)
    return {"before": before, "after": after, "changed": before != after, "ids": [1, 2]}
"""
    result = run_sandboxed(code, "check", databases=databases, payload={"ticket_id": 2})
    assert result.status == "ok", result.error
    assert result.value == {"before": "open", "after": "closed", "changed": True, "ids": [1, 2]}
    assert result.stdout == "checked 2\n"
    assert result.error is None


def test_files_are_readable_from_the_scratch_directory() -> None:
    code = "def check():\n    return open('data/notes.txt').read()\n"
    result = run_sandboxed(code, "check", files={"data/notes.txt": b"hello"})
    assert (result.status, result.value) == ("ok", "hello")


def test_writing_to_a_provided_database_fails_as_read_only(databases: dict[str, bytes]) -> None:
    code = "def check(final, **_):\n    final.execute(\"UPDATE tickets SET status = 'gone'\")\n"
    result = run_sandboxed(code, "check", databases=databases)
    assert result.status == "error"
    assert result.error == "OperationalError: attempt to write a readonly database (line 2)"


def test_attaching_another_database_through_sql_is_refused(
    databases: dict[str, bytes], tmp_path: Path
) -> None:
    target = tmp_path / "attached.db"
    code = "def check(final, path, **_):\n    final.execute(f\"ATTACH 'file:{path}?mode=rwc' AS other\")\n"
    result = run_sandboxed(code, "check", databases=databases, payload={"path": str(target)})
    assert (result.status, result.error) == ("error", "DatabaseError: not authorized (line 2)")
    assert not target.exists()


def test_writing_etc_passwd_is_forbidden_and_leaves_it_unchanged() -> None:
    before = Path("/etc/passwd").read_bytes()
    code = (
        "def check():\n    with open('/etc/passwd', 'a') as f:\n        f.write('evil::0:0::/:/bin/sh\\n')\n"
    )
    result = run_sandboxed(code, "check")
    assert result.status == "forbidden"
    assert result.error == (
        "PermissionError: sandbox blocked open('/etc/passwd', 'a'): "
        "writing is only allowed inside the scratch directory"
    )
    assert Path("/etc/passwd").read_bytes() == before


@pytest.mark.parametrize(
    "statement",
    [
        "open(path, 'w').write('x')",
        "import os; os.close(os.open(path, os.O_WRONLY | os.O_CREAT))",
        "import pathlib; pathlib.Path(path).write_text('x')",
        "import shutil; shutil.copyfile('mine.txt', path)",
    ],
)
def test_writing_a_canary_outside_the_scratch_is_forbidden(statement: str, tmp_path: Path) -> None:
    canary = tmp_path / "canary.txt"
    code = f"def check(path):\n    open('mine.txt', 'w').write('x')\n    {statement}\n"
    result = run_sandboxed(code, "check", payload={"path": str(canary)})
    assert result.status == "forbidden", result
    assert "sandbox blocked" in result.error and repr(str(canary)) in result.error
    assert not canary.exists()


COPY_BY_PATHS = """
import shutil
def check():
    paths = {module}
    open("a.txt", "w").write("x")
    source, target = paths.Path("a.txt"), paths.Path("b.txt")
    str(source), str(target)
    shutil.copyfile(source, target)
    return open("b.txt").read()
"""


def test_pathlib_paths_reach_the_path_guard_only_from_code_that_names_pathlib() -> None:
    """shutil's events carry the path objects themselves: the guard reads pathlib's when the
    child imported pathlib for the code (it names it), and refuses them otherwise."""
    named = run_sandboxed(COPY_BY_PATHS.format(module='__import__("pathlib")'), "check")
    assert (named.status, named.value) == ("ok", "x")
    unnamed = run_sandboxed(COPY_BY_PATHS.format(module='__import__("path" + "lib")'), "check")
    assert (unnamed.status, unnamed.error) == (
        "forbidden",
        "PermissionError: sandbox blocked shutil.copyfile(a path with '..' or of an unsupported type): "
        "only paths inside the scratch directory or the stdlib are allowed",
    )


def test_writing_inside_the_scratch_directory_is_allowed() -> None:
    code = """
import os
def check():
    os.makedirs("out")
    with open("out/report.txt", "w") as f:
        f.write("done")
    os.rename("out/report.txt", "out/final.txt")
    return [open("out/final.txt").read(), sorted(os.listdir("out"))]
"""
    result = run_sandboxed(code, "check")
    assert (result.status, result.value) == ("ok", ["done", ["final.txt"]])


def test_reading_outside_the_scratch_and_the_stdlib_is_forbidden() -> None:
    result = run_sandboxed("def check():\n    return open('/etc/hostname').read()\n", "check")
    assert result.status == "forbidden"
    assert "sandbox blocked open('/etc/hostname', 'r'): reading is only allowed" in result.error


def test_the_stdlib_stays_importable() -> None:
    code = """
import email.utils, statistics, typing, zoneinfo, datetime
def check():
    moment = datetime.datetime(2026, 3, 2, 9, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
    return [email.utils.parseaddr("Ana <ana@example.com>"), statistics.mean([1, 2, 3]), moment.isoformat()]
"""
    result = run_sandboxed(code, "check")
    assert result.status == "ok", result.error
    assert result.value == [["Ana", "ana@example.com"], 2, "2026-03-02T09:00:00+01:00"]


@pytest.mark.parametrize(
    ("statement", "blocked"),
    [
        ("import socket; socket.socket()", "socket.__new__"),
        ("import socket; socket.create_connection(('127.0.0.1', port), timeout=1)", "socket.getaddrinfo"),
        ("__import__('socket').socket().connect(('127.0.0.1', port))", "socket.__new__"),
        (
            "import importlib; importlib.import_module('socket').create_connection(('127.0.0.1', port))",
            "socket.getaddrinfo",
        ),
    ],
)
def test_opening_a_socket_is_forbidden(statement: str, blocked: str, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    result = run_sandboxed(f"def check(port):\n    {statement}\n", "check", payload={"port": port})
    assert result.status == "forbidden"
    assert result.error == f"PermissionError: sandbox blocked {blocked}: network access is not allowed"
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody connected


@pytest.mark.parametrize(
    ("statement", "blocked"),
    [
        ("import subprocess; subprocess.run(['true'])", "import of module 'subprocess'"),
        ("import os; os.system('true')", "os.system: running shell commands is not allowed"),
        ("import os; os.popen('true').read()", "import of module 'subprocess'"),
        ("import os; os.execv('/bin/true', ['true'])", "os.exec: running programs is not allowed"),
        ("import os; os.posix_spawn('/bin/true', ['true'], {})", "os.posix_spawn: starting processes"),
        ("import ctypes", "import of module 'ctypes'"),
        (
            "import importlib; importlib.import_module('_posixsubprocess')",
            "import of module '_posixsubprocess'",
        ),
    ],
)
def test_starting_a_process_is_forbidden(statement: str, blocked: str) -> None:
    result = run_sandboxed(f"def check():\n    {statement}\n", "check")
    assert result.status == "forbidden"
    assert result.error.startswith(f"PermissionError: sandbox blocked {blocked}")


def test_a_fork_bomb_is_stopped_at_the_first_fork() -> None:
    code = "import os\ndef check():\n    while True:\n        os.fork()\n"
    result = run_sandboxed(code, "check", limits=FAST)
    assert result.status == "forbidden"
    assert result.error == "PermissionError: sandbox blocked os.fork: starting processes is not allowed"


def test_a_swallowed_violation_still_marks_the_run_forbidden() -> None:
    code = "import os\ndef check():\n    try:\n        os.system('true')\n    except PermissionError:\n        pass\n    return 1\n"
    result = run_sandboxed(code, "check")
    assert (result.status, result.value) == ("forbidden", None)
    assert "os.system" in result.error


@pytest.mark.parametrize(
    ("code", "blocked"),
    [
        ("import marshal\ndef check():\n    marshal.loads(marshal.dumps(1))\n", "marshal.loads"),
        ("def check():\n    (lambda: 1).__code__.replace(co_consts=(2,))\n", "code.__new__"),
        ("import gc\ndef check():\n    gc.get_objects()\n", "gc.get_objects"),
        ("import sys\ndef check():\n    sys.settrace(None)\n", "sys.settrace"),
        ("import sqlite3\ndef check():\n    sqlite3.connect(':memory:')\n", "sqlite3.connect"),
    ],
)
def test_ways_around_the_audit_hook_are_forbidden(code: str, blocked: str) -> None:
    result = run_sandboxed(code, "check")
    assert result.status == "forbidden"
    assert result.error.startswith(f"PermissionError: sandbox blocked {blocked}:")


def test_the_audit_hook_looks_up_no_global_name() -> None:
    """Globals and builtins can be rebound by the code; the hook must not depend on them."""
    make_guard("/tmp/scratch", ("/usr/lib",), 1)

    def nested(code: types.CodeType) -> Iterator[types.CodeType]:
        for constant in code.co_consts:
            if isinstance(constant, types.CodeType):
                yield constant
                yield from nested(constant)

    lookups = [
        (code.co_name, instruction.argval)
        for code in nested(make_guard.__code__)
        for instruction in dis.get_instructions(code)
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    ]
    assert lookups == []


def test_an_endless_loop_ends_on_the_cpu_limit() -> None:
    code = "def check():\n    while True:\n        pass\n"
    result = run_sandboxed(code, "check", limits=FAST)
    assert (result.status, result.error) == ("timeout", "CPU time limit of 1s exceeded")


def test_a_loop_inside_c_code_ends_on_the_hard_cpu_limit() -> None:
    """The SIGXCPU handler cannot interrupt C code: the kernel's SIGKILL ends it a second later."""
    result = run_sandboxed("def check():\n    return sum(range(10**12))\n", "check", limits=FAST)
    assert (result.status, result.error) == ("timeout", "CPU time limit of 1s exceeded")


def test_a_sleeping_check_ends_on_the_wall_clock_limit() -> None:
    code = "import time\ndef check():\n    time.sleep(30)\n"
    result = run_sandboxed(code, "check", limits=SandboxLimits(wall_seconds=1))
    assert (result.status, result.error) == ("timeout", "wall-clock time limit of 1s exceeded")


@pytest.mark.parametrize(
    "body",
    ["return b'x' * 10**10", "data = []\n    while True:\n        data.append(bytearray(10**6))"],
)
def test_a_huge_allocation_ends_on_the_memory_limit(body: str) -> None:
    result = run_sandboxed(f"def check():\n    {body}\n", "check", limits=FAST)
    assert (result.status, result.error) == ("memory", "MemoryError: memory limit of 256 MB exceeded")


def test_a_syntax_error_is_reported_with_its_line() -> None:
    result = run_sandboxed("import json\n\ndef check(:\n    return 1\n", "check")
    assert (result.status, result.error) == ("error", "SyntaxError: invalid syntax (line 3)")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("rows = []\n    return rows[3]", "IndexError: list index out of range (line 3)"),
        ("return check()", "RecursionError: maximum recursion depth exceeded (line 2)"),
        ("import sys\n    sys.exit(3)", "SystemExit: 3 (line 3)"),
    ],
)
def test_an_exception_is_reported_with_its_type_message_and_line(body: str, error: str) -> None:
    result = run_sandboxed(f"def check():\n    {body}\n", "check")
    assert (result.status, result.error) == ("error", error)


def test_a_missing_function_is_an_error() -> None:
    result = run_sandboxed("def other():\n    return 1\n", "check")
    assert (result.status, result.error) == ("error", "NameError: the code defines no function named 'check'")


@pytest.mark.parametrize(
    ("returned", "reason"),
    [
        ("{1, 2}", "Object of type set is not JSON serializable"),
        ("float('nan')", "Out of range float values"),
    ],
)
def test_a_return_value_that_is_not_json_is_an_error(returned: str, reason: str) -> None:
    result = run_sandboxed(f"def check():\n    return {returned}\n", "check")
    assert result.status == "error"
    assert result.error.startswith(f"ReturnValueError: the return value is not JSON-serializable: {reason}")


def test_output_beyond_the_limit_is_truncated_and_an_oversized_value_is_an_error() -> None:
    limits = SandboxLimits(max_output_bytes=100)
    printed = run_sandboxed("def check():\n    print('x' * 500)\n    return 1\n", "check", limits=limits)
    assert (printed.status, printed.value) == ("ok", 1)
    assert printed.stdout == "x" * 100 + "\n[output truncated]"
    returned = run_sandboxed("def check():\n    return 'x' * 500\n", "check", limits=limits)
    assert (returned.status, returned.error) == (
        "error",
        "ReturnValueError: the return value is 502 bytes of JSON, over the 100-byte limit",
    )


def test_exiting_without_a_result_is_an_error() -> None:
    result = run_sandboxed("import os\ndef check():\n    os._exit(3)\n", "check")
    assert result.status == "error"
    assert result.error == "RuntimeError: the sandbox process exited with code 3 without a result"


def test_the_scratch_is_private_to_each_run_and_leaves_nothing_on_the_host() -> None:
    before = set(Path(tempfile.gettempdir()).glob("coworkenv-sandbox-*"))
    code = """
import os
def check():
    seen = sorted(os.listdir("."))
    os.makedirs("locked/inner")
    os.chmod("locked", 0)
    return [os.getcwd(), seen]
"""
    first = run_sandboxed(code, "check", files={"input.txt": b"data"})
    second = run_sandboxed(code, "check", files={"input.txt": b"data"})
    assert (first.status, first.value) == ("ok", ["/scratch", ["input.txt"]])
    assert (second.status, second.value) == ("ok", ["/scratch", ["input.txt"]])  # no "locked"
    assert set(Path(tempfile.gettempdir()).glob("coworkenv-sandbox-*")) == before


def test_inputs_are_read_only_and_the_code_runs_as_nobody() -> None:
    code = """
import os
def check():
    try:
        open("input.txt", "a")
    except OSError as error:  # the kernel's refusal, not the hook's: writing is allowed here
        return [os.getuid(), os.getgid(), os.getgroups(), str(error)]
"""
    result = run_sandboxed(code, "check", files={"input.txt": b"data"})
    assert (result.status, result.value) == (
        "ok",
        [65534, 65534, [], "[Errno 13] Permission denied: 'input.txt'"],
    )


@pytest.mark.skipif(boundary.seccomp_filter() is None, reason="no seccomp filter for this architecture")
def test_the_code_runs_without_capabilities_under_a_seccomp_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "AUDIT_HOOK", False)
    code = """
def check():
    keys = ("CapEff", "NoNewPrivs", "Seccomp")
    return [line.split()[1] for line in open("/proc/self/status") if line.split(":")[0] in keys]
"""
    result = run_sandboxed(code, "check")
    assert (result.status, result.value) == ("ok", ["0000000000000000", "1", "2"])


def test_without_bubblewrap_nothing_runs_and_the_error_names_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    canary = tmp_path / "ran"
    sandbox.stop_sandbox_servers()  # the next run sets a sandbox up again
    monkeypatch.setattr(boundary, "SYSTEM_PATH", str(tmp_path))
    code = "def check(path):\n    open(path, 'w').write('x')\n"
    result = run_sandboxed(code, "check", payload={"path": str(canary)})
    assert (result.status, result.error) == (
        "unavailable",
        "the sandbox needs bubblewrap (Debian package bubblewrap); "
        "install it (Debian: apt-get install bubblewrap) or run `make`",
    )
    assert not canary.exists()


def test_refused_namespaces_are_reported_as_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = "echo 'bwrap: No permissions to create new namespace' >&2; exit 1"
    sandbox.stop_sandbox_servers()
    monkeypatch.setattr(sandbox, "boundary_command", lambda *args, **kwargs: ["/bin/sh", "-c", refused])
    result = run_sandboxed("def check():\n    return 1\n", "check")
    assert result.status == "unavailable"
    assert result.error == (
        "the sandbox could not be set up (bwrap: No permissions to create new namespace); "
        + sandbox.SETUP_HINT
    )


def test_a_long_error_message_is_cut_to_a_bounded_line() -> None:
    result = run_sandboxed("def check():\n    raise ValueError('x' * 100_000)\n", "check")
    assert result.status == "error"
    assert result.error == "ValueError: " + "x" * (sandbox.MAX_ERROR_CHARS - 30) + " [error truncated]"
    assert len(result.error) == sandbox.MAX_ERROR_CHARS


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        (
            {"databases": {"not-a-name": b""}},
            "ValueError: database name 'not-a-name' is not a Python identifier",
        ),
        (
            {"files": {"../escape.txt": b""}},
            "ValueError: file name '../escape.txt' must be a plain relative path",
        ),
        ({"files": {"/etc/x": b""}}, "ValueError: file name '/etc/x' must be a plain relative path"),
    ],
)
def test_bad_names_in_the_job_are_errors_not_exceptions(kwargs: dict, error: str) -> None:
    result = run_sandboxed("def check(**kw):\n    return 1\n", "check", **kwargs)
    assert (result.status, result.error) == ("error", error)


def test_a_payload_that_is_not_a_dict_is_a_caller_bug() -> None:
    with pytest.raises(TypeError, match="payload must be a dict"):
        run_sandboxed("def check():\n    return 1\n", "check", payload=[1])


async def test_the_async_variant_leaves_the_event_loop_free(databases: dict[str, bytes]) -> None:
    finished: dict[str, float] = {}

    async def sandboxed() -> None:
        result = await run_sandboxed_async(
            "def check(final, **_):\n    return final.execute('SELECT count(*) FROM tickets').fetchone()[0]\n",
            "check",
            databases=databases,
        )
        assert (result.status, result.value) == ("ok", 2)
        finished["sandbox"] = time.monotonic()

    async def other_task() -> None:
        await anyio.lowlevel.checkpoint()
        finished["other"] = time.monotonic()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(sandboxed)
            group.start_soon(other_task)
    assert finished["other"] < finished["sandbox"]


# The hostile battery: every escape reported against the earlier sandbox, run by the caller
# (root in CI) and by an unprivileged user, with the audit hook in place and without it (to
# show the OS boundary holds alone). Each case names its outcome exactly, and no case may let
# the secret out or take the parent down.
SECRET = "s3cr3t-7f1c-do-not-leak"
SECRET_ENV = "COWORKENV_TEST_SECRET"
WRAPPER = """
def check(**kw):
    try:
        return attempt(kw)
    except Exception as error:
        return f"{type(error).__name__}: {error}"

def attempt(kw):
"""
BLOCKED_READ = "reading is only allowed inside the scratch directory or the stdlib"


def _body(text: str) -> str:
    return "\n".join("    " + line for line in text.strip("\n").splitlines())


# (name, body of attempt(kw), outcome with the hook, outcome without it or None where the
# case is about the hook itself). Outcomes are (status, error) for "forbidden", else
# (status, value); "{secret_path}" and friends are filled in per run.
BATTERY: list[tuple[str, str, tuple[str, Any], tuple[str, Any] | None]] = [
    (
        "read-system-password-hashes",
        "return open('/etc/shadow').read()",
        ("forbidden", f"PermissionError: sandbox blocked open('/etc/shadow', 'r'): {BLOCKED_READ}"),
        ("ok", "FileNotFoundError: [Errno 2] No such file or directory: '/etc/shadow'"),
    ),
    (
        "read-a-root-only-file",
        "return open(kw['secret_path']).read()",
        ("forbidden", "PermissionError: sandbox blocked open('{secret_path}', 'r'): " + BLOCKED_READ),
        ("ok", "FileNotFoundError: [Errno 2] No such file or directory: '{secret_path}'"),
    ),
    (
        "switch-the-hook-off-through-the-traceback-frame-locals",
        """
try:
    open('/etc/shadow')
except PermissionError as error:
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    for value in tb.tb_frame.f_locals.values():
        if isinstance(value, list):
            value[:] = [True]
return open(kw['secret_path']).read()
""",
        ("forbidden", f"PermissionError: sandbox blocked open('/etc/shadow', 'r'): {BLOCKED_READ}"),
        ("ok", "FileNotFoundError: [Errno 2] No such file or directory: '/etc/shadow'"),
    ),
    (
        "kill-the-parent",
        """
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
os.kill(-1, signal.SIGKILL)
return 'alive'
""",
        ("forbidden", "PermissionError: sandbox blocked os.kill: sending signals is not allowed"),
        # Its parent is its run's supervisor: killing it ends the run (an error, and a new
        # sandbox for the next run). The namespace's init, the sandbox server, ignores it;
        # beyond, nothing is in sight.
        ("error", None),
    ),
    (
        "fork-an-orphan",
        "import os\nreturn os.fork()",
        ("forbidden", "PermissionError: sandbox blocked os.fork: starting processes is not allowed"),
        ("ok", "BlockingIOError: [Errno 11] Resource temporarily unavailable"),
    ),
    (
        "read-the-parent-environment-through-proc",
        f"""
import os
pids = sorted(p for p in os.listdir('/proc') if p.isdigit())
found = []
for pid in pids:
    try:
        if b'{SECRET_ENV}' in open(f'/proc/{{pid}}/environ', 'rb').read():
            found.append(pid)
    except OSError:
        pass
return [len(pids), found]  # the namespace's init (the sandbox server), its supervisor, itself
""",
        (
            "forbidden",
            "PermissionError: sandbox blocked os.listdir('/proc'): only paths inside the scratch "
            "directory or the stdlib are allowed",
        ),
        ("ok", [3, []]),
    ),
    (
        "write-outside-the-scratch",
        "open(kw['canary_path'], 'w').write('x')\nreturn 'written'",
        (
            "forbidden",
            "PermissionError: sandbox blocked open('{canary_path}', 'w'): "
            "writing is only allowed inside the scratch directory",
        ),
        ("ok", "FileNotFoundError: [Errno 2] No such file or directory: '{canary_path}'"),
    ),
    (
        "connect-to-a-loopback-port",
        "import socket\nsocket.create_connection(('127.0.0.1', kw['port']), timeout=2)\nreturn 'connected'",
        ("forbidden", "PermissionError: sandbox blocked socket.getaddrinfo: network access is not allowed"),
        ("ok", "ConnectionRefusedError: [Errno 111] Connection refused"),  # its own loopback
    ),
    (
        "load-posixsubprocess-through-an-extension-file-loader",
        """
import importlib.machinery, importlib.util, os, sys
folder = [p for p in sys.path if p.endswith('lib-dynload')][0]
path = os.path.join(folder, [f for f in os.listdir(folder) if f.startswith('_posixsubprocess')][0])
loader = importlib.machinery.ExtensionFileLoader('x._posixsubprocess', path)
loader.create_module(importlib.util.spec_from_loader('x._posixsubprocess', loader))
return 'loaded'
""",
        ("forbidden", "PermissionError: sandbox blocked import of module 'x._posixsubprocess'"),
        None,
    ),
    (
        "bring-posix-back-with-create-builtin",
        """
import _imp, importlib.machinery, importlib.util
_imp.create_builtin(importlib.util.spec_from_loader('posix', importlib.machinery.BuiltinImporter))
return 'created'
""",
        (
            "forbidden",
            "PermissionError: sandbox blocked _imp.create_builtin: creating builtin modules is not allowed",
        ),
        ("ok", "ImportError: sandbox blocked creating the builtin module 'posix'"),
    ),
    (
        "import-a-blocked-module-by-a-str-subclass",
        "class Name(str):\n    pass\n__import__(Name('subprocess'))\nreturn 'imported'",
        ("forbidden", "PermissionError: sandbox blocked import of module 'subprocess'"),
        None,
    ),
    (
        "attach-a-root-only-database-after-removing-the-authorizer",
        """
import sqlite3
final = kw['final']
final.set_authorizer(None)
final.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 10)
final.execute(f"ATTACH 'file:{kw['secret_db']}?mode=ro' AS other")
return final.execute('SELECT * FROM other.secrets').fetchall()
""",
        ("ok", "OperationalError: unable to open database: file:{secret_db}?mode=ro"),
        ("ok", "OperationalError: unable to open database: file:{secret_db}?mode=ro"),
    ),
    (
        "vacuum-into-a-file-outside-the-scratch",
        """
import sqlite3
final = kw['final']
final.set_authorizer(None)
final.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 10)
final.execute(f"VACUUM INTO '{kw['canary_path']}'")
return 'vacuumed'
""",
        ("ok", "OperationalError: unable to open database: {canary_path}"),
        ("ok", "OperationalError: unable to open database: {canary_path}"),
    ),
    (
        "clear-the-violations-list",
        """
import os, sys
try:
    os.system('true')
except PermissionError:
    pass
frame = sys._getframe()
while frame is not None:
    for value in frame.f_locals.values():
        if isinstance(value, list):
            value.clear()
    frame = frame.f_back
return 'cleared'
""",
        ("forbidden", "PermissionError: sandbox blocked os.system: running shell commands is not allowed"),
        ("ok", "cleared"),
    ),
]

STAGE_FOR_NOBODY = (
    'set -e; mount --bind "$1" /mnt; mount -t tmpfs -o mode=0755 coworkenv-test "$2"; '
    'mkdir -p "$1"; mount --bind /mnt "$1"; shift 2; exec "$@"'
)
DRIVER = """
import base64, json, sys
from coworkenv.verifiers import sandbox
job = json.loads(sys.stdin.read())
sandbox.AUDIT_HOOK = job.pop("audit_hook")
job["databases"] = {name: base64.b64decode(data) for name, data in job["databases"].items()}
job["limits"] = sandbox.SandboxLimits(**job["limits"])
print(sandbox.run_sandboxed(**job).model_dump_json())
"""


def _as_nobody_command() -> list[str] | str:
    """The argv prefix that runs this interpreter as uid 65534, or why it cannot be done."""
    if os.geteuid() != 0:
        return "the tests already run as an unprivileged user"
    tools = [shutil.which(name) for name in ("unshare", "setpriv")]
    if None in tools or not os.path.isdir("/mnt"):
        return "needs unshare and setpriv (util-linux) and a /mnt folder"
    prefix = os.path.realpath(sys.base_prefix)
    setpriv = [tools[1], "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    blocked = [p for p in Path(prefix).parents if not os.stat(p).st_mode & 0o001]
    if not blocked:
        return [*setpriv, sys.executable]
    # The interpreter lies under a folder nobody cannot enter (/root): show it there anyway.
    stage = [tools[0], "--mount", "--propagation", "private", "--", "/bin/sh", "-c", STAGE_FOR_NOBODY, "sh"]
    return [*stage, prefix, str(blocked[-1]), *setpriv, sys.executable]


Runner = Callable[..., SandboxResult]


@pytest.fixture(params=["caller", "nobody"])
def runner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Runner:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    if request.param == "caller":

        def run_here(code: str, *, audit_hook: bool, **kwargs: Any) -> SandboxResult:
            monkeypatch.setattr(sandbox, "AUDIT_HOOK", audit_hook)
            return run_sandboxed(code, "check", limits=FAST, **kwargs)

        return run_here
    command = _as_nobody_command()
    if isinstance(command, str):
        pytest.skip(command)

    def run_as_nobody(code: str, *, audit_hook: bool, **kwargs: Any) -> SandboxResult:
        databases = {k: base64.b64encode(v).decode() for k, v in kwargs.pop("databases", {}).items()}
        job = {"code": code, "function": "check", "databases": databases, "audit_hook": audit_hook}
        job |= {"limits": FAST.model_dump(), **kwargs}
        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1", SECRET_ENV: SECRET}
        done = subprocess.run(
            [*command, "-c", DRIVER],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr  # the parent survives every case
        return SandboxResult.model_validate_json(done.stdout)

    return run_as_nobody


@pytest.fixture
def secrets(tmp_path: Path) -> dict[str, str]:
    os.chmod(tmp_path, 0o755)  # as for any project folder: only the files are private
    secret_path = tmp_path / "secret.txt"
    secret_path.write_text(SECRET)
    secret_db = tmp_path / "secret.db"
    with sqlite3.connect(secret_db) as connection:
        connection.execute("CREATE TABLE secrets (value TEXT)")
        connection.execute("INSERT INTO secrets VALUES (?)", (SECRET,))
    connection.close()
    for path in (secret_path, secret_db):
        os.chmod(path, 0o600)
    return {
        "secret_path": str(secret_path),
        "secret_db": str(secret_db),
        "canary_path": str(tmp_path / "canary"),
    }


@pytest.mark.parametrize("audit_hook", [True, False], ids=["with-hook", "boundary-alone"])
@pytest.mark.parametrize(
    ("body", "hooked", "bare"), [case[1:] for case in BATTERY], ids=[c[0] for c in BATTERY]
)
def test_the_hostile_battery_gets_nothing_out(
    runner: Runner,
    audit_hook: bool,
    body: str,
    hooked: tuple[str, Any],
    bare: tuple[str, Any] | None,
    secrets: dict[str, str],
    databases: dict[str, bytes],
    listener: socket.socket,
) -> None:
    expected = hooked if audit_hook else bare
    if expected is None:
        pytest.skip("this escape is about the audit hook itself")
    payload = {**secrets, "port": listener.getsockname()[1]}
    result = runner(WRAPPER + _body(body), audit_hook=audit_hook, databases=databases, payload=payload)
    status, outcome = expected
    outcome = json.loads(
        json.dumps(outcome)
        .replace("{secret_path}", secrets["secret_path"])
        .replace("{secret_db}", secrets["secret_db"])
        .replace("{canary_path}", secrets["canary_path"])
    )
    if status == "forbidden":
        assert (result.status, result.error, result.value) == (status, outcome, None)
    else:
        assert (result.status, result.value) == (status, outcome), result.error
    assert SECRET not in result.model_dump_json()
    assert not os.path.exists(secrets["canary_path"])
    with pytest.raises(BlockingIOError):
        listener.accept()  # nobody connected


def test_an_fstab_field_escapes_what_would_split_it() -> None:
    assert boundary._fstab_field("/opt/my python\\3\t.11\nx") == "/opt/my\\040python\\1343\\011.11\\012x"


def test_staging_binds_each_folder_read_only_whatever_its_name() -> None:
    """As root the interpreter's folders are bind-mounted, read-only, where uid 65534 can
    reach them: one `mount` reads every bind from an fstab text, names with spaces too."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or not os.path.isdir("/var/tmp"):
        pytest.skip("staging runs only as root, with util-linux's unshare (and here needs /var/tmp)")
    with tempfile.TemporaryDirectory(dir="/var/tmp") as outside_tmp:  # staging covers /tmp
        _stage_and_probe(Path(outside_tmp))


def _stage_and_probe(root: Path) -> None:
    folders = [root / "lib", root / "python 3.11", root / "back\\slash"]
    for i, folder in enumerate(folders):
        folder.mkdir()
        (folder / "mark").write_text(f"folder {i}")
    probe = "for d in /tmp/0 /tmp/1 /tmp/2; do cat $d/mark; echo; touch $d/new 2>/dev/null && echo writable || :; done"
    unshare = ["unshare", "--mount", "--propagation", "private", "--"]
    done = subprocess.run(
        [*unshare, *boundary.staging([str(f) for f in folders]), "sh", "-c", probe],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["folder 0", "folder 1", "folder 2"]
    assert not any((f / "new").exists() for f in folders)
