"""The synthesis pipeline: draft, validate by executing, feed the report back, keep or reject.

For each slot (a capability, a difficulty, a seed), up to `max_rounds` rounds:
1. the generator drafts a task (JSON text);
2. validation: schema, seed loads, checks valid, no-op fails, oracle solves (score 1.0,
   no safety violation), deterministic, mutants killed (see `synth.validation.validation`);
   before that, a draft must match its request (capability, services, turns) and must not
   nearly duplicate a kept task (a draft that does not match is validated all the same, so
   its report holds every problem); after it, an optional LLM judge and a probe agent;
3. a failing draft's report, every problem found, goes back to the generator for the next
   round. An endpoint that keeps failing spends no round: the slot stops, and a rerun fills it.
Validation is CPU-bound, so by default it runs in one worker process per core
(`concurrency` None: `os.cpu_count()` slots at once, see `process_validation`); each worker
keeps its own seed cache, so a seed is built once per worker. With `concurrency=1`
everything runs in this process.
Kept tasks are written to `<out>/tasks/<id>.json` with provenance; every round is one
line in `<out>/drafts.jsonl`, so a rerun resumes where it stopped. Task files are written
atomically; a resume removes what an older crash may have left (a partly written task file,
a temporary file) with a warning, and fills that task's slot again.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import anyio
from pydantic import BaseModel, Field, ValidationError

from coworkenv.files import TEMP_SUFFIX, atomic_write_text
from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.seeding import SeedError, seed_snapshot
from coworkenv.state import Snapshot
from coworkenv.synth.consistency import consistency_problems
from coworkenv.synth.dedup import KeptTasks, find_duplicate
from coworkenv.synth.generators import DraftRequest, GenerationError, Generator
from coworkenv.synth.plan import DEFAULT_WORLDS, Mix
from coworkenv.synth.plan import plan_requests as plan_requests  # the pipeline's plan, importable from here
from coworkenv.synth.validation.processes import ProcessValidators
from coworkenv.synth.validation.validation import ValidationReport, validate_task
from coworkenv.task import Provenance, Task, TaskFileError, dump_task, load_task, parse_task

if TYPE_CHECKING:
    from coworkenv.synth.judge import LLMJudge
    from coworkenv.synth.paraphrase import Paraphraser
    from coworkenv.synth.probe import Probe
    from coworkenv.synth.validation.ray_workers import RayValidators

DRAFTS_FILE = "drafts.jsonl"
TASKS_DIR = "tasks"

log = logging.getLogger(__name__)

IN_FLIGHT_PER_WORKER = 2
"""Slots drafted or validated at once per validation worker (above one worker)."""

FUNNEL_STAGES = (
    "generated",
    "schema_valid",
    "consistent",
    "unique",
    "seed_loads",
    "checks_valid",
    "noop_fails",
    "solvable",
    "no_peeking",
    "deterministic",
    "mutants_killed",
    "right_variants_pass",
)
#: Stages that run only when asked for (a judge, a probe): counted only when some draft met them.
OPTIONAL_STAGES = ("judged", "probed")
VALIDATION_TO_FUNNEL = {
    "seed": "seed_loads",
    "checks": "checks_valid",
    "noop": "noop_fails",
    "oracle": "solvable",
    "no_peeking": "no_peeking",
    "deterministic": "deterministic",
    "mutants": "mutants_killed",
    "acceptance": "right_variants_pass",
}


class DraftRecord(BaseModel):
    """One round of one slot: how far the draft got and why it stopped."""

    slot: int
    capability: str
    round: int
    generator: str
    model: str | None = None
    passed: list[str] = Field(default_factory=list, description="Funnel stages this draft passed, in order")
    failed_stage: str | None = None
    reason: str = ""
    problems: list[str] = Field(
        default_factory=list, description="Every problem found (the failing stage's reason comes first)"
    )
    infrastructure: bool = Field(
        default=False, description="The endpoint failed, not the draft: the slot is tried again by a rerun"
    )
    judge_score: float | None = None
    probe_attempts: int | None = None
    probe_passes: int | None = None
    kept: bool = False
    final: bool = Field(default=False, description="The slot is finished (kept, or out of rounds)")
    task_id: str | None = None
    task_hash: str | None = None
    kill_rate: float | None = None
    kill_rates: dict[str, float] = Field(
        default_factory=dict, description="Share of mutants killed, per class"
    )
    acceptance_rates: dict[str, float] = Field(
        default_factory=dict, description="Share of right variants accepted, per class"
    )
    services: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    request: DraftRequest | None = Field(
        default=None, description="The slot's plan (kind, family, world...): a resume drafts the same"
    )
    paraphrased: list[int] = Field(
        default_factory=list, description="Turns whose user message a paraphrase model reworded"
    )
    paraphrase_refused: list[str] = Field(
        default_factory=list, description="Why rewrites were refused (a dropped fact, a failed validation)"
    )


class SynthState(BaseModel):
    slots: int
    done: int = 0
    kept: int = 0
    rejected: int = 0
    unfinished: int = Field(default=0, description="Slots stopped by endpoint failures; a rerun retries them")


RemoteValidator = Callable[[str, Snapshot | None], Awaitable[str]]
"""Validates a task given as JSON somewhere else and returns its report as JSON; the second
argument is the task's seeded state when the caller has it (None: the validator seeds it)."""


