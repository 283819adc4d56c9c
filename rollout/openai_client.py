"""The one OpenAI client set-up, for the agent, the user simulator and the LLM generator.

Any OpenAI-compatible Chat Completions endpoint works: OpenAI itself (no `base_url`) or a
self-hosted server (vLLM, SGLang, Ollama, llama.cpp) at `base_url`. The key comes from the
`api_key` argument, else from the environment variable `api_key_env` (`OPENAI_API_KEY` by
default). A self-hosted endpoint often needs no key, so with a `base_url` and no key a
placeholder is sent; OpenAI itself without a key is refused here, before any request.

`check_endpoint` makes one cheap request (the model list) so a command can fail fast, with
the reason, before it starts a batch that would only record errors.
"""

from __future__ import annotations

import os

import openai
from openai import AsyncOpenAI

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: Sent to a self-hosted endpoint when no key is set (vLLM and Ollama accept any key).
PLACEHOLDER_KEY = "EMPTY"
#: Seconds one request may take (a long completion included).
DEFAULT_TIMEOUT = 120.0
#: Seconds the start-up check may take.
CHECK_TIMEOUT = 10.0


class EndpointUnavailable(Exception):
    """The model endpoint cannot be used: no key, not reachable, or it refused us."""


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
    "EndpointUnavailable",
    "check_endpoint",
    "make_client",
    "resolve_api_key",
]
