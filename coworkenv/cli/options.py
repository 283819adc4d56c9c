"""What the command groups share: option decorators, the `--endpoint` option, and loaders that
turn a bad argument into a usage error naming what to fix."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from coworkenv.rollout.agents.openai_client import (
    ENDPOINT_FORMAT,
    Endpoint,
    EndpointSpecError,
    parse_endpoint,
)
from coworkenv.servers.hosting import DEFAULT_HOST
from coworkenv.state import Workspace
from coworkenv.world import World

F = TypeVar("F", bound=Callable[..., Any])

#: JSON files that our own commands write into output folders; never tasks.
KNOWN_OUTPUTS = frozenset({"funnel.json", "report.json", "dataset_info.json"})

# -- option decorators ---------------------------------------------------------------------------

paths_argument = click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path)
)
"""Task files or folders of them."""

dirs_argument = click.argument(
    "dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
"""Rollout folders (each with a records.jsonl)."""

host_option = click.option("--host", default=DEFAULT_HOST, show_default=True, help="HTTP bind address.")
port_option = click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="HTTP port."
)
overwrite_option = click.option("--overwrite", is_flag=True, help="Replace PATH if it exists.")


def out_option(help: str, *, required: bool = True, default: Path | None = None) -> Callable[[F], F]:
    """`--out DIR`, given to the command as `out_dir`."""
    return click.option(
        "--out",
        "out_dir",
        type=click.Path(file_okay=False, path_type=Path),
        required=required and default is None,
        default=default,
        show_default=default is not None,
        help=help,
    )


def json_option(help: str) -> Callable[[F], F]:
    """`--json`, given to the command as `as_json`."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def seed_option(help: str) -> Callable[[F], F]:
    return click.option("--seed", type=int, default=0, show_default=True, help=help)


def backend_options(what: str) -> Callable[[F], F]:
    """`--backend local|ray` and `--address` (a Ray cluster to join)."""

    def decorate(command: F) -> F:
        command = click.option(
            "--address", help="Ray: join the cluster at this address (default: a local Ray instance)."
        )(command)
        return click.option(
            "--backend",
            type=click.Choice(["local", "ray"]),
            default="local",
            show_default=True,
            help=f"Where {what} run: local, or on Ray actors (the [ray] extra: pip install -e '.[ray]').",
        )(command)

    return decorate


tools_option = click.option(
    "--tools",
    "tool_format",
    type=click.Choice(["full", "compact"]),
    default="full",
    show_default=True,
    help="How tools are shown to the model: full JSON schemas, or one line each in the system "
    "prompt, name(arg?: type): first sentence, with slim schemas (for small models).",
)
max_result_chars_option = click.option(
    "--max-result-chars",
    type=click.IntRange(100),
    default=None,
    help="Characters of each tool result the model reads; a longer one is cut, with a note on how "
    "to page (default: no bound).",
)
tokenizer_option = click.option(
    "--tokenizer",
    metavar="NAME|DIR",
    help="Count tokens with this model's tokenizer (a Hugging Face name or folder; needs "
    "transformers, else the default count is used and says so).",
)


def token_counter_for(tokenizer: str | None) -> Any:
    """The token counter `--tokenizer` names (None: the default one)."""
    from coworkenv.rollout.agents.tokens import TokenizerError, token_counter, tokenizer_counter

    if tokenizer is None:
        return token_counter()
    try:
        return tokenizer_counter(tokenizer)
    except TokenizerError as exc:
        raise click.UsageError(str(exc)) from None


def endpoint_option(roles: dict[str, str]) -> Callable[[F], F]:
    """The repeatable `--endpoint ROLE=MODEL[@URL][,key=value...]` for these roles (name:
    what it does); the command gets `endpoints`, a dict from role to `Endpoint`. A value that
    cannot be read, an unknown role or a role given twice is a usage error saying why."""

    def convert(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, Endpoint]:
        chosen: dict[str, Endpoint] = {}
        for value in values:
            try:
                role, endpoint = parse_endpoint(value, tuple(roles))
            except EndpointSpecError as exc:
                raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
            if role in chosen:
                raise click.BadParameter(f"the {role} endpoint is given twice", ctx=ctx, param=param)
            chosen[role] = endpoint
        return chosen

    listed = "; ".join(f"{name}: {what}" for name, what in roles.items())
    return click.option(
        "--endpoint",
        "endpoints",
        multiple=True,
        metavar="ROLE=MODEL[@URL][,...]",
        callback=convert,
        help=f"A model endpoint for a role, repeatable: {ENDPOINT_FORMAT} (no URL: OpenAI itself; "
        f"the key from $OPENAI_API_KEY or key_env). Roles: {listed}.",
    )


# -- loaders -------------------------------------------------------------------------------------


def load_workspace(db: Path | None, demo: int | None, world: str | None = None) -> Workspace:
    """The workspace of `--db`, `--world` or `--demo` (at most one of them; default: demo 0)."""
    if sum(x is not None for x in (db, demo, world)) > 1:
        raise click.UsageError("give one of --db PATH, --demo [SEED] or --world NAME|FILE")
    if db is not None:
        return Workspace.open(db)
    if world is not None:
        from coworkenv.servers.render import render_workspace

        return render_workspace(world_from(world))
    from coworkenv.servers.render import northwind_workspace

    return northwind_workspace(seed=demo or 0)


def world_from(spec: str) -> World:
    """The world a `NAME[:SIZE[:SEED]]` or a world JSON file names."""
    from coworkenv.world import WorldFileError
    from coworkenv.worlds import world_from_spec

    try:
        return world_from_spec(spec)
    except (WorldFileError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


def task_paths(paths: tuple[Path, ...]) -> list[Path]:
    """Task files named directly, and the `*.json` files below named folders except the files
    our commands write there (funnel.json, report.json, dataset_info.json)."""
    from coworkenv.task import task_files

    found = [p for p in task_files(list(paths)) if p in paths or p.name not in KNOWN_OUTPUTS]
    if not found:
        raise click.UsageError(f"no task files (*.json) in {', '.join(map(str, paths))}")
    return found


def load_tasks(paths: tuple[Path, ...]) -> list[Any]:
    from coworkenv.task import load_task

    return [load_task(p) for p in task_paths(paths)]


def read_records(dirs: tuple[Path, ...]) -> list[Any]:
    """Every record in the rollout folders; a usage error when there is none."""
    from coworkenv.rollout import read_records as read

    records = [r for d in dirs for r in read(d)]
    if not records:
        raise click.UsageError(
            f"no episode records (records.jsonl) in {', '.join(map(str, dirs))}; `coworkenv rollout` writes them"
        )
    return records


@contextmanager
def endpoint_errors() -> Iterator[None]:
    """A model endpoint that cannot be used is a one-line error before any work starts."""
    from coworkenv.rollout.agents.openai_client import EndpointUnavailable

    try:
        yield
    except EndpointUnavailable as exc:
        raise click.ClickException(str(exc)) from None


async def check_endpoints(endpoints: Iterable[Endpoint]) -> None:
    """One request to each distinct model endpoint before any work starts."""
    seen: set[tuple[str | None, str]] = set()
    for endpoint in endpoints:
        if (endpoint.base_url, endpoint.api_key_env) not in seen:
            seen.add((endpoint.base_url, endpoint.api_key_env))
            await endpoint.check()