def read_drafts(out_dir: Path) -> list[DraftRecord]:
    path = out_dir / DRAFTS_FILE
    if not path.exists():
        return []
    records = []
    for line in path.read_bytes().split(b"\n"):
        if line.strip():
            try:
                records.append(DraftRecord.model_validate_json(line))
            except ValidationError:
                continue  # a torn line from an interrupted write
    return records


def kept_tasks(out_dir: Path) -> list[Task]:
    """The kept tasks of an output folder; a file that does not load is skipped with a warning."""
    folder = out_dir / TASKS_DIR
    tasks = []
    for path in sorted(folder.glob("*.json")) if folder.exists() else []:
        try:
            tasks.append(load_task(path))
        except TaskFileError as exc:
            log.warning("skipping %s, which is not a valid task (%s)", path, exc)
    return tasks


def repair_tasks(out_dir: Path) -> set[str]:
    """Remove what an interrupted run left in the tasks folder: temporary files, and task
    files that are not even JSON (cut short by a kill). Returns the ids of the removed tasks.
    A file that is JSON but not a valid task is left for a person to look at (and skipped)."""
    folder = out_dir / TASKS_DIR
    if not folder.exists():
        return set()
    for tmp in folder.glob(f".*{TEMP_SUFFIX}"):
        log.warning("removing %s, left by an interrupted write", tmp)
        tmp.unlink(missing_ok=True)
    removed = set()
    for path in sorted(folder.glob("*.json")):
        try:
            json.loads(path.read_bytes())
        except ValueError as exc:
            log.warning(
                "removing %s, cut short by an interrupted run (%s); its slot is filled again", path, exc
            )
            path.unlink()
            removed.add(path.stem)
    return removed


