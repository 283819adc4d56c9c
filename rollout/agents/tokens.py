"""Tokens an episode costs a model: its system prompt, the tools block, the user's messages,
the tool results and the agent's own messages.

Counted with the model's own tokenizer when one is named (`tokenizer_counter`: a Hugging Face
model name or folder, through the optional `transformers`), else with tiktoken's `o200k_base`
encoding when tiktoken is installed and its encoding is at hand (it downloads encodings once;
offline without a cached copy it is not), else estimated at four characters a token. `method`
in every summary says which.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import lru_cache
from statistics import median
from typing import Any

from pydantic import BaseModel, Field

from coworkenv.rollout.agents.tool_schemas import tools_for_services
from coworkenv.rollout.episodes.record import EpisodeRecord

CHARS_PER_TOKEN = 4
CONTEXT = 32_768
"""The context size episodes are held against (`TokenStats.over_context`)."""
ESTIMATE = "estimate (4 characters a token)"
PARTS = ("system", "tools", "user", "assistant", "tool_results")


def estimate_tokens(text: str) -> int:
    """Tokens of `text` at four characters a token, rounded up."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


TokenCounter = tuple[Callable[[str], int], str]
"""A function that counts the tokens of a text, and the name of the method."""


class TokenizerError(ValueError):
    """A named tokenizer that cannot be loaded; the message says why."""


def tokenizer_counter(name: str) -> TokenCounter:
    """Counts with the tokenizer of the model `name` (a Hugging Face model name or a folder
    that holds its tokenizer files), through `transformers`. Without `transformers` the
    default counter is used and its method says that the tokenizer was not; a tokenizer that
    cannot be loaded raises `TokenizerError`."""
    try:
        from transformers import AutoTokenizer
    except ImportError:
        count, method = token_counter()
        return count, f"{method}; tokenizer {name} not used: transformers is not installed"
    try:
        tokenizer = AutoTokenizer.from_pretrained(name)
    except Exception as exc:  # a missing folder, a name not on the hub, no network
        raise TokenizerError(f"the tokenizer {name!r} cannot be loaded: {exc}") from exc
    return (lambda text: len(tokenizer.encode(text, add_special_tokens=False))), f"tokenizer {name}"


@lru_cache(maxsize=1)
def token_counter() -> TokenCounter:
    """The best counter at hand and its name: tiktoken's o200k_base, else the estimate."""
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("o200k_base")
    except Exception:  # not installed, or its encoding cannot be fetched (offline)
        return estimate_tokens, ESTIMATE
    return (lambda text: len(encoding.encode(text, disallowed_special=()))), "tiktoken o200k_base"


@lru_cache(maxsize=64)
def _tools_tokens(services: tuple[str, ...], count: Callable[[str], int]) -> int:
    """Tokens of the tools block of these services (the same for every episode over them)."""
    return count(json.dumps(tools_for_services(services), separators=(",", ":")))


def episode_tokens(record: EpisodeRecord, count: Callable[[str], int] | None = None) -> dict[str, int]:
    """Tokens of each part of one episode, and `total`: all of it, what the context holds when
    the episode ends."""
    count = count or token_counter()[0]
    parts = dict.fromkeys(PARTS, 0)
    parts["tools"] = _tools_tokens(tuple(sorted(set(record.services))), count)
    for message in record.messages:
        role = message.get("role")
        part = {"system": "system", "user": "user", "assistant": "assistant", "tool": "tool_results"}.get(
            str(role), "user"
        )
        parts[part] += count(_text(message))
    parts["total"] = sum(parts.values())
    return parts


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    text = content if isinstance(content, str) else json.dumps(content)
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        arguments = function.get("arguments", "")
        text += function.get("name", "") + (
            arguments if isinstance(arguments, str) else json.dumps(arguments)
        )
    return text


class TokenStats(BaseModel):
    """Tokens per episode over a set of episodes: the median and the largest of each part."""

    method: str = Field(description="How tokens were counted")
    median: dict[str, float] = Field(description="Median tokens of each part and of the total")
    max: dict[str, int] = Field(description="Largest count of each part and of the total")
    over_context: int = Field(description=f"Episodes whose total exceeds {CONTEXT} tokens")


def token_stats(records: Iterable[EpisodeRecord], counter: TokenCounter | None = None) -> TokenStats | None:
    """Token figures of `records` (None when there are none), counted by `counter` (default:
    `token_counter()`)."""
    count, method = counter or token_counter()
    rows = [episode_tokens(r, count) for r in records]
    if not rows:
        return None
    keys = [*PARTS, "total"]
    return TokenStats(
        method=method,
        median={k: float(median(r[k] for r in rows)) for k in keys},
        max={k: max(r[k] for r in rows) for k in keys},
        over_context=sum(r["total"] > CONTEXT for r in rows),
    )
