"""`demo` (the whole pipeline offline) and `walkthrough` (a scripted MCP session)."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import click


@click.command()
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of synthesis and the student.")
@click.option("--count", type=click.IntRange(1), default=50, show_default=True, help="Tasks to synthesize.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("out/demo"),
    show_default=True,
    help="Output folder: resumed when it holds a run with the same --seed and --count, else replaced.",
)
def demo(seed: int, count: int, out_dir: Path) -> None:
    """The main job, offline: synthesize and validate tasks, roll out a teacher and a student,
    report, and export SFT and RL data. Interrupted, a rerun resumes the finished stages."""
    from coworkenv.demo import run_demo

    try:
        anyio.run(lambda: run_demo(seed, count, out_dir))
    except KeyboardInterrupt:
        click.echo("interrupted: finished stages are saved; rerun the same command to resume", err=True)
        sys.exit(130)


@click.command()
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the demo workspace.")
def walkthrough(seed: int) -> None:
    """Drive a short scripted session through the demo workspace's MCP servers, printing each call."""
    from coworkenv.walkthrough import scripted_session

    anyio.run(scripted_session, seed)
