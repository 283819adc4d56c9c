"""Runs share a sandbox server (one boundary; for each run a supervisor and a child forked
from it): nothing one run does reaches the next (files, module state, IPC, memory), the
server itself, or another process's runs. The audit hook is off in the attacks, to show the
OS boundary holds alone."""

import os
import subprocess
import sys
import threading
import time

import pytest

from coworkenv.verifiers import _sandbox_boundary as boundary
from coworkenv.verifiers import sandbox
from coworkenv.verifiers._sandbox_child import removed_all
from coworkenv.verifiers.sandbox import SandboxLimits, run_sandboxed

FAST = SandboxLimits(cpu_seconds=1, wall_seconds=30, memory_mb=256)
FIRST_RUN_PID = 3  # a new sandbox: the server is pid 1, the first run's supervisor 2

LEAVE_TRACES = """
import builtins, json, os, sys
def check():
    os.makedirs("nested/deeper")
    open("nested/deeper/note.txt", "w").write("left")
    os.chmod("nested", 0)
    open("locked.txt", "w").write("x")
    os.chmod("locked.txt", 0)
    os.symlink("/etc/passwd", "link")
    os.remove("input.txt")  # its own copy of an input
    json.loads = None  # the child's report is written with json.dumps: that one stays
    builtins.left = "behind"
    sys.modules["os"].left = "behind"
    os.environ["LEFT"] = "behind"
    written = []
    for place in ("/dev/shm/left", "/dev/left", "/left"):
        try:
            open(place, "w").write("x")
            written.append(place)
        except OSError:
            pass
    return [os.getpid(), written]
"""

LOOK_FOR_TRACES = """
import builtins, json, os, sys
def check():
    return [
        os.getpid(),
        sorted(os.listdir(".")),
        open("input.txt").read(),
        json.loads("[1]"),
        hasattr(builtins, "left"),
        hasattr(os, "left"),
        os.environ.get("LEFT"),
        sorted(os.listdir("/dev/shm")),
    ]
"""


@pytest.fixture
def no_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "AUDIT_HOOK", False)


def test_the_next_run_on_the_same_server_finds_nothing_the_last_one_left(no_hook: None) -> None:
    sandbox.stop_sandbox_servers()
    first = run_sandboxed(LEAVE_TRACES, "check", files={"input.txt": b"data"}, limits=FAST)
    assert first.status == "ok", first.error
    pid, written = first.value
    assert written == []  # /dev and the root are read-only; only the scratch is writable
    second = run_sandboxed(LOOK_FOR_TRACES, "check", files={"input.txt": b"data"}, limits=FAST)
    assert second.status == "ok", second.error
    later_pid, *found = second.value
    assert later_pid > pid  # the same server (a new one's first run is FIRST_RUN_PID)
    assert found == [["input.txt"], "data", [1], False, False, None, []]


def test_a_run_cannot_reach_the_server_it_was_forked_from(no_hook: None) -> None:
    code = """
import os, signal, sys
def check():
    out = {}
    for name in ("mem", "environ", "fd/0", "maps"):
        try:
            open(f"/proc/1/{name}", "rb").read(1)
            out[name] = "read"
        except OSError as error:
            out[name] = error.errno
    os.kill(1, signal.SIGKILL)  # init of the namespace: the kernel drops it
    os.kill(1, signal.SIGTERM)
    out["ctypes loaded"] = "ctypes" in sys.modules or "_ctypes" in sys.modules
    return [os.getpid(), out]
"""
    sandbox.stop_sandbox_servers()
    first = run_sandboxed(code, "check", limits=FAST)
    assert first.status == "ok", first.error
    pid, out = first.value
    assert out == {"mem": 13, "environ": 13, "fd/0": 13, "maps": 13, "ctypes loaded": False}
    again = run_sandboxed("import os\ndef check():\n    return os.getpid()\n", "check", limits=FAST)
    assert again.status == "ok"
    assert again.value > pid  # the same server, still serving (a new one's first run is FIRST_RUN_PID)


@pytest.mark.skipif(boundary.seccomp_filter() is None, reason="no seccomp filter for this architecture")
def test_ipc_objects_that_would_outlive_a_run_cannot_be_made(no_hook: None) -> None:
    code = """
import ctypes
def check():
    libc = ctypes.CDLL(None, use_errno=True)
    out = []
    for name, args in (("shmget", (0, 4096, 0o1600)), ("msgget", (0, 0o1600)), ("semget", (0, 1, 0o1600)),
                       ("mq_open", (b"/left", 0o100 | 2, 0o600, None))):
        result = getattr(libc, name)(*args)
        out.append([name, result, ctypes.get_errno()])
    return out
"""
    result = run_sandboxed(code, "check", limits=FAST)
    assert (result.status, result.value) == (
        "ok",
        [["shmget", -1, 1], ["msgget", -1, 1], ["semget", -1, 1], ["mq_open", -1, 1]],  # EPERM
    )


