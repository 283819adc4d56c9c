"""`make demo`: the main job on the embedded default, offline and without any key.

1. synthesize tasks procedurally for every capability and keep those that pass execution
   validation (`synth`);
2. roll out a teacher (the oracle) and a student (the noisy agent, which loses the thread
   as a day goes on, with a few injected tool errors) on the kept tasks, 4 trials each
   (`rollout`); the synthesized set mixes single requests, multi-turn tasks and workdays;
3. score them: terminal tables, report.json and a self-contained report.html (`report`);
4. export the teacher's successful runs as SFT rows and the student's runs as RL rows with
   GRPO advantages (`export sft`, `export rl`).
Everything lands in one folder (default `out/demo`). A rerun with the same seed and count
resumes: synthesis keeps its finished slots and the rollouts their finished episodes (so
after Ctrl-C nothing finished is done again); the report and the exports are rebuilt. A
rerun with another seed or count starts the folder over.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from rich.console import Console

from coworkenv.rollout import NoisyPolicy, OraclePolicy, read_records
from coworkenv.rollout.episodes.batch import run_batch
from coworkenv.rollout.exports.export_rl import export_rl
from coworkenv.rollout.exports.export_sft import export_sft
from coworkenv.rollout.exports.report import build_report, print_report, terminal_console
from coworkenv.rollout.exports.report_html import write_report
from coworkenv.servers.faults import FaultPlan
from coworkenv.synth.funnel import build_funnel, print_funnel, write_funnel
from coworkenv.synth.generators import ProceduralGenerator
from coworkenv.synth.pipeline import kept_tasks, read_drafts, synthesize

TRIALS = 4
#: The student: a noisy agent that misses or garbles a step with probability STUDENT_P in the
#: first turn and STUDENT_DRIFT more with each later turn of a task.
STUDENT_P = 0.25
STUDENT_DRIFT = 0.06
#: What the folder was made with; a rerun with the same settings resumes it.
SETTINGS_FILE = "demo.json"


def prepare(out: Path, settings: dict) -> bool:
    """Make `out` ready for a run with `settings`; True when it resumes an earlier run."""
    marker = out / SETTINGS_FILE
    if marker.exists() and json.loads(marker.read_text()) == settings:
        return True
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    marker.write_text(json.dumps(settings) + "\n")
    return False


async def run_demo(
    seed: int = 0, count: int = 50, out: Path = Path("out/demo"), console: Console | None = None
) -> dict:
    """Run the whole pipeline, resuming an earlier run of the same settings in `out`;
    returns the paths and headline numbers."""
    console = console or terminal_console()
    started = time.perf_counter()
    if prepare(out, {"seed": seed, "count": count, "trials": TRIALS}):
        console.print(f"resuming the demo in {out}: finished stages are kept")
    synth_dir, teacher_dir, student_dir = out / "synth", out / "teacher", out / "student"

    console.rule(f"1. synthesize {count} tasks (procedural generator, execution validation)")
    await synthesize(ProceduralGenerator(), count=count, out_dir=synth_dir, seed=seed, concurrency=2)
    tasks = kept_tasks(synth_dir)
    funnel = build_funnel(read_drafts(synth_dir), tasks)
    print_funnel(funnel, console)
    funnel_paths = write_funnel(funnel, synth_dir)
    console.print(f"funnel: {funnel_paths['html']} (and {funnel_paths['json'].name})")

    console.rule(f"2. rollouts on {len(tasks)} kept tasks, {TRIALS} trials each")
    teacher = await run_batch(tasks, OraclePolicy, trials=TRIALS, out_dir=teacher_dir)
    faults = FaultPlan(rate=0.05, seed=seed)
    student = await run_batch(
        tasks,
        lambda: NoisyPolicy(p=STUDENT_P, seed=seed, drift=STUDENT_DRIFT),
        trials=TRIALS,
        out_dir=student_dir,
        faults=faults,
    )
    console.print(
        f"teacher (oracle): {teacher.done} episodes, success {teacher.pass_rate:.2f}; "
        f"student (noisy, losing the thread as a day goes on, 5% injected tool errors): "
        f"{student.done} episodes, success {student.pass_rate:.2f}"
    )

    console.rule("3. report")
    records = read_records(teacher_dir) + read_records(student_dir)
    report = build_report(records, ks=[1, 2, 4])
    print_report(report, console, tasks=False)
    by_turn = report.policies["noisy"].by_turn_index if "noisy" in report.policies else []
    console.print(
        "the student's success by turn index: "
        + ", ".join(f"turn {row.key} {row.success_rate:.2f}" for row in by_turn)
        + " (multi-turn work is where it loses the thread)"
    )
    report_paths = write_report(records, out)

    console.rule("4. exports")
    sft = export_sft(read_records(teacher_dir), out / "exports" / "sft", format="trl", min_score=1.0)
    sharegpt = export_sft(read_records(teacher_dir), out / "exports" / "sharegpt", format="sharegpt")
    rl = export_rl(read_records(student_dir), out / "exports" / "rl", advantages="grpo")
    console.print(
        f"SFT: {sft['rows']} rows -> {sft['path']}; sharegpt: {sharegpt['rows']} rows; "
        f"RL: {rl['rows']} rows with GRPO advantages -> {rl['path']}"
    )
    seconds = time.perf_counter() - started
    console.print(
        f"\nkept {len(tasks)} of {count} tasks; funnel {funnel_paths['html']}; "
        f"report {report_paths['html']}; done in {seconds:.0f} s"
    )
    return {
        "kept": len(tasks),
        "student_by_turn": [row.success_rate for row in by_turn],
        "teacher": teacher,
        "student": student,
        "funnel": funnel_paths,
        "report": report_paths,
        "sft": sft,
        "rl": rl,
        "seconds": seconds,
    }
