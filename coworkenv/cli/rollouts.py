"""`rollout` (episodes of an agent on tasks), `rollout-mcp` (episodes of an MCP agent) and
`report` (their scores)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import click

from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.exports.report import terminal_console

from .options import (
    backend_options,
    check_endpoints,
    dirs_argument,
    endpoint_errors,
    endpoint_option,
    json_option,
    load_tasks,
    max_result_chars_option,
    out_option,
    paths_argument,
    read_records,
    seed_option,
    token_counter_for,
    tokenizer_option,
    tools_option,
)

#: The roles of `rollout --endpoint`.
ROLLOUT_ROLES = {
    "agent": "the model of --agent openai",
    "user": "a simulated user for tasks with a persona (openai agent only)",
}


@click.command()
@paths_argument
@click.option(
    "--agent",
    type=click.Choice(["oracle", "noop", "noisy", "openai"]),
    default="oracle",
    show_default=True,
    help="Who acts: the reference solution, nothing, the solution with seeded mistakes, or a model "
    "(--endpoint agent=MODEL[@URL]).",
)
@endpoint_option(ROLLOUT_ROLES)
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
    "--max-context-chars",
    type=click.IntRange(1000),
    default=200_000,
    show_default=True,
    help="Characters of transcript sent to the model; beyond it the oldest tool results are "
    "replaced by a short note (openai).",
)
@max_result_chars_option
@tools_option
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
@seed_option("Seed of the noisy agent and the faults.")
@click.option("--name", help="Policy name in the records (default: the agent, or openai:MODEL).")
@backend_options("episodes")
@out_option("Folder for records.jsonl; an existing one is resumed.")
def rollout(
    paths: tuple[Path, ...],
    agent: str,
    endpoints: dict[str, Endpoint],
    temperature: float,
    max_tokens: int | None,
    max_steps: int,
    max_context_chars: int,
    max_result_chars: int | None,
    tool_format: str,
    noise: float,
    noise_drift: float,
    trials: int,
    concurrency: int,
    fault_rate: float,
    seed: int,
    name: str | None,
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

    tasks = load_tasks(paths)
    if agent == "openai" and "agent" not in endpoints:
        raise click.UsageError("--agent openai needs --endpoint agent=MODEL[@URL]")
    if agent != "openai" and endpoints:
        raise click.UsageError(
            f"--endpoint {', '.join(endpoints)}=... is for --agent openai; --agent {agent} calls no model"
        )
    settings = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "max_steps_per_turn": max_steps,
        "max_context_chars": max_context_chars,
        "max_result_chars": max_result_chars,
        "tool_format": tool_format,
    }
    with endpoint_errors():
        anyio.run(check_endpoints, endpoints.values())
        make_policy = _policy_factory(
            agent, endpoints.get("agent"), settings, noise=noise, drift=noise_drift, seed=seed, name=name
        )
        policy = make_policy()
        simulator = UserSimulator(endpoints["user"]) if "user" in endpoints else None
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


def _policy_factory(
    agent: str,
    endpoint: Endpoint | None,
    settings: dict[str, Any],
    *,
    noise: float,
    drift: float = 0.0,
    seed: int,
    name: str | None,
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
            assert endpoint is not None
            policy = OpenAIAgent(endpoint, **settings)
        if name:
            policy.name = name
        return policy

    return make_policy


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


@click.command()
@dirs_argument
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where to write report.json and report.html (default: the first DIR).",
)
@json_option("Print the report as JSON instead of tables.")
@click.option(
    "--budget",
    is_flag=True,
    help="Print only the token budget the episodes needed (largest prompt and completion).",
)
@tokenizer_option
def report(
    dirs: tuple[Path, ...], out_dir: Path | None, as_json: bool, budget: bool, tokenizer: str | None
) -> None:
    """Scores of the episodes in one or more rollout folders: average score, strict success,
    pass@k, pass^k, safety violations, robustness, and breakdowns by capability, service,
    single/multi-turn and turn index. Writes report.json and a self-contained report.html."""
    from coworkenv.rollout.exports.report import build_report, print_report, report_json
    from coworkenv.rollout.exports.report_html import write_report

    records = read_records(dirs)
    counter = token_counter_for(tokenizer)
    if budget:
        from coworkenv.rollout.agents.budget import token_budget

        count, method = counter
        click.echo(token_budget(records, count, method).summary())
        return
    built = build_report(records, tokens=counter)
    paths = write_report(records, out_dir or dirs[0], tokens=counter)
    if as_json:
        click.echo(report_json(built))
        return
    print_report(built, terminal_console())
    click.echo(f"wrote {paths['json']} and {paths['html']}")


@click.command("rollout-mcp")
@paths_argument
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
@seed_option("Seed of the faults, recorded on each episode.")
@click.option("--name", help="Policy name in the records (default: mcp:MODULE:FUNCTION).")
@out_option("Folder for records.jsonl; an existing one is resumed.")
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

    tasks = load_tasks(paths)
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
