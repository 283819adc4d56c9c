"""A resume after a kill: task files are written atomically, and what an older crash left
(a cut-short task file, a temporary file) is removed with a warning and its slot filled again."""

import logging
from pathlib import Path

import pytest

from coworkenv.files import atomic_write_text
from coworkenv.synth.generators import ProceduralGenerator
from coworkenv.synth.pipeline import TASKS_DIR, kept_tasks, synthesize


async def test_a_resume_regenerates_a_task_file_cut_short_by_a_kill(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = await synthesize(
        ProceduralGenerator(), count=2, out_dir=tmp_path, capabilities=["triage_routing"]
    )
    assert first.kept == 2
    files = sorted((tmp_path / TASKS_DIR).glob("*.json"))
    assert sorted(p.name for p in (tmp_path / TASKS_DIR).iterdir()) == [p.name for p in files]  # no temporary
    whole = files[0].read_text()
    files[0].write_text(whole[: len(whole) // 2])
    stale = tmp_path / TASKS_DIR / f".{files[1].name}.999.tmp"
    stale.write_text("{")

    with caplog.at_level(logging.WARNING, logger="coworkenv.synth.pipeline"):
        resumed = await synthesize(
            ProceduralGenerator(), count=2, out_dir=tmp_path, capabilities=["triage_routing"]
        )

    assert (resumed.done, resumed.kept) == (2, 1)
    assert files[0].read_text() == whole
    assert not stale.exists()
    assert len(kept_tasks(tmp_path)) == 2
    assert sorted(r.getMessage().split(",")[0] for r in caplog.records) == sorted(
        [f"removing {files[0]}", f"removing {stale}"]
    )


def test_kept_tasks_skips_a_file_that_is_not_a_task(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / TASKS_DIR).mkdir()
    (tmp_path / TASKS_DIR / "broken.json").write_text('{"id": "x"}')
    with caplog.at_level(logging.WARNING, logger="coworkenv.synth.pipeline"):
        assert kept_tasks(tmp_path) == []
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        f"skipping {tmp_path / TASKS_DIR / 'broken.json'}, which is not a valid task"
    ]


def test_an_atomic_write_that_fails_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "task.json"
    atomic_write_text(target, "old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "new \u00e9", encoding="ascii")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["task.json"]
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
