"""Task generators: procedural (the offline default) and LLM (any OpenAI-compatible endpoint).

A generator turns a `DraftRequest` (capability, services, difficulty, seed) into draft
JSON text. In the correction loop it gets its previous draft and the validation report,
and returns a new draft."""

from __future__ import annotations

import json
from typing import Any, Protocol

from pydantic import BaseModel

from coworkenv.rollout.openai_client import DEFAULT_API_KEY_ENV, make_client
from coworkenv.servers import SERVICE_NAMES, get_service
from coworkenv.task import task_json_schema

from . import families  # noqa: F401  (registers every family)
from .capabilities import capability
from .family import FAMILIES, Difficulty, build_task


class DraftRequest(BaseModel):
    """What to generate in one slot."""

    slot: int
    capability: str
    variant: int = 0
    difficulty: int = 1
    seed: int = 0
    services: list[str] | None = None


class Generator(Protocol):
    name: str
    model: str | None

    async def draft(
        self, request: DraftRequest, previous: str | None, report: str | None, round: int
    ) -> str: ...


class GenerationError(Exception):
    """The generator could not produce any draft (e.g. the endpoint failed)."""


class ProceduralGenerator:
    """Drafts from the parameterized families. A correction round draws a new seed of the
    same family (a family's draft does not change with feedback)."""

    name = "procedural"
    model: str | None = None

    def families_for(self, capability_id: str) -> list[str]:
        names = sorted(n for n, f in FAMILIES.items() if f.capability == capability_id)
        if not names:
            raise GenerationError(f"no procedural family for capability {capability_id!r}")
        return names

    async def draft(self, request: DraftRequest, previous: str | None, report: str | None, round: int) -> str:
        names = self.families_for(request.capability)
        name = names[request.variant % len(names)]
        seed = request.seed * 1000 + request.variant + 100_000 * round
        return build_task(name, seed, Difficulty.level(request.difficulty)).model_dump_json()


class LLMGenerator:
    """Drafts from a model through the Chat Completions API, with the task JSON Schema as
    structured output, the tool catalogue, the world operations and an example in the prompt."""

    name = "llm"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        temperature: float = 0.7,
        example: str | None = None,
        structured_output: bool = True,
    ) -> None:
        self.model: str | None = model
        self.client = make_client(base_url, api_key, api_key_env=api_key_env, max_retries=3)
        self.temperature = temperature
        self.example = example
        self.structured_output = structured_output
        self._conversations: dict[int, list[dict[str, Any]]] = {}

    def system_prompt(self) -> str:
        parts = [
            "You write tasks for training AI coworkers: executable JSON tasks over a workspace with mail, tickets, "
            "calendar, files and a directory. Each task has a seed (initial state), turns (user messages, events "
            "between turns, checks, a reference solution made of tool calls) and final checks and safety rules. "
            "Checks read the database state and the audit log, never the agent's text. The reference solution must "
            "score 1.0; a do-nothing agent must fail; dropping any write step of the solution must make a check "
            "fail. Answer with the task JSON only.",
            "Tables and columns you may check are those of the services' tables (e.g. mail_messages, "
            "mail_recipients, tickets_tickets, tickets_comments, calendar_events, calendar_attendees, files_nodes, "
            'directory_people). Use the demo seed {"procedural": {"name": "demo", "params": {"seed": 0}}} '
            "with user_email kimberly.smith@northwind.example and clock_start 2026-03-02T09:00:00Z, and plant the "
            "items your task is about with seed operations.",
            "## Tools (solution steps use these names)\n" + tool_catalogue(),
            "## World operations (seed operations and events)\n" + world_catalogue(),
            "## Task JSON Schema\n" + json.dumps(task_json_schema(), separators=(",", ":")),
        ]
        if self.example:
            parts.append("## An example task\n" + self.example)
        return "\n\n".join(parts)

    def request_text(self, request: DraftRequest) -> str:
        cap = capability(request.capability)
        services = request.services or cap.services
        level = ["easy", "medium", "hard"][max(0, min(2, request.difficulty))]
        return (
            f"Write one {level} task for the capability '{cap.id}' ({cap.name}): {cap.description} "
            f"It must require: {cap.requires} Turns: {cap.turns}. Use the services {', '.join(services)}. "
            f"Use the id '{cap.id}-{request.slot}' and the capability tag '{cap.id}'."
        )

    async def draft(self, request: DraftRequest, previous: str | None, report: str | None, round: int) -> str:
        messages = self._conversations.get(request.slot)
        if messages is None or previous is None:
            messages = [
                {"role": "system", "content": self.system_prompt()},
                {"role": "user", "content": self.request_text(request)},
            ]
        else:
            messages = [
                *messages,
                {"role": "assistant", "content": previous},
                {
                    "role": "user",
                    "content": "Validation of your task failed:\n"
                    + (report or "")
                    + "\nFix exactly these problems and answer with the corrected task JSON only.",
                },
            ]
        self._conversations[request.slot] = messages
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.structured_output:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "task", "schema": task_json_schema(), "strict": False},
            }
        try:
            response = await self.client.chat.completions.create(**kwargs)
        except Exception as exc:  # the endpoint's failure is the generator's, reported as data
            raise GenerationError(f"the model endpoint failed: {type(exc).__name__}: {exc}") from exc
        return _strip_fences(response.choices[0].message.content or "")


def _strip_fences(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text.strip()


def tool_catalogue() -> str:
    """One line per tool: combined name, parameters, first line of the description."""
    lines = []
    for service in SERVICE_NAMES:
        for tool in get_service(service).tools.mcp_tools(f"{service}_"):
            params = ", ".join(tool.parameters.get("properties", {}))
            lines.append(f"- {tool.name}({params}): {tool.description.strip().splitlines()[0]}")
    return "\n".join(lines)


def world_catalogue() -> str:
    """One line per world operation: service.operation(fields): what it does."""
    lines = []
    for service in SERVICE_NAMES:
        for name, op in get_service(service).world.ops.items():
            fields = ", ".join(op.params.model_fields)
            lines.append(
                f"- {service}.{name}({fields}): {op.description.splitlines()[0] if op.description else ''}"
            )
    return "\n".join(lines)
