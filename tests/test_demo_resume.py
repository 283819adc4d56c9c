"""An interrupted `coworkenv demo` resumes: finished synthesis slots and episodes are kept."""

from pathlib import Path

from rich.console import Console

from coworkenv.demo import run_demo
from coworkenv.rollout import read_records


async def test_a_rerun_resumes_finished_stages_and_new_settings_start_over(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    log = tmp_path / "log.txt"
    with log.open("w") as f:
        await run_demo(seed=0, count=2, out=out, console=Console(file=f, width=100))
    drafts = (out / "synth" / "drafts.jsonl").read_bytes()
    teacher_file = out / "teacher" / "records.jsonl"
    # as if Ctrl-C had stopped the teacher's rollout one episode before its end
    lines = teacher_file.read_bytes().splitlines(keepends=True)
    teacher_file.write_bytes(b"".join(lines[:-1]))
    with log.open("w") as f:
        result = await run_demo(seed=0, count=2, out=out, console=Console(file=f, width=100))
    text = log.read_text()
    assert "resuming the demo" in text
    assert (out / "synth" / "drafts.jsonl").read_bytes() == drafts  # no slot synthesized again
    assert (result["teacher"].done, result["teacher"].skipped) == (1, len(lines) - 1)
    assert (result["student"].done, result["student"].skipped) == (0, len(lines))
    assert len(read_records(out / "teacher")) == len(lines)
    # wherever the console wrapped the line
    assert "".join(f"funnel: {out / 'synth' / 'funnel.html'}".split()) in "".join(text.split())
    # other settings: the folder starts over
    with log.open("w") as f:
        other = await run_demo(seed=1, count=2, out=out, console=Console(file=f, width=100))
    assert "resuming" not in log.read_text()
    assert other["teacher"].skipped == 0
