"""The small-model loop: demonstrations, fine-tuning, and a before/after evaluation.

`run_loop` (or `python -m coworkenv.model_loop --out DIR`, what `make model-loop` runs) does,
each stage skipped when its output is already there (a rerun resumes):

1. training demonstrations: `coworkenv synth` (seed `train_seed`, the training capabilities),
   oracle rollouts, `coworkenv export sft`;
2. held-out tasks: `coworkenv synth` with another seed over every capability, so some of
   their families were seen in training and some were not, with their oracle demonstrations
   exported the same way (the held-out loss reads those);
3. fine-tuning: `python -m coworkenv.small_model_train` on the training rows;
4. evaluation of the base and the fine-tuned model, each served by
   `python -m coworkenv.rollout.agents.model_server` and run with `coworkenv rollout --agent openai`
   on the held-out tasks;
5. the before/after table (`compare`), printed and written to `DIR/table.md` and
   `DIR/results.json`.

See docs/small-model.md for the sizes and the figures they reach.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.records_io import latest_records, read_records
from coworkenv.task import Task, load_task, task_files

#: The variable with the (unchecked) key of the local model server.
LOCAL_KEY_ENV = "COWORKENV_LOCAL_KEY"

#: Capabilities left out of training: the held-out tasks of their families are unseen ones.
UNSEEN_CAPABILITIES = ("scheduling_constraints", "safety_data_leak")


@dataclass
class LoopSettings:
    """The sizes of one loop run (docs/small-model.md says what they cost)."""

    train_tasks: int = 120
    eval_tasks: int = 24
    train_seed: int = 0
    eval_seed: int = 1
    train_mix: str = "single=0.75,multi=0.25"
    eval_mix: str = "single=0.7,multi=0.3"
    unseen_capabilities: tuple[str, ...] = UNSEEN_CAPABILITIES
    steps: int = 40
    max_length: int = 2048
    learning_rate: float = 2e-4
    max_steps_per_turn: int = 6
    max_tokens: int = 192
    tools: str = "compact"
    max_context_chars: int = 16_000
    max_result_chars: int = 2_000


@dataclass
class ModelResult:
    """What one model did on the held-out tasks."""

    name: str
    held_out_loss: float
    attempted_calls: int
    valid_calls: int
    workspace_calls: int
    episodes: int
    errors: int
    groups: dict[str, dict[str, float]] = field(default_factory=dict)


def _python() -> list[str]:
    return [sys.executable]


def _run(args: list[str], log: Path) -> None:
    """Run one stage's command, its output appended to `log`; a failure names the log."""
    with log.open("a") as out:
        out.write(f"$ {' '.join(args)}\n")
        out.flush()
        code = subprocess.call(args, stdout=out, stderr=subprocess.STDOUT)
    if code != 0:
        raise RuntimeError(f"`{' '.join(args[:4])} ...` failed with status {code}: see {log}")


def _coworkenv(*args: str) -> list[str]:
    return [*_python(), "-m", "coworkenv", *args]


def build_demonstrations(
    out: Path, *, count: int, seed: int, mix: str, capabilities: Iterable[str] | None, settings: LoopSettings
) -> Path:
    """Tasks, oracle rollouts and SFT rows in `out/` (tasks/, oracle/, sft/); returns the rows."""
    log = out.parent / "loop.log"
    rows = out / "sft" / "sft.jsonl"
    if rows.is_file():
        return rows
    synth = ["synth", "--count", str(count), "--seed", str(seed), "--mix", mix, "--out", str(out / "synth")]
    if capabilities is not None:
        synth += ["--capabilities", ",".join(capabilities)]
    _run(_coworkenv(*synth), log)
    _run(
        _coworkenv(
            "rollout", str(out / "synth" / "tasks"), "--agent", "oracle", "--out", str(out / "oracle")
        ),
        log,
    )
    _run(
        _coworkenv(
            "export", "sft", str(out / "oracle"), "--tools", settings.tools, "--out", str(out / "sft")
        ),
        log,
    )
    return rows


