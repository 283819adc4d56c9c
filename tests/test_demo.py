"""`make demo` end to end on a few tasks, and the scripted walkthrough."""

import json
from pathlib import Path

from rich.console import Console

from coworkenv.demo import run_demo
from coworkenv.rollout import read_records
from coworkenv.walkthrough import scripted_session


async def test_the_demo_synthesizes_rolls_out_reports_and_exports(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    with (tmp_path / "log.txt").open("w") as log:
        result = await run_demo(seed=0, count=3, out=out, console=Console(file=log))
    assert result["kept"] == 3
    assert len(list((out / "synth" / "tasks").glob("*.json"))) == 3
    teacher, student = read_records(out / "teacher"), read_records(out / "student")
    assert (len(teacher), len(student)) == (12, 12)
    assert all(r.success for r in teacher)
    assert {r.policy for r in student} == {"noisy"}
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert set(json.loads((out / "report.json").read_text())["policies"]) == {"noisy", "oracle"}
    sft_rows = (out / "exports" / "sft" / "sft.jsonl").read_text().splitlines()
    assert len(sft_rows) == result["sft"]["rows"] == 3  # 4 identical oracle trials per task are written once
    assert set(json.loads(sft_rows[0])) >= {"messages", "tools"}
    assert (out / "exports" / "sharegpt" / "dataset_info.json").exists()
    rl_rows = [json.loads(line) for line in (out / "exports" / "rl" / "rl.jsonl").read_text().splitlines()]
    assert len(rl_rows) == 12 and all("advantage" in row for row in rl_rows)
    assert (out / "synth" / "funnel.html").exists()


async def test_the_walkthrough_prints_each_call_and_ends_in_the_same_state_each_time() -> None:
    lines: list[str] = []
    first = await scripted_session(0, say=lines.append)
    assert first == await scripted_session(0, say=lambda _: None)
    calls = [line.split()[1] for line in lines if line.startswith("\n> ")]
    assert calls == [
        "mail_search_messages",
        "mail_get_message",
        "directory_get_person",
        "tickets_create_ticket",
        "mail_reply",
        "calendar_find_free_slots",
        "calendar_create_event",
        "files_write_file",
        "tickets_update_ticket",
    ]
    assert any(
        line.startswith("  error: Error executing tool tickets_update_ticket: invalid arguments.")
        for line in lines
    )
