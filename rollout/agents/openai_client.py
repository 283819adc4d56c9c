"""Model endpoints: the one `Endpoint` type every role uses (the agent, the user simulator,
the task generator, the judge, the paraphraser, the world designer), its client, and the one
retrying request (`chat`).

Any OpenAI-compatible Chat Completions endpoint works: OpenAI itself (no `base_url`) or a
self-hosted server (vLLM, SGLang, Ollama, llama.cpp, `transformers serve`) at `base_url`. The
key comes from `api_key`, else from the environment variable `api_key_env` (`OPENAI_API_KEY`
by default). A self-hosted endpoint often needs no key, so with a `base_url` and no key a
placeholder is sent; OpenAI itself without a key is refused here, before any request.

`chat` sends one Chat Completions request and retries what a retry can fix:
- connection errors, timeouts and HTTP 502, 503 and 504 (an endpoint that is down or
  overloaded): up to `attempts` requests, with exponential backoff;
- HTTP 500 (the server failed on this request): on a deterministic request (temperature 0)
  the same request fails the same way, so it is retried once, not more; a sampled request
  may come out differently, so it is retried up to `attempts`;
- HTTP 429 (rate limited): retried without using up `attempts`, each time after what
  `Retry-After` asks (else the backoff), until `retry_budget` seconds of waiting are spent;
- any other 4xx: not retried (the same request is refused again).
The failure it raises (`EndpointFailed`) keeps the last HTTP status, so a caller can tell a
model's answer the server could not parse (a 500 that repeats) from an endpoint that is down.

`check_endpoint` makes one cheap request (the model list) so a command can fail fast, with
the reason, before it starts a batch that would only record errors.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Any

import anyio
import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
#: Sent to a self-hosted endpoint when no key is set (vLLM and Ollama accept any key).
PLACEHOLDER_KEY = "EMPTY"
#: Seconds one request may take (a long completion included).
DEFAULT_TIMEOUT = 120.0
#: Requests one call may make for failures of the endpoint (rate limits aside).
DEFAULT_ATTEMPTS = 4
#: Seconds of waiting on rate limits (HTTP 429) one call may spend before it gives up.
DEFAULT_RETRY_BUDGET = 300.0
#: Seconds the start-up check may take.
CHECK_TIMEOUT = 10.0
#: The longest wait between two attempts after a failure, whatever `Retry-After` asks
#: (rate limits wait what they ask, within the budget).
MAX_BACKOFF = 30.0
#: The shortest wait counted against the rate-limit budget, so `Retry-After: 0` cannot loop forever.
MIN_RATE_LIMIT_WAIT = 0.05

#: Failures a later attempt may not meet: the connection, a timeout, 429, any 5xx.
RETRYABLE: tuple[type[Exception], ...] = (
    openai.APIConnectionError,
    openai.RateLimitError,
    openai.InternalServerError,
)


class Endpoint(BaseModel):
    """Where one role's model is served, and how patiently to ask it.

    On the command line: `--endpoint ROLE=MODEL[@URL][,key=value...]` (see `parse_endpoint`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(min_length=1, description="The model name the endpoint serves")
    base_url: str | None = Field(
        default=None,
        description="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (None: OpenAI)",
    )
    api_key_env: str = Field(default=DEFAULT_API_KEY_ENV, description="Environment variable with the key")
    api_key: str | None = Field(default=None, repr=False, exclude=True, description="The key itself")
    timeout: float = Field(default=DEFAULT_TIMEOUT, gt=0, description="Seconds one request may take")
    attempts: int = Field(
        default=DEFAULT_ATTEMPTS, ge=1, description="Requests per call for endpoint failures"
    )
    backoff: float = Field(default=1.0, ge=0, description="Seconds before the first retry; doubled each time")
    retry_budget: float = Field(
        default=DEFAULT_RETRY_BUDGET, ge=0, description="Seconds of waiting on rate limits per call"
    )

    def client(self) -> AsyncOpenAI:
        """An async client for the endpoint (its own retries off: `chat` retries); raises
        `EndpointUnavailable` when there is no key."""
        return make_client(self.base_url, self.api_key, api_key_env=self.api_key_env, timeout=self.timeout)

    async def chat(
        self,
        client: AsyncOpenAI,
        *,
        on_retry: Callable[[Exception, float], None] | None = None,
        **request: Any,
    ) -> ChatCompletion:
        """`chat` with this endpoint's model, attempts, backoff and rate-limit budget."""
        return await chat(
            client,
            attempts=self.attempts,
            backoff=self.backoff,
            retry_budget=self.retry_budget,
            on_retry=on_retry,
            **{"model": self.model, **request},
        )

    async def check(self) -> None:
        """One request (the model list); `EndpointUnavailable` with the reason."""
        await check_endpoint(self.base_url, self.api_key, api_key_env=self.api_key_env)

    def describe(self) -> str:
        """The endpoint as the command line writes it: `MODEL@URL`, or `MODEL` for OpenAI."""
        return f"{self.model}@{self.base_url}" if self.base_url else self.model


class EndpointSpecError(ValueError):
    """An `--endpoint` value that cannot be read; the message says what to write instead."""


#: The settings an `--endpoint` value may add after the model, and their fields.
SPEC_SETTINGS = {
    "key_env": "api_key_env",
    "timeout": "timeout",
    "attempts": "attempts",
    "backoff": "backoff",
    "retry_budget": "retry_budget",
}
ENDPOINT_FORMAT = "ROLE=MODEL[@URL][,key_env=VAR][,timeout=S][,attempts=N][,backoff=S][,retry_budget=S]"
_URL_START = re.compile(r"@(?=https?://)")


def parse_endpoint(spec: str, roles: tuple[str, ...] | None = None) -> tuple[str, Endpoint]:
    """`ROLE=MODEL[@URL][,key=value...]` as (role, Endpoint), e.g.
    `agent=Qwen/Qwen3-8B@http://127.0.0.1:8000/v1,timeout=60`. The URL starts at the `@` that
    is followed by `http://` or `https://` (so a model name may hold `@`); settings follow the
    first comma after it. Raises `EndpointSpecError` naming what is wrong."""
    role, sep, rest = spec.partition("=")
    role = role.strip()
    if not sep or not role:
        raise EndpointSpecError(f"{spec!r} names no role: write {ENDPOINT_FORMAT}")
    if roles is not None and role not in roles:
        raise EndpointSpecError(
            f"unknown role {role!r} in {spec!r}; this command's roles: {', '.join(roles)}"
        )
    found = _URL_START.search(rest)
    head, url = (rest[: found.start()], rest[found.end() :]) if found else (rest, "")
    if url:
        url, _, settings_text = url.partition(",")
    else:
        head, _, settings_text = head.partition(",")
    model = head.strip()
    if not model:
        raise EndpointSpecError(f"{spec!r} names no model: write {ENDPOINT_FORMAT}")
    if not found and "@" in rest.partition(",")[0]:
        at = rest.index("@")
        raise EndpointSpecError(
            f"{spec!r}: the URL after '@' must start with http:// or https://, not {rest[at + 1 :]!r}"
        )
    fields: dict[str, Any] = {"model": model, "base_url": url.strip() or None}
    for item in filter(None, (s.strip() for s in settings_text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in SPEC_SETTINGS:
            raise EndpointSpecError(
                f"{spec!r}: unknown setting {item!r}; settings are {', '.join(f'{k}=...' for k in SPEC_SETTINGS)}"
            )
        fields[SPEC_SETTINGS[key.strip()]] = value.strip()
    try:
        return role, Endpoint.model_validate(fields)
    except ValidationError as exc:
        detail = "; ".join(f"{_setting_name(str(e['loc'][0]))}: {e['msg']}" for e in exc.errors() if e["loc"])
        raise EndpointSpecError(f"{spec!r}: {detail or exc}") from None


def _setting_name(field: str) -> str:
    return next((k for k, v in SPEC_SETTINGS.items() if v == field), field)


class EndpointUnavailable(Exception):
    """The model endpoint cannot be used: no key, not reachable, or it refused us."""


class EndpointFailed(Exception):
    """The endpoint kept failing (or refused the request): an infrastructure failure, not the
    model's answer. `retryable` says whether the failures were of the kind retries may fix;
    `status` is the last HTTP status (None: no answer, e.g. a connection error)."""

    def __init__(self, message: str, *, attempts: int, retryable: bool, status: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.retryable = retryable
        self.status = status


def deterministic(request: dict[str, Any]) -> bool:
    """Whether the same request gets the same answer: sampling at temperature 0."""
    return request.get("temperature") == 0


async def chat(
    client: AsyncOpenAI,
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    backoff: float = 1.0,
    retry_budget: float = DEFAULT_RETRY_BUDGET,
    on_retry: Callable[[Exception, float], None] | None = None,
    **request: Any,
) -> ChatCompletion:
    """One Chat Completions request with the retry rules of the module docstring: endpoint
    failures up to `attempts` requests (an HTTP 500 on a deterministic request: two), waiting
    `backoff`, then twice as long each time (at most MAX_BACKOFF); rate limits after what
    `Retry-After` asks, within `retry_budget` seconds of waiting. `on_retry(error, wait)` is
    told of each retry. Raises `EndpointFailed` when it gives up or the endpoint refused."""
    delay = backoff
    failures = 0
    waited = 0.0
    limit_500 = min(attempts, 2) if deterministic(request) else attempts
    while True:
        try:
            return await client.chat.completions.create(**request)
        except openai.RateLimitError as exc:
            asked = _retry_after(exc)
            wait = max(MIN_RATE_LIMIT_WAIT, asked if asked is not None else min(MAX_BACKOFF, delay))
            if waited + wait > retry_budget:
                raise EndpointFailed(
                    f"the model endpoint kept rate-limiting for {waited:.1f} s of waiting (budget "
                    f"{retry_budget:g} s); last: {_describe(exc)}",
                    attempts=failures + 1,
                    retryable=True,
                    status=429,
                ) from exc
            waited += wait
            if asked is None:
                delay *= 2
            error: Exception = exc
        except RETRYABLE as exc:
            failures += 1
            status = getattr(exc, "status_code", None)
            limit = limit_500 if status == 500 else attempts
            if failures >= limit:
                identical = " (the same deterministic request, retried once)" if limit < attempts else ""
                raise EndpointFailed(
                    f"the model endpoint failed {failures} times{identical}; last: {_describe(exc)}",
                    attempts=failures,
                    retryable=True,
                    status=status,
                ) from exc
            wait = min(MAX_BACKOFF, delay)
            delay *= 2
            error = exc
        except openai.APIStatusError as exc:  # 4xx other than 429: the same request fails again
            raise EndpointFailed(
                f"the model endpoint refused the request: {_describe(exc)}",
                attempts=failures + 1,
                retryable=False,
                status=exc.status_code,
            ) from exc
        if on_retry is not None:
            on_retry(error, wait)
        await anyio.sleep(wait)


def _describe(exc: Exception) -> str:
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        return f"HTTP {exc.status_code}: {message or exc.message}"
    return f"{type(exc).__name__}: {exc}"


def _retry_after(exc: Exception) -> float | None:
    """Seconds the answer's `Retry-After` asks for (a number or an HTTP date); None without one."""
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


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
        f"no API key: set {api_key_env} (or name another variable with key_env=VAR in --endpoint), "
        "or give the URL of a self-hosted endpoint (--endpoint ROLE=MODEL@URL)"
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
    "ENDPOINT_FORMAT",
    "PLACEHOLDER_KEY",
    "RETRYABLE",
    "Endpoint",
    "EndpointFailed",
    "EndpointSpecError",
    "EndpointUnavailable",
    "chat",
    "check_endpoint",
    "deterministic",
    "make_client",
    "parse_endpoint",
    "resolve_api_key",
]
