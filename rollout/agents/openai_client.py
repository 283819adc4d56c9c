"""The one OpenAI client set-up, for the agent, the user simulator and the LLM generator.

Any OpenAI-compatible Chat Completions endpoint works: OpenAI itself (no `base_url`) or a
self-hosted server (vLLM, SGLang, Ollama, llama.cpp) at `base_url`. The key comes from the
`api_key` argument, else from the environment variable `api_key_env` (`OPENAI_API_KEY` by
default). A self-hosted endpoint often needs no key, so with a `base_url` and no key a
placeholder is sent; OpenAI itself without a key is refused here, before any request.

`chat` sends one Chat Completions request and retries what a retry can fix (connection
errors and timeouts, HTTP 429 and 5xx) with exponential backoff, honouring `Retry-After`;
every caller that wants retries uses it, on a client made with `max_retries=0`.

`check_endpoint` makes one cheap request (the model list) so a command can fail fast, with
the reason, before it starts a batch that would only record errors.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio
import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: Sent to a self-hosted endpoint when no key is set (vLLM and Ollama accept any key).
PLACEHOLDER_KEY = "EMPTY"
#: Seconds one request may take (a long completion included).
DEFAULT_TIMEOUT = 120.0
#: Seconds the start-up check may take.
CHECK_TIMEOUT = 10.0


#: Failures a later attempt may not meet: the connection, a timeout, 429, any 5xx.
RETRYABLE: tuple[type[Exception], ...] = (
    openai.APIConnectionError,
    openai.RateLimitError,
    openai.InternalServerError,
)
#: The longest wait between two attempts, whatever `Retry-After` asks.
MAX_BACKOFF = 30.0


class EndpointUnavailable(Exception):
    """The model endpoint cannot be used: no key, not reachable, or it refused us."""


class EndpointFailed(Exception):
    """The endpoint kept failing (or refused the request): an infrastructure failure, not the
    model's answer. `retryable` says whether the failures were of the kind retries may fix."""

    def __init__(self, message: str, *, attempts: int, retryable: bool) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.retryable = retryable


async def chat(
    client: AsyncOpenAI,
    *,
    attempts: int = 4,
    backoff: float = 1.0,
    on_retry: Callable[[Exception, float], None] | None = None,
    **request: Any,
) -> ChatCompletion:
    """One Chat Completions request, tried up to `attempts` times: waits `backoff`, then twice
    as long each time (or what `Retry-After` says, at most MAX_BACKOFF) after a retryable
    failure. Raises `EndpointFailed` when every attempt failed or the endpoint refused."""
    delay = backoff
    for attempt in range(1, attempts + 1):
        try:
            return await client.chat.completions.create(**request)
        except RETRYABLE as exc:
            if attempt == attempts:
                raise EndpointFailed(
                    f"the model endpoint failed {attempts} times; last: {_describe(exc)}",
                    attempts=attempts,
                    retryable=True,
                ) from exc
            wait = min(MAX_BACKOFF, max(delay, _retry_after(exc)))
            if on_retry is not None:
                on_retry(exc, wait)
            await anyio.sleep(wait)
            delay *= 2
        except openai.APIStatusError as exc:  # 4xx other than 429: the same request fails again
            raise EndpointFailed(
                f"the model endpoint refused the request: {_describe(exc)}", attempts=attempt, retryable=False
            ) from exc
    raise AssertionError("unreachable")  # the loop returns or raises


def _describe(exc: Exception) -> str:
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        return f"HTTP {exc.status_code}: {message or exc.message}"
    return f"{type(exc).__name__}: {exc}"


def _retry_after(exc: Exception) -> float:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value else 0.0
    except ValueError:
        return 0.0


def resolve_api_key(
    base_url: str | None, api_key: str | None = None, api_key_env: str = DEFAULT_API_KEY_ENV
) -> str:
    """The key to send: `api_key`, else `$api_key_env`, else a placeholder for a `base_url`."""
    key = api_key or os.environ.get(api_key_env)
    if key:
        return key
    if base_url:
        return PLACEHOLDER_KEY
    raise EndpointUnavailable(
        f"no API key: set {api_key_env} (or name another variable with --api-key-env), "
        "or give --base-url for a self-hosted endpoint"
    )


def make_client(
    base_url: str | None = None,
    api_key: str | None = None,
    *,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    timeout: float = DEFAULT_TIMEOUT,
    max_retries: int = 0,
) -> AsyncOpenAI:
    """An async client for the endpoint; raises `EndpointUnavailable` when there is no key."""
    return AsyncOpenAI(
        base_url=base_url,
        api_key=resolve_api_key(base_url, api_key, api_key_env),
        timeout=timeout,
        max_retries=max_retries,
    )


async def check_endpoint(
    base_url: str | None = None,
    api_key: str | None = None,
    *,
    api_key_env: str = DEFAULT_API_KEY_ENV,
    timeout: float = CHECK_TIMEOUT,
) -> None:
    """One request (the model list) without retries, on a client of its own; raises
    `EndpointUnavailable` with the reason."""
    client = make_client(base_url, api_key, api_key_env=api_key_env, timeout=timeout)
    where = str(client.base_url).rstrip("/")
    try:
        async with client:
            await client.models.list()
    except openai.APIConnectionError as exc:  # includes timeouts
        raise EndpointUnavailable(f"the model endpoint {where} is not reachable: {exc}") from exc
    except openai.APIStatusError as exc:
        raise EndpointUnavailable(
            f"the model endpoint {where} refused the request (HTTP {exc.status_code}): {exc.message}"
        ) from exc


__all__ = [
    "DEFAULT_API_KEY_ENV",
    "PLACEHOLDER_KEY",
    "RETRYABLE",
    "EndpointFailed",
    "EndpointUnavailable",
    "chat",
    "check_endpoint",
    "make_client",
    "resolve_api_key",
]
