"""The operating-system boundary around sandboxed runs: a bubblewrap command line.

`boundary_command(...)` returns the argv that starts the sandbox server (the child script,
which forks a child per run) inside new user, mount, PID, IPC, UTS, cgroup and network
namespaces, as uid/gid 65534 without capabilities, seeing read-only only the system
libraries, the interpreter and its standard library, with a private tmpfs scratch (the one
writable place), a /proc of its own PID namespace, an empty environment and a seccomp filter. It raises `BoundaryUnavailable`, naming what is
missing, when no such boundary can be had: the caller then refuses to run the code.

When the parent is root, the child must not be root outside its namespace either (root is
exempt from RLIMIT_NPROC and owns most files). bwrap therefore runs as uid 65534 itself, and
an interpreter that uid cannot reach (one under a root-only home, say) is first bind-mounted
into a private mount namespace where it can (`unshare` and `setpriv`, from util-linux).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import struct
import subprocess
from dataclasses import dataclass

__all__ = ["NOBODY", "SCRATCH", "BoundaryUnavailable", "Interpreter", "boundary_command", "interpreter"]

NOBODY = 65534
SCRATCH = "/scratch"  # the working directory inside, a private tmpfs
CHILD_PATH = "/sandbox/child.py"
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# Library folders the dynamic loader and the stdlib's extension modules may need.
SYSTEM_DIRS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/share/zoneinfo")
TOP_LEVEL_LINKS = ("/lib", "/lib64", "/lib32", "/libx32", "/bin")
SYSTEM_FILES = ("/etc/ld.so.cache",)

# Run as root: on a fresh tmpfs on /tmp (in a private mount namespace, so the host sees
# nothing), make the folders given before "--" and mount there, read-only, what the fstab
# text in $1 binds to them (one `mount` for all: each exec costs a millisecond or more), then
# run the rest as the command.
STAGE_SCRIPT = (
    "set -e; mount -t tmpfs -o mode=0755,size=64k coworkenv-stage /tmp; "
    'printf "%s" "$1" > /tmp/fstab; shift; dirs=; '
    'while [ "$1" != -- ]; do dirs="$dirs $1"; shift; done; shift; '
    'mkdir $dirs; mount -a -T /tmp/fstab; exec "$@"'
)
INSTALL_HINT = "install it (Debian: apt-get install bubblewrap) or run `make`"


class BoundaryUnavailable(Exception):
    """No OS-level sandbox can be set up here; the message says what is missing."""


@dataclass(frozen=True)
class Interpreter:
    """Where the child's interpreter and its standard library live (real paths)."""

    executable: str
    stdlib: tuple[str, ...]  # folders: the pure stdlib and lib-dynload
    libraries: tuple[str, ...]  # files: a shared libpython, when the build has one