def test_a_run_past_its_wall_limit_ends_its_server_and_the_next_run_gets_a_new_one() -> None:
    sandbox.stop_sandbox_servers()
    pid_code = "import os\ndef check():\n    return os.getpid()\n"
    assert run_sandboxed(pid_code, "check").value == FIRST_RUN_PID
    slow = run_sandboxed(
        "import time\ndef check():\n    time.sleep(30)\n", "check", limits=SandboxLimits(wall_seconds=1)
    )
    assert (slow.status, slow.error) == ("timeout", "wall-clock time limit of 1s exceeded")
    assert run_sandboxed(pid_code, "check").value == FIRST_RUN_PID  # the first run of a new server


def test_runs_at_once_each_get_their_own_server_and_their_own_inputs() -> None:
    code = "def check(n):\n    return [n, open('input.txt').read()]\n"
    results: dict[int, object] = {}

    def one(n: int) -> None:
        done = run_sandboxed(
            code, "check", files={"input.txt": str(n).encode()}, payload={"n": n}, limits=FAST
        )
        results[n] = (done.status, done.value)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {n: ("ok", [n, str(n)]) for n in range(6)}


# Python 3.12+ warns that forking a process with threads (the spawner's) can deadlock a child
# that takes a lock another thread held; the child here takes only its own new pool's.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_process_starts_servers_of_its_own() -> None:
    code = "def check(n):\n    return n\n"
    assert run_sandboxed(code, "check", payload={"n": 1}).value == 1  # this process has a server now
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child process: its parent's servers are not its to use
        try:
            os.write(write_end, run_sandboxed(code, "check", payload={"n": 2}).model_dump_json().encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child = sandbox.SandboxResult.model_validate_json(os.read(read_end, 65536))
    os.waitpid(pid, 0)
    os.close(read_end)
    assert (child.status, child.value) == ("ok", 2)
    assert run_sandboxed(code, "check", payload={"n": 3}).value == 3  # and this one's still serves


def test_emptying_a_scratch_removes_locked_folders_and_files(tmp_path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_text("x")
    (tmp_path / "g").write_text("y")
    os.symlink("/etc/passwd", tmp_path / "link")
    os.chmod(tmp_path / "a", 0)
    assert removed_all(str(tmp_path)) is True
    assert os.listdir(tmp_path) == []
    assert os.path.exists("/etc/passwd")


def test_a_scratch_that_is_gone_cannot_be_emptied(tmp_path) -> None:
    assert removed_all(str(tmp_path / "missing")) is False


def test_a_server_ends_with_the_process_that_started_it() -> None:
    script = """
import os
from coworkenv.verifiers.sandbox import run_sandboxed
assert run_sandboxed("def check():\\n    return 1\\n", "check").value == 1
def parent(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1].split()[1]
    except OSError:  # a process of the machine's that ended since the listing
        return None
print(*[p for p in os.listdir("/proc") if p.isdigit() and parent(p) == str(os.getpid())])
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    servers = [int(pid) for pid in done.stdout.split()]
    assert servers  # it had one
    for _ in range(100):  # the kernel kills them when the process ends, a moment later
        if not any(os.path.exists(f"/proc/{pid}") for pid in servers):
            break
        time.sleep(0.05)
    assert [pid for pid in servers if os.path.exists(f"/proc/{pid}")] == []


SCAN_OWN_MEMORY = """
import ctypes, hashlib
def check(prefix, suffix_sha, own):
    # Its own /proc/self/mem is closed too (an undumpable process's /proc files are root's):
    # read its anonymous memory (heap, arenas, stack) through ctypes, the hook being off.
    hits = 0
    for line in open("/proc/self/maps"):
        fields = line.split()
        span, perms, name = fields[0], fields[1], fields[5] if len(fields) > 5 else ""
        if not perms.startswith("r") or name not in ("", "[heap]", "[stack]"):
            continue
        start, end = (int(x, 16) for x in span.split("-"))
        chunk = ctypes.string_at(start, end - start)
        at = chunk.find(prefix.encode())
        while at >= 0:
            following = chunk[at + len(prefix) : at + len(prefix) + 64]
            hits += hashlib.sha256(following).hexdigest() == suffix_sha
            at = chunk.find(prefix.encode(), at + 1)
    return hits
"""


def test_no_trace_of_a_run_is_in_the_memory_the_next_run_starts_from(no_hook: None) -> None:
    """The next run scans all of its own memory for a marker the last one held everywhere it
    could (its code, payload, input, a file name, its prints, its value); it looks for the
    marker's start and the hash of the rest, so it never holds the marker itself."""
    import hashlib
    import secrets

    def marker() -> tuple[str, str, str]:
        text = secrets.token_hex(48)
        return text, text[:32], hashlib.sha256(text[32:].encode()).hexdigest()

    left, prefix, suffix_sha = marker()
    holder = f"""
import os
MARK = "{left}"
def check(mark):
    open(MARK, "w").write(mark)
    print(MARK)
    return [MARK, open("input.txt").read()]
"""
    sandbox.stop_sandbox_servers()
    first = run_sandboxed(
        holder, "check", files={"input.txt": left.encode()}, payload={"mark": left}, limits=FAST
    )
    assert (first.status, first.value, first.stdout) == ("ok", [left, left], left + "\n")
    big = SandboxLimits(cpu_seconds=5, wall_seconds=60, memory_mb=512)
    scan = run_sandboxed(
        SCAN_OWN_MEMORY, "check", payload={"prefix": prefix, "suffix_sha": suffix_sha, "own": ""}, limits=big
    )
    assert (scan.status, scan.value) == ("ok", 0), scan.error
    # The scan finds a marker that is there: its own payload's.
    own, own_prefix, own_sha = marker()
    found = run_sandboxed(
        SCAN_OWN_MEMORY,
        "check",
        payload={"prefix": own_prefix, "suffix_sha": own_sha, "own": own},
        limits=big,
    )
    assert found.status == "ok", found.error
    assert found.value >= 1


def test_a_run_that_kills_its_supervisor_ends_only_itself(no_hook: None) -> None:
    code = "import os, signal\ndef check():\n    os.kill(os.getppid(), signal.SIGKILL)\n    return 'after'\n"
    sandbox.stop_sandbox_servers()
    killed = run_sandboxed(code, "check", limits=FAST)
    assert (killed.status, killed.error) == ("error", "RuntimeError: the sandbox ended without a result")
    pid_code = "import os\ndef check():\n    return os.getpid()\n"
    assert run_sandboxed(pid_code, "check", limits=FAST).value == FIRST_RUN_PID  # a new sandbox


def test_a_server_that_ends_before_it_is_ready_makes_the_run_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sandbox.stop_sandbox_servers()
    broken = ["/bin/sh", "-c", "echo 'something broke' >&2; exit 3"]
    monkeypatch.setattr(sandbox, "boundary_command", lambda *args, **kwargs: broken)
    result = run_sandboxed("def check():\n    return 1\n", "check")
    assert (result.status, result.error) == (
        "unavailable",
        "the sandbox could not be started (exit code 3): something broke",
    )


PID_CODE = "import os\ndef check():\n    return os.getpid()\n"


def test_a_run_that_writes_more_than_its_report_may_hold_ends_its_sandbox(no_hook: None) -> None:
    # The code writes straight to its report's descriptor, past the cap the parent reads.
    code = """
import os
def check():
    for fd in range(3, 64):
        try:
            os.write(fd, b"x" * 200_000)
        except OSError:
            pass
    return 1
"""
    sandbox.stop_sandbox_servers()
    assert run_sandboxed(PID_CODE, "check", limits=FAST).value == FIRST_RUN_PID
    limits = SandboxLimits(cpu_seconds=1, wall_seconds=30, memory_mb=256, max_output_bytes=1000)
    flooded = run_sandboxed(code, "check", limits=limits)
    cap = 7 * 1000 + 65536
    assert (flooded.status, flooded.error) == (
        "error",
        f"ValueError: the sandbox wrote more than {cap} bytes of output",
    )
    assert run_sandboxed(PID_CODE, "check", limits=FAST).value == FIRST_RUN_PID  # a new sandbox


def test_a_run_that_ends_without_a_report_ends_its_sandbox() -> None:
    # It may have left part of its job unread, which the next child would take for its own.
    sandbox.stop_sandbox_servers()
    assert run_sandboxed(PID_CODE, "check", limits=FAST).value == FIRST_RUN_PID
    ended = run_sandboxed("import os\ndef check():\n    os._exit(3)\n", "check", limits=FAST)
    assert (ended.status, ended.error) == (
        "error",
        "RuntimeError: the sandbox process exited with code 3 without a result",
    )
    assert run_sandboxed(PID_CODE, "check", limits=FAST).value == FIRST_RUN_PID  # a new sandbox
    assert run_sandboxed(PID_CODE, "check", limits=FAST).value > FIRST_RUN_PID  # which serves on
