"""The `coworkenv` command line: a thin layer over the library.

Library exceptions become user messages here, in one place (`main`).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import click

from coworkenv.rollout.episodes.seeding import SeedError
from coworkenv.rollout.exports.report import terminal_console
from coworkenv.servers import SERVICE_NAMES, UnknownServiceError
from coworkenv.servers.hosting import (
    DEFAULT_HOST,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    SessionLimits,
    http_paths,
    serve_http,
    serve_stdio,
)
from coworkenv.state import Workspace, WorkspaceError
from coworkenv.task import TaskFileError
from coworkenv.world import World

SERVICE_CHOICES = [*SERVICE_NAMES, "all"]


def _load_workspace(db: Path | None, demo: int | None, world: str | None = None) -> Workspace:
    if sum(x is not None for x in (db, demo, world)) > 1:
        raise click.UsageError("give one of --db PATH, --demo [SEED] or --world NAME|FILE")
    if db is not None:
        return Workspace.open(db)
    if world is not None:
        from coworkenv.servers.render import render_workspace

        return render_workspace(_world(world))
    from coworkenv.servers.render import northwind_workspace

    return northwind_workspace(seed=demo or 0)


def _plant_example_documents(workspace: Workspace) -> None:
    from coworkenv.servers import apply_world_operation

    if "files" not in workspace.services:
        raise click.UsageError("--documents needs the files service, which this workspace lacks")
    try:
        apply_world_operation(workspace, "files", "add_example_documents", {})
    except ValueError as exc:
        raise click.UsageError(f"--documents: {exc}") from None


def _world(spec: str) -> World:
    from coworkenv.world import WorldFileError
    from coworkenv.worlds import world_from_spec

    try:
        return world_from_spec(spec)
    except (WorldFileError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


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
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="HTTP port.")
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
    workspace = _load_workspace(db, demo, world)
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


@cli.command("env-server")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="HTTP bind address.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="HTTP port.")
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
def env_server(
    paths: tuple[Path, ...],
    host: str,
    port: int,
    max_sessions: int,
    session_timeout: float,
    records_dir: Path | None,
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
            _load_tasks(paths),
            max_sessions=max_sessions,
            idle_timeout=session_timeout,
            records_dir=records_dir,
        )
    except NotReady as exc:
        raise click.ClickException(f"cannot start: {exc}") from None
    click.echo(f"serving OpenEnv at http://{host}:{port} (WebSocket /ws, HTTP /reset /step /state)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


@cli.group("world")
def world_group() -> None:
    """List, show and write worlds: the organizations tasks happen in (see docs/worlds.md)."""


@world_group.command("list")
def world_list() -> None:
    """List every world profile: its industry, default size and time zones."""
    from coworkenv.worlds import DEMO, PROFILES

    click.echo(f"{DEMO:22} industrial equipment supplier (the demo company), 18 colleagues")
    for name, profile in sorted(PROFILES.items()):
        click.echo(f"{name:22} {profile.industry}, {profile.size} colleagues, {', '.join(profile.zones)}")


@world_group.command("show")
@click.argument("spec", metavar="NAME|FILE")
@click.option("--json", "as_json", is_flag=True, help="Print the whole world as JSON.")
def world_show(spec: str, as_json: bool) -> None:
    """Summarize a world (NAME[:SIZE[:SEED]] or a world JSON file): teams, queues, documents."""
    built = _world(spec)
    if as_json:
        click.echo(built.model_dump_json(indent=2))
        return
    user = built.user_person
    click.echo(f"{built.name} ({built.industry}), {built.domain}, hash {built.content_hash[:12]}")
    click.echo(f"user: {user.name} <{user.email}>, {user.title}, {user.time_zone}")
    click.echo(f"colleagues: {len(built.staff)}; outside contacts: {len(built.contacts)}")
    for team in built.teams:
        click.echo(f"  team {team.name}: {len(built.team_members(team.name))} people. {team.purpose}")
    for queue in built.queues:
        click.echo(f"  queue {queue.name}: {queue.tickets} tickets, worked by {', '.join(queue.teams)}")
    click.echo(f"documents: {len(built.documents)} ({', '.join(sorted({d.kind for d in built.documents}))})")
    for rule in built.house_rules:
        click.echo(f"  rule: {rule}")


@world_group.command("write")
@click.argument("spec", metavar="NAME|FILE")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--overwrite", is_flag=True, help="Replace PATH if it exists.")
def world_write(spec: str, path: Path, overwrite: bool) -> None:
    """Write a world as JSON to PATH (edit it, then serve it with `serve --world PATH`)."""
    from coworkenv.world import save_world

    if path.exists() and not overwrite:
        raise click.UsageError(f"{path} already exists; pass --overwrite to replace it")
    built = _world(spec)
    save_world(built, path)
    click.echo(f"wrote world {built.key} (hash {built.content_hash[:12]}) to {path}")


@world_group.command("propose")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--industry", required=True, help='What the organization does, e.g. "veterinary clinic group".')
@click.option("--size", type=click.IntRange(8, 300), default=12, show_default=True, help="Colleagues.")
@click.option(
    "--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of the rendered data."
)
@click.option("--model", required=True, help="Model that proposes the world.")
@click.option("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1.")
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable with the API key.",
)
@click.option("--rounds", type=click.IntRange(1), default=3, show_default=True, help="Answers to fix it in.")
@click.option("--overwrite", is_flag=True, help="Replace PATH if it exists.")
def world_propose(
    path: Path,
    industry: str,
    size: int,
    seed: int,
    model: str,
    base_url: str | None,
    api_key_env: str,
    rounds: int,
    overwrite: bool,
) -> None:
    """Ask a model for a world of INDUSTRY, validate it (and render every service's seed data
    from it), send the problems back until it is valid, and write it to PATH."""
    from coworkenv.rollout.agents.openai_client import EndpointFailed, EndpointUnavailable, make_client
    from coworkenv.world import save_world
    from coworkenv.worlds.propose import WorldProposalFailed, propose_world

    if path.exists() and not overwrite:
        raise click.UsageError(f"{path} already exists; pass --overwrite to replace it")
    try:
        client = make_client(base_url, api_key_env=api_key_env)
        proposal = anyio.run(
            lambda: propose_world(client, model, industry=industry, size=size, seed=seed, rounds=rounds)
        )
    except (EndpointUnavailable, EndpointFailed, WorldProposalFailed) as exc:
        raise click.ClickException(str(exc)) from exc
    save_world(proposal.world, path)
    built = proposal.world
    click.echo(
        f"wrote {built.name} ({built.industry}, {len(built.staff)} colleagues, hash "
        f"{built.content_hash[:12]}) to {path}, valid after {proposal.rounds} round(s)"
    )


@cli.command("save-demo")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the demo workspace.")
@click.option("--overwrite", is_flag=True, help="Replace PATH if it exists.")
def save_demo(path: Path, seed: int, overwrite: bool) -> None:
    """Build the demo workspace from SEED and save it to PATH (serve it with --db PATH)."""
    from coworkenv.servers.render import northwind_workspace

    if path.exists() and not overwrite:
        raise click.UsageError(f"{path} already exists; pass --overwrite to replace it")

    workspace = northwind_workspace(seed=seed)
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
    from rich.table import Table

    from coworkenv.rollout import SeedCache
    from coworkenv.synth.validation.validation import validate_task
    from coworkenv.task import TaskFileError, load_task

    files = _task_paths(paths)
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


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON report per task on stdout.")
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

    files = _task_paths(paths)
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


@cli.command()
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
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="HTTP port.")
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
    "--agent",
    type=click.Choice(["oracle", "noop", "noisy", "openai"]),
    default="oracle",
    show_default=True,
    help="Who acts: the reference solution, nothing, the solution with seeded mistakes, or a model.",
)
@click.option("--model", help="Model name for --agent openai.")
@click.option(
    "--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (vLLM, SGLang, Ollama)."
)
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable with the key, for the agent and the user simulator.",
)
@click.option(
    "--temperature", type=float, default=0.0, show_default=True, help="Sampling temperature (openai)."
)
@click.option(
    "--max-tokens", type=click.IntRange(1), default=None, help="Token limit per model answer (openai)."
)
@click.option(
    "--max-steps",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="Model calls per turn (openai).",
)
@click.option(
    "--noise",
    type=click.FloatRange(0, 1),
    default=0.3,
    show_default=True,
    help="Per-step mistake probability, 0 to 1 (noisy).",
)
@click.option(
    "--noise-drift",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="How much the mistake probability grows with each later turn (noisy: losing the thread).",
)
@click.option("--trials", type=click.IntRange(1), default=1, show_default=True, help="Episodes per task.")
@click.option(
    "--concurrency", type=click.IntRange(1), default=4, show_default=True, help="Episodes run at once."
)
@click.option(
    "--fault-rate",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Probability of an injected tool error per call (robustness runs).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the noisy agent and the faults."
)
@click.option("--name", help="Policy name in the records (default: the agent, or openai:MODEL).")
@click.option(
    "--user-model", help="Model for an LLM user simulator (tasks with a persona; openai agent only)."
)
@click.option("--user-base-url", help="Endpoint of the user simulator (default: --base-url).")
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="ray: episodes on --concurrency Ray actors (needs the [ray] extra).",
)
@click.option("--address", help="Ray: join the cluster at this address (default: a local Ray instance).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for records.jsonl; an existing one is resumed.",
)
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
    noise_drift: float,
    trials: int,
    concurrency: int,
    fault_rate: float,
    seed: int,
    name: str | None,
    user_model: str | None,
    user_base_url: str | None,
    backend: str,
    address: str | None,
    out_dir: Path,
) -> None:
    """Run episodes of an agent on tasks: records are appended to OUT/records.jsonl as they finish.

    Rerunning the same command resumes: finished (task, trial) pairs are skipped and
    episodes that ended in an infrastructure error are run again. With --agent openai the
    endpoint is checked once before the batch. Exit status 1 when every episode run ended
    in an error.
    """
    from coworkenv.rollout.agents.user_simulator import UserSimulator
    from coworkenv.servers.faults import FaultPlan

    tasks = _load_tasks(paths)
    if agent == "openai" and not model:
        raise click.UsageError("--agent openai needs --model")
    settings = {
        "model": model,
        "base_url": base_url,
        "api_key_env": api_key_env,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "max_steps_per_turn": max_steps,
    }
    endpoints = [base_url] if agent == "openai" else []
    endpoints += [user_base_url or base_url] if user_model else []
    with _endpoint_errors():
        anyio.run(_check_endpoints, endpoints, api_key_env)
        make_policy = _policy_factory(agent, settings, noise=noise, drift=noise_drift, seed=seed, name=name)
        policy = make_policy()
        simulator = None
        if user_model:
            simulator = UserSimulator(user_model, base_url=user_base_url or base_url, api_key_env=api_key_env)
    faults = FaultPlan(rate=fault_rate, seed=seed) if fault_rate > 0 else None
    state = _run_batch_with_progress(
        tasks,
        make_policy,
        policy.name,
        trials=trials,
        out_dir=out_dir,
        concurrency=concurrency,
        faults=faults,
        seed=seed,
        user_simulator=simulator,
        backend=backend,
        address=address,
    )
    click.echo(
        f"{state.done} episode(s) run, {state.skipped} already done; success rate {state.pass_rate:.3f}, "
        f"{state.errors} error(s); records in {out_dir / 'records.jsonl'}"
    )
    if state.all_errors:
        first = next(r.error for r in state.records if r.status == "error")
        click.echo(f"error: every episode ended in an error, e.g.: {first}", err=True)
        sys.exit(1)


#: JSON files that our own commands write into output folders; never tasks.
KNOWN_OUTPUTS = frozenset({"funnel.json", "report.json", "dataset_info.json"})


def _task_paths(paths: tuple[Path, ...]) -> list[Path]:
    """Task files named directly, and the `*.json` files below named folders except the files
    our commands write there (funnel.json, report.json, dataset_info.json)."""
    from coworkenv.task import task_files

    found = [p for p in task_files(list(paths)) if p in paths or p.name not in KNOWN_OUTPUTS]
    if not found:
        raise click.UsageError(f"no task files (*.json) in {', '.join(map(str, paths))}")
    return found


def _load_tasks(paths: tuple[Path, ...]) -> list[Any]:
    from coworkenv.task import load_task

    return [load_task(p) for p in _task_paths(paths)]


def _policy_factory(
    agent: str, settings: dict[str, Any], *, noise: float, drift: float = 0.0, seed: int, name: str | None
) -> Callable[[], Any]:
    """A function that builds a fresh policy for each episode."""
    from coworkenv.rollout import NoisyPolicy, NoopPolicy, OpenAIAgent, OraclePolicy

    def make_policy() -> Any:
        policy: Any
        if agent == "oracle":
            policy = OraclePolicy()
        elif agent == "noop":
            policy = NoopPolicy()
        elif agent == "noisy":
            policy = NoisyPolicy(p=noise, seed=seed, drift=drift)
        else:
            policy = OpenAIAgent(
                str(settings["model"]), **{k: v for k, v in settings.items() if k != "model"}
            )
        if name:
            policy.name = name
        return policy

    return make_policy


@contextmanager
def _endpoint_errors() -> Iterator[None]:
    """A model endpoint that cannot be used is a one-line error before any work starts."""
    from coworkenv.rollout.agents.openai_client import EndpointUnavailable

    try:
        yield
    except EndpointUnavailable as exc:
        raise click.ClickException(str(exc)) from None


async def _check_endpoints(base_urls: list[str | None], api_key_env: str) -> None:
    """One request to each model endpoint (None: OpenAI itself) before any work starts."""
    from coworkenv.rollout.agents.openai_client import check_endpoint

    for base_url in dict.fromkeys(base_urls):
        await check_endpoint(base_url, api_key_env=api_key_env)


def _run_batch_with_progress(
    tasks: list[Any], make_policy: Callable[[], Any], policy_name: str, **options: Any
) -> Any:
    """Run the batch with a progress bar; Ctrl-C keeps what finished and says how to resume."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from coworkenv.rollout.episodes.batch import run_batch
    from coworkenv.rollout.episodes.preflight import NotReady

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=terminal_console(),
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
            return run_batch(tasks, make_policy, progress=show, **options)
        except NotReady as exc:
            raise click.ClickException(f"cannot start: {exc}") from None
        except KeyboardInterrupt:
            click.echo(
                "interrupted: every finished episode is saved; rerun the same command to resume", err=True
            )
            sys.exit(130)


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
@click.option(
    "--budget",
    is_flag=True,
    help="Print only the token budget the episodes needed (largest prompt and completion).",
)
def report(dirs: tuple[Path, ...], out_dir: Path | None, as_json: bool, budget: bool) -> None:
    """Scores of the episodes in one or more rollout folders: average score, strict success,
    pass@k, pass^k, safety violations, robustness, and breakdowns by capability, service,
    single/multi-turn and turn index. Writes report.json and a self-contained report.html."""
    from coworkenv.rollout.exports.report import build_report, print_report, report_json
    from coworkenv.rollout.exports.report_html import write_report

    records = _read_records(dirs)
    if budget:
        from coworkenv.rollout.agents.budget import token_budget

        click.echo(token_budget(records).summary())
        return
    built = build_report(records)
    paths = write_report(records, out_dir or dirs[0])
    if as_json:
        click.echo(report_json(built))
        return
    print_report(built, terminal_console())
    click.echo(f"wrote {paths['json']} and {paths['html']}")


