"""The `coworkenv` command line: a thin layer over the library.

Library exceptions become user messages here, in one place (`main`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import click

from coworkenv.rollout.seeding import SeedError
from coworkenv.servers import SERVICE_NAMES, UnknownServiceError
from coworkenv.servers.hosting import DEFAULT_HOST, http_paths, serve_http, serve_stdio
from coworkenv.state import Workspace, WorkspaceError
from coworkenv.task import TaskFileError

SERVICE_CHOICES = [*SERVICE_NAMES, "all"]


def _load_workspace(db: Path | None, demo: int | None) -> Workspace:
    if db is not None and demo is not None:
        raise click.UsageError("give either --db PATH or --demo [SEED], not both")
    if db is not None:
        return Workspace.open(db)
    from coworkenv.servers.demo import build_demo_workspace

    return build_demo_workspace(seed=demo or 0)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="coworkenv")
def cli() -> None:
    """coworkenv: executable, verifiable workspace environments for AI coworkers."""


@cli.command()
@click.option(
    "--service",
    type=click.Choice(SERVICE_CHOICES),
    default="all",
    show_default=True,
    help="One service, or all of them (each at its own path, plus the combined server).",
)
@click.option(
    "--db",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A saved workspace file to serve; tool calls write to it.",
)
@click.option(
    "--demo",
    type=int,
    is_flag=False,
    flag_value=0,
    default=None,
    metavar="[SEED]",
    help="Serve the demo workspace built from SEED (default 0). Used when --db is not given.",
)
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="HTTP port.")
def serve(service: str, db: Path | None, demo: int | None, transport: str, host: str, port: int) -> None:
    """Serve a workspace's MCP servers to any MCP client (the Inspector, an agent SDK).

    Over stdio, one service (or with --service all, the combined server with tool names
    prefixed by service). Over HTTP, each service at /<service>/mcp and the combined
    server at /mcp.
    """
    workspace = _load_workspace(db, demo)
    if service != "all" and service not in workspace.services:
        raise click.UsageError(
            f"the workspace has no {service} service; it has: {', '.join(workspace.services)}"
        )
    if transport == "stdio":
        anyio.run(serve_stdio, workspace, service)
        return
    for path in http_paths(workspace, service):
        click.echo(f"serving http://{host}:{port}{path}", err=True)
    serve_http(workspace, service, host=host, port=port)


@cli.command("save-demo")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace PATH if it exists.")
def save_demo(path: Path, seed: int, overwrite: bool) -> None:
    """Build the demo workspace from SEED and save it to PATH (serve it with --db PATH)."""
    from coworkenv.servers.demo import build_demo_workspace

    workspace = build_demo_workspace(seed=seed)
    workspace.save(path, overwrite=overwrite)
    click.echo(f"saved demo workspace (seed {seed}, hash {workspace.content_hash()[:12]}) to {path}")


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--no-mutants", is_flag=True, help="Skip the mutation stage (faster).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON report per task instead of a table.")
def validate(paths: tuple[Path, ...], no_mutants: bool, as_json: bool) -> None:
    """Validate task files (or folders of them) by schema and by execution.

    Stages: schema, seed, checks, noop (no success), oracle (score 1.0, no safety
    violation), deterministic (same final state hash twice), mutants (dropped or altered
    reference steps must fail). Exit status 1 when any task fails.
    """
    from rich.console import Console
    from rich.table import Table

    from coworkenv.rollout import SeedCache
    from coworkenv.rollout.validation import validate_task
    from coworkenv.task import TaskFileError, load_task, task_files

    files = task_files(list(paths))
    if not files:
        raise click.UsageError("no task files (*.json) found")
    cache = SeedCache()
    table = Table("task", "result", "failed stage", "reason", "mutants killed", "seconds")
    failures = 0

    async def run_all() -> None:
        nonlocal failures
        for path in files:
            try:
                task = load_task(path)
            except TaskFileError as exc:
                failures += 1
                if as_json:
                    click.echo(
                        json.dumps({"path": str(path), "ok": False, "stage": "schema", "detail": str(exc)})
                    )
                table.add_row(path.name, "[red]FAIL[/red]", "schema", str(exc), "", "")
                continue
            report = await validate_task(task, cache=cache, run_mutants=not no_mutants)
            failed = report.failed_stage
            failures += not report.ok
            if as_json:
                click.echo(json.dumps({"path": str(path), "ok": report.ok, **report.model_dump(mode="json")}))
            kill = (
                ""
                if report.kill_rate is None
                else f"{sum(m.killed for m in report.mutants)}/{len(report.mutants)}"
            )
            table.add_row(
                task.id,
                "[green]ok[/green]" if report.ok else "[red]FAIL[/red]",
                failed.name if failed else "",
                failed.detail if failed else "",
                kill,
                f"{sum(s.seconds for s in report.stages):.2f}",
            )

    anyio.run(run_all)
    if not as_json:
        Console(width=200).print(table)
        click.echo(f"{len(files) - failures} of {len(files)} task(s) valid")
    if failures:
        sys.exit(1)


@cli.command()
@click.argument("task_path", metavar="TASK", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the task's workspace (replaced if it exists).",
)
@click.option("--transport", type=click.Choice(["http", "stdio"]), default="http", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
def play(task_path: Path, db: Path, transport: str, port: int) -> None:
    """Play a task by hand or with any external MCP agent, turn by turn, then see the verdict."""
    from coworkenv.play import play as run_play
    from coworkenv.play import verdict_lines
    from coworkenv.task import load_task

    task = load_task(task_path)
    verdict = anyio.run(lambda: run_play(task, db, transport=transport, port=port, say=click.echo, wait=_ask))
    click.echo("\n".join(verdict_lines(verdict)))


async def _ask(prompt: str) -> str:
    click.echo(prompt, nl=False)
    line = await anyio.to_thread.run_sync(sys.stdin.readline)
    return line if line else "q"


@cli.command()
@click.argument("task_path", metavar="TASK", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--db",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="A saved workspace (e.g. from play, or a served --db file).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
def verify(task_path: Path, db: Path, as_json: bool) -> None:
    """The verdict of a saved workspace against a task. Exit status 0 on strict success, 1 otherwise."""
    from coworkenv.play import verdict_lines, verify_saved
    from coworkenv.task import load_task

    task = load_task(task_path)
    verdict = anyio.run(verify_saved, task, db)
    click.echo(verdict.model_dump_json(indent=2) if as_json else "\n".join(verdict_lines(verdict)))
    sys.exit(0 if verdict.success else 1)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--agent", type=click.Choice(["oracle", "noop", "noisy", "openai"]), default="oracle", show_default=True
)
@click.option("--model", help="Model name for --agent openai.")
@click.option(
    "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM, SGLang, Ollama)."
)
@click.option(
    "--api-key-env", default="OPENAI_API_KEY", show_default=True, help="Environment variable with the key."
)
@click.option("--temperature", type=float, default=0.0, show_default=True)
@click.option("--max-tokens", type=int, default=None)
@click.option("--max-steps", type=int, default=20, show_default=True, help="Model calls per turn (openai).")
@click.option(
    "--noise", type=float, default=0.3, show_default=True, help="Per-step mistake probability (noisy)."
)
@click.option("--trials", type=click.IntRange(1), default=1, show_default=True)
@click.option("--concurrency", type=click.IntRange(1), default=4, show_default=True)
@click.option(
    "--fault-rate",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Probability of an injected tool error per call (robustness runs).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--name", help="Policy name in the records (default: the agent, or openai:MODEL).")
@click.option(
    "--user-model", help="Model for an LLM user simulator (tasks with a persona; openai agent only)."
)
@click.option("--user-base-url", help="Endpoint of the user simulator (default: --base-url).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
def rollout(
    paths: tuple[Path, ...],
    agent: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str,
    temperature: float,
    max_tokens: int | None,
    max_steps: int,
    noise: float,
    trials: int,
    concurrency: int,
    fault_rate: float,
    seed: int,
    name: str | None,
    user_model: str | None,
    user_base_url: str | None,
    out_dir: Path,
) -> None:
    """Run episodes of an agent on tasks: records are appended to OUT/records.jsonl as they finish.

    Rerunning the same command resumes: finished (task, trial) pairs are skipped and
    episodes that ended in an infrastructure error are run again.
    """
    import os

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from coworkenv.rollout import NoisyPolicy, NoopPolicy, OpenAIAgent, OraclePolicy
    from coworkenv.rollout.batch import run_batch
    from coworkenv.rollout.user_simulator import UserSimulator
    from coworkenv.servers.faults import FaultPlan
    from coworkenv.task import load_task, task_files

    tasks = [load_task(p) for p in task_files(list(paths))]
    if agent == "openai" and not model:
        raise click.UsageError("--agent openai needs --model")

    def make_policy() -> Any:
        policy: Any
        if agent == "oracle":
            policy = OraclePolicy()
        elif agent == "noop":
            policy = NoopPolicy()
        elif agent == "noisy":
            policy = NoisyPolicy(p=noise, seed=seed)
        else:
            policy = OpenAIAgent(
                str(model),
                base_url=base_url,
                api_key=os.environ.get(api_key_env),
                temperature=temperature,
                max_tokens=max_tokens,
                max_steps_per_turn=max_steps,
            )
        if name:
            policy.name = name
        return policy

    faults = FaultPlan(rate=fault_rate, seed=seed) if fault_rate > 0 else None
    simulator = (
        UserSimulator(user_model, base_url=user_base_url or base_url, api_key=os.environ.get(api_key_env))
        if user_model
        else None
    )
    policy_name = make_policy().name
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=False,
    ) as bar:
        job = bar.add_task(policy_name, total=None)

        def show(state: Any, record: Any) -> None:
            bar.update(
                job,
                total=state.total,
                completed=state.done,
                description=f"{policy_name}  success {state.pass_rate:.2f}  errors {state.errors}",
            )

        try:
            state = anyio.run(
                lambda: run_batch(
                    tasks,
                    make_policy,
                    trials=trials,
                    out_dir=out_dir,
                    concurrency=concurrency,
                    faults=faults,
                    seed=seed,
                    user_simulator=simulator,
                    progress=show,
                )
            )
        except KeyboardInterrupt:
            click.echo(
                "interrupted: every finished episode is saved; rerun the same command to resume", err=True
            )
            sys.exit(130)
    click.echo(
        f"{state.done} episode(s) run, {state.skipped} already done; success rate {state.pass_rate:.3f}, "
        f"{state.errors} error(s); records in {out_dir / 'records.jsonl'}"
    )


@cli.command()
@click.argument(
    "dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write report.json and report.html (default: the first DIR).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of tables.")
def report(dirs: tuple[Path, ...], out_dir: Path | None, as_json: bool) -> None:
    """Scores of the episodes in one or more rollout folders: average score, strict success,
    pass@k, pass^k, safety violations, robustness, and breakdowns by capability, service,
    single/multi-turn and turn index. Writes report.json and a self-contained report.html."""
    from rich.console import Console

    from coworkenv.rollout import read_records
    from coworkenv.rollout.report import build_report, print_report, report_json
    from coworkenv.rollout.report_html import write_report

    records = [r for d in dirs for r in read_records(d)]
    if not records:
        raise click.UsageError(f"no episode records in {', '.join(map(str, dirs))}")
    built = build_report(records)
    paths = write_report(records, out_dir or dirs[0])
    if as_json:
        click.echo(report_json(built))
        return
    print_report(built, Console(width=160))
    click.echo(f"wrote {paths['json']} and {paths['html']}")


@cli.group()
def export() -> None:
    """Training data from rollout folders: SFT demonstrations and RL rollouts with rewards."""


@export.command("sft")
@click.argument(
    "dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--min-score", type=click.FloatRange(0, 1), default=1.0, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["trl", "sharegpt"]), default="trl", show_default=True)
@click.option("--policy", "policies", multiple=True, help="Only these policies (e.g. the teacher).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
def export_sft_command(
    dirs: tuple[Path, ...], min_score: float, fmt: str, policies: tuple[str, ...], out_dir: Path
) -> None:
    """Successful runs as SFT rows: TRL/prime-rl `messages` + `tools`, or LLaMA-Factory sharegpt
    with a dataset_info.json entry. Runs below --min-score, unsuccessful or unsafe runs are left out."""
    from coworkenv.rollout import read_records
    from coworkenv.rollout.export_sft import export_sft

    records = [r for d in dirs for r in read_records(d)]
    summary = export_sft(records, out_dir, format=fmt, min_score=min_score, policies=list(policies) or None)  # type: ignore[arg-type]
    click.echo(json.dumps(summary, indent=2, default=str))


@export.command("rl")
@click.argument(
    "dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--advantages",
    type=click.Choice(["none", "grpo", "gdpo"]),
    default="none",
    show_default=True,
    help="Group-relative advantages over the trials of each task.",
)
@click.option("--level", type=click.Choice(["episode", "turn"]), default="episode", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
def export_rl_command(dirs: tuple[Path, ...], advantages: str, level: str, out_dir: Path) -> None:
    """Episodes as RL rows: messages, tools, reward, one reward component per check, per-turn
    rewards, and optionally GRPO- or GDPO-style advantages."""
    from coworkenv.rollout import read_records
    from coworkenv.rollout.export_rl import export_rl

    records = [r for d in dirs for r in read_records(d)]
    summary = export_rl(records, out_dir, advantages=advantages, level=level)  # type: ignore[arg-type]
    click.echo(json.dumps(summary, indent=2, default=str))


@cli.command()
@click.option("--count", type=click.IntRange(1), default=20, show_default=True, help="Task slots to fill.")
@click.option(
    "--capabilities", help="Comma-separated capability ids (default: all of synth/capabilities.json)."
)
@click.option(
    "--generator", type=click.Choice(["procedural", "llm"]), default="procedural", show_default=True
)
@click.option("--model", help="Model for --generator llm.")
@click.option("--base-url", help="OpenAI-compatible endpoint for --generator llm.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True)
@click.option(
    "--max-rounds", type=click.IntRange(1), default=3, show_default=True, help="Correction rounds per slot."
)
@click.option("--concurrency", type=click.IntRange(1), default=1, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True)
def synth(
    count: int,
    capabilities: str | None,
    generator: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str,
    max_rounds: int,
    concurrency: int,
    seed: int,
    out_dir: Path,
) -> None:
    """Generate tasks for capabilities, validate each by executing it, correct or reject.

    Kept tasks land in OUT/tasks/, every draft round in OUT/drafts.jsonl, and the funnel
    report in OUT/funnel.json and OUT/funnel.html. Rerunning resumes unfinished slots.
    """
    import os

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from coworkenv.synth.funnel import build_funnel, print_funnel, write_funnel
    from coworkenv.synth.generators import LLMGenerator, ProceduralGenerator
    from coworkenv.synth.pipeline import kept_tasks, read_drafts, synthesize

    chosen: Any
    if generator == "llm":
        if not model:
            raise click.UsageError("--generator llm needs --model")
        chosen = LLMGenerator(model, base_url=base_url, api_key=os.environ.get(api_key_env))
    else:
        chosen = ProceduralGenerator()
    caps = [c.strip() for c in capabilities.split(",")] if capabilities else None
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()
    ) as bar:
        job = bar.add_task("synthesizing", total=count)

        def show(state: Any, record: Any) -> None:
            bar.update(job, completed=state.done, description=f"kept {state.kept}  rejected {state.rejected}")

        try:
            state = anyio.run(
                lambda: synthesize(
                    chosen,
                    count=count,
                    out_dir=out_dir,
                    capabilities=caps,
                    max_rounds=max_rounds,
                    concurrency=concurrency,
                    seed=seed,
                    progress=show,
                )
            )
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    funnel = build_funnel(read_drafts(out_dir), kept_tasks(out_dir))
    print_funnel(funnel, Console(width=160))
    paths = write_funnel(funnel, out_dir)
    click.echo(
        f"kept {state.kept} of {state.slots} slots; tasks in {out_dir / 'tasks'}; funnel in {paths['html']}"
    )


@cli.command("task-schema")
def task_schema() -> None:
    """Print the JSON Schema of the task format (for editors and LLM structured output)."""
    from coworkenv.task import task_json_schema

    click.echo(json.dumps(task_json_schema(), indent=2))


@cli.command()
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--count", type=click.IntRange(1), default=50, show_default=True, help="Tasks to synthesize.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("out/demo"),
    show_default=True,
    help="Output folder (replaced).",
)
def demo(seed: int, count: int, out_dir: Path) -> None:
    """The main job, offline: synthesize and validate tasks, roll out a teacher and a student,
    report, and export SFT and RL data."""
    from coworkenv.demo import run_demo

    anyio.run(lambda: run_demo(seed, count, out_dir))


@cli.command()
@click.option("--seed", type=int, default=0, show_default=True)
def walkthrough(seed: int) -> None:
    """Drive a short scripted session through the demo workspace's MCP servers, printing each call."""
    from coworkenv.walkthrough import scripted_session

    anyio.run(scripted_session, seed)


def main() -> None:
    """Entry point: runs the CLI and turns library errors into one-line messages."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except (WorkspaceError, UnknownServiceError, TaskFileError, SeedError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
