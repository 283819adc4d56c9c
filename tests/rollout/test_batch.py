"""Batches of episodes: concurrency, resume after an interrupt, error records run again."""

from pathlib import Path

import anyio

from coworkenv.rollout import NoopPolicy, OpenAIAgent, OraclePolicy, read_records
from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.rollout.episodes.batch import arun_batch
from coworkenv.rollout.episodes.records_io import records_path
from tests.rollout.test_runner import ticket_task


async def test_a_batch_runs_every_trial_concurrently_and_appends_one_line_each(tmp_path: Path) -> None:
    task = ticket_task()
    state = await arun_batch([task], OraclePolicy, trials=3, out_dir=tmp_path, concurrency=3)
    assert (state.total, state.done, state.successes, state.errors) == (3, 3, 3, 0)
    records = read_records(tmp_path)
    assert sorted(r.trial for r in records) == [0, 1, 2]
    assert {r.final_hash for r in records} == {records[0].final_hash}
    assert len(records_path(tmp_path).read_text().splitlines()) == 3


async def test_an_interrupted_batch_keeps_finished_records_and_resumes(tmp_path: Path) -> None:
    task = ticket_task()
    with anyio.CancelScope() as scope:

        def stop_after_two(state, record) -> None:  # type: ignore[no-untyped-def]
            if state.done == 2:
                scope.cancel()

        await arun_batch(
            [task], NoopPolicy, trials=5, out_dir=tmp_path, concurrency=1, progress=stop_after_two
        )
    assert sorted(r.trial for r in read_records(tmp_path)) == [0, 1]
    # a crash in the middle of a write leaves a torn last line: it is cut off, never built on
    with records_path(tmp_path).open("ab") as f:
        f.write(b'{"task_id": "t-escalate", "tri')
    resumed = await arun_batch([task], NoopPolicy, trials=5, out_dir=tmp_path, concurrency=2)
    assert (resumed.skipped, resumed.done) == (2, 3)
    lines = records_path(tmp_path).read_text().splitlines()
    assert len(lines) == 5
    assert sorted(r.trial for r in read_records(tmp_path)) == [0, 1, 2, 3, 4]


async def test_error_records_are_run_again_on_resume(tmp_path: Path) -> None:
    task = ticket_task(turns=[ticket_task().turns[0]], checks=[])
    with ScriptedLLM([{"status": 503}] * 2) as llm:
        failing = await arun_batch(
            [task],
            lambda: OpenAIAgent(
                Endpoint(model="m", base_url=llm.base_url, api_key="k", attempts=2, backoff=0.01), name="m"
            ),
            trials=1,
            out_dir=tmp_path,
        )
    assert (failing.done, failing.errors) == (1, 1)
    script = [
        {
            "tool_calls": [
                {"name": "tickets_update_ticket", "arguments": {"ticket_id": 1, "priority": "urgent"}}
            ]
        },
        {"content": "done"},
    ]
    with ScriptedLLM(script) as llm:
        retried = await arun_batch(
            [task],
            lambda: OpenAIAgent(Endpoint(model="m", base_url=llm.base_url, api_key="k"), name="m"),
            trials=1,
            out_dir=tmp_path,
        )
    assert (retried.skipped, retried.done, retried.successes) == (0, 1, 1)
    assert [(r.trial, r.status) for r in read_records(tmp_path)] == [(0, "error"), (0, "completed")]
    again = await arun_batch(
        [task],
        lambda: OpenAIAgent(Endpoint(model="m", base_url="http://127.0.0.1:9/v1"), name="m"),
        trials=1,
        out_dir=tmp_path,
    )
    assert (again.skipped, again.done) == (1, 0)


async def test_task_ids_must_be_unique(tmp_path: Path) -> None:
    try:
        await arun_batch([ticket_task(), ticket_task()], NoopPolicy, trials=1, out_dir=tmp_path)
    except ValueError as exc:
        assert str(exc) == "task ids must be unique; repeated: ['t-escalate']"
    else:
        raise AssertionError("duplicate task ids were accepted")
