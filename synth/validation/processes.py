"""Validation of synthesized drafts in worker processes on this machine.

Validation is the CPU-bound part of synthesis, so above one worker it runs in
`ProcessValidators`: a pool of processes, each with its own seed cache, fed by the pool's
own thread. Two things make it cheaper than starting plain interpreters:

- The workers are forked from a server process that has imported this module, and with it
  the services, the MCP SDK and the task models (multiprocessing's forkserver, where the
  platform has one). A plain interpreter spends about 1.5 s of CPU importing them before
  its first draft, once per worker.
- A worker takes its next draft from a queue as soon as it is done. It does not wait for
  this process's event loop, which is busy drafting most of the time.

The forkserver's start (and what it imports) is shared by every pool this process makes.
"""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

import anyio
import anyio.to_thread

from coworkenv.rollout.episodes.seeding import SeedCache
from coworkenv.state import Snapshot
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import parse_task

__all__ = ["ProcessValidators", "validate_in_worker"]

_WORKER_CACHE = SeedCache()


def validate_in_worker(task_json: str, seed: Snapshot | None = None) -> str:
    """The validation report (JSON) of a task (JSON), in the process this runs in, with that
    process's seed cache; `seed` is the task's seeded state, built where the task was
    drafted (None: it is built here)."""
    task = parse_task(task_json)
    if seed is not None:
        _WORKER_CACHE.keep(task, seed)
    report = anyio.run(lambda: validate_task(task, cache=_WORKER_CACHE))
    return report.model_dump_json()


def _started() -> None:
    """What a worker runs first when the pool is started ahead of its first draft."""


def _context() -> Any:
    """Forkserver where the platform has it (its server imports this module once, and each
    worker is a fork of it), else the platform's default start method."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context()
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])  # no effect once this process's server runs
    return context


class ProcessValidators:
    """`workers` validation processes; `await validate(task_json, seed)` runs on the next
    free one. A worker that dies (killed, out of memory) fails the validations it held with
    `concurrent.futures.process.BrokenProcessPool`; `close()` ends the workers."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=_context())
        self._abandoned = False
        self._starting: threading.Thread | None = None

    def start(self) -> None:
        """Start the workers now, in the background, and return at once: the forkserver's
        imports then overlap with the caller's first drafts."""
        self._starting = threading.Thread(target=self._start_workers, name="start-validators", daemon=True)
        self._starting.start()

    def _start_workers(self) -> None:
        for future in [self._executor.submit(_started) for _ in range(self.workers)]:
            future.exception()  # a worker that cannot start fails every validation after

    async def validate(self, task_json: str, seed: Snapshot | None = None) -> str:
        """The validation report (JSON) of a task (JSON); `seed` as in `validate_in_worker`."""
        # Submitting may wait for the forkserver to start (and import): not on the event loop.
        future: Future[str] = await anyio.to_thread.run_sync(
            self._executor.submit, validate_in_worker, task_json, seed
        )
        try:
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        finally:
            # Cancelled while waiting: a draft not started yet is not started; one running
            # is left to `close`.
            if not future.cancel() and not future.done():
                self._abandoned = True

    def close(self) -> None:
        """End the workers: once idle when every validation was awaited, at once when a
        cancelled run left some running."""
        if self._starting is not None:
            self._starting.join()  # then nothing is submitted after the shutdown
        if self._abandoned:
            terminate = getattr(self._executor, "terminate_workers", None)  # Python >= 3.14
            if terminate is not None:
                terminate()
            else:
                for process in list(self._executor._processes.values()):
                    process.terminate()
        self._executor.shutdown(wait=True, cancel_futures=True)