@cli.group()
def export() -> None:
    """Training data from rollout folders: SFT demonstrations and RL rollouts with rewards."""


def _read_records(dirs: tuple[Path, ...]) -> list[Any]:
    """Every record in the rollout folders; a usage error when there is none."""
    from coworkenv.rollout import read_records

    records = [r for d in dirs for r in read_records(d)]
    if not records:
        raise click.UsageError(
            f"no episode records (records.jsonl) in {', '.join(map(str, dirs))}; `coworkenv rollout` writes them"
        )
    return records


@export.command("sft")
@click.argument(
    "dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--min-score",
    type=click.FloatRange(0, 1),
    default=1.0,
    show_default=True,
    help="Leave out runs scoring below this.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["trl", "sharegpt"]),
    default="trl",
    show_default=True,
    help="trl: OpenAI-style messages and tools (TRL, prime-rl); sharegpt: LLaMA-Factory.",
)
@click.option("--policy", "policies", multiple=True, help="Only these policies (e.g. the teacher).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for sft.jsonl (and dataset_info.json for sharegpt).",
)
def export_sft_command(
    dirs: tuple[Path, ...], min_score: float, fmt: str, policies: tuple[str, ...], out_dir: Path
) -> None:
    """Successful runs as SFT rows: TRL/prime-rl `messages` + `tools`, or LLaMA-Factory sharegpt
    with a dataset_info.json entry. Runs below --min-score, unsuccessful or unsafe runs are left out."""
    from coworkenv.rollout.exports.export_sft import export_sft

    records = _read_records(dirs)
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
@click.option(
    "--level",
    type=click.Choice(["episode", "turn"]),
    default="episode",
    show_default=True,
    help="One row per episode, or one per turn with that turn's reward.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for rl.jsonl.",
)
def export_rl_command(dirs: tuple[Path, ...], advantages: str, level: str, out_dir: Path) -> None:
    """Episodes as RL rows: messages, tools, reward, one reward component per check, per-turn
    rewards, and optionally GRPO- or GDPO-style advantages."""
    from coworkenv.rollout.exports.export_rl import export_rl

    records = _read_records(dirs)
    summary = export_rl(records, out_dir, advantages=advantages, level=level)  # type: ignore[arg-type]
    click.echo(json.dumps(summary, indent=2, default=str))


