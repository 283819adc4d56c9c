"""Seeded fault injection, for measuring how agents recover from tool errors.

A `FaultInjector` attached to a `WorkspaceServer` draws, for each call, whether to inject a
fault, at a configurable rate per service or per tool:
- `transient`: the call fails with a retryable error the model reads;
- `rate_limit`: the call fails with a rate-limit error that says to retry;
- `latency`: the call succeeds, but the simulated clock moves forward first.
Injected failures happen before the tool runs, so they never change service state (a
latency fault moves only the clock). Their audit entries carry an error that starts with
`[injected]`, which reports use to measure robustness. The same seed gives the same faults
for the same sequence of calls.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FaultKind = Literal["transient", "rate_limit", "latency"]
INJECTED_PREFIX = "[injected]"
DEFAULT_KINDS: dict[FaultKind, float] = {"transient": 0.5, "rate_limit": 0.3, "latency": 0.2}


class FaultPlan(BaseModel):
    """Where and how often to inject faults. Rates are probabilities per call in [0, 1];
    a tool's rate (key `service.tool`, e.g. `mail.send_message`) beats its service's,
    which beats the default `rate`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rate: float = Field(default=0.0, ge=0, le=1)
    services: dict[str, float] = Field(default_factory=dict)
    tools: dict[str, float] = Field(default_factory=dict)
    kinds: dict[FaultKind, float] = Field(default_factory=lambda: dict(DEFAULT_KINDS))
    latency_seconds: float = Field(default=120, ge=0)
    seed: int = 0

    def rate_for(self, service: str, tool: str) -> float:
        key = f"{service}.{tool}"
        if key in self.tools:
            return self.tools[key]
        return self.services.get(service, self.rate)


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    message: str


class FaultInjector:
    """Draws faults for a sequence of calls, deterministically from the plan's seed."""

    def __init__(self, plan: FaultPlan, *, stream: str = "") -> None:
        self.plan = plan
        self._rng = random.Random(f"{plan.seed}:{stream}")
        self.injected = 0

    def draw(self, service: str, tool: str) -> Fault | None:
        rate = self.plan.rate_for(service, tool)
        roll, pick = self._rng.random(), self._rng.random()
        if roll >= rate:
            return None
        kinds = sorted(self.plan.kinds.items())
        total = sum(w for _, w in kinds)
        if total <= 0:
            return None
        acc = 0.0
        kind: FaultKind = kinds[-1][0]
        for name, weight in kinds:
            acc += weight / total
            if pick < acc:
                kind = name
                break
        self.injected += 1
        return Fault(kind, _message(kind, service, tool, self.plan.latency_seconds))


def _message(kind: FaultKind, service: str, tool: str, latency: float) -> str:
    if kind == "transient":
        return (
            f"{INJECTED_PREFIX} transient error: the {service} service did not answer in time. "
            f"Nothing was changed; call {tool} again."
        )
    if kind == "rate_limit":
        return (
            f"{INJECTED_PREFIX} rate limit: too many requests to the {service} service. "
            f"Nothing was changed; wait a moment, then call {tool} again."
        )
    return f"{INJECTED_PREFIX} latency: the {service} service was slow ({latency:g} s)"