def _append(out_dir: Path, record: DraftRecord) -> None:
    path = out_dir / DRAFTS_FILE
    data = path.read_bytes() if path.exists() else b""
    if data and not data.endswith(b"\n"):  # cut a torn last line before appending
        with path.open("r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
    with path.open("ab") as f:
        f.write(record.model_dump_json().encode() + b"\n")
        f.flush()
        os.fsync(f.fileno())


async def evaluate_draft(
    text: str,
    request: DraftRequest,
    kept: Sequence[Task],
    cache: SeedCache,
    *,
    validator: RemoteValidator | None = None,
    judge: LLMJudge | None = None,
    probe: Probe | None = None,
) -> tuple[DraftRecord, Task | None]:
    """Validate one draft (in this process, or through `validator`: worker processes or Ray
    actors); the record says which funnel stages it passed and, if it failed, why (`reason`,
    the first failure) and everything found (`problems`)."""
    record = DraftRecord(
        slot=request.slot,
        capability=request.capability,
        round=0,
        generator="",
        passed=["generated"],
        request=request,
    )

    def fail(stage: str, problems: list[str]) -> tuple[DraftRecord, None]:
        record.failed_stage, record.reason, record.problems = stage, problems[0], problems
        return record, None

    try:
        task = parse_task(text, source="the draft")
    except TaskFileError as exc:
        return fail("schema_valid", [str(exc)])
    record.passed.append("schema_valid")
    record.task_id, record.task_hash, record.services = task.id, task.content_hash, list(task.services)
    mismatch = [f"consistent: {p}" for p in consistency_problems(task, request.capability, request.services)]
    if not mismatch:
        record.passed.append("consistent")
        duplicate = find_duplicate(task, kept)
        if duplicate is not None:
            return fail(
                "unique",
                [
                    f"unique: a near-duplicate of kept task {duplicate.id!r}: change the scenario, people and values"
                ],
            )
        record.passed.append("unique")
    # A draft that does not match its request is still validated: what validation finds does
    # not depend on it, and the author gets every problem in one round.
    if validator is not None:
        # The seed is built here, where drafting has already rendered its world; a worker
        # forks it instead of rendering the world again. It is not kept here.
        try:
            seed: Snapshot | None = seed_snapshot(task)
        except SeedError:
            seed = None  # the validator reports why, in the seed stage
        report = ValidationReport.model_validate_json(await validator(task.model_dump_json(), seed))
    else:
        report = await validate_task(task, cache=cache)
    found = [f"{s.name}: {s.detail}" for s in report.failures()]
    skipped = [s.name for s in report.stages if s.skipped]
    if skipped:
        found.append(f"not run yet ({report.stages[-1].detail[len('not run: ') :]}): {', '.join(skipped)}")
    if mismatch:
        return fail("consistent", mismatch + found)
    for stage in report.stages:
        if not stage.passed:
            return fail(VALIDATION_TO_FUNNEL[stage.name], found)
        record.passed.append(VALIDATION_TO_FUNNEL[stage.name])
    record.kill_rate = report.kill_rate
    record.kill_rates, record.acceptance_rates = report.kill_rates(), report.acceptance_rates()
    if judge is not None:
        judgement = await judge.judge(task)
        record.judge_score = judgement.score
        if judgement.score < judge.min_score:
            return fail("judged", [f"judged: {judgement.feedback()}"])
        record.passed.append("judged")
    if probe is not None:
        result = await probe.attempt(task, cache)
        record.probe_attempts, record.probe_passes = result.attempts, result.passes
        if result.passes < probe.min_passes:
            return fail(
                "probed",
                [
                    f"probed: a test agent solved it {result.passes} of {result.attempts} times, fewer than "
                    f"{probe.min_passes} ({'; '.join(result.failures)}): make the request state what the checks "
                    "need, or make the task easier"
                ],
            )
        record.passed.append("probed")
    return record, task


async def synthesize(
    generator: Generator,
    *,
    count: int,
    out_dir: str | Path,
    capabilities: list[str] | None = None,
    max_rounds: int = 3,
    concurrency: int | None = None,
    seed: int = 0,
    mix: Mix | None = None,
    worlds: int | None = DEFAULT_WORLDS,
    judge: LLMJudge | None = None,
    probe: Probe | None = None,
    world_files: Sequence[str] = (),
    paraphraser: Paraphraser | None = None,
    backend: Literal["local", "ray"] = "local",
    address: str | None = None,
    progress: Callable[[SynthState, DraftRecord], None] | None = None,
) -> SynthState:
    """Fill `count` slots with kept tasks (or rejections after `max_rounds`); resumable.
    Slots are planned by `mix` (default `plan.DEFAULT_MIX`) and, for a generator that places
    tasks (`places`: the procedural one), spread over `worlds` worlds (`plan.world_plan`; 1:
    the demo company only), and over the worlds of `world_files` first (world JSON files,
    such as `coworkenv world propose` writes). A slot already drafted keeps its recorded plan
    on a resume.
    An endpoint that keeps failing spends no round: the slot stops unfinished and a rerun
    fills it. `concurrency` is how many validations run at once (default: one per core);
    above 1, validation runs in that many worker processes, or with `backend="ray"` on that
    many Ray actors (of the cluster at `address`, or a local one), each with its own seed
    cache, and twice as many slots are worked on at once: this process drafts the next ones
    meanwhile, and still writes every record, once. With `paraphraser`, the user messages of a validated
    task are reworded and the task validated again (see `synth.paraphrase`)."""
    workers = concurrency if concurrency is not None else os.cpu_count() or 1
    out = Path(out_dir)
    planned = plan_requests(  # first: a plan that cannot be made leaves nothing behind
        count,
        capabilities,
        seed,
        mix=mix,
        worlds=worlds,
        families=getattr(generator, "places", False),
        world_files=world_files,
    )
    (out / TASKS_DIR).mkdir(parents=True, exist_ok=True)
    lost = repair_tasks(out)
    drafts = read_drafts(out)
    finished = {r.slot for r in drafts if r.final and not (r.kept and r.task_id in lost)}
    recorded = {r.slot: r.request for r in reversed(drafts) if r.request is not None}
    requests = [recorded.get(r.slot, r) for r in planned if r.slot not in finished]
    state = SynthState(slots=count, done=len(finished))
    kept = KeptTasks(kept_tasks(out))
    cache = SeedCache()
    # With workers, IN_FLIGHT_PER_WORKER slots per worker are in flight, so a worker finds
    # the next draft ready while this process is drafting (drafting and seeding run here);
    # the workers themselves cap how many validations run at once.
    limiter = anyio.CapacityLimiter(max(1, workers) * (IN_FLIGHT_PER_WORKER if workers > 1 else 1))
    pool: ProcessValidators | RayValidators | None = None
    if backend == "ray":
        from coworkenv.synth.validation.ray_workers import RayValidators

        pool = RayValidators(max(1, workers), address=address)
    elif backend != "local":
        raise ValueError(f"unknown backend {backend!r}; use 'local' or 'ray'")
    elif workers > 1 and requests:  # a finished run resumed starts no workers
        pool = ProcessValidators(workers)
        pool.start()
    validator: RemoteValidator | None = pool.validate if pool is not None else None
    # Slots run at once, but a validated task is kept only after every earlier slot is
    # finished, and checked for duplicates again then, so workers keep what one process keeps.
    finished_slots = {r.slot: anyio.Event() for r in requests}

    async def keep_in_order(request: DraftRequest, record: DraftRecord, task: Task) -> Task | None:
        for slot, event in finished_slots.items():
            if slot < request.slot:
                await event.wait()
        duplicate = find_duplicate(task, kept)
        if duplicate is None:
            return task
        record.passed = record.passed[: record.passed.index("unique")]
        record.failed_stage, record.kill_rate = "unique", None
        record.kill_rates, record.acceptance_rates = {}, {}
        record.reason = (
            f"unique: a near-duplicate of kept task {duplicate.id!r}: change the scenario, people and values"
        )
        record.problems = [record.reason]
        return None

    async def fill(request: DraftRequest) -> None:
        try:
            await fill_slot(request)
        finally:
            finished_slots[request.slot].set()

    # One process works slot after slot. Workers hold a place only while drafting and
    # validating: a slot waiting to be kept after slower earlier ones lets the next draft in.
    slot_limit = nullcontext() if workers > 1 else limiter
    round_limit = limiter if workers > 1 else nullcontext()

    async def fill_slot(request: DraftRequest) -> None:
        async with slot_limit:
            previous: str | None = None
            report: str | None = None
            for round_ in range(max_rounds):
                started = time.perf_counter()
                task: Task | None = None
                try:
                    async with round_limit:
                        text = await generator.draft(request, previous, report, round_, kept)
                        record, task = await evaluate_draft(
                            text, request, kept, cache, validator=validator, judge=judge, probe=probe
                        )
                        if task is not None and paraphraser is not None:
                            reworded = await paraphraser.paraphrase(task, cache=cache)
                            task, record.paraphrased = reworded.task, reworded.changed
                            record.paraphrase_refused = reworded.refused
                    if task is not None and workers > 1:
                        task = await keep_in_order(request, record, task)
                    previous, report = text, "\n".join(f"- {p}" for p in record.problems)
                except GenerationError as exc:
                    record = DraftRecord(
                        slot=request.slot,
                        capability=request.capability,
                        round=round_,
                        generator=generator.name,
                        failed_stage="generated",
                        reason=str(exc),
                        problems=[str(exc)],
                        infrastructure=exc.infrastructure,
                        request=request,
                    )
                    previous, report = exc.text, str(exc)
                record.round, record.generator, record.model = round_, generator.name, generator.model
                record.seconds = time.perf_counter() - started
                if record.infrastructure:  # not the draft's fault: no round spent, a rerun retries
                    _append(out, record)
                    state.unfinished += 1
                    if progress is not None:
                        progress(state, record)
                    return
                last = task is not None or round_ == max_rounds - 1
                if task is not None:
                    task = _with_provenance(task, generator, round_, seed, kept)
                    atomic_write_text(out / TASKS_DIR / f"{task.id}.json", dump_task(task))
                    kept.append(task)
                    record.kept, record.task_id, record.task_hash = True, task.id, task.content_hash
                record.final = last
                _append(out, record)
                if last:
                    state.done += 1
                    state.kept += record.kept
                    state.rejected += not record.kept
                if progress is not None:
                    progress(state, record)
                if last:
                    return

    try:
        async with anyio.create_task_group() as group:
            for request in requests:
                group.start_soon(fill, request)
    finally:
        if pool is not None:
            pool.close()
    return state


def _with_provenance(task: Task, generator: Generator, rounds: int, seed: int, kept: Sequence[Task]) -> Task:
    """Record where the task came from, and make its id unique among kept tasks."""
    taken = {t.id for t in kept}
    task_id, n = task.id, 2
    while task_id in taken:
        task_id, n = f"{task.id}-{n}", n + 1
    provenance = Provenance(
        generator=generator.name,
        model=generator.model,
        rounds=rounds + 1,
        seed=task.provenance.seed if task.provenance.seed is not None else seed,
        family=task.provenance.family,
        paraphrased_by=task.provenance.paraphrased_by,
    )
    return task.model_copy(update={"id": task_id, "provenance": provenance})


def funnel_counts(records: list[DraftRecord]) -> dict[str, int]:
    """How many drafts passed each stage (every round counts as a draft)."""
    met = {stage for record in records for stage in record.passed}
    stages = [*FUNNEL_STAGES, *(s for s in OPTIONAL_STAGES if s in met)]
    counts = dict.fromkeys([*stages, "kept"], 0)
    for record in records:
        for stage in record.passed:
            counts[stage] += 1
        counts["kept"] += record.kept
    return counts
