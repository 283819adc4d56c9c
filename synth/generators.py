"""Task generators: procedural (the offline default) and LLM (any OpenAI-compatible endpoint).

A generator turns a `DraftRequest` (capability, services, difficulty, seed) into draft
JSON text. In the correction loop it gets its previous draft and the validation report,
and returns a new draft."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel

from coworkenv.rollout.agents.openai_client import Endpoint, EndpointFailed
from coworkenv.synth.capabilities import capability
from coworkenv.synth.family import FAMILIES, Difficulty, Kind, SeedDoesNotFit, build_task
from coworkenv.synth.prompt import (
    EXAMPLE_HEADING,
    TOKEN_BUDGET,
    compact_task,
    estimate_tokens,
    generation_schema,
    request_text,
    request_tokens,
    scene_for,
    system_prompt,
)
from coworkenv.task import Task
from coworkenv.worlds import DEMO, world_from_spec


class DraftRequest(BaseModel):
    """What to generate in one slot (see `synth.plan`)."""

    slot: int
    capability: str
    variant: int = 0
    difficulty: int = 1
    seed: int = 0
    services: list[str] | None = None
    kind: Kind = "single"
    family: str | None = None
    """The procedural family to build from; None: the generator picks one of the capability."""
    world: str | None = None
    """The world as `NAME[:SIZE:SEED]` (`northwind`: the demo company, whose demo seed the
    family's seed picks); None: the generator's own choice."""


class Generator(Protocol):
    """Drafts a task for a request. A generator with `places = True` (the procedural one)
    builds the family and world the request names, so the plan gives each slot both; without
    it (the LLM one) the plan names only a kind and a capability."""

    name: str
    model: str | None

    async def draft(
        self,
        request: DraftRequest,
        previous: str | None,
        report: str | None,
        round: int,
        kept: Sequence[Task] = (),
    ) -> str: ...


class GenerationError(Exception):
    """The generator produced no draft this round. `infrastructure` marks an endpoint that
    kept failing (no round is spent: the slot stops and a rerun tries it again); otherwise
    the round is spent and the message goes back to the generator (e.g. a cut-off answer)."""

    def __init__(self, message: str, *, infrastructure: bool = False, text: str = "") -> None:
        super().__init__(message)
        self.infrastructure = infrastructure
        self.text = text


class ProceduralGenerator:
    """Drafts from the parameterized families, in the request's family and world when it names
    them. A correction round draws a new seed of the same family (a family's draft does not
    change with feedback)."""

    name = "procedural"
    model: str | None = None
    places: bool = True
    """It builds the family and world a request names, so plans give each slot both."""

    def families_for(self, capability_id: str) -> list[str]:
        names = sorted(n for n, f in FAMILIES.items() if f.capability == capability_id)
        if not names:
            raise GenerationError(f"no procedural family for capability {capability_id!r}")
        return names

    async def draft(
        self,
        request: DraftRequest,
        previous: str | None,
        report: str | None,
        round: int,
        kept: Sequence[Task] = (),
    ) -> str:
        if request.family is not None:
            if request.family not in FAMILIES:
                raise GenerationError(f"no procedural family {request.family!r}")
            name = request.family
        else:
            names = self.families_for(request.capability)
            name = names[request.variant % len(names)]
        seed = request.seed * 1000 + request.variant + 100_000 * round
        place = None
        if request.world is not None and request.world != DEMO:
            try:
                place = world_from_spec(request.world)
            except ValueError as exc:
                raise GenerationError(f"the slot's world {request.world!r}: {exc}") from exc
        if place is not None and not FAMILIES[name].worlds:
            raise GenerationError(f"family {name!r} runs only on the demo company, not on {request.world}")
        try:
            task = build_task(name, seed, Difficulty.level(request.difficulty), world=place)
        except SeedDoesNotFit as exc:  # the next round draws another seed
            raise GenerationError(f"family {name!r} on seed {seed}: {exc}; drawing again") from exc
        return task.model_dump_json()


class LLMGenerator:
    """Drafts from a model through the Chat Completions API: a complete, compact prompt for
    the slot's services and scene (see `synth.prompt`), the task schema once as structured
    output, examples of the capability (kept tasks, else a procedural one), and in later
    rounds the validation report in the same conversation."""

    name = "llm"
    places = False
    """It writes its own scene (`synth.prompt.scene_for`): plans name no family or world."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        temperature: float = 0.7,
        examples: Sequence[Task] = (),
        structured_output: bool = True,
        max_tokens: int = 12_000,
    ) -> None:
        self.endpoint = endpoint
        self.model: str | None = endpoint.model
        self.client = endpoint.client()
        self.temperature = temperature
        self.examples = list(examples)
        self.structured_output = structured_output
        self.max_tokens = max_tokens
        self.retries = 0
        """Endpoint failures retried so far (they spend no round)."""
        self._conversations: dict[int, list[dict[str, Any]]] = {}

    def response_format(self) -> dict[str, Any] | None:
        if not self.structured_output:
            return None
        return {
            "type": "json_schema",
            "json_schema": {"name": "task", "schema": generation_schema(), "strict": False},
        }

    def first_messages(self, request: DraftRequest, kept: Sequence[Task] = ()) -> list[dict[str, Any]]:
        """The system prompt and request of a slot's first round, with up to two examples of
        the capability, the preferred ones that fit the token budget; when none fits beside
        the summaries of kept tasks, fewer summaries are shown."""
        cap = capability(request.capability)
        services = request.services or cap.services
        scene = scene_for(request.slot, request.seed)
        same = [t for t in kept if cap.id in t.capabilities]
        candidates = self.examples_for(request, kept)
        base = system_prompt(services, scene, with_schema=not self.structured_output)
        for shown in (5, 2, 0):
            user = request_text(
                cap.id,
                slot=request.slot,
                difficulty=request.difficulty,
                scene=scene,
                services=services,
                kept=same[-shown:] if shown else [],
            )
            left = TOKEN_BUDGET - request_tokens(
                [{"role": "system", "content": base}, {"role": "user", "content": user}],
                self.response_format(),
            )
            examples: list[Task] = []
            for example in candidates:
                cost = estimate_tokens(EXAMPLE_HEADING + compact_task(example)) + 1
                if len(examples) < 2 and cost <= left:
                    examples.append(example)
                    left -= cost
            if examples or not same:
                break
        system = system_prompt(services, scene, examples=examples, with_schema=not self.structured_output)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def examples_for(self, request: DraftRequest, kept: Sequence[Task]) -> list[Task]:
        """Examples of the capability in order of preference: given ones, then kept ones, then
        procedural ones (all of them passed validation), the smallest of each group first."""

        def smallest(tasks: Sequence[Task]) -> list[Task]:
            same = [t for t in tasks if request.capability in t.capabilities]
            return sorted(same, key=lambda t: len(compact_task(t)))

        names = sorted(n for n, f in FAMILIES.items() if f.capability == request.capability)
        procedural = [build_task(n, request.slot, Difficulty.level(0)) for n in names]
        return smallest(self.examples) + smallest(kept)[:4] + smallest(procedural)

    async def draft(
        self,
        request: DraftRequest,
        previous: str | None,
        report: str | None,
        round: int,
        kept: Sequence[Task] = (),
    ) -> str:
        messages = self._conversations.get(request.slot)
        if messages is None or previous is None:
            messages = self.first_messages(request, kept)
        else:
            messages = [
                *messages,
                {"role": "assistant", "content": _shortened(previous)},
                {"role": "user", "content": correction_text(report or "")},
            ]
        self._conversations[request.slot] = messages
        kwargs: dict[str, Any] = {
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        response_format = self.response_format()
        if response_format is not None:
            kwargs["response_format"] = response_format

        def count(exc: Exception, wait: float) -> None:
            self.retries += 1

        try:
            response = await self.endpoint.chat(self.client, on_retry=count, **kwargs)
        except EndpointFailed as exc:
            raise GenerationError(str(exc), infrastructure=True) from exc
        choice = response.choices[0]
        text = choice.message.content or ""
        if choice.finish_reason == "length":
            raise GenerationError(
                f"the answer was cut off at max_tokens={self.max_tokens} (finish_reason length) before the "
                "task JSON ended: write a shorter task (fewer seed items, shorter texts, no optional fields "
                "left at their defaults)",
                text=text,
            )
        return extract_json(text)


def correction_text(report: str) -> str:
    """The user message of a correction round."""
    return (
        "Validation of your task failed. Every problem found:\n"
        + report
        + "\nFix all of them and answer with the whole corrected task JSON only."
    )


def _shortened(text: str, limit: int = 4000) -> str:
    """A previous answer as it goes back into the conversation: a cut-off one is not repeated whole."""
    return text if len(text) <= limit else text[:limit] + " ...[cut]"


_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def extract_json(text: str) -> str:
    """The task JSON in a model's answer: the first fenced block that holds a JSON object
    (wherever it is), else the first balanced `{...}` in the text; a trailing comma before a
    closing bracket is removed when that alone makes it parse. Returns the text unchanged
    when nothing parses, so the schema stage reports it."""
    candidates = [m.group(1).strip() for m in _FENCE.finditer(text)] + [text.strip()]
    for candidate in candidates:
        found = _first_object(candidate)
        if found is not None:
            return found
    return text.strip()


def _first_object(text: str) -> str | None:
    decoder = json.JSONDecoder()
    for start in [i for i, c in enumerate(text) if c == "{"][:50]:
        for attempt in (text[start:], _TRAILING_COMMA.sub(r"\1", text[start:])):
            try:
                value, end = decoder.raw_decode(attempt)
            except ValueError:
                continue
            if isinstance(value, dict):
                return attempt[:end]
    return None
