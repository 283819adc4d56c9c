"""A solvability probe: a test agent attempts each validated draft k times through the real
MCP servers (the rollout's OpenAI agent, from a fresh fork each time). The funnel records
how many attempts passed (pass@k); `min_passes` rejects tasks no probe solved, a sign that
the task asks for something the user never said, or is too hard to learn from."""

from __future__ import annotations

from pydantic import BaseModel

from coworkenv.rollout import SeedCache
from coworkenv.rollout.agents.openai_agent import OpenAIAgent
from coworkenv.rollout.episodes.runner import run_episode
from coworkenv.synth.generators import GenerationError
from coworkenv.task import Task


class ProbeResult(BaseModel):
    """What the probe agent did on one draft."""

    attempts: int
    passes: int
    errors: int = 0
    failures: list[str] = []

    @property
    def pass_at_k(self) -> float:
        """1.0 when some attempt passed (pass@k with k = attempts), else 0.0."""
        return 1.0 if self.passes else 0.0


class Probe:
    """Runs `k` episodes of an agent on a task (see the module docstring)."""

    def __init__(self, agent: OpenAIAgent, *, k: int = 2, min_passes: int = 0) -> None:
        self.agent = agent
        self.k = k
        self.min_passes = min_passes

    async def attempt(self, task: Task, cache: SeedCache | None = None) -> ProbeResult:
        """k trials; an episode that ends in an endpoint error is an infrastructure failure."""
        cache = cache or SeedCache()
        passes = errors = 0
        failures = []
        for trial in range(self.k):
            record = await run_episode(task, self.agent, trial=trial, cache=cache)
            if record.status == "error":
                errors += 1
                failures.append(record.error or "error")
                continue
            passes += record.success
            if not record.success and record.verdict is not None:
                failed = [c.id for c in record.verdict.checks if not c.passed]
                failures.append(
                    f"trial {trial}: score {record.score:.2f}, failed {', '.join(failed) or 'guards'}"
                )
        if errors == self.k:
            raise GenerationError(f"the probe agent's endpoint failed: {failures[-1]}", infrastructure=True)
        return ProbeResult(attempts=self.k, passes=passes, errors=errors, failures=failures)
