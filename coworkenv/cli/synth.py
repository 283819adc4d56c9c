"""`synth`: generate tasks, validate each by executing it, correct or reject."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import anyio
import click

from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.exports.report import terminal_console

from .options import (
    backend_options,
    check_endpoints,
    endpoint_errors,
    endpoint_option,
    out_option,
    seed_option,
)

#: The roles of `synth --endpoint`.
SYNTH_ROLES = {
    "generator": "the model of --generator llm",
    "judge": "an LLM judge of each validated draft",
    "probe": "a test agent that attempts each validated draft",
    "paraphraser": "a model that rewords each validated task's user messages",
    "world": "the model that proposes worlds for --propose-worlds",
}


def _proposed_worlds(out_dir: Path, count: int, endpoint: Endpoint, seed: int) -> list[Path]:
    """`count` worlds in OUT/worlds/, proposed by the model at `endpoint` where missing."""
    from coworkenv.rollout.agents.openai_client import EndpointFailed, EndpointUnavailable
    from coworkenv.worlds.propose import WorldProposalFailed, propose_worlds

    try:
        return anyio.run(
            functools.partial(
                propose_worlds,
                out_dir / "worlds",
                count,
                endpoint,
                seed=seed,
                log=lambda t: click.echo(t, err=True),
            )
        )
    except (EndpointUnavailable, EndpointFailed, WorldProposalFailed) as exc:
        raise click.ClickException(str(exc)) from exc


@click.command()
@click.option("--count", type=click.IntRange(1), default=20, show_default=True, help="Task slots to fill.")
@click.option(
    "--capabilities", help="Comma-separated capability ids (default: all of synth/capabilities.json)."
)
@click.option(
    "--generator",
    type=click.Choice(["procedural", "llm"]),
    default="procedural",
    show_default=True,
    help="procedural: the offline task families; llm: a model (--endpoint generator=MODEL[@URL]).",
)
@endpoint_option(SYNTH_ROLES)
@click.option(
    "--max-rounds", type=click.IntRange(1), default=3, show_default=True, help="Correction rounds per slot."
)
@click.option(
    "--concurrency",
    type=click.IntRange(1),
    default=None,
    help="Slots worked on at once; above 1, validation runs in worker processes (default: one per core).",
)
@seed_option("Seed of the task plan and the families.")
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
    help="Worlds a model proposes before synthesis (--endpoint world=MODEL[@URL]), checked, "
    "rendered, kept in OUT/worlds/ and used first like --world-file; a rerun reuses them.",
)
@backend_options("validations")
@click.option(
    "--min-judge-score",
    type=click.FloatRange(0, 10),
    default=8,
    show_default=True,
    help="Judge score to keep.",
)
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
@out_option("Folder for tasks/, drafts.jsonl and the funnel; an existing one is resumed.")
def synth(
    count: int,
    capabilities: str | None,
    generator: str,
    endpoints: dict[str, Endpoint],
    max_rounds: int,
    concurrency: int | None,
    seed: int,
    worlds: int | None,
    mix: str | None,
    world_files: tuple[Path, ...],
    propose_worlds: int,
    backend: str,
    address: str | None,
    min_judge_score: float,
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
        if "generator" not in endpoints:
            raise click.UsageError("--generator llm needs --endpoint generator=MODEL[@URL]")
        if worlds is not None:
            raise click.UsageError(
                "--worlds spreads the procedural families over worlds; --generator llm gives each slot "
                "its own scene (the demo company and the generated organizations in turn)"
            )
    elif "generator" in endpoints:
        raise click.UsageError("--endpoint generator=... drafts with a model: give it with --generator llm")
    if "world" in endpoints and not propose_worlds:
        raise click.UsageError("--endpoint world=... proposes worlds: give it with --propose-worlds N")
    if propose_worlds:
        if generator == "llm":
            raise click.UsageError(
                "--propose-worlds places the procedural families; --generator llm draws its own scenes"
            )
        if "world" not in endpoints:
            raise click.UsageError("--propose-worlds needs --endpoint world=MODEL[@URL]")
    judge = probe = paraphraser = None
    with endpoint_errors():
        anyio.run(check_endpoints, endpoints.values())
        chosen = LLMGenerator(endpoints["generator"]) if generator == "llm" else ProceduralGenerator()
        if "paraphraser" in endpoints:
            from coworkenv.synth.paraphrase import Paraphraser

            paraphraser = Paraphraser(endpoints["paraphraser"])
        if "judge" in endpoints:
            from coworkenv.synth.judge import LLMJudge

            judge = LLMJudge(endpoints["judge"], min_score=min_judge_score)
        if "probe" in endpoints:
            from coworkenv.rollout.agents.openai_agent import OpenAIAgent
            from coworkenv.synth.probe import Probe

            probe = Probe(OpenAIAgent(endpoints["probe"]), k=probe_k, min_passes=min_probe_pass)
    files = [str(f) for f in world_files]
    if propose_worlds:
        files += [str(p) for p in _proposed_worlds(out_dir, propose_worlds, endpoints["world"], seed)]
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