def _proposed_worlds(
    out_dir: Path, count: int, model: str, base_url: str | None, api_key_env: str, seed: int
) -> list[Path]:
    """`count` worlds in OUT/worlds/, proposed by `model` where missing (see `propose_worlds`)."""
    from coworkenv.rollout.agents.openai_client import EndpointFailed, EndpointUnavailable, make_client
    from coworkenv.worlds.propose import WorldProposalFailed, propose_worlds

    try:
        client = make_client(base_url, api_key_env=api_key_env)
        return anyio.run(
            functools.partial(
                propose_worlds,
                out_dir / "worlds",
                count,
                client,
                model,
                seed=seed,
                log=lambda t: click.echo(t, err=True),
            )
        )
    except (EndpointUnavailable, EndpointFailed, WorldProposalFailed) as exc:
        raise click.ClickException(str(exc)) from exc


@cli.command()
@click.option("--count", type=click.IntRange(1), default=20, show_default=True, help="Task slots to fill.")
@click.option(
    "--capabilities", help="Comma-separated capability ids (default: all of synth/capabilities.json)."
)
@click.option(
    "--generator",
    type=click.Choice(["procedural", "llm"]),
    default="procedural",
    show_default=True,
    help="procedural: the offline task families; llm: a model through an OpenAI-compatible endpoint.",
)
@click.option("--model", help="Model for --generator llm.")
@click.option("--base-url", help="OpenAI-compatible endpoint for --generator llm.")
@click.option(
    "--api-key-env",
    default="OPENAI_API_KEY",
    show_default=True,
    help="Environment variable with the key for --generator llm.",
)
@click.option(
    "--max-rounds", type=click.IntRange(1), default=3, show_default=True, help="Correction rounds per slot."
)
@click.option(
    "--concurrency",
    type=click.IntRange(1),
    default=None,
    help="Slots worked on at once; above 1, validation runs in worker processes (default: one per core).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the task plan and the families."
)
@click.option(
    "--worlds",
    type=click.IntRange(1),
    default=None,
    help="Worlds the slots are spread over: the demo company and N-1 generated organizations going "
    "round the industry profiles; only families that run on every world leave the demo company "
    "(procedural generator; default 50; 1: the demo company only).",
)
@click.option(
    "--mix",
    help="Shares of the slots by kind of task, e.g. single=0.40,multi=0.35,workday=0.25 "
    "(weights, divided by their sum; default single=0.6,multi=0.2,workday=0.2, where a kind "
    "with no family gives its share to the nearest one).",
)
@click.option(
    "--world-file",
    "world_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A world JSON file (from `coworkenv world propose` or edited) the slots use first; repeatable.",
)
@click.option(
    "--propose-worlds",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Worlds a model proposes before synthesis (--world-model), checked, rendered, kept in "
    "OUT/worlds/ and used first like --world-file; a rerun reuses them.",
)
@click.option("--world-model", help="Model that proposes worlds (default: --model).")
@click.option(
    "--paraphrase-model",
    help="Model that rewords each validated task's user messages; a rewording that drops a fact "
    "the checks need, or fails validation again, is refused (default: none).",
)
@click.option(
    "--paraphrase-base-url", help="OpenAI-compatible endpoint of the paraphrase model (default: --base-url)."
)
@click.option(
    "--backend",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where validation runs: local worker processes, or Ray actors (the [ray] extra: pip install -e '.[ray]').",
)
@click.option("--address", help="Ray cluster to join for --backend ray (default: a local Ray instance).")
@click.option("--judge-model", help="Model of an LLM judge of each validated draft (default: no judge).")
@click.option("--judge-base-url", help="OpenAI-compatible endpoint of the judge (default: --base-url).")
@click.option(
    "--min-judge-score",
    type=click.FloatRange(0, 10),
    default=8,
    show_default=True,
    help="Judge score to keep.",
)
@click.option(
    "--probe-model", help="Model of a test agent that attempts each validated draft (default: none)."
)
@click.option("--probe-base-url", help="OpenAI-compatible endpoint of the probe (default: --base-url).")
@click.option(
    "--probe-k", type=click.IntRange(1), default=2, show_default=True, help="Probe attempts per draft."
)
@click.option(
    "--min-probe-pass",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Probe attempts that must pass to keep a task (0: record pass@k only).",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for tasks/, drafts.jsonl and the funnel; an existing one is resumed.",
)
def synth(
    count: int,
    capabilities: str | None,
    generator: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str,
    max_rounds: int,
    concurrency: int | None,
    seed: int,
    worlds: int | None,
    mix: str | None,
    world_files: tuple[Path, ...],
    propose_worlds: int,
    world_model: str | None,
    paraphrase_model: str | None,
    paraphrase_base_url: str | None,
    backend: str,
    address: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    min_judge_score: float,
    probe_model: str | None,
    probe_base_url: str | None,
    probe_k: int,
    min_probe_pass: int,
    out_dir: Path,
) -> None:
    """Generate tasks for capabilities, validate each by executing it, correct or reject.

    Kept tasks land in OUT/tasks/, every draft round in OUT/drafts.jsonl, and the funnel
    report in OUT/funnel.json and OUT/funnel.html. Rerunning resumes unfinished slots.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from coworkenv.synth.funnel import build_funnel, print_funnel, write_funnel
    from coworkenv.synth.generators import LLMGenerator, ProceduralGenerator
    from coworkenv.synth.pipeline import kept_tasks, read_drafts, synthesize
    from coworkenv.synth.plan import DEFAULT_WORLDS, PlanError, parse_mix

    try:
        shares = parse_mix(mix) if mix is not None else None
    except PlanError as exc:
        raise click.UsageError(str(exc)) from None
    if world_files and generator == "llm":
        raise click.UsageError(
            "--world-file places the procedural families; --generator llm draws its own scenes"
        )
    if address and backend != "ray":
        raise click.UsageError("--address joins a Ray cluster: give it with --backend ray")
    chosen: Any
    if generator == "llm":
        if not model:
            raise click.UsageError("--generator llm needs --model")
        if worlds is not None:
            raise click.UsageError(
                "--worlds spreads the procedural families over worlds; --generator llm gives each slot "
                "its own scene (the demo company and the generated organizations in turn)"
            )
        with _endpoint_errors():
            anyio.run(_check_endpoints, [base_url], api_key_env)
            chosen = LLMGenerator(model, base_url=base_url, api_key_env=api_key_env)
    else:
        chosen = ProceduralGenerator()
    files = [str(f) for f in world_files]
    if propose_worlds:
        if generator == "llm":
            raise click.UsageError(
                "--propose-worlds places the procedural families; --generator llm draws its own scenes"
            )
        designer = world_model or model
        if not designer:
            raise click.UsageError("--propose-worlds needs --world-model (or --model)")
        files += [
            str(p) for p in _proposed_worlds(out_dir, propose_worlds, designer, base_url, api_key_env, seed)
        ]
    judge = probe = paraphraser = None
    with _endpoint_errors():
        if paraphrase_model:
            from coworkenv.synth.paraphrase import Paraphraser

            paraphraser = Paraphraser(
                paraphrase_model, base_url=paraphrase_base_url or base_url, api_key_env=api_key_env
            )
        if judge_model:
            from coworkenv.synth.judge import LLMJudge

            judge = LLMJudge(
                judge_model,
                base_url=judge_base_url or base_url,
                api_key_env=api_key_env,
                min_score=min_judge_score,
            )
        if probe_model:
            from coworkenv.rollout.agents.openai_agent import OpenAIAgent
            from coworkenv.synth.probe import Probe

            agent = OpenAIAgent(probe_model, base_url=probe_base_url or base_url, api_key_env=api_key_env)
            probe = Probe(agent, k=probe_k, min_passes=min_probe_pass)
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
                    mix=shares,
                    worlds=worlds or DEFAULT_WORLDS,
                    judge=judge,
                    probe=probe,
                    world_files=files,
                    paraphraser=paraphraser,
                    backend=backend,  # type: ignore[arg-type]
                    address=address,
                    progress=show,
                )
            )
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
        except ImportError as exc:
            raise click.ClickException(
                f"{exc}; install the [ray] extra: pip install -e '.[ray]' in a checkout"
            ) from exc
    funnel = build_funnel(read_drafts(out_dir), kept_tasks(out_dir))
    print_funnel(funnel, terminal_console())
    paths = write_funnel(funnel, out_dir)
    click.echo(
        f"kept {funnel.counts['kept']} of {state.slots} slots ({state.kept} in this run); "
        f"tasks in {out_dir / 'tasks'}; funnel in {paths['html']}"
    )


@cli.command("task-schema")
def task_schema() -> None:
    """Print the JSON Schema of the task format (for editors and LLM structured output)."""
    from coworkenv.task import task_json_schema

    click.echo(json.dumps(task_json_schema(), indent=2))


@cli.command()
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


@cli.command()
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the demo workspace.")
def walkthrough(seed: int) -> None:
    """Drive a short scripted session through the demo workspace's MCP servers, printing each call."""
    from coworkenv.walkthrough import scripted_session

    anyio.run(scripted_session, seed)


