"""`world`: list, show, write and propose worlds."""

from __future__ import annotations

from pathlib import Path

import anyio
import click

from coworkenv.rollout.agents.openai_client import Endpoint

from .options import endpoint_option, json_option, overwrite_option, world_from


@click.group("world")
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
@json_option("Print the whole world as JSON.")
def world_show(spec: str, as_json: bool) -> None:
    """Summarize a world (NAME[:SIZE[:SEED]] or a world JSON file): teams, queues, documents."""
    built = world_from(spec)
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
@overwrite_option
def world_write(spec: str, path: Path, overwrite: bool) -> None:
    """Write a world as JSON to PATH (edit it, then serve it with `serve --world PATH`)."""
    from coworkenv.world import save_world

    if path.exists() and not overwrite:
        raise click.UsageError(f"{path} already exists; pass --overwrite to replace it")
    built = world_from(spec)
    save_world(built, path)
    click.echo(f"wrote world {built.key} (hash {built.content_hash[:12]}) to {path}")


@world_group.command("propose")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--industry", required=True, help='What the organization does, e.g. "veterinary clinic group".')
@click.option("--size", type=click.IntRange(8, 300), default=12, show_default=True, help="Colleagues.")
@click.option(
    "--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of the rendered data."
)
@endpoint_option({"world": "the model that proposes the world (required)"})
@click.option("--rounds", type=click.IntRange(1), default=3, show_default=True, help="Answers to fix it in.")
@overwrite_option
def world_propose(
    path: Path,
    industry: str,
    size: int,
    seed: int,
    endpoints: dict[str, Endpoint],
    rounds: int,
    overwrite: bool,
) -> None:
    """Ask a model for a world of INDUSTRY, validate it (and render every service's seed data
    from it), send the problems back until it is valid, and write it to PATH."""
    from coworkenv.rollout.agents.openai_client import EndpointFailed, EndpointUnavailable
    from coworkenv.world import save_world
    from coworkenv.worlds.propose import WorldProposalFailed, propose_world

    if path.exists() and not overwrite:
        raise click.UsageError(f"{path} already exists; pass --overwrite to replace it")
    if "world" not in endpoints:
        raise click.UsageError("world propose needs --endpoint world=MODEL[@URL]")
    try:
        proposal = anyio.run(
            lambda: propose_world(endpoints["world"], industry=industry, size=size, seed=seed, rounds=rounds)
        )
    except (EndpointUnavailable, EndpointFailed, WorldProposalFailed) as exc:
        raise click.ClickException(str(exc)) from exc
    save_world(proposal.world, path)
    built = proposal.world
    click.echo(
        f"wrote {built.name} ({built.industry}, {len(built.staff)} colleagues, hash "
        f"{built.content_hash[:12]}) to {path}, valid after {proposal.rounds} round(s)"
    )
