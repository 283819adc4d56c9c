"""Oracle episodes per second at concurrency 1 and 16, and the harness's overhead per model
step as a ratio of the bare HTTP round trip to a local OpenAI-compatible server."""

import statistics
import tempfile
import time
from pathlib import Path

import anyio
from openai import AsyncOpenAI

from coworkenv.rollout import OpenAIAgent, OraclePolicy, SeedCache, run_episode
from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.rollout.episodes.batch import arun_batch
from coworkenv.task import load_task, task_files

EXAMPLES = Path(__file__).resolve().parent.parent / "tasks" / "examples"
STEPS = 20


async def episodes_per_second(concurrency: int, trials: int) -> float:
    tasks = [load_task(p) for p in task_files([EXAMPLES])]
    with tempfile.TemporaryDirectory() as out:
        await arun_batch(tasks, OraclePolicy, trials=1, out_dir=Path(out) / "warm", concurrency=concurrency)
        started = time.perf_counter()
        state = await arun_batch(tasks, OraclePolicy, trials=trials, out_dir=out, concurrency=concurrency)
        return state.done / (time.perf_counter() - started)


async def model_step_overhead() -> tuple[float, float]:
    task = load_task(EXAMPLES / "tickets-error-recovery.json")
    step = {"tool_calls": [{"name": "tickets_list_queues", "arguments": {}}]}
    with ScriptedLLM([step] * 1000) as llm:
        agent = OpenAIAgent(Endpoint(model="m", base_url=llm.base_url, api_key="k"), max_steps_per_turn=STEPS)
        cache = SeedCache()
        cache.snapshot(task)
        one_turn = task.model_copy(update={"turns": task.turns[:1]})
        per_step = []
        for _ in range(5):
            record = await run_episode(one_turn, agent, cache=cache)
            per_step.append(sum(record.timings.turns) / STEPS)
        # the floor: the same requests (messages and tools), replayed with the bare client
        payloads = llm.requests[-STEPS:]
        client = AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0)
        bare = []
        for _ in range(5):
            t = time.perf_counter()
            for payload in payloads:
                await client.chat.completions.create(**payload)
            bare.append((time.perf_counter() - t) / len(payloads))
    return statistics.median(per_step) * 1e6, statistics.median(bare) * 1e6


async def measure() -> dict:
    one = await episodes_per_second(1, 4)
    many = await episodes_per_second(16, 4)
    print(f"oracle episodes per second: {one:6.1f} at concurrency 1, {many:6.1f} at concurrency 16")
    step, bare = await model_step_overhead()
    print(
        f"{'model step (request + MCP tool call + record)':<44} {step:9.1f} us   {'bare HTTP round trip':<34} "
        f"{bare:9.1f} us   ratio {step / bare:5.2f}x"
    )
    return {"c1": one, "c16": many, "step_us": step, "bare_us": bare}


def run() -> dict:
    return anyio.run(measure)