@cli.command("rollout-mcp")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--agent",
    "agent_spec",
    required=True,
    metavar="MODULE:FUNCTION",
    help="The agent: an async function of a Conversation, imported from the current folder or the installed packages.",
)
@click.option("--trials", type=click.IntRange(1), default=1, show_default=True, help="Episodes per task.")
@click.option(
    "--concurrency", type=click.IntRange(1), default=4, show_default=True, help="Episodes run at once."
)
@click.option(
    "--fault-rate",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Probability of an injected tool error per call (robustness runs).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the faults, recorded on each episode."
)
@click.option("--name", help="Policy name in the records (default: mcp:MODULE:FUNCTION).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for records.jsonl; an existing one is resumed.",
)
def rollout_mcp(
    paths: tuple[Path, ...],
    agent_spec: str,
    trials: int,
    concurrency: int,
    fault_rate: float,
    seed: int,
    name: str | None,
    out_dir: Path,
) -> None:
    """Run episodes of an MCP agent (OpenAI Agents SDK, pydantic-ai, any MCP client) on tasks.

    Each episode serves a fresh workspace's tools over streamable HTTP on 127.0.0.1 and calls
    the agent with its Conversation (docs/integrations.md); records are appended to
    OUT/records.jsonl as they finish, judged as `rollout` judges them, and a rerun resumes.
    Exit status 1 when every episode run ended in an error.
    """
    from coworkenv.integrations.mcp_agents import load_agent, run_agent_batch
    from coworkenv.servers.faults import FaultPlan

    tasks = _load_tasks(paths)
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # as `python -m` would: the user's own module
    try:
        agent = load_agent(agent_spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--agent") from exc

    def show(state: Any, record: Any) -> None:
        score = "no verdict" if record.verdict is None else f"score {record.verdict.score:.2f}"
        click.echo(
            f"[{state.done}/{state.total}] {record.task_id} trial {record.trial}: {record.status}, {score}"
        )

    state = anyio.run(
        lambda: run_agent_batch(
            tasks,
            agent,
            trials=trials,
            out_dir=out_dir,
            name=name,
            concurrency=concurrency,
            seed=seed,
            faults=FaultPlan(rate=fault_rate, seed=seed) if fault_rate > 0 else None,
            progress=show,
        )
    )
    click.echo(
        f"{state.done} episode(s) run, {state.skipped} already done; success rate {state.pass_rate:.3f}, "
        f"{state.errors} error(s); records in {out_dir / 'records.jsonl'}"
    )
    if state.all_errors:
        first = next(r.error for r in state.records if r.status == "error")
        click.echo(f"error: every episode ended in an error, e.g.: {first}", err=True)
        sys.exit(1)


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
