"""`coworkenv synth` with an LLM generator, a judge and a probe, each a scripted
OpenAI-compatible endpoint: the options reach the pipeline and the funnel shows them; and
`--worlds` and `--mix`, which shape the plan, with their errors."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coworkenv.cli import cli
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.synth.pipeline import plan_requests, read_drafts
from coworkenv.synth.plan import parse_mix
from tests.synth.test_judge_probe import SOLVES
from tests.synth.test_llm_synthesis import CAP, good_draft, reply


def test_synth_with_a_judge_and_a_probe_through_the_cli(tmp_path: Path) -> None:
    verdict = {"content": json.dumps({"score": 9, "unasked": [], "natural": True})}
    with (
        ScriptedLLM([reply(good_draft())], model="writer") as writer,
        ScriptedLLM([verdict], model="judge") as judge,
        ScriptedLLM(SOLVES, model="probe") as probe,
    ):
        result = CliRunner().invoke(
            cli,
            [
                "synth",
                "--count",
                "1",
                "--capabilities",
                CAP,
                "--generator",
                "llm",
                "--endpoint",
                f"generator=writer@{writer.base_url}",
                "--endpoint",
                f"judge=judge@{judge.base_url}",
                "--endpoint",
                f"probe=probe@{probe.base_url}",
                "--probe-k",
                "1",
                "--min-probe-pass",
                "1",
                "--out",
                str(tmp_path),
            ],
            catch_exceptions=False,
            env={"COLUMNS": "220"},  # the funnel's stage descriptions on one line each
        )
        assert (len(writer.requests), len(judge.requests), len(probe.requests)) == (1, 1, 3)
        assert writer.requests[0]["max_tokens"] == 12_000
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # wherever the console wrapped its lines
    assert "an LLM judge finds every checked outcome asked for" in said
    assert "a test agent solved it at least --min-probe-pass times" in said
    (record,) = read_drafts(tmp_path)
    assert record.request is not None
    assert (record.request.kind, record.request.family, record.request.world) == ("single", None, None)
    assert (record.kept, record.judge_score, record.probe_passes, record.passed[-2:]) == (
        True,
        9,
        1,
        ["judged", "probed"],
    )
    funnel = json.loads((tmp_path / "funnel.json").read_text())
    assert (funnel["counts"]["judged"], funnel["counts"]["probed"], funnel["counts"]["kept"]) == (1, 1, 1)
    assert funnel["kept_tasks"][0]["probe"] == "1/1" and funnel["kept_tasks"][0]["judge_score"] == 9


def test_synth_spreads_slots_over_worlds_by_the_mix_through_the_cli(tmp_path: Path) -> None:
    args = ["synth", "--count", "2", "--capabilities", "triage_routing", "--worlds", "3"]
    result = CliRunner().invoke(
        cli,
        [*args, "--mix", "single=1", "--concurrency", "1", "--out", str(tmp_path)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    planned = plan_requests(2, ["triage_routing"], seed=0, mix=parse_mix("single=1"), worlds=3)
    assert [r.request for r in read_drafts(tmp_path)] == planned
    assert {r.world for r in planned} <= {"northwind", "retail_chain:14:956", "law_firm:19:474"}
    funnel = json.loads((tmp_path / "funnel.json").read_text())
    assert funnel["planned"]["kinds"] == {"single": 2}
    assert "planned worlds" in result.output and "request templates" in result.output
    assert "kept 2 of 2 slots (2 in this run)" in result.output

    args[2] = "3"  # one slot more: the rerun fills only that one and counts every kept task
    again = CliRunner().invoke(
        cli,
        [*args, "--mix", "single=1", "--concurrency", "1", "--out", str(tmp_path)],
        catch_exceptions=False,
    )
    assert again.exit_code == 0, again.output
    assert "kept 3 of 3 slots (1 in this run)" in " ".join(again.output.split())
    planned = plan_requests(3, ["triage_routing"], seed=0, mix=parse_mix("single=1"), worlds=3)
    assert [r.request for r in read_drafts(tmp_path)] == planned


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--mix", "single=1,solo=2"], "Error: --mix: unknown kind 'solo'; kinds: single, multi, workday"),
        (
            ["--mix", "workday=1"],
            "Error: the mix gives workday tasks 100% of the slots, but no family of the requested "
            "capabilities (triage_routing) is workday",
        ),
        (
            ["--worlds", "0"],
            "Error: Invalid value for '--worlds': 0 is not in the range x>=1.",
        ),
        (
            ["--worlds", "5", "--generator", "llm", "--endpoint", "generator=m"],
            "Error: --worlds spreads the procedural families over worlds; --generator llm gives each slot "
            "its own scene (the demo company and the generated organizations in turn)",
        ),
    ],
)
def test_a_bad_mix_or_worlds_is_a_usage_error_that_says_why(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    result = CliRunner().invoke(
        cli, ["synth", "--count", "1", "--capabilities", "triage_routing", *extra, "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert " ".join(message.split()) in " ".join(result.output.split())
    assert list(tmp_path.iterdir()) == []


def test_a_world_file_is_used_first_and_its_tasks_carry_it(tmp_path: Path) -> None:
    from coworkenv.synth.pipeline import kept_tasks
    from coworkenv.world import save_world
    from coworkenv.worlds import world

    edited = world("museum", 10, 2).model_copy(update={"name": "Harbour Maritime Museum"})
    path = tmp_path / "harbour.json"
    save_world(edited, path)
    out = tmp_path / "out"
    args = ["synth", "--count", "2", "--capabilities", "triage_routing", "--mix", "single=1"]
    result = CliRunner().invoke(
        cli,
        [*args, "--worlds", "1", "--world-file", str(path), "--concurrency", "1", "--out", str(out)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert [r.request.world for r in read_drafts(out) if r.request] == [str(path.resolve()), "northwind"]
    first = next(t for t in kept_tasks(out) if t.seed.procedural.name == "world")
    assert first.seed.procedural.params["world"]["name"] == "Harbour Maritime Museum"
    assert first.context.company == "Harbour Maritime Museum"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--address", "ray://x:10001"], "Error: --address joins a Ray cluster: give it with --backend ray"),
        (
            [
                "--world-file",
                "tasks/examples/../../pyproject.toml",
                "--generator",
                "llm",
                "--endpoint",
                "generator=m",
            ],
            "Error: --world-file places the procedural families; --generator llm draws its own scenes",
        ),
    ],
)
def test_backend_and_world_file_misuse_are_usage_errors(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    result = CliRunner().invoke(cli, ["synth", "--count", "1", *extra, "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert message in result.output
