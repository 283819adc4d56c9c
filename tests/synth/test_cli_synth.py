"""`coworkenv synth` with an LLM generator, a judge and a probe, each a scripted
OpenAI-compatible endpoint: the options reach the pipeline and the funnel shows them."""

import json
from pathlib import Path

from click.testing import CliRunner

from coworkenv.cli import cli
from coworkenv.rollout.scripted_llm import ScriptedLLM
from coworkenv.synth.pipeline import read_drafts
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
                "--model",
                "writer",
                "--base-url",
                writer.base_url,
                "--judge-model",
                "judge",
                "--judge-base-url",
                judge.base_url,
                "--probe-model",
                "probe",
                "--probe-base-url",
                probe.base_url,
                "--probe-k",
                "1",
                "--min-probe-pass",
                "1",
                "--out",
                str(tmp_path),
            ],
            catch_exceptions=False,
        )
        assert (len(writer.requests), len(judge.requests), len(probe.requests)) == (1, 1, 3)
        assert writer.requests[0]["max_tokens"] == 12_000
    assert result.exit_code == 0, result.output
    assert "an LLM judge finds every checked outcome asked for" in result.output
    assert "a test agent solved it at least --min-probe-pass times" in result.output
    (record,) = read_drafts(tmp_path)
    assert (record.kept, record.judge_score, record.probe_passes, record.passed[-2:]) == (
        True,
        9,
        1,
        ["judged", "probed"],
    )
    funnel = json.loads((tmp_path / "funnel.json").read_text())
    assert (funnel["counts"]["judged"], funnel["counts"]["probed"], funnel["counts"]["kept"]) == (1, 1, 1)
    assert funnel["kept_tasks"][0]["probe"] == "1/1" and funnel["kept_tasks"][0]["judge_score"] == 9
