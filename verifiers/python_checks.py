"""Python checks: each is code defining `check(initial, final, audit)`, run in the sandbox.

A sandboxed run costs a few milliseconds (tens when no sandbox server is waiting), usually
more than the check itself, so two things spare runs:

- A verdict is kept by (code, initial state, judged state, audit log): a check is a function
  of those, so judging the same state again (validation replays the same early turns in many
  variants) reuses it.
- The checks one evaluation judges on the same states run in one sandboxed run, one after another,
  each in its own namespace. Only a check that returns a value takes its verdict from that
  run; one that raises, runs out of time or memory, or does something forbidden (which ends
  the shared run) is run again alone, so its verdict and message are exactly what they are
  alone. The checks of one run do share the interpreter's modules: they are one task's, by
  one author, and judge nothing of each other.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

from coworkenv.checks import PythonCheck

from .evidence import Evidence

__all__ = ["PYTHON_VERDICTS_KEPT", "SandboxUnavailable", "forget_python_verdicts", "python_verdicts"]

Verdict = tuple[bool, str]

_VERDICTS: OrderedDict[str, Verdict] = OrderedDict()
PYTHON_VERDICTS_KEPT = 4096

#: The function a run of several checks calls: each check's code in a namespace of its own,
#: and its value, or the name of what it raised (such a check is then run again alone).
_BATCH = """
def check_all(**arguments):
    results = []
    for number, source in enumerate(SOURCES):
        namespace = {"__name__": "__sandbox__"}
        try:
            exec(compile(source, "<check %d>" % number, "exec"), namespace)
            results.append(["ok", namespace["check"](**arguments)])
        except Exception as raised:
            results.append(["raised", type(raised).__name__])
    return results
"""


class SandboxUnavailable(RuntimeError):
    """A Python check could not run: there is no sandbox here. Not the agent's doing: an
    episode judged with such a check has no verdict (see `Verdict.could_not_run`)."""


def forget_python_verdicts() -> None:
    """Drop every kept verdict (benchmarks measure a sandboxed run this way)."""
    _VERDICTS.clear()


async def python_verdicts(checks: list[PythonCheck], ev: Evidence) -> list[Verdict | Exception]:
    """Each check's (passed, message), or the exception that judging it raised, in order."""
    audit = [e.model_dump(mode="json") for e in ev.audit]
    judged = _judged(ev, audit)
    out: list[Verdict | Exception | None] = [None] * len(checks)
    pending: list[tuple[int, str]] = []
    for i, check in enumerate(checks):
        key = hashlib.sha256(f"{check.code}\0{judged}".encode()).hexdigest()
        if key in _VERDICTS:
            _VERDICTS.move_to_end(key)
            out[i] = _VERDICTS[key]
        else:
            pending.append((i, key))
    if len(pending) > 1:
        shared = await _run_together([checks[i] for i, _ in pending], ev, audit)
        for (i, key), value in zip(pending, shared, strict=True):
            verdict = _verdict_of(value) if value is not None else None
            if isinstance(verdict, tuple):
                out[i] = _keep(key, verdict)
    for i, key in pending:
        if out[i] is None:
            try:
                out[i] = _keep(key, await _run_alone(checks[i], ev, audit))
            except Exception as exc:  # the caller records it as the check's error
                out[i] = exc
    return [v for v in out if v is not None]


def _judged(ev: Evidence, audit: list[dict[str, Any]]) -> str:
    """What a check judges, as one text: both states' content hashes and the calls (their
    latencies left out), computed once for all the checks of an evaluation."""
    calls = [{k: v for k, v in e.items() if k != "latency_ms"} for e in audit]
    return json.dumps(
        [ev.initial.content_hash(), ev.final.content_hash(), calls],
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )


def _keep(key: str, verdict: Verdict) -> Verdict:
    _VERDICTS[key] = verdict
    if len(_VERDICTS) > PYTHON_VERDICTS_KEPT:
        _VERDICTS.popitem(last=False)
    return verdict


async def _run_alone(check: PythonCheck, ev: Evidence, audit: list[dict[str, Any]]) -> Verdict:
    from .sandbox import SandboxLimits, run_sandboxed_async  # imported only when needed

    result = await run_sandboxed_async(
        check.code,
        "check",
        databases=_databases(ev),
        payload={"audit": audit},
        limits=SandboxLimits(),
    )
    if result.status == "unavailable":
        raise SandboxUnavailable(f"python check unavailable: {result.error}")
    if result.status != "ok":
        raise RuntimeError(f"python check {result.status}: {result.error}")
    verdict = _verdict_of(result.value)
    if not isinstance(verdict, tuple):
        raise verdict
    return verdict


async def _run_together(
    checks: list[PythonCheck], ev: Evidence, audit: list[dict[str, Any]]
) -> list[Any | None]:
    """Each check's returned value from one shared run; None for a check that raised, and
    for every check when the run itself did not end well."""
    from .sandbox import SandboxLimits, run_sandboxed_async  # imported only when needed

    code = f"SOURCES = {[c.code for c in checks]!r}\n{_BATCH}"
    result = await run_sandboxed_async(
        code, "check_all", databases=_databases(ev), payload={"audit": audit}, limits=SandboxLimits()
    )
    values = result.value
    if result.status != "ok" or not isinstance(values, list) or len(values) != len(checks):
        return [None] * len(checks)
    return [entry[1] if entry[0] == "ok" else None for entry in values]


def _databases(ev: Evidence) -> dict[str, bytes]:
    return {"initial": ev.initial.conn.serialize(), "final": ev.final.conn.serialize()}


def _verdict_of(value: Any) -> Verdict | TypeError:
    from .sandbox import MAX_ERROR_CHARS

    if isinstance(value, bool):
        return value, "python check returned " + str(value)
    if isinstance(value, list) and len(value) == 2 and isinstance(value[0], bool):
        return value[0], str(value[1])[:MAX_ERROR_CHARS]  # a check's words are bounded like its errors
    return TypeError(f"check() must return a bool or (bool, message), not {value!r}")
