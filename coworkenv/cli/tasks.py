"""Commands on task files: `validate`, `redteam`, `play`, `verify` and `task-schema`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import click

from coworkenv.rollout.exports.report import terminal_console

from .options import json_option, paths_argument, port_option, task_paths


@click.command()
@paths_argument
@click.option("--no-mutants", is_flag=True, help="Skip the mutation stage (faster).")
@json_option("Print one JSON report per task instead of a table.")
def validate(paths: tuple[Path, ...], no_mutants: bool, as_json: bool) -> None:
    """Validate task files (or folders of them) by schema and by execution.

    Stages: schema, seed, checks, noop (no success), oracle (score 1.0, no safety
    violation), deterministic (same final state hash twice), mutants (dropped or altered
    reference steps must fail). Exit status 1 when any task fails.
    """
    from rich.table import Table

    from coworkenv.rollout import SeedCache
    from coworkenv.synth.validation.validation import validate_task
    from coworkenv.task import TaskFileError, load_task

    files = task_paths(paths)
    cache = SeedCache()
    table = Table(title="Validation")
    for header in ("task", "result", "failed stage", "reason"):
        table.add_column(header, overflow="fold")
    for header in ("mutants killed", "seconds"):
        table.add_column(header, justify="right", no_wrap=True)
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
        terminal_console().print(table)
        click.echo(f"{len(files) - failures} of {len(files)} task(s) valid")
    if failures:
        sys.exit(1)


@click.command()
@paths_argument
@json_option("One JSON report per task on stdout.")
def redteam(paths: tuple[Path, ...], as_json: bool) -> None:
    """Search task files (or folders of them) for verdicts a wrong agent games.

    Plays the changes a reward-seeking policy would try on each reference solution (every
    text padded with wrong values, hedged, affirmed then denied; work done a turn late or
    early; tickets resolved or commented on at the end) and lists every one that still earns
    strict success. Exit status 1 when any is found.
    """
    from coworkenv.rollout import SeedCache
    from coworkenv.synth.validation.redteam import red_team
    from coworkenv.task import load_task

    files = task_paths(paths)
    cache = SeedCache()
    found = tried = 0

    async def run_all() -> None:
        nonlocal found, tried
        for path in files:
            report = await red_team(load_task(path), cache)
            found += len(report.findings) + bool(report.error)
            tried += sum(report.tried.values())
            if as_json:
                click.echo(json.dumps({"path": str(path), **report.model_dump(mode="json")}))
                continue
            if report.error:
                click.echo(f"{report.task_id}: {report.error}")
            for f in report.findings:
                click.echo(f"{report.task_id}: {f.kind}: {f.description} (score {f.score})")

    anyio.run(run_all)
    if not as_json:
        click.echo(f"{tried} change(s) tried on {len(files)} task(s); {found} still pass")
    if found:
        sys.exit(1)


@click.command()
@click.argument("task_path", metavar="TASK", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the task's workspace (replaced if it exists).",
)
@click.option(
    "--transport",
    type=click.Choice(["http", "stdio"]),
    default="http",
    show_default=True,
    help="How the external agent connects: streamable HTTP on 127.0.0.1, or stdio.",
)
@port_option
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


@click.command()
@click.argument("task_path", metavar="TASK", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--db",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="A saved workspace (e.g. from play, or a served --db file).",
)
@json_option("Print the verdict as JSON.")
def verify(task_path: Path, db: Path, as_json: bool) -> None:
    """The verdict of a saved workspace against a task. Exit status 0 on strict success, 1 otherwise."""
    from coworkenv.play import verdict_lines, verify_saved
    from coworkenv.task import load_task

    task = load_task(task_path)
    verdict = anyio.run(verify_saved, task, db)
    click.echo(verdict.model_dump_json(indent=2) if as_json else "\n".join(verdict_lines(verdict)))
    sys.exit(0 if verdict.success else 1)


@click.command("task-schema")
def task_schema() -> None:
    """Print the JSON Schema of the task format (for editors and LLM structured output)."""
    from coworkenv.task import task_json_schema

    click.echo(json.dumps(task_json_schema(), indent=2))
