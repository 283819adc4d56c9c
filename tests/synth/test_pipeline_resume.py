"""A resume after a kill: task files are written atomically, and what an older crash left
(a cut-short task file, a temporary file) is removed with a warning and its slot filled again;
a slot already drafted keeps its recorded plan."""

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from coworkenv.files import atomic_write_text
from coworkenv.synth.generators import DraftRequest, ProceduralGenerator
from coworkenv.synth.pipeline import (
    DRAFTS_FILE,
    TASKS_DIR,
    DraftRecord,
    kept_tasks,
    plan_requests,
    synthesize,
)
from coworkenv.task import Task


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


class Recorder:
    """Writes drafts that fail the schema at once, and remembers each request it was given."""

    name, model, places = "procedural", None, True

    def __init__(self) -> None:
        self.requests: list[DraftRequest] = []

    async def draft(
        self,
        request: DraftRequest,
        previous: str | None,
        report: str | None,
        round: int,
        kept: Sequence[Task] = (),
    ) -> str:
        self.requests.append(request)
        return "{}"


async def test_a_resume_drafts_a_started_slot_in_its_recorded_world_whatever_the_new_plan(
    tmp_path: Path,
) -> None:
    first = Recorder()
    state = await synthesize(
        first,
        count=2,
        out_dir=tmp_path,
        capabilities=["triage_routing"],
        max_rounds=1,
        worlds=3,
        concurrency=1,
    )
    assert state.rejected == 2
    started = first.requests[1]
    assert started.world not in (None, "northwind")  # a world-ready family's slot
    lines = (tmp_path / DRAFTS_FILE).read_text().splitlines()
    record = DraftRecord.model_validate_json(lines[1])
    assert record.request == started
    # slot 1 did not finish: as if killed after its first round of two
    (tmp_path / DRAFTS_FILE).write_text(
        lines[0] + "\n" + record.model_copy(update={"final": False}).model_dump_json() + "\n"
    )

    resumed = Recorder()
    await synthesize(
        resumed,
        count=2,
        out_dir=tmp_path,
        capabilities=["triage_routing"],
        max_rounds=1,
        worlds=1,
        concurrency=1,
    )
    assert resumed.requests == [started]
    assert plan_requests(2, ["triage_routing"], seed=0, worlds=1)[1].world == "northwind"
