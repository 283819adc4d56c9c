"""No peeking: every literal argument of a reference step was shown before the step uses it.

A reference solution is a teacher demonstration. A value it passes that nothing showed the
agent (a queue's name before any queue was listed, an address spelled from a person's name,
the user's time zone) teaches a policy to guess, so validation rejects it. What counts as
shown, at a step: the system prompt, the user's messages so far (a clarifying question's
answer once asked) and the results of the earlier read steps (a write's result only echoes
what the solution wrote). Text is compared case-insensitively.

Each literal argument (a `{"$ref": ...}` is shown by construction) is judged by its kind:
- ids (`message_id`, `ticket_id`, `in_reply_to`, ...): a result of the same service returned
  it under an id key, or a text states the number.
- addresses, in any string argument, free text included: the address appears in a text.
  An address is never derived from a person's name.
- paths (`path`, `source`, `directory`, `attachments`): the path appears in a text; a path
  the step creates (`files_write_file`, `files_create_directory`, a copy's or a move's
  `destination`) may be new when its parent directory was shown.
- names that must exist (`queue`, `team`): the name appears as a whole phrase.
- labels and tags: every word of the name is shown (see search terms).
- time zones (`time_zone`): the zone's name appears in a text.
- search terms (`query`, a file search's `content` and `name_glob`, `sender` or `recipient`
  without an `@`): every word is shown, as a word of a text or an inflection of one (the
  term starts with a shown word of four letters or more and adds at most three, or a
  shown word starts with the term).
- instants (`start`, `end`, `window_start`, `due_at`, `after`, ...): the same instant appears
  in a text as an ISO time, in any offset; or its zone, date and time of day are each shown:
  - zone: an explicit UTC offset is UTC or the offset, at that instant, of a zone named in a
    text; a time without an offset is in the step's `time_zone` (judged as a zone above) or
    else the user's zone, which must be named in a text (UTC when the task has no directory);
  - date (local): written as `2025-03-04`, `March 4`, `4 Mar`, ...; or, in the two weeks from
    the task's start, named relatively: its weekday, `today`, `tomorrow`, or any `week` or
    `days` wording (`next week`, `in three days`);
  - time of day (local): midnight (a day's bound) or 23:59; a time written in a common form
    (`14:00`, `2pm`, `2:30 PM`, `14.00`); or a shown instant or the step's other instant
    plus or minus a shown duration (`30 minutes`, `an hour`, `1.5 hours`, a shown span's).
    Midnight, or a date alone, right after a shown date is that date's end. The end of a
    read's search window (`end`, `window_end`, `before`, `due_before` of a read tool) may be any
    date in the two weeks from the task's start: how far to look is the agent's choice.
- working hours (`working_hours_start`/`_end`): the time of day is shown as above.
- durations (`duration_minutes`): stated in words, or the length of a shown span (two
  successive times of one text less than a day apart, as an event's start and end); counts (`recurrence_count`): the number
  appears in a text.
- free text the agent writes (bodies, notes, comments, titles, descriptions, subjects,
  locations, file content): exempt but for the addresses in it. Enum values of a tool's
  schema, booleans, page sizes and offsets: exempt.

The first write must also come after a read: look up what a write acts on first.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.synth.validation.variants import tool_kind
from coworkenv.task import Task

ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
ID_ARGUMENT = re.compile(r"(^|_)id$")
ID_ARGUMENTS = ("in_reply_to",)
PATH_ARGUMENTS = ("path", "source", "destination", "directory", "attachments")
CREATING = {("files_write_file", "path"), ("files_create_directory", "path"), ("files_copy_path", "destination"),
            ("files_move_path", "destination")}  # fmt: skip
EXISTING_NAMES = ("queue", "team")
FREE_NAMES = ("label", "tag", "tags", "add_tags", "remove_tags")
PEOPLE = ("sender", "recipient", "assignee", "requester")
TERMS = {"query", "name_glob"}
INSTANTS = (
    "start", "end", "window_start", "window_end", "occurrence_start", "recurrence_until",
    "due_at", "due_after", "due_before", "after", "before",
)  # fmt: skip
WINDOW_ENDS = ("end", "window_end", "before", "due_before")
CLOCK_ARGUMENTS = ("working_hours_start", "working_hours_end")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30,
                "forty-five": 45, "ninety": 90}  # fmt: skip
RELATIVE_DAYS = 14
_WORD = re.compile(r"[^\W_]+")
_ISO = re.compile(r"(\d{4}-\d{2}-\d{2})[t ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(z|[+-]\d{2}:\d{2})?")
_DURATION = re.compile(
    r"(\d+(?:\.\d+)?|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")[\s-]*"
    r"(minutes?|mins?|hours?|hrs?|h)\b"
)
_ZONE_NAME = re.compile(r"\b[a-z]+(?:/[a-z0-9_+-]+)+\b|\butc\b")


class Shown:
    """What the agent has seen so far: texts, and the ids results returned per service."""

    def __init__(self, prompt: str, start: datetime, user_zone: str | None) -> None:
        self.parts: list[str] = []
        self.ids: dict[str, set[int]] = defaultdict(set)
        self.words: set[str] = set()
        self.start = start
        self.user_zone = user_zone
        self._text: str | None = None
        self.add(prompt)

    def add(self, text: str) -> None:
        low = text.lower()
        self.parts.append(low)
        self.words |= set(_WORD.findall(low))
        self._text = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "\n".join(self.parts)
        return self._text

    # -- kinds of literal ---------------------------------------------------------------

    def has_id(self, service: str, value: int) -> bool:
        return value in self.ids[service] or bool(re.search(rf"(?<![\d.]){value}(?!\d)", self.text))

    def has_phrase(self, value: str) -> bool:
        return bool(re.search(rf"(?<!\w){re.escape(value.strip().lower())}(?!\w)", self.text))

    def missing_words(self, value: str) -> list[str]:
        return [w for w in _WORD.findall(value.lower()) if not self._has_word(w)]

    def _has_word(self, word: str) -> bool:
        if word in self.words:
            return True
        return any(
            s.startswith(word) or (len(s) >= 4 and word.startswith(s) and len(word) - len(s) <= 3)
            for s in self.words
        )

    def has_path(self, value: str, creates: bool) -> bool:
        path = value.rstrip("/").lower() or "/"
        if path in self.text:
            return True
        parent = path.rsplit("/", 1)[0] or "/"
        return creates and (parent == "/" or parent in self.text)

    def zones(self) -> set[str]:
        """The IANA zones named in the texts (UTC always: the prompt states the time in UTC)."""
        names = _zone_names()
        return {"UTC"} | {names[m] for m in _ZONE_NAME.findall(self.text) if m in names}

    def has_zone(self, value: str) -> bool:
        return value.lower() == "utc" or value in self.zones()

    def instants(self) -> tuple[set[datetime], set[str]]:
        """ISO times in the texts: as instants (those with an offset) and as wall clocks."""
        exact, walls = set(), set()
        for day, hh, mm, offset in _ISO.findall(self.text):
            walls.add(f"{day}T{hh}:{mm}")
            if offset:
                value = datetime.fromisoformat(f"{day}T{hh}:{mm}{'+00:00' if offset == 'z' else offset}")
                exact.add(value.astimezone(UTC))
        return exact, walls

    def durations(self) -> set[timedelta]:
        """Durations stated in words, and the lengths of shown spans (each two successive times
        of a text that are less than a day apart, as an event's start and end)."""
        found = {timedelta(minutes=30)} if "half an hour" in self.text else set()
        for part in self.parts:
            times = [
                datetime.fromisoformat(f"{d}T{hh}:{mm}{'+00:00' if o == 'z' else o}")
                for d, hh, mm, o in _ISO.findall(part)
                if o
            ]
            found |= {b - a for a, b in pairwise(times) if timedelta(0) < b - a < timedelta(days=1)}
        for amount, unit in _DURATION.findall(self.text):
            n = float(NUMBER_WORDS.get(amount, 0) or amount)
            found.add(timedelta(hours=n) if unit.startswith("h") else timedelta(minutes=n))
        return found

    def has_date(self, day: date) -> bool:
        text = self.text
        if day.isoformat() in text:
            return True
        month = MONTHS[day.month - 1]
        names = rf"(?:{month}|{month[:3]})\.?"
        nth = rf"0?{day.day}(?:st|nd|rd|th)?"
        if re.search(rf"\b{names}\s+{nth}\b|\b{nth}\s+(?:of\s+)?{names}\b", text):
            return True
        today = self.start.astimezone(self._zone()).date()
        if not today <= day <= today + timedelta(days=RELATIVE_DAYS):
            return False
        relative = [WEEKDAYS[day.weekday()], "week", "days"]
        relative += ["today"] if day == today else ["tomorrow"] if day == today + timedelta(days=1) else []
        return any(re.search(rf"\b{w}\b", text) for w in relative)

    def has_clock(self, value: time) -> bool:
        if value in (time(0), time(23, 59), time(23, 59, 59)):
            return True
        h, m = value.hour, value.minute
        forms = [rf"(?<![\d:]){h:02d}[:.h]{m:02d}(?!\d)", rf"(?<![\d:]){h}[:.]{m:02d}(?!\d)"]
        twelve, half = (h % 12 or 12), ("am" if h < 12 else "pm")
        minutes = rf"(?::{m:02d})?" if m == 0 else rf":{m:02d}"
        forms.append(rf"(?<![\d:]){twelve}{minutes}\s*{half[0]}\.?\s?{half[1]}\b")
        if m == 0:
            forms.append(rf"\b{twelve} o'clock\b" if twelve != 12 else r"\bnoon\b|\bmidday\b")
        return any(re.search(f, self.text) for f in forms)

    def _zone(self, name: str | None = None) -> ZoneInfo:
        return ZoneInfo(name or self.user_zone or "UTC")

    def instant_problem(
        self, value: str, step_zone: Any, others: Iterable[datetime] = (), window_end: bool = False
    ) -> str | None:
        """Why an instant argument is not derivable from what was shown, or None. `others`
        are the step's other instants: a time computed from one (an end from its start and a
        shown duration) is derivable."""
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None  # not an instant: the tool rejects it, no value is peeked
        date_only = len(value.strip()) == 10
        if parsed.tzinfo is None:
            name = step_zone if isinstance(step_zone, str) else self.user_zone or "UTC"
            if not isinstance(step_zone, str) and not self.has_zone(name):
                return f"its time zone {name} (the user's) was never shown"
            local = parsed.replace(tzinfo=self._zone(name))
        else:
            local = parsed
            offset = parsed.utcoffset()
            if offset and not any(
                ZoneInfo(z).utcoffset(parsed.replace(tzinfo=None)) == offset for z in self.zones()
            ):
                return f"its UTC offset {parsed.isoformat()[-6:]} is no shown zone's"
        exact, walls = self.instants()
        if not date_only and (local.astimezone(UTC) in exact or local.strftime("%Y-%m-%dT%H:%M") in walls):
            return None
        day, midnight = local.date(), date_only or local.time() == time(0)
        today = self.start.astimezone(self._zone()).date()
        searched = window_end and today <= day <= today + timedelta(days=RELATIVE_DAYS)
        if not (searched or self.has_date(day) or (midnight and self.has_date(day - timedelta(days=1)))):
            return f"its date {day.isoformat()} was never shown"
        if date_only or self.has_clock(local.time()):
            return None
        instant = local.astimezone(UTC)
        bases = exact | set(others)
        if any(instant - base in (d, -d) for base in bases for d in self.durations()):
            return None
        return f"its time of day {local:%H:%M} was never shown"


@lru_cache(maxsize=1)
def _zone_names() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def peeking(task: Task, oracle: EpisodeRecord, prompt: str, user_zone: str | None = None) -> list[str]:
    """Solution steps that use a literal nothing has shown yet (see the module docstring), and
    a first write that comes before any read. `user_zone` is the user's time zone (the
    directory's, when the task has one): what a time without an offset or zone is in."""
    shown = Shown(prompt, task.clock_start, user_zone)
    calls = iter([e for e in oracle.tool_calls if e.actor != "event"])
    out = []
    wrote = read = False
    for i, turn in enumerate(task.turns):
        shown.add(turn.user)
        for j, step in enumerate(turn.solution):
            if turn.clarification is not None and j == turn.clarification.after:
                shown.add(turn.clarification.answer)  # the user's answer to the question
            where = f"turns[{i}].solution[{j}] ({step.tool})"
            out += [f"{where} {p}" for p in step_problems(step.tool, step.arguments, shown)]
            is_read = tool_kind(step.tool)[0]
            if not is_read and not step.expect_error and not read and not wrote:
                out.append(f"{where} writes before anything was read: look up what it acts on first")
            read = read or is_read
            wrote = wrote or not is_read
            entry = next(calls, None)
            if entry is not None:
                if is_read:  # a write's result echoes what the solution itself wrote
                    shown.add(json.dumps(_texts(entry.result), default=str))
                shown.ids[entry.service] |= set(_ids(entry.result))
    return out


def step_problems(tool: str, arguments: dict[str, Any], shown: Shown) -> list[str]:
    """What one step uses before it was shown, one sentence per literal."""
    service = tool.partition("_")[0]
    out = []
    for name, value in arguments.items():
        for literal in _literals(value):
            problem = _problem(tool, service, name, literal, arguments, shown)
            if problem:
                why = "" if problem is _UNSEEN else f": {problem}"
                out.append(f"uses {name}={literal!r} before any message or tool result showed it{why}")
    return out


_UNSEEN = "unseen"  # an id: nothing more to say


def _problem(tool: str, service: str, name: str, value: Any, arguments: dict[str, Any], shown: Shown) -> str:
    if isinstance(value, bool):
        return ""
    if isinstance(value, int):
        if ID_ARGUMENT.search(name) or name in ID_ARGUMENTS:
            return "" if shown.has_id(service, value) else _UNSEEN
        if name == "duration_minutes":
            return "" if timedelta(minutes=value) in shown.durations() else "a duration never stated"
        if name == "recurrence_count":
            return "" if re.search(rf"(?<!\d){value}(?!\d)", shown.text) else "a count never stated"
        return ""
    if not isinstance(value, str):
        return ""
    missing = [a for a in ADDRESS.findall(value) if a.lower() not in shown.text]
    if missing:
        return f"the address {missing[0]} was never shown (addresses come from results or messages)"
    if name in PATH_ARGUMENTS and value.startswith("/"):
        return "" if shown.has_path(value, (tool, name) in CREATING) else "a path never listed"
    if name in EXISTING_NAMES:
        return "" if shown.has_phrase(value) else f"a {name} name never listed or mentioned"
    if name in FREE_NAMES or (name in TERMS or (tool == "files_search_files" and name == "content")):
        words = shown.missing_words(value)
        return f"the word {words[0]!r} was never shown" if words else ""
    if name in PEOPLE and "@" not in value:
        words = shown.missing_words(value)
        return f"the word {words[0]!r} was never shown" if words else ""
    if name == "time_zone":
        return "" if shown.has_zone(value) else "a time zone never shown"
    if name in INSTANTS:
        others = [
            t
            for k, v in arguments.items()
            if k in INSTANTS and k != name
            for t in _instant(v, arguments, shown.user_zone)
        ]
        window_end = tool_kind(tool)[0] and name in WINDOW_ENDS
        return shown.instant_problem(value, arguments.get("time_zone"), others, window_end) or ""
    if name in CLOCK_ARGUMENTS:
        try:
            value_time = time.fromisoformat(value)
        except ValueError:
            return ""
        return "" if shown.has_clock(value_time) else "a time of day never shown"
    return ""


def _instant(value: Any, arguments: dict[str, Any], user_zone: str | None) -> list[datetime]:
    """An instant argument as an aware time (in the step's zone when it has no offset)."""
    if not isinstance(value, str) or len(value.strip()) <= 10:
        return []
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return []
    if parsed.tzinfo is None:
        zone = arguments.get("time_zone")
        parsed = parsed.replace(tzinfo=ZoneInfo(zone if isinstance(zone, str) else user_zone or "UTC"))
    return [parsed.astimezone(UTC)]


def _literals(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        return []  # a $ref: seen by construction
    if isinstance(value, list):
        return [x for v in value for x in _literals(v)]
    return [value]


def _ids(value: Any, key: str = "") -> list[int]:
    """Integers a result holds under an id key (`id`, `ticket_id`, ...)."""
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _ids(v, k)]
    if isinstance(value, list):
        return [x for v in value for x in _ids(v, key)]
    if isinstance(value, int) and not isinstance(value, bool) and ID_ARGUMENT.search(key):
        return [value]
    return []


def _texts(value: Any) -> list[str]:
    """The strings of a result, where addresses, paths and ids written in text are shown."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _texts(v)]
    if isinstance(value, list):
        return [x for v in value for x in _texts(v)]
    return [value] if isinstance(value, str) else []


__all__ = ["Shown", "peeking", "step_problems"]
