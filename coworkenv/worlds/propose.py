"""Worlds a model proposes: an organization as JSON in the `World` schema, validated and fixed.

`propose_world` asks an OpenAI-compatible endpoint for one world of an industry and size. The
answer is checked as any world file is (unique emails, managers who are colleagues, IANA time
zones, teams with people and a lead among them, queues owned by colleagues, the user a
colleague) and then rendered into every service's seed data, which catches what only
rendering sees (an unknown document kind, a topic placeholder no writer fills). Every problem
goes back to the model in the same conversation, up to `rounds` answers. The kept world's
`profile` is "proposed" and its `seed` the one asked for, so rendering it again gives the same
workspace, byte for byte: a proposed world is data like any other. `propose_worlds` keeps a
folder of them (what `coworkenv synth --propose-worlds` uses).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coworkenv.world import World, WorldFileError, load_world, parse_world, save_world

from .generate import MAX_SIZE, MIN_SIZE

if TYPE_CHECKING:
    from coworkenv.rollout.agents.openai_client import Endpoint

PROPOSED = "proposed"
"""The `profile` of every world a model proposed."""

#: Fields `propose_worlds` asks for (none of them is a built-in profile), in turn.
INDUSTRIES = (
    "veterinary clinic group",
    "film production company",
    "port authority",
    "wine importer",
    "fitness club chain",
    "translation agency",
    "satellite operator",
    "regional theatre",
    "seed bank and agricultural research station",
    "event venue operator",
)


class WorldProposalFailed(Exception):
    """The model gave no valid world in its rounds; `problems` holds the last round's."""

    def __init__(self, message: str, problems: Sequence[str]) -> None:
        super().__init__(message)
        self.problems = list(problems)


@dataclass
class Proposal:
    """A valid proposed world and how it was reached."""

    world: World
    rounds: int
    problems: list[list[str]] = field(default_factory=list)
    """The problems of each refused answer, in order."""


def system_prompt(example: World) -> str:
    from coworkenv.servers.files.documents import WRITERS

    return (
        "You design the organization a workplace simulation happens in: its teams, people, "
        "outside contacts, ticket queues, documents, meetings, vocabulary and house rules. "
        "Answer with ONE JSON object in the World schema, nothing else.\n"
        "Rules the answer is checked against:\n"
        "- every email is unique; colleagues use the organization's domain, outside contacts "
        "their organization's domain; every outside contact's `company` is one of `organizations`;\n"
        "- every colleague has a `team` among `teams`; each team's `lead` is one of its members; "
        "every `manager_email` is another colleague;\n"
        "- time zones are IANA names (Europe/Berlin, America/Chicago); working hours start before they end;\n"
        "- every queue's `owner` is a colleague and its `teams` are team names; a queue filed by "
        "customers needs outside contacts;\n"
        "- `user` is a colleague's email: the person the assistant works for;\n"
        f"- document `kind` is one of: {', '.join(sorted(WRITERS))}; paths are absolute and unique;\n"
        "- ticket topics may use only the placeholders {order}, {invoice}, {amount}, {city} and "
        "{date}; mail requests only {order} and {n}; newsletter subjects {n} and {catch};\n"
        "- `roles` maps finance, sales, tech, desk and leadership to team names.\n"
        "Write about the field itself: its requests, incidents, documents and vocabulary, not a "
        "generic office.\n\n"
        "An example of a valid world of another field:\n" + example.model_dump_json()
    )


def request_text(industry: str, size: int, *, avoid: Sequence[str] = ()) -> str:
    text = (
        f"Design a {industry} with {size} colleagues (people with `internal: true`), plus outside "
        "contacts at a few customers, vendors or partners."
    )
    if avoid:
        text += f" Do not reuse these organization names: {', '.join(avoid)}."
    return text


