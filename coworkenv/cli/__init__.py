"""The `coworkenv` command line: a thin layer over the library, one module per command group.

Library exceptions become user messages here, in one place (`main`).
"""

from __future__ import annotations

import sys

import click

from coworkenv.rollout.episodes.seeding import SeedError
from coworkenv.servers import UnknownServiceError
from coworkenv.state import WorkspaceError
from coworkenv.task import TaskFileError

from .demo import demo, walkthrough
from .export import export
from .rollouts import report, rollout, rollout_mcp
from .serve import env_server, save_demo, serve
from .synth import synth
from .tasks import play, redteam, task_schema, validate, verify
from .world import world_group


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="coworkenv")
def cli() -> None:
    """coworkenv: executable, verifiable workspace environments for AI coworkers."""


for command in (
    serve,
    env_server,
    world_group,
    save_demo,
    validate,
    redteam,
    play,
    verify,
    rollout,
    report,
    export,
    synth,
    task_schema,
    demo,
    walkthrough,
    rollout_mcp,
):
    cli.add_command(command)


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


__all__ = ["cli", "main"]