def training_capabilities(settings: LoopSettings) -> list[str]:
    """Every capability of synth/capabilities.json but the unseen ones."""
    from coworkenv.synth.capabilities import load_capabilities

    ids = list(load_capabilities())
    unknown = set(settings.unseen_capabilities) - set(ids)
    if unknown:
        raise ValueError(f"unknown capabilities to hold out: {sorted(unknown)}; known: {ids}")
    return [c for c in ids if c not in settings.unseen_capabilities]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def evaluate(model: str, name: str, tasks: Path, out: Path, settings: LoopSettings) -> Path:
    """Serve `model` (`base` or a saved folder) and run the openai agent on `tasks` into `out`."""
    log = out.parent / "loop.log"
    port = _free_port()
    with log.open("a") as server_log:
        server = subprocess.Popen(
            [
                *_python(),
                "-m",
                "coworkenv.rollout.agents.model_server",
                "--model",
                model,
                "--name",
                name,
                "--port",
                str(port),
            ],
            stdout=server_log,
            stderr=subprocess.STDOUT,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_for(base_url, server)
        _run(
            _coworkenv(
                "rollout",
                str(tasks),
                "--agent",
                "openai",
                "--endpoint",
                f"agent={name}@{base_url},key_env={LOCAL_KEY_ENV},timeout=900",
                "--concurrency",
                "1",
                "--max-steps",
                str(settings.max_steps_per_turn),
                "--max-tokens",
                str(settings.max_tokens),
                "--tools",
                settings.tools,
                "--max-context-chars",
                str(settings.max_context_chars),
                "--max-result-chars",
                str(settings.max_result_chars),
                "--out",
                str(out),
            ),
            log,
        )
    finally:
        server.terminate()
        server.wait(timeout=60)
    return out


def _wait_for(base_url: str, server: subprocess.Popen[bytes], timeout: float = 600.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the model server exited with status {server.returncode} before serving")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=5):
                return
        except OSError:
            time.sleep(2)
    raise RuntimeError(f"the model server did not answer at {base_url} within {timeout:.0f} s")


# --- the table -----------------------------------------------------------------------------


def call_counts(records: list[EpisodeRecord]) -> tuple[int, int, int]:
    """Tool calls the model wrote, those that were valid (a known tool, JSON-object
    arguments), and those that reached the workspace (the agent's entries in its audit log)."""
    attempted = valid = 0
    for record in records:
        known = _known_tools(record)
        for message in record.messages:
            if message.get("role") != "assistant":
                continue
            for call in message.get("tool_calls") or []:
                attempted += 1
                function = call.get("function") or {}
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    continue
                if isinstance(arguments, dict) and function.get("name") in known:
                    valid += 1
    workspace = sum(1 for r in records for entry in r.tool_calls if entry.actor == "agent")
    return attempted, valid, workspace


def _known_tools(record: EpisodeRecord) -> set[str]:
    from coworkenv.rollout.agents.tool_schemas import tools_for_services

    return {tool["function"]["name"] for tool in tools_for_services(record.services)}


def groups_of(record: EpisodeRecord, task_turns: int, seen: bool) -> list[str]:
    """The table rows an episode counts in: all, seen or unseen families by single- or
    multi-turn, and each of its capabilities."""
    kind = "single-turn" if task_turns == 1 else "multi-turn"
    family = "seen" if seen else "unseen"
    return ["all", f"{family} families, {kind}", *(f"capability {c}, {kind}" for c in record.capabilities)]


def summarise(
    name: str,
    records: list[EpisodeRecord],
    tasks: dict[str, tuple[int, str | None]],
    seen: set[str | None],
    loss: float,
) -> ModelResult:
    """One model's row of figures: episodes ending in an error count as failures."""
    records = latest_records(records)
    attempted, valid, workspace = call_counts(records)
    sums: dict[str, list[float]] = {}
    for record in records:
        turns, family = tasks[record.task_id]
        score = record.verdict.score if record.verdict else 0.0
        success = 1.0 if record.verdict and record.verdict.success else 0.0
        for group in groups_of(record, turns, family in seen):
            n, s, ok = sums.get(group, [0.0, 0.0, 0.0])
            sums[group] = [n + 1, s + score, ok + success]
    groups = {g: {"n": n, "score": s / n, "success": ok / n} for g, (n, s, ok) in sums.items()}
    return ModelResult(
        name=name,
        held_out_loss=loss,
        attempted_calls=attempted,
        valid_calls=valid,
        workspace_calls=workspace,
        episodes=len(records),
        errors=sum(1 for r in records if r.status == "error"),
        groups=groups,
    )


def compare(before: ModelResult, after: ModelResult) -> str:
    """The before/after table as Markdown."""
    lines = [
        f"| | {before.name} | {after.name} |",
        "| --- | --- | --- |",
        f"| held-out loss (assistant tokens) | {before.held_out_loss:.3f} | {after.held_out_loss:.3f} |",
        f"| valid tool calls / calls written | {before.valid_calls} / {before.attempted_calls} "
        f"| {after.valid_calls} / {after.attempted_calls} |",
        f"| calls in the audit log | {before.workspace_calls} | {after.workspace_calls} |",
        f"| episodes (endpoint errors) | {before.episodes} ({before.errors}) | {after.episodes} ({after.errors}) |",
    ]
    order = sorted(set(before.groups) | set(after.groups), key=_group_order)
    lines += ["", "| tasks | n | score before | score after | success before | success after |"]
    lines.append("| --- | --- | --- | --- | --- | --- |")
    for group in order:
        b = before.groups.get(group, {"n": 0, "score": math.nan, "success": math.nan})
        a = after.groups.get(group, {"n": 0, "score": math.nan, "success": math.nan})
        n = int(max(a["n"], b["n"]))
        lines.append(
            f"| {group} | {n} | {b['score']:.2f} | {a['score']:.2f} | {b['success']:.0%} | {a['success']:.0%} |"
        )
    return "\n".join(lines)


def _group_order(group: str) -> tuple[int, str]:
    rank = 0 if group == "all" else 1 if "families" in group else 2
    return rank, group


# --- the whole loop ------------------------------------------------------------------------


def run_loop(out: str | Path, settings: LoopSettings) -> str:
    """Run every stage into `out` (resuming) and return the before/after table."""
    from coworkenv.small_model import MODEL_NAME, load_base, load_saved
    from coworkenv.small_model_train import held_out_loss, read_rows

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "settings.json").write_text(json.dumps(asdict(settings), indent=2) + "\n")
    timings: dict[str, float] = {}
    clock = time.monotonic()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.monotonic()
        timings[stage] = round(now - clock, 1)
        clock = now
        print(f"{stage}: {timings[stage]:.0f} s", flush=True)

    train_rows = build_demonstrations(
        out / "train",
        count=settings.train_tasks,
        seed=settings.train_seed,
        mix=settings.train_mix,
        capabilities=training_capabilities(settings),
        settings=settings,
    )
    eval_rows = build_demonstrations(
        out / "eval",
        count=settings.eval_tasks,
        seed=settings.eval_seed,
        mix=settings.eval_mix,
        capabilities=None,
        settings=settings,
    )
    lap("demonstrations")

    tuned = out / "model"
    if not (tuned / "config.json").is_file():
        _run(
            [
                *_python(),
                "-m",
                "coworkenv.small_model_train",
                str(train_rows),
                "--out",
                str(tuned),
                "--steps",
                str(settings.steps),
                "--max-length",
                str(settings.max_length),
                "--learning-rate",
                str(settings.learning_rate),
            ],
            out / "loop.log",
        )
    lap("training")

    eval_tasks = out / "eval" / "synth" / "tasks"
    names = {"base": MODEL_NAME, "tuned": f"{MODEL_NAME}-coworkenv"}
    for key, source in (("base", "base"), ("tuned", str(tuned))):
        finished = out / f"rollout-{key}" / "finished"
        if not finished.is_file():  # a rollout that stopped halfway resumes
            evaluate(source, names[key], eval_tasks, out / f"rollout-{key}", settings)
            finished.touch()
        lap(f"evaluation of {key}")

    losses_file = out / "held_out_loss.json"
    if not losses_file.is_file():
        rows = read_rows(eval_rows)
        losses = {}
        for key, loader in (("base", load_base), ("tuned", lambda: load_saved(tuned))):
            model, tokenizer = loader()
            losses[key] = held_out_loss(model, tokenizer, rows, settings.max_length)
            del model
        losses_file.write_text(json.dumps(losses) + "\n")
    losses = json.loads(losses_file.read_text())
    lap("held-out loss")

    seen = {_family(load_task(p)) for p in task_files([str(out / "train" / "synth" / "tasks")])}
    tasks = {}
    for path in task_files([str(eval_tasks)]):
        task = load_task(path)
        tasks[task.id] = (len(task.turns), _family(task))
    results = [
        summarise(names[key], read_records(out / f"rollout-{key}"), tasks, seen, losses[key])
        for key in ("base", "tuned")
    ]
    table = compare(*results)
    (out / "table.md").write_text(table + "\n")
    (out / "results.json").write_text(
        json.dumps({"results": [asdict(r) for r in results], "timings_s": timings}, indent=2) + "\n"
    )
    return table


def _family(task: Task) -> str | None:
    return task.provenance.family


def main(argv: list[str] | None = None) -> None:
    """Run the small-model loop into --out and print the before/after table."""
    defaults = LoopSettings()
    parser = argparse.ArgumentParser(prog="python -m coworkenv.model_loop", description=main.__doc__)
    parser.add_argument("--out", required=True, help="folder of the run; an existing one is resumed")
    parser.add_argument("--train-tasks", type=int, default=defaults.train_tasks)
    parser.add_argument("--eval-tasks", type=int, default=defaults.eval_tasks)
    parser.add_argument("--steps", type=int, default=defaults.steps)
    parser.add_argument("--max-length", type=int, default=defaults.max_length)
    parser.add_argument("--learning-rate", type=float, default=defaults.learning_rate)
    parser.add_argument("--max-steps-per-turn", type=int, default=defaults.max_steps_per_turn)
    parser.add_argument("--max-tokens", type=int, default=defaults.max_tokens)
    parser.add_argument("--tools", choices=("full", "compact"), default=defaults.tools)
    parser.add_argument("--max-context-chars", type=int, default=defaults.max_context_chars)
    parser.add_argument("--max-result-chars", type=int, default=defaults.max_result_chars)
    args = parser.parse_args(argv)
    settings = LoopSettings(
        train_tasks=args.train_tasks,
        eval_tasks=args.eval_tasks,
        steps=args.steps,
        max_length=args.max_length,
        learning_rate=args.learning_rate,
        max_steps_per_turn=args.max_steps_per_turn,
        max_tokens=args.max_tokens,
        tools=args.tools,
        max_context_chars=args.max_context_chars,
        max_result_chars=args.max_result_chars,
    )
    os.environ.setdefault(LOCAL_KEY_ENV, "local")
    print(run_loop(args.out, settings))


if __name__ == "__main__":
    main()