def check_world(data: str, *, seed: int, size: int) -> tuple[World | None, list[str]]:
    """The world in a model's answer and every problem found (none: it is kept)."""
    try:
        raw = json.loads(_json_text(data))
    except json.JSONDecodeError as exc:
        return None, [f"the answer is not one JSON object: {exc}"]
    if not isinstance(raw, dict):
        return None, ["the answer is not one JSON object"]
    raw["profile"] = PROPOSED
    raw["seed"] = seed
    try:
        world = parse_world(json.dumps(raw), source="world")
    except WorldFileError as exc:
        return None, [line.strip() for line in str(exc).splitlines()[1:]]
    problems: list[str] = []
    staff = len(world.staff)
    if not MIN_SIZE <= staff <= MAX_SIZE:
        problems.append(f"a world has {MIN_SIZE} to {MAX_SIZE} colleagues; this one has {staff}")
    elif abs(staff - size) > max(2, size // 4):
        problems.append(f"asked for {size} colleagues; this world has {staff}")
    if not problems:
        problems = _render_problems(world)
    return (world if not problems else None), problems


def _render_problems(world: World) -> list[str]:
    from coworkenv.servers.render import render_workspace

    try:
        render_workspace(world)
    except (KeyError, ValueError, IndexError, TypeError) as exc:
        detail = f"unknown placeholder {exc}" if isinstance(exc, KeyError) else str(exc)
        return [f"rendering the seed data failed: {detail}"]
    return []


async def propose_world(
    endpoint: Endpoint,
    *,
    industry: str,
    size: int = 12,
    seed: int = 0,
    rounds: int = 3,
    avoid: Sequence[str] = (),
    temperature: float = 0.7,
    max_tokens: int = 16_000,
    structured_output: bool = True,
) -> Proposal:
    """A valid world of `industry` with about `size` colleagues, proposed by the model at
    `endpoint`. Refused answers go back with their problems; after `rounds` answers without a
    valid world, `WorldProposalFailed`."""
    from . import world as profile_world

    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(profile_world("museum", 8))},
        {"role": "user", "content": request_text(industry, size, avoid=avoid)},
    ]
    kwargs: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
    if structured_output:
        kwargs["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "world", "schema": World.model_json_schema(), "strict": False},
        }
    refused: list[list[str]] = []
    client = endpoint.client()
    for round_ in range(1, rounds + 1):
        response = await endpoint.chat(client, messages=messages, **kwargs)
        answer = response.choices[0].message.content or ""
        world, problems = check_world(answer, seed=seed, size=size)
        if world is not None:
            return Proposal(world, round_, refused)
        refused.append(problems)
        messages += [
            {"role": "assistant", "content": answer[:20_000]},
            {
                "role": "user",
                "content": "The world is not valid. Every problem found:\n"
                + "\n".join(f"- {p}" for p in problems)
                + "\nAnswer with the whole corrected world as one JSON object.",
            },
        ]
    raise WorldProposalFailed(
        f"no valid {industry} world in {rounds} rounds; last problems: " + "; ".join(refused[-1]), refused[-1]
    )


async def propose_worlds(
    folder: Path,
    count: int,
    endpoint: Endpoint,
    *,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> list[Path]:
    """`count` worlds in `folder` as `proposed-N.json`, of the fields of `INDUSTRIES` in turn:
    those already there are kept (a rerun asks the model nothing), the missing ones are
    proposed by the model at `endpoint` (`propose_world`, seed `seed + N`, other names than those before)."""
    paths = [folder / f"proposed-{i}.json" for i in range(count)]
    missing = [i for i, p in enumerate(paths) if not p.exists()]
    if missing:
        folder.mkdir(parents=True, exist_ok=True)
    names = [load_world(p).name for p in paths if p.exists()]
    for i in missing:
        industry = INDUSTRIES[i % len(INDUSTRIES)]
        proposal = await propose_world(endpoint, industry=industry, seed=seed + i, avoid=names)
        save_world(proposal.world, paths[i])
        names.append(proposal.world.name)
        if log is not None:
            log(f"proposed world {paths[i]}: {proposal.world.name} ({industry})")
    return paths


def _json_text(text: str) -> str:
    """The JSON object in an answer: a fenced block's body, else the text from its first brace."""
    fenced = re.search(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)
    if fenced:
        return fenced.group(1)
    start = text.find("{")
    return text[start:] if start >= 0 else text
