"""What every entry point checks before its first episode, so that a broken machine or a
wrong task id stops a run at start-up instead of turning into rewards.

- The tasks it was given exist (an id a dataset or client names must be one of them).
- Python checks can run: when any task has one (a `python` check, or a `forbid` safety rule
  over one), a trivial sandboxed run must succeed. Without the sandbox such checks cannot
  judge anything; the episode would end with status `error` and no reward, every time.

`coworkenv rollout` (both backends), the TRL environment class, the verifiers environment
and the OpenEnv server call `check_ready`; it raises `NotReady`, whose message names the fix.
"""

from __future__ import annotations

from collections.abc import Iterable

from coworkenv.checks import Forbid, PythonCheck
from coworkenv.task import Task
from coworkenv.verifiers.sandbox import sandbox_problem

__all__ = ["SANDBOX_FIX", "NotReady", "check_ready", "needs_sandbox"]

SANDBOX_FIX = (
    "install bubblewrap (Debian: apt-get install bubblewrap) and allow unprivileged user "
    "namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0); "
    "docs/sandbox.md says what the sandbox needs"
)


class NotReady(RuntimeError):
    """An entry point cannot start: its message says why and what to fix."""


def needs_sandbox(task: Task) -> bool:
    """True when judging the task runs Python in the sandbox."""
    rules = [rule.check for rule in task.safety if isinstance(rule, Forbid)]
    return any(isinstance(check, PythonCheck) for check in [*task.all_checks(), *rules])


def check_ready(tasks: Iterable[Task], *, task_ids: Iterable[str] = ()) -> None:
    """Raise `NotReady` unless there are tasks, every id in `task_ids` is one of theirs and,
    when a task needs it, the sandbox for Python checks works here."""
    tasks = list(tasks)
    if not tasks:
        raise NotReady("no tasks given: pass task files or folders of them")
    known = {task.id for task in tasks}
    unknown = sorted(set(task_ids) - known)
    if unknown:
        raise NotReady(
            f"unknown task id(s): {', '.join(unknown)}; the tasks given are: {', '.join(sorted(known))}"
        )
    python = sorted(task.id for task in tasks if needs_sandbox(task))
    if not python:
        return
    problem = sandbox_problem()
    if problem is not None:
        named = ", ".join(python[:3]) + (f" and {len(python) - 3} more" if len(python) > 3 else "")
        raise NotReady(
            f"Python checks cannot run here ({problem}), and {len(python)} task(s) have them "
            f"({named}): their episodes could not be judged. To fix it, {SANDBOX_FIX}."
        )