@functools.cache
def interpreter(python: str) -> Interpreter:
    """Ask `python` where its parts are (once per interpreter and process)."""
    probe = (
        "import json, os, sys, sysconfig\n"
        "v = sysconfig.get_config_var\n"
        "lib = os.path.join(v('LIBDIR') or '', v('LDLIBRARY') or '') if v('Py_ENABLE_SHARED') else ''\n"
        "paths = sysconfig.get_paths()\n"
        "dynload = os.path.join(paths['platstdlib'], 'lib-dynload')\n"
        "print(json.dumps([os.path.realpath(sys.executable),"
        " [paths['stdlib'], paths['platstdlib'], dynload], lib]))\n"
    )
    try:
        found = subprocess.run(
            [python, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=30, env={}
        )
        executable, stdlib, library = json.loads(found.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired) as error:
        raise BoundaryUnavailable(f"the sandbox cannot use the interpreter {python}: {error}") from None
    folders = tuple(dict.fromkeys(os.path.realpath(p) for p in stdlib if os.path.isdir(p)))
    libraries: tuple[str, ...] = ()
    if library and os.path.exists(library):
        # The loader looks the library up by its name under LIBDIR (or the binary's RPATH).
        libraries = tuple(dict.fromkeys((library, os.path.realpath(library))))
    return Interpreter(executable=executable, stdlib=folders, libraries=libraries)


def boundary_command(python: str, child_fd: int, seccomp_fd: int | None, scratch_bytes: int) -> list[str]:
    """The argv that runs the sandbox server (the child script's `serve`) inside the boundary.

    `child_fd` holds the child script's source; `seccomp_fd` a filter from `seccomp_filter()`.
    Both descriptors must be passed to the process (they are read once, at set-up).
    """
    bwrap = _tool("bwrap", "bubblewrap")
    parts = interpreter(python)
    as_root = os.geteuid() == 0
    binds: list[tuple[str, str]] = []  # (source, destination inside)
    for path in (*SYSTEM_DIRS, parts.executable, *parts.stdlib, *parts.libraries):
        if os.path.exists(path) and not any(_below(path, dest) for _src, dest in binds):
            binds.append((path, path))
    staged: list[str] = []
    if as_root:
        for index, (source, dest) in enumerate(binds):
            if not _reachable_by_others(source):
                if not os.path.isdir(source):  # only folders can be staged; take the one above
                    source = os.path.dirname(source)
                    dest = os.path.dirname(dest)
                binds[index] = (f"/tmp/{len(staged)}", dest)
                staged.append(source)
    argv = [
        bwrap,
        "--unshare-all",  # user, mount, pid, ipc, uts, cgroup and network namespaces
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        str(NOBODY),
        "--gid",
        str(NOBODY),
        "--clearenv",
        "--setenv",
        "HOME",
        SCRATCH,
        "--setenv",
        "TMPDIR",
        SCRATCH,
        "--hostname",
        "sandbox",
    ]
    for source, dest in binds:
        argv += ["--ro-bind", source, dest]
    for link in TOP_LEVEL_LINKS:
        if os.path.islink(link):
            argv += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link) and not any(_below(link, dest) for _src, dest in binds):
            argv += ["--ro-bind", link, link]
    for path in SYSTEM_FILES:
        if os.path.isfile(path):
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(scratch_bytes), "--tmpfs", SCRATCH]
    argv += ["--perms", "0444", "--ro-bind-data", str(child_fd), CHILD_PATH]
    argv += ["--remount-ro", "/", "--remount-ro", "/dev", "--chdir", SCRATCH]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    # The server is the namespace's init: the kernel then drops every signal its children send
    # it that it does not handle, SIGKILL included, so a run cannot end it.
    argv += ["--as-pid-1", "--", parts.executable, "-I", "-S", "-B", "-X", "utf8", CHILD_PATH]
    if not as_root:
        return argv
    # bwrap runs as nobody too; the staging step needs root, so it comes first.
    setpriv = [_tool("setpriv", "util-linux"), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    if not staged:
        return [*setpriv, "--", *argv]
    unshare = [_tool("unshare", "util-linux"), "--mount", "--propagation", "private", "--"]
    return [*unshare, *staging(staged), *setpriv, "--", *argv]


def staging(folders: list[str]) -> list[str]:
    """The argv prefix (up to and including "--") that shows each of `folders` read-only at
    /tmp/0, /tmp/1, ... of the private mount namespace it runs in, then runs what follows."""
    targets = [f"/tmp/{i}" for i in range(len(folders))]
    fstab = "".join(
        f"{_fstab_field(source)} {target} none bind,ro 0 0\n"
        for source, target in zip(folders, targets, strict=True)
    )
    return [_tool("sh", "dash"), "-c", STAGE_SCRIPT, "sh", fstab, *targets, "--"]


def _fstab_field(path: str) -> str:
    """`path` as an fstab field: the characters fstab separates fields and lines with, and
    the backslash, written as the octal escapes `mount` reads back."""
    return "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in path)


def _tool(name: str, package: str) -> str:
    found = shutil.which(name, path=SYSTEM_PATH)
    if found is None:
        if name == "bwrap":
            raise BoundaryUnavailable(
                f"the sandbox needs bubblewrap (Debian package bubblewrap); {INSTALL_HINT}"
            )
        raise BoundaryUnavailable(f"the sandbox needs {name} (Debian package {package}) to drop root")
    return found


def _below(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _reachable_by_others(path: str) -> bool:
    """Whether a user other than the owner can reach `path` (every folder above it searchable)."""
    current = os.path.dirname(path)
    while True:
        if not os.stat(current).st_mode & 0o001:
            return False
        if current == "/":
            break
        current = os.path.dirname(current)
    return bool(os.stat(path).st_mode & 0o004)


# seccomp: system calls the child never needs and that widen the kernel's attack surface
# (namespaces, mounts, keyrings, BPF, tracing, io_uring, modules). Each answers EPERM.
DENIED_SYSCALLS = {
    # name: (x86_64, aarch64)
    "ptrace": (101, 117),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "unshare": (272, 97),
    "setns": (308, 268),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "personality": (135, 92),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "acct": (163, 89),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "reboot": (169, 142),
    "syslog": (103, 116),
    "quotactl": (179, 60),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    # System V IPC and POSIX message queues: objects that outlive the process that made them,
    # and so could carry something from one run of a sandbox server to the next.
    "shmget": (29, 194),
    "shmat": (30, 196),
    "shmctl": (31, 195),
    "shmdt": (67, 197),
    "semget": (64, 190),
    "semop": (65, 193),
    "semctl": (66, 191),
    "semtimedop": (220, 192),
    "msgget": (68, 186),
    "msgsnd": (69, 189),
    "msgrcv": (70, 188),
    "msgctl": (71, 187),
    "mq_open": (240, 180),
    "mq_unlink": (241, 181),
    "mq_timedsend": (242, 182),
    "mq_timedreceive": (243, 183),
    "mq_notify": (244, 184),
    "mq_getsetattr": (245, 185),
}
_AUDIT_ARCH = {"x86_64": (0xC000003E, 0), "aarch64": (0xC00000B7, 1)}


def seccomp_filter() -> bytes | None:
    """A classic-BPF seccomp program for this machine's architecture, or None for another one.

    A system call of another ABI (i386 or x32 on x86_64) kills the process: the numbers differ.
    """
    arch = _AUDIT_ARCH.get(platform.machine())
    if arch is None:
        return None
    audit_arch, column = arch
    ld_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, kill, deny = 0x7FFF0000, 0x80000000, 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    program = [op(ld_abs, 4), op(jeq, audit_arch, 1, 0), op(ret, kill), op(ld_abs, 0)]
    if column == 0:
        program += [op(jge, 0x40000000, 0, 1), op(ret, kill)]  # the x32 ABI
    for numbers in DENIED_SYSCALLS.values():
        program += [op(jeq, numbers[column], 0, 1), op(ret, deny)]
    program.append(op(ret, allow))
    return b"".join(program)
