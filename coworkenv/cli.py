"""The `coworkenv` command line: a thin layer over the library.

Library exceptions become user messages here, in one place (`main`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import click

from coworkenv.servers import SERVICE_NAMES, UnknownServiceError
from coworkenv.servers.hosting import DEFAULT_HOST, http_paths, serve_http, serve_stdio
from coworkenv.state import Workspace, WorkspaceError

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
@click.option("--seed", type=int, default=0, show_default=True)
def demo(seed: int) -> None:
    """Build the demo workspace and drive a short scripted session through the real MCP servers."""
    from coworkenv.demo import run_demo

    anyio.run(run_demo, seed)


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
    except (WorkspaceError, UnknownServiceError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
