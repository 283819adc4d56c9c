"""An agent for any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, SGLang,
Ollama, llama.cpp), acting through the episode's MCP tools.

What real models do, and what happens:
- malformed tool-call arguments (not JSON, not an object) and unknown tools get a tool
  message explaining the mistake, which the model sees; both are counted in `stats`;
- endpoint errors (connection, timeout, 429, 5xx) are retried with exponential backoff;
  after `max_retries` the turn raises `EndpointError`, the episode is marked `error`
  (not a task failure) and a resumed run tries it again;
- a turn ends when the model answers without tool calls, or after `max_steps_per_turn`
  model calls (the episode is then `truncated`); when that answer is a question, the runner
  gives the user's answer (an ambiguous turn's scripted answer, or that there is nothing to
  add) and the turn goes on with the model's next request;
- long contexts: when the transcript exceeds `max_context_chars`, the oldest tool results
  (outside the last `keep_recent` messages) are replaced by a short placeholder, oldest
  first, until it fits; system and user messages are never cut. The record keeps the full
  transcript; only what is sent to the model is shortened.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import openai

from coworkenv.rollout.agents.openai_client import DEFAULT_API_KEY_ENV, DEFAULT_TIMEOUT, make_client
from coworkenv.rollout.agents.policies import PolicyError
from coworkenv.rollout.agents.tool_schemas import openai_tool
from coworkenv.rollout.episodes.session import AgentSession, ToolLimitReached
from coworkenv.task import Task

RETRYABLE = (
    openai.APIConnectionError,
    openai.APITimeoutError,
    openai.RateLimitError,
    openai.InternalServerError,
)


class EndpointError(PolicyError):
    """The model endpoint kept failing; the episode is an infrastructure error."""


class OpenAIAgent:
    """A Chat Completions agent; one instance may run many episodes concurrently."""

    actor = "agent"
    #: It answers a simulated user within a turn (see `rollout.agents.user_simulator`).
    converses = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        timeout: float = DEFAULT_TIMEOUT,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        parallel_tool_calls: bool = True,
        max_steps_per_turn: int = 20,
        max_retries: int = 4,
        backoff_seconds: float = 1.0,
        max_context_chars: int = 200_000,
        keep_recent: int = 8,
        name: str | None = None,
    ) -> None:
        self.model = model
        self.name = name or f"openai:{model}"
        # retries are ours (max_retries=0), with our backoff and accounting
        self.client = make_client(base_url, api_key, api_key_env=api_key_env, timeout=timeout)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.parallel_tool_calls = parallel_tool_calls
        self.max_steps_per_turn = max_steps_per_turn
        self.max_retries = max_retries
        self.backoff_seconds = backoff_seconds
        self.max_context_chars = max_context_chars
        self.keep_recent = keep_recent

    async def run_turn(self, session: AgentSession, task: Task, turn_index: int) -> None:
        tools = [openai_tool(t) for t in session.tools]
        names = {t.name for t in session.tools}
        for _ in range(self.max_steps_per_turn):
            message = await self._complete(session, tools)
            calls = message.tool_calls or []
            session.record_assistant(
                message.content,
                [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.function.name, "arguments": c.function.arguments},
                    }
                    for c in calls
                    if c.type == "function"
                ]
                or None,
            )
            if not calls:
                return
            for call in calls:
                if call.type != "function":
                    continue
                await self._run_call(session, call.id, call.function.name, call.function.arguments, names)
        session.truncated = True

    async def _run_call(
        self, session: AgentSession, call_id: str, name: str, raw_arguments: str, names: set[str]
    ) -> None:
        if name not in names:
            session.count("unknown_tool")
            session.record_tool_result(
                call_id,
                f"Error: there is no tool named {name!r}. Available tools: {', '.join(sorted(names))}.",
            )
            return
        try:
            arguments = json.loads(raw_arguments or "{}")
            if not isinstance(arguments, dict):
                raise ValueError("the arguments must be a JSON object")
        except ValueError as exc:
            session.count("malformed_arguments")
            session.record_tool_result(
                call_id,
                f"Error: the arguments of {name} are not a valid JSON object ({exc}). Send a JSON object.",
            )
            return
        try:
            outcome = await session.call_tool(name, arguments)
        except ToolLimitReached as exc:
            session.record_tool_result(call_id, f"Error: {exc}; no more tool calls this turn.")
            return
        if outcome.is_error:
            session.count("tool_errors")
        session.record_tool_result(call_id, outcome)

    async def _complete(self, session: AgentSession, tools: list[dict[str, Any]]) -> Any:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": fit_context(session.messages, self.max_context_chars, self.keep_recent),
            "tools": tools,
            "temperature": self.temperature,
        }
        if tools:
            kwargs["parallel_tool_calls"] = self.parallel_tool_calls
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        delay = self.backoff_seconds
        for attempt in range(self.max_retries + 1):
            try:
                response = await self.client.chat.completions.create(**kwargs)
                return response.choices[0].message
            except RETRYABLE as exc:
                session.count("endpoint_retries")
                if attempt == self.max_retries:
                    raise EndpointError(
                        f"the model endpoint failed {attempt + 1} times: {type(exc).__name__}: {exc}"
                    ) from exc
                await anyio.sleep(delay)
                delay *= 2
            except openai.APIStatusError as exc:  # 4xx other than 429: retrying will not help
                raise EndpointError(f"the model endpoint refused the request: {exc}") from exc
        raise AssertionError("unreachable")


PLACEHOLDER = "[older tool result removed to fit the context window; call the tool again if you need it]"


def fit_context(messages: list[dict[str, Any]], max_chars: int, keep_recent: int) -> list[dict[str, Any]]:
    """The messages to send: oldest tool results shortened until the total fits `max_chars`."""
    size = sum(len(json.dumps(m)) for m in messages)
    if size <= max_chars:
        return messages
    out = [dict(m) for m in messages]
    for i, message in enumerate(out[: max(0, len(out) - keep_recent)]):
        if size <= max_chars:
            break
        if message["role"] == "tool" and message.get("content") != PLACEHOLDER:
            size -= len(json.dumps(message))
            out[i] = {**message, "content": PLACEHOLDER}
            size += len(json.dumps(out[i]))
    return out
