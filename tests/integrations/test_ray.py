"""Ray: a batch sharded over actors on a local Ray instance, each record appended once, resumable."""

from pathlib import Path

import anyio
import pytest

ray = pytest.importorskip("ray", reason="the Ray backend needs the [ray] extra")

from click.testing import CliRunner  # noqa: E402

from coworkenv.cli import cli  # noqa: E402
from coworkenv.rollout import OraclePolicy, read_records  # noqa: E402
from coworkenv.rollout.episodes.batch import run_batch  # noqa: E402
from coworkenv.task import dump_task  # noqa: E402
from tests.rollout.test_runner import ticket_task  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


# Ray's own start-up warns about its environment; the batch's records are what is checked.
pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning", "ignore::FutureWarning", "ignore::UserWarning"
)


def test_episodes_run_on_actors_and_each_record_is_appended_once_and_resumes(
    local_ray, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    tasks = [ticket_task(), ticket_task(id="t-other")]
    state = anyio.run(
        lambda: run_batch(
            tasks, OraclePolicy, trials=3, out_dir=tmp_path, concurrency=2, seed=5, backend="ray"
        )
    )
    assert (state.done, state.successes, state.errors) == (6, 6, 0)
    records = read_records(tmp_path)
    assert sorted((r.task_id, r.trial, r.seed) for r in records) == [
        (task_id, trial, 5) for task_id in ("t-escalate", "t-other") for trial in range(3)
    ]
    assert {r.verdict.score for r in records if r.verdict} == {1.0}
    again = anyio.run(
        lambda: run_batch(tasks, OraclePolicy, trials=4, out_dir=tmp_path, concurrency=2, backend="ray")
    )
    assert (again.skipped, again.done) == (6, 2)
    assert sorted(r.trial for r in read_records(tmp_path) if r.task_id == "t-other") == [0, 1, 2, 3]


def test_the_cli_runs_a_rollout_on_ray(local_ray, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    task_file = tmp_path / "task.json"
    task_file.write_text(dump_task(ticket_task()))
    result = CliRunner().invoke(
        cli,
        [
            "rollout",
            str(task_file),
            "--agent",
            "oracle",
            "--trials",
            "2",
            "--backend",
            "ray",
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "2 episode(s) run" in result.output
    assert sorted(r.trial for r in read_records(tmp_path / "out")) == [0, 1]


def test_synthesis_validates_on_actors_writes_each_record_once_and_resumes(local_ray, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from coworkenv.synth.generators import ProceduralGenerator
    from coworkenv.synth.pipeline import kept_tasks, read_drafts, synthesize
    from coworkenv.synth.plan import parse_mix

    def run(count: int):  # type: ignore[no-untyped-def]
        return anyio.run(
            lambda: synthesize(
                ProceduralGenerator(),
                count=count,
                out_dir=tmp_path,
                capabilities=["triage_routing", "find_and_report"],
                mix=parse_mix("single=1"),
                worlds=3,
                concurrency=2,
                backend="ray",
            )
        )

    state = run(4)
    assert (state.done, state.kept) == (4, 4)
    drafts = read_drafts(tmp_path)
    assert sorted(r.slot for r in drafts if r.final) == [0, 1, 2, 3]
    assert len({r.task_id for r in drafts if r.kept}) == 4 == len(kept_tasks(tmp_path))
    again = run(6)
    assert (again.done, again.kept) == (6, 2)  # the two new slots, the four finished ones kept
    assert sorted(r.slot for r in read_drafts(tmp_path) if r.final) == [0, 1, 2, 3, 4, 5]


def test_the_cli_synthesizes_on_ray(local_ray, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(
        cli,
        ["synth", "--count", "2", "--capabilities", "triage_routing", "--mix", "single=1", "--backend", "ray",
         "--concurrency", "2", "--out", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "kept 2 of 2 slots" in " ".join(result.output.split())
