"""An agent for any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, SGLang,
Ollama, llama.cpp), acting through the episode's MCP tools.

What real models do, and what happens:
- malformed tool-call arguments (not JSON, not an object) and unknown tools get a tool
  message explaining the mistake, which the model sees; both are counted in `stats`;
- endpoint errors are retried by the rules of `openai_client.chat` (the endpoint's
  `attempts`; an HTTP 500 on a deterministic request once; rate limits within the endpoint's
  `retry_budget`); when they run out the turn raises `EndpointError`, the episode is marked
  `error` (not a task failure) and a resumed run tries it again;
- a tool call the server itself cannot parse (an HTTP 500 that repeats on a request with
  tools, e.g. `transformers serve` when the model's tool-call JSON is broken) is the model's
  malformed call, not an endpoint failure: it is counted as `malformed_tool_calls`, the next
  request tells the model its answer could not be read, and the episode goes on;
- a turn ends when the model answers without tool calls, or after `max_steps_per_turn`
  model calls (the episode is then `truncated`); when that answer is a question, the runner
  gives the user's answer (an ambiguous turn's scripted answer, or that there is nothing to
  add) and the turn goes on with the model's next request;
- long contexts: when the transcript exceeds `max_context_chars`, the oldest tool results
  (outside the last `keep_recent` messages) are replaced by a short placeholder, oldest
  first, until it fits; system and user messages are never cut. The record keeps the full
  transcript; only what is sent to the model is shortened;
- long tool results: with `max_result_chars`, each result the model reads is cut to that
  many characters with a note saying how to page (`bound_result`); the record keeps what
  the model read;
- small models: `tool_format="compact"` sends each tool as one line of the system prompt,
  `name(arg?: type|enum): first sentence`, and slim schemas (`tool_schemas.compact_tools`).
"""

from __future__ import annotations

import json
from typing import Any

from coworkenv.rollout.agents.openai_client import Endpoint, EndpointFailed
from coworkenv.rollout.agents.policies import PolicyError
from coworkenv.rollout.agents.tool_schemas import ToolFormat, bound_result, compact_tools, openai_tool
from coworkenv.rollout.episodes.session import AgentSession, ToolLimitReached
from coworkenv.task import Task

#: What the model reads after an answer the server could not parse as a tool call.
UNREADABLE = (
    "Your last answer could not be read: the server failed on it ({detail}). If you meant to call "
    "a tool, call it again with a valid JSON object of arguments."
)
#: Status of the server's answer to a tool call it could not parse (it repeats on a retry).
MALFORMED_STATUS = 500


class EndpointError(PolicyError):
    """The model endpoint kept failing; the episode is an infrastructure error."""


class OpenAIAgent:
    """A Chat Completions agent; one instance may run many episodes concurrently."""

    actor = "agent"
    #: It answers a simulated user within a turn (see `rollout.agents.user_simulator`).
    converses = True

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        parallel_tool_calls: bool = True,
        max_steps_per_turn: int = 20,
        max_context_chars: int = 200_000,
        keep_recent: int = 8,
        max_result_chars: int | None = None,
        tool_format: ToolFormat = "full",
        name: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.model = endpoint.model
        self.name = name or f"openai:{endpoint.model}"
        self.client = endpoint.client()
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.parallel_tool_calls = parallel_tool_calls
        self.max_steps_per_turn = max_steps_per_turn
        self.max_context_chars = max_context_chars
        self.keep_recent = keep_recent
        self.max_result_chars = max_result_chars
        self.tool_format = tool_format

    async def run_turn(self, session: AgentSession, task: Task, turn_index: int) -> None:
        tools = [openai_tool(t) for t in session.tools]
        preamble = ""
        if self.tool_format == "compact":
            preamble, tools = compact_tools(tools)
        names = {t.name for t in session.tools}
        note: str | None = None
        for _ in range(self.max_steps_per_turn):
            try:
                message = await self._complete(session, tools, preamble, note)
            except EndpointFailed as exc:
                if exc.status != MALFORMED_STATUS or not tools:
                    raise EndpointError(str(exc)) from exc
                session.count("malformed_tool_calls")
                note = UNREADABLE.format(detail=str(exc).rpartition("last: ")[2])
                continue
            note = None
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
        text = (
            outcome.text
            if self.max_result_chars is None
            else bound_result(outcome.text, self.max_result_chars)
        )
        if text != outcome.text:
            session.count("results_cut")
        session.record_tool_result(call_id, text)

    async def _complete(
        self, session: AgentSession, tools: list[dict[str, Any]], preamble: str, note: str | None
    ) -> Any:
        """The model's next message; `EndpointFailed` when the endpoint gives up."""
        messages = fit_context(session.messages, self.max_context_chars, self.keep_recent)
        if preamble and messages and messages[0]["role"] == "system":
            messages = [{**messages[0], "content": f"{messages[0]['content']}\n\n{preamble}"}, *messages[1:]]
        if note is not None:
            messages = [*messages, {"role": "user", "content": note}]
        kwargs: dict[str, Any] = {"messages": messages, "tools": tools, "temperature": self.temperature}
        if tools:
            kwargs["parallel_tool_calls"] = self.parallel_tool_calls
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        response = await self.endpoint.chat(
            self.client, on_retry=lambda exc, wait: session.count("endpoint_retries"), **kwargs
        )
        return response.choices[0].message


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
