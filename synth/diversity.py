"""How diverse a set of kept tasks is: worlds and industries, request templates, the words of
the requests, the tool-call sequences of the reference solutions, and how long the tasks are.

A request template is a task's first user message with its particulars masked: addresses,
domains, quoted values (a subject, a label, a line to add), paths, references, dates, times,
numbers, and the names of the task's people, organizations
and world (every name of the world, whole or in parts, wherever it stands; other capitalized
runs inside a sentence too). Two requests that differ only in those read the same template,
so the count of templates counts phrasings, not names.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, Field

from coworkenv.synth import families  # noqa: F401  (registers every family: their kinds are the tasks' kinds)
from coworkenv.synth.family import FAMILIES, KINDS, Kind
from coworkenv.task import Task
from coworkenv.world import World
from coworkenv.worlds import DEMO, world

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"\bhttps?://\S+")
_DOMAIN = re.compile(r"\b[\w-]+(?:\.[\w-]+)*\.(?:example|com|org|net|io|co|uk|edu|gov)\b")
_QUOTED = re.compile(r"(?<!\w)(?:'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|‘[^’\n]{1,80}’|“[^”\n]{1,80}”)(?!\w)")
_PATH = re.compile(r"(?<![\w/<])(?:/[\w.-]*[\w-])+/?")  # a path never ends with the sentence's period
_REF = re.compile(r"\b[A-Z]{2,4}-\d+\b")
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_DAYS = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?"
    rf"|\b(?:{_DAYS}),?\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?(?:\s+(?:of\s+)?(?:{_MONTHS})\b)?(?:,?\s+\d{{4}})?"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b(?:,?\s+\d{{4}})?"
    rf"|\b(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?"
    rf"|\b(?:{_MONTHS.replace('|May|', '|')}|{_DAYS})\b"  # alone, "May" is a verb as often
)
_TIME = re.compile(r"\b\d{1,2}(?::\d{2})?\s?(?:[ap]\.?m\.?)(?![\w])|\b\d{1,2}:\d{2}\b", re.IGNORECASE)
_NUMBER = re.compile(r"(?:\b[A-Z]{3}\s?|[$€£¥])?#?\d[\d,.]*(?:\s?%|k\b)?")
_CAPITALIZED = re.compile(r"(?<=[\w,;:>)\"'] )[A-Z][^\W\d_][\w-]*(?:(?: &)? [A-Z][^\W\d_][\w-]*)*")
_RUN = re.compile(r"<name>(?:(?:\s*(?:&|-)\s*|\s+)<name>)+")


def request_template(text: str, names: Iterable[str] = ()) -> str:
    """A user message with its particulars masked (see the module), lower case, one space
    between words; `names` are the people, organizations and world of its task."""
    text = EMAIL.sub("<email>", text)
    text = _URL.sub("<url>", text)
    text = _DOMAIN.sub("<domain>", text)
    text = _QUOTED.sub("<quoted>", text)
    text = _PATH.sub("<path>", text)
    text = _REF.sub("<id>", text)
    # whole names before dates (April Griffin is a person), single words after them
    whole = _names_pattern(tuple(sorted({n for n in names if " " in n.strip()})))
    if whole is not None:
        text = whole.sub("<name>", text)
    text = _DATE.sub("<date>", text)
    text = _TIME.sub("<time>", text)
    text = _NUMBER.sub("<n>", text)
    single = _names_pattern(tuple(sorted({n for n in names if " " not in n.strip()})))
    if single is not None:
        text = single.sub("<name>", text)
    text = _CAPITALIZED.sub("<name>", text)
    text = _RUN.sub("<name>", text)
    return " ".join(text.lower().split())


@lru_cache(maxsize=256)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    """One alternation of the names, longest first, matched as whole words and case as written."""
    usable = sorted({n.strip() for n in names if len(n.strip()) >= 2}, key=len, reverse=True)
    if not usable:
        return None
    return re.compile(r"(?<![\w<])(?:" + "|".join(re.escape(n) for n in usable) + r")(?![\w>])")


def world_of(task: Task) -> World | None:
    """The world a task happens in (the demo company for a demo seed); None for an empty seed."""
    procedural = task.seed.procedural
    if procedural.name == "demo":
        return world(DEMO, None, int(procedural.params.get("seed", 0)))
    if procedural.name == "world":
        inline = procedural.params.get("world")
        if inline is not None:
            return World.model_validate(inline)
        return world(
            str(procedural.params["profile"]), procedural.params.get("size"), procedural.params.get("seed", 0)
        )
    return None


_WORLD_NAMES: dict[str, tuple[str, ...]] = {}


def _world_names(world: World) -> tuple[str, ...]:
    """Every name of a world: itself, its organizations and teams, its people whole and by part."""
    if world.content_hash not in _WORLD_NAMES:
        names = {world.name, *(o.name for o in world.organizations), *(t.name for t in world.teams)}
        for person in world.people:
            names.add(person.name)
            names.update(part for part in person.name.split() if len(part) >= 3 and not part.endswith("."))
        _WORLD_NAMES[world.content_hash] = tuple(sorted(names))
    return _WORLD_NAMES[world.content_hash]


def task_names(task: Task) -> list[str]:
    """The names that particularize a task: its world's people (whole and each name), teams,
    organizations and the world itself, the context's company and user, and every `*name`
    parameter of its seed operations and events."""
    found = world_of(task)
    names = set(_world_names(found)) if found is not None else set()
    names |= {task.context.company, task.context.user_name, *task.context.user_name.split()}
    calls: list[Any] = [*task.seed.operations, *(e for turn in task.turns for e in turn.events)]
    for call in calls:
        names |= set(_named_values(call.params))
    return sorted(n for n in names if n)


def _named_values(value: Any, key: str = "") -> list[str]:
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in _named_values(v, str(k))]
    if isinstance(value, list):
        return [n for v in value for n in _named_values(v, key)]
    if isinstance(value, str) and key.endswith("name") and len(value) <= 80:
        return [value]
    return []


def kind_of(task: Task) -> Kind:
    """The kind of task its family builds; a task of no known family: single or multi by its turns."""
    fam = FAMILIES.get(task.provenance.family or "")
    if fam is not None:
        return fam.kind
    return "multi" if task.is_multi_turn else "single"


def bigram_ratio(texts: Sequence[str]) -> float:
    """Distinct word bigrams over all bigrams of the texts (lower case, words as `\\w+`; a
    bigram never spans two texts); 0.0 when there are none."""
    counts: Counter[tuple[str, str]] = Counter()
    for text in texts:
        words = re.findall(r"\w+", text.lower())
        counts.update(itertools.pairwise(words))
    total = sum(counts.values())
    return round(len(counts) / total, 4) if total else 0.0


class Lengths(BaseModel):
    """Medians over reference solutions."""

    tasks: int
    median_turns: float | None = None
    median_tool_calls: float | None = None


def lengths(tasks: Sequence[Task]) -> Lengths:
    if not tasks:
        return Lengths(tasks=0)
    return Lengths(
        tasks=len(tasks),
        median_turns=statistics.median(len(t.turns) for t in tasks),
        median_tool_calls=statistics.median(sum(len(turn.solution) for turn in t.turns) for t in tasks),
    )


class Diversity(BaseModel):
    coverage: dict[str, dict[str, int]] = Field(description="capability -> service -> kept tasks")
    distinct_people: int
    distinct_openings: int = Field(description="Distinct first four words of the first user message")
    instruction_words: dict[str, float] = Field(
        description="min, median, max words in user messages per task"
    )
    multi_turn: int
    single_turn: int
    multi_turn_share: float = Field(default=0.0, description="Multi-turn tasks over kept tasks")
    kinds: dict[str, int] = Field(
        default_factory=dict, description="Kept tasks by kind (single, multi, workday)"
    )
    distinct_templates: int = Field(
        default=0,
        description="Distinct first user messages once particulars are masked (see request_template)",
    )
    max_template_uses: int = Field(default=0, description="Kept tasks sharing the most used template")
    most_used_template: str = Field(default="", description="That template")
    bigram_ratio: float = Field(default=0.0, description="Distinct word bigrams over all, in user messages")
    distinct_tool_sequences: int = Field(
        default=0, description="Distinct sequences of reference-solution tools"
    )
    distinct_worlds: int = Field(
        default=0, description="Distinct worlds (every demo seed is the demo company)"
    )
    distinct_industries: int = Field(default=0, description="Distinct industries of those worlds")
    worlds: dict[str, int] = Field(default_factory=dict, description="Kept tasks by world")
    industries: dict[str, int] = Field(default_factory=dict, description="Kept tasks by industry")
    overall: Lengths = Field(default_factory=lambda: Lengths(tasks=0), description="Reference solutions")
    workdays: Lengths = Field(default_factory=lambda: Lengths(tasks=0), description="Those of workdays")


def diversity(kept: list[Task]) -> Diversity:
    """The diversity figures of the kept tasks."""
    coverage: dict[str, dict[str, int]] = {}
    people: set[str] = set()
    openings: set[str] = set()
    word_counts = []
    templates: Counter[str] = Counter()
    worlds: Counter[str] = Counter()
    industries: Counter[str] = Counter()
    for task in kept:
        for cap in task.capabilities:
            for service in task.services:
                coverage.setdefault(cap, {}).setdefault(service, 0)
                coverage[cap][service] += 1
        text = " ".join(t.user for t in task.turns)
        people |= set(EMAIL.findall(text + " " + task.seed.model_dump_json()))
        openings.add(" ".join(task.turns[0].user.lower().split()[:4]))
        word_counts.append(len(text.split()))
        templates[request_template(task.turns[0].user, task_names(task))] += 1
        found = world_of(task)
        if found is not None:
            worlds[DEMO if found.profile == DEMO else found.key] += 1
            industries[found.industry] += 1
    stats = (
        {"min": min(word_counts), "median": statistics.median(word_counts), "max": max(word_counts)}
        if word_counts
        else {}
    )
    multi = sum(t.is_multi_turn for t in kept)
    kinds = Counter(kind_of(t) for t in kept)
    top = templates.most_common(1)
    return Diversity(
        coverage=coverage,
        distinct_people=len(people),
        distinct_openings=len(openings),
        instruction_words=stats,
        multi_turn=multi,
        single_turn=len(kept) - multi,
        multi_turn_share=round(multi / len(kept), 4) if kept else 0.0,
        kinds={k: kinds[k] for k in KINDS},
        distinct_templates=len(templates),
        max_template_uses=top[0][1] if top else 0,
        most_used_template=top[0][0] if top else "",
        bigram_ratio=bigram_ratio([turn.user for t in kept for turn in t.turns]),
        distinct_tool_sequences=len({tuple(s.tool for turn in t.turns for s in turn.solution) for t in kept}),
        distinct_worlds=len(worlds),
        distinct_industries=len(industries),
        worlds=dict(sorted(worlds.items())),
        industries=dict(sorted(industries.items())),
        overall=lengths(kept),
        workdays=lengths([t for t in kept if kind_of(t) == "workday"]),
    )
