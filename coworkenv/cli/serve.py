"""Serving workspaces and tasks: `serve` (MCP servers), `env-server` (OpenEnv) and `save-demo`."""

from __future__ import annotations

from pathlib import Path

import anyio
import click

from coworkenv.servers import SERVICE_NAMES
from coworkenv.servers.hosting import (
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    SessionLimits,
    http_paths,
    serve_http,
    serve_stdio,
)
from coworkenv.state import Workspace

from .options import (
    host_option,
    load_tasks,
    load_workspace,
    max_result_chars_option,
    overwrite_option,
    paths_argument,
    port_option,
)

SERVICE_CHOICES = [*SERVICE_NAMES, "all"]


@click.command()
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
@click.option(
    "--world",
    metavar="NAME|FILE",
    help="Serve a world's seed workspace: a profile NAME[:SIZE[:SEED]] (see `coworkenv world list`) or a world JSON file.",
)
@click.option(
    "--documents",
    is_flag=True,
    help="With --demo or --world: also plant one document of each kind (PDFs, images) in /examples/documents.",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for one client that starts the server; http (streamable HTTP) for many.",
)
@host_option
@port_option
@click.option(
    "--max-sessions",
    type=click.IntRange(1),
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    help="HTTP: open sessions per endpoint; a client beyond it gets 503 until one ends or expires.",
)
@click.option(
    "--session-timeout",
    type=click.FloatRange(0, min_open=True),
    default=DEFAULT_SESSION_IDLE_TIMEOUT,
    show_default=True,
    help="HTTP: seconds without a request after which a session expires (its id then gets 404).",
)
def serve(
    service: str,
    db: Path | None,
    demo: int | None,
    world: str | None,
    documents: bool,
    transport: str,
    host: str,
    port: int,
    max_sessions: int,
    session_timeout: float,
) -> None:
    """Serve a workspace's MCP servers to any MCP client (the Inspector, an agent SDK).

    Over stdio, one service (or with --service all, the combined server with tool names
    prefixed by service). Over HTTP, each service at /<service>/mcp and the combined
    server at /mcp, each with at most --max-sessions open sessions that expire after
    --session-timeout idle seconds.
    """
    workspace = load_workspace(db, demo, world)
    if service != "all" and service not in workspace.services:
        raise click.UsageError(
            f"the workspace has no {service} service; it has: {', '.join(workspace.services)}"
        )
    if documents:
        if db is not None:
            raise click.UsageError(
                "--documents plants into --demo or --world; a saved workspace is served as it is"
            )
        _plant_example_documents(workspace)
    if transport == "stdio":
        anyio.run(serve_stdio, workspace, service)
        return
    for path in http_paths(workspace, service):
        click.echo(f"serving http://{host}:{port}{path}", err=True)
    limits = SessionLimits(max_sessions=max_sessions, idle_timeout=session_timeout)
    serve_http(workspace, service, host=host, port=port, limits=limits)


def _plant_example_documents(workspace: Workspace) -> None:
    """One document of each kind in the workspace's files, for a look in the Inspector."""
    from coworkenv.servers import apply_world_operation

    if "files" not in workspace.services:
        raise click.UsageError("--documents needs the files service, which this workspace lacks")
    try:
        apply_world_operation(workspace, "files", "add_example_documents", {})
    except ValueError as exc:
        raise click.UsageError(f"--documents: {exc}") from None


@click.command("env-server")
@paths_argument
@host_option
@port_option
@click.option(
    "--max-sessions", type=click.IntRange(1), default=8, show_default=True, help="Episodes open at once."
)
@click.option(
    "--session-timeout",
    type=click.FloatRange(0, min_open=True),
    default=600,
    show_default=True,
    help="Seconds without a message after which a session is dropped.",
)
@click.option(
    "--records",
    "records_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Append each finished episode's record here (for report and export).",
)
@max_result_chars_option
def env_server(
    paths: tuple[Path, ...],
    host: str,
    port: int,
    max_sessions: int,
    session_timeout: float,
    records_dir: Path | None,
    max_result_chars: int | None,
) -> None:
    """Serve tasks as an OpenEnv environment (needs the [openenv] extra): each session holds
    one episode; reset with task_id, trial and seed; step with list_tools, call_tool, message
    (answers the user, ends the turn) or finish; reward and done in every observation."""
    try:
        import uvicorn

        from coworkenv.integrations.openenv_server import build_app
    except ImportError as exc:
        raise click.ClickException(
            f"{exc}; install the [openenv] extra: pip install -e '.[openenv]'"
        ) from exc
    from coworkenv.rollout.episodes.preflight import NotReady

    try:
        app = build_app(
            load_tasks(paths),
            max_sessions=max_sessions,
            idle_timeout=session_timeout,
            records_dir=records_dir,
            max_result_chars=max_result_chars,
        )
    except NotReady as exc:
        raise click.ClickException(f"cannot start: {exc}") from None
    click.echo(f"serving OpenEnv at http://{host}:{port} (WebSocket /ws, HTTP /reset /step /state)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


@click.command("save-demo")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the demo workspace.")
@overwrite_option
def save_demo(path: Path, seed: int, overwrite: bool) -> None:
    """Build the demo workspace from SEED and save it to PATH (serve it with --db PATH)."""
    from coworkenv.servers.render import northwind_workspace

    if path.exists() and not overwrite:
        raise click.UsageError(f"{path} already exists; pass --overwrite to replace it")

    workspace = northwind_workspace(seed=seed)
    workspace.save(path, overwrite=overwrite)
    click.echo(f"saved demo workspace (seed {seed}, hash {workspace.content_hash()[:12]}) to {path}")
