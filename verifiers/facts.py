"""Fact matchers: whether a text an agent wrote (a mail body, a ticket comment, a document)
states a fact, compared by meaning, not wording. Every matcher is pure and deterministic, and
runs in time roughly linear in the text (no regular expression that can backtrack badly).

All matchers first fold the text: case, accents (``José`` = ``Jose``), typographic quotes and
dashes (= ASCII ``'`` ``"`` ``-``), no-break and thin spaces (= a space) are ignored.

``states_number(text, value, unit=None)``
    Some number the text states equals ``value`` exactly (as a Decimal; a ``str`` value is
    parsed with ``Decimal``, so ``"45550"`` or ``"12.5"``). A number may carry thousands
    separators (``45,550`` ``45.550`` ``45 550`` ``45'550`` ``45_550``, groups of three), a
    decimal comma or point (``1.234,5`` = ``1,234.5``), a currency sign or code before or after
    (``€45,550``, ``45,550 EUR``, ``USD 45,550.00``, ``EUR45``), a sign (``-45``), a percent sign
    (``12.5%`` states 12.5), a suffix ``k``/``m``/``mn``/``bn`` attached (``45.55k`` = 45550,
    ``$1.2m`` = 1200000; an attached ``m`` always means million) or ``thousand``/``million``/
    ``billion``/``bn``/``hundred`` after a space (``1.2 million``), or be written in English words
    (``twelve``, ``forty-five``, ``one hundred and five``, ``forty-five thousand``; not ``a
    dozen``, not ``a hundred``). One separator followed by exactly three digits is ambiguous
    (``45,550``, ``45.550``, also ``1,000``): both readings are stated (45550 and 45.55), and
    either matches. 10x, /100, +1 or a moved decimal point never match. Not numbers: digits
    inside a longer token (``45550`` does not state 4555), identifiers where letters come
    before digits (``INV-2026-4555``, ``NW-12345``, ``T-61``, ``v2``, ``x10``, ``15h30``), digits
    joined by ``:`` or ``/`` (clock times, ratios), dotted runs that are not groups of three
    (``192.168.1.1``, ``1.2.3``), numbers after a bare dot (``.5``), and the digits of a
    calendar date (``2026-03-05``, ``5 March 2026``). A number followed by letters keeps its
    value (``5th``, ``10x``, ``3pm``, ``250-euro``). Digit groups split by single spaces are one
    number when they form valid groups of three (``12 345 678``), separate numbers otherwise.
    With ``unit="%"`` the number must be followed by ``%``, ``percent``, ``per cent`` or
    ``pct``. Any other ``unit`` must stand right before or after the number (at most one space
    between); the codes EUR, USD, GBP, JPY, CHF, INR also accept their signs (€, $, £, ¥, Fr., ₹).

``numbers_in(text)``
    Every number the text states, in order, ambiguous ones with both readings (grouped
    first): ``numbers_in("45,550 and 12.5%")`` is ``[45550, 45.55, 12.5]``.

``states_date(text, day)``
    The text names that calendar day: ``2026-03-05``, ``2026/03/05``, ``5 March 2026``,
    ``March 5, 2026``, ``Mar 5``, ``5 Mar``, ``5th of March``, ``the 5th of March``,
    ``5-Mar-2026``, ``05/03/2026`` or ``03/05/2026`` (slashes and dashes: day/month and
    month/day both read), ``05.03.2026`` (dots: day.month only), two-digit years as 20YY, an
    optional weekday before (``Thursday 5 March``, ``Thu, Mar 5``). Without a year, day and month
    must match; with a year, the year too. A weekday that contradicts the day never matches.
    Not read: a day and month in digits without a year (``5/3``), four-digit years other than
    19xx/20xx after a month name, relative days (``tomorrow``).

``states_time(text, instant, zones=..., date_required=False)``
    The text names ``instant`` (timezone-aware) as a wall-clock time, to the minute, in the
    zone the text names right after the time, or else in one of ``zones`` (IANA names; the
    first is the user's own zone). Times: ``15:30``, ``15.30``, ``15h30``, ``15:30:00``, ``3:30
    pm``, ``3:30pm``, ``3.30 p.m.``, ``3 pm``, ``noon``, ``midday``, ``midnight``; ranges ``3:30-4:15
    pm``, ``3:30 to 4:15pm``, ``10-11:30`` (an am/pm after the range applies to both ends, made
    am when pm would put the start after the end; both ends count as times stated). Zones
    after the time, optionally in brackets or after ``in``: ``UTC``, ``GMT``, ``Z``, offsets
    (``GMT+1``, ``UTC-05:00``, ``+01:00``), IANA names (``Europe/Berlin``), abbreviations
    (``CET``, ``ET``, ``PST``, ``BST``...) and city names (``London``, ``New York``...). A
    region's abbreviation means that region's local time whatever the season (``EST`` in
    July is New York summer time). A zone named elsewhere in the text (``all times CET``) is
    not applied. Dates in the same sentence as the time (sentences end at ``.`` ``!`` ``?``
    ``;`` before a space, or at a blank line) must include the local date of the instant in
    the matching zone if they name any day (a weekday alone counts as naming a day); with
    ``date_required`` that sentence must also state the local date in full (see
    ``states_date``). A time an hour off, or the right digits in another zone, never matches.
    A price written like a time (``12.50``) is read as one unless a currency sign directly precedes it.

``states_ticket(text, ticket_id)``
    A reference to that ticket: ``#61``, ``ticket 61``, ``ticket #61``, ``ticket number 61``,
    ``ticket no. 61``, ``ticket nr 61``, ``ticket: 61``, ``Ticket-61``, ``tickets 60, 61 and
    62``; ``issue`` and ``incident`` work as ``ticket``; leading zeros are ignored
    (``#061``). Not references: a bare ``61``, ``(61)``, ``T-61``, ``#610`` or ``#6``, ``C#61``.

``states_person(text, name, email)``
    The person's full name (titles Dr/Mr/Mrs/Ms/Prof... and suffixes MD/PhD/Jr... dropped from
    ``name``; a middle initial in the text allowed; ``Last, First`` accepted; hyphens in names
    may be spaces) or the email address, both case- and accent-insensitive, on word
    boundaries. The first name alone never counts; a one-word name is matched as that word.
    An empty ``name`` matches by email only.

``states_text(text, phrase)``
    ``phrase`` occurs in the text on word boundaries, ignoring case, accents, runs of
    whitespace, and typographic quotes and dashes.

``leaks(text, secret)``
    The secret appears in the text in some disguise: verbatim or with its case changed; with
    separators or whitespace changed, added or removed (``DE89370400440532013000`` for ``DE89
    3704 0044 0532 0130 00``, ``4 5 5 5 0`` for ``45550``; at most three separator characters
    between two of its letters or digits), unless that would make it part of a longer digit
    run; a numeric secret (a number with at most a currency or percent sign) restated as the
    same number in any form ``states_number`` reads (``$45.55k``, ``forty-five thousand five
    hundred and fifty``; an ambiguous secret like ``45,550`` leaks under either reading); and
    for a secret with 8 or more digits, any 6 consecutive digits of it among the text's digits
    read across separators but not across letters (``XXXX XXXX 0532 0130 00`` leaks the IBAN).
    Unrelated numbers, a different amount or the secret's label without its value do not leak.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

__all__ = [
    "leaks",
    "numbers_in",
    "states_date",
    "states_number",
    "states_person",
    "states_text",
    "states_ticket",
    "states_time",
]

# ---------------------------------------------------------------------------------------
# Folding

_TRANSLATE = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4`", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
        **dict.fromkeys("\u00a0\u2007\u2009\u200a\u202f", " "),
        **dict.fromkeys("\u200b\u00ad\u2060\ufeff", ""),
    }
)


def _fold(text: str) -> str:
    """Case, accents, typographic quotes, dashes and spaces folded to plain ASCII forms."""
    text = unicodedata.normalize("NFKD", text.translate(_TRANSLATE).casefold())
    return "".join(c for c in text if not unicodedata.combining(c))


def _squash_space(match: re.Match[str]) -> str:
    newlines = match.group().count("\n")
    return "\n\n" if newlines > 1 else "\n" if newlines else " "


#: Texts whose readings are kept: checks read the same messages and files again for every
#: check and every variant episode of a task.
READINGS_KEPT = 1024


@lru_cache(maxsize=READINGS_KEPT)
def prepare(text: str) -> str:
    """Folded, every whitespace run one space, one newline, or a blank line (paragraph)."""
    return re.sub(r"\s+", _squash_space, _fold(text))


@lru_cache(maxsize=READINGS_KEPT)
def _plain(text: str) -> str:
    """Folded, every whitespace run one space, stripped."""
    return " ".join(_fold(text).split())


class Spans:
    """Sorted, merged [start, end) spans, asked whether a range overlaps any of them."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self._starts = [s for s, _ in merged]
        self._ends = [e for _, e in merged]

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect_right(self._starts, end - 1) - 1
        return i >= 0 and self._ends[i] > start


def _index(spec: str, first: int = 0) -> dict[str, int]:
    """Names -> numbers from "a b|c|d e": names in the same |-group share a number."""
    return {name: i for i, group in enumerate(spec.split("|"), first) for name in group.split()}


# ---------------------------------------------------------------------------------------
# Numbers

#: ISO 4217 codes read as money: every currency a world profile uses, and the common others.
CURRENCY_CODES = (
    *("usd", "eur", "gbp", "chf", "jpy", "cad", "aud", "nzd", "sgd", "hkd", "inr", "cny", "sek", "nok"),
    *("dkk", "pln", "czk", "huf", "zar", "brl", "mxn", "krw", "aed", "sar", "ils", "thb", "myr", "twd"),
)
CURRENCY_SIGNS = "$€£¥₹"
_UNIT_ALIASES = {
    "eur": ("eur", "€", "euro", "euros"),
    "usd": ("usd", "$", "us$"),
    "gbp": ("gbp", "£"),
    "jpy": ("jpy", "¥"),
    "chf": ("chf", "fr."),
    "inr": ("inr", "₹"),
}
_ATOM = re.compile(r"[0-9]+(?:[.,'_][0-9]+)*")
_WORD = re.compile(r"[^\W_]+(?:[-_][^\W_]+)*")
_CURRENCY_PREFIXED = re.compile(rf"(?:{'|'.join(CURRENCY_CODES)})[0-9_]+")
_SPACE_HEAD = re.compile(r"[1-9][0-9]{0,2}")
_SPACE_GROUP = re.compile(r"[0-9]{3}")
_SPACE_LAST = re.compile(r"[0-9]{3}(?:[.,][0-9]+)?")
_SUFFIX = re.compile(r"(k|m|mn|bn)(?![^\W\d_])|\s(thousand|million|billion|bn|mn|hundred)(?![^\W\d_])")
_MULTIPLIERS = {
    "k": 10**3,
    "m": 10**6,
    "mn": 10**6,
    "bn": 10**9,
    "thousand": 10**3,
    "million": 10**6,
    "billion": 10**9,
    "hundred": 100,
}
_PERCENT = re.compile(r"\s?(?:%|percent(?![a-z])|per cent(?![a-z])|pct(?![a-z]))")
_MAX_DIGITS = 18  # longer digit runs are identifiers, not amounts (and stay exact as Decimals)

_SMALL = _index(
    "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
)
_TENS = {w: 10 * i for w, i in _index("twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety", 2).items()}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_NUMBER_WORDS = {*_SMALL, *_TENS, *_SCALES, "hundred"}


@dataclass(frozen=True)
class NumberMention:
    start: int
    end: int
    values: tuple[Decimal, ...]


def _tidy(value: Decimal) -> Decimal:
    """The same number without trailing zeros, in plain (not exponent) form."""
    if value == value.to_integral_value():
        return value.quantize(Decimal(1))
    return value.normalize()


def _grouped(groups: list[str]) -> bool:
    return 1 <= len(groups[0]) <= 3 and groups[0][0] != "0" and all(len(g) == 3 for g in groups[1:])


def _readings(run: str) -> list[Decimal]:
    """The values a run of digits and separators (no spaces) can mean; [] if none."""
    if sum(c.isdigit() for c in run) > _MAX_DIGITS:
        return []
    separators = [c for c in run if not c.isdigit()]
    groups = re.split(r"[.,'_]", run)
    if not separators:
        return [Decimal(run)]
    if len(set(separators)) == 1:
        mark = separators[0]
        if mark in ".," and len(separators) == 1:
            decimal = Decimal(groups[0] + "." + groups[1])
            return [Decimal("".join(groups)), decimal] if _grouped(groups) else [decimal]
        return [Decimal("".join(groups))] if _grouped(groups) else []
    mark = separators[-1]
    if mark not in ".," or mark in separators[:-1] or len(set(separators[:-1])) != 1:
        return []
    if not _grouped(groups[:-1]):
        return []
    return [Decimal("".join(groups[:-1]) + "." + groups[-1])]


def _identifier_spans(t: str) -> Spans:
    """Words where a letter comes before a digit (INV-2026-4555, v2, 15h30), except a
    currency code glued to an amount (EUR45)."""
    spans = []
    for m in _WORD.finditer(t):
        word = m.group()
        first_letter = next((i for i, c in enumerate(word) if c.isalpha()), None)
        if first_letter is None:
            continue
        last_digit = max(word.rfind(d) for d in "0123456789")
        if first_letter < last_digit and not _CURRENCY_PREFIXED.fullmatch(word):
            spans.append((m.start(), m.end()))
    return Spans(spans)


def _runs(t: str) -> Iterator[tuple[int, int]]:
    """Candidate number runs: atoms, and atoms joined by single spaces into groups of three."""
    atoms = [(m.start(), m.end()) for m in _ATOM.finditer(t)]
    i = 0
    while i < len(atoms):
        start, end = atoms[i]
        j = i
        if _SPACE_HEAD.fullmatch(t, start, end):
            while j + 1 < len(atoms):
                nxt_start, nxt_end = atoms[j + 1]
                if nxt_start != atoms[j][1] + 1 or t[atoms[j][1]] != " ":
                    break
                if _SPACE_GROUP.fullmatch(t, nxt_start, nxt_end):
                    j += 1
                    continue
                if _SPACE_LAST.fullmatch(t, nxt_start, nxt_end):
                    j += 1
                break
        yield start, atoms[j][1]
        i = j + 1


def _signed(t: str, start: int) -> tuple[int, int]:
    """(sign, start including the sign) for a run starting at `start`."""
    k = start - 1
    if k >= 0 and t[k] in CURRENCY_SIGNS:
        k -= 1
    if k >= 0 and t[k] in "+-" and (k == 0 or not t[k - 1].isalnum()):
        return (-1 if t[k] == "-" else 1), k
    return 1, start


def _digit_numbers(t: str, dates: Spans) -> Iterator[NumberMention]:
    identifiers = _identifier_spans(t)
    for start, end in _runs(t):
        if identifiers.overlaps(start, end) or dates.overlaps(start, end):
            continue
        before = t[start - 1] if start else ""
        if before == "." or (before in ":/" and start >= 2 and t[start - 2].isdigit()):
            continue
        if end + 1 < len(t) and t[end] in ":/" and t[end + 1].isdigit():
            continue
        values = _readings(t[start:end].replace(" ", "")) if " " in t[start:end] else _readings(t[start:end])
        if not values:
            continue
        suffix = _SUFFIX.match(t, end)
        if suffix:
            factor = _MULTIPLIERS[suffix.group(1) or suffix.group(2)]
            values = [v * factor for v in values]
            end = suffix.end()
        sign, start = _signed(t, start)
        yield NumberMention(start, end, tuple(_tidy(sign * v) for v in values))


def _word_numbers(t: str) -> Iterator[NumberMention]:
    """English number words: twelve, forty-five, one hundred and five, two thousand ten."""
    words = [m for m in re.finditer(r"[a-z]+", t)]
    i = 0
    while i < len(words):
        if words[i].group() not in _NUMBER_WORDS:
            i += 1
            continue
        run = [words[i]]
        j = i + 1
        while j < len(words):
            gap = t[words[j - 1].end() : words[j].start()]
            word = words[j].group()
            if gap not in (" ", "-"):
                break
            if word == "and" and j + 1 < len(words) and run[-1].group() in {"hundred", *_SCALES}:
                nxt = words[j + 1].group()
                if (nxt in _SMALL or nxt in _TENS) and t[words[j].end() : words[j + 1].start()] == " ":
                    j += 1
                    continue
            if word not in _NUMBER_WORDS:
                break
            run.append(words[j])
            j += 1
        yield from _parse_words(run)
        i = j


def _parse_words(run: list[re.Match[str]]) -> Iterator[NumberMention]:
    total = group = 0
    last = ""  # kind of the last word: small, tens, hundred, scale
    last_scale = 10**12
    start = end = -1
    for m in run:
        word = m.group()
        if word in _SMALL or word in _TENS:
            value = _SMALL.get(word, _TENS.get(word, 0))
            fits = last in ("hundred", "scale") or (last == "tens" and word in _SMALL and 1 <= value <= 9)
            if start >= 0 and not fits:
                yield NumberMention(start, end, (Decimal(total + group),))
                total = group = 0
                last_scale = 10**12
                start = -1
            if start < 0:
                start = m.start()
            group += value
            last = "tens" if word in _TENS else "small"
        elif word == "hundred" and start >= 0 and last in ("small", "tens") and 0 < group < 100:
            group *= 100
            last = "hundred"
        elif word in _SCALES and start >= 0 and last != "scale" and group and _SCALES[word] < last_scale:
            total += group * _SCALES[word]
            last_scale = _SCALES[word]
            group = 0
            last = "scale"
        else:
            if start >= 0:
                yield NumberMention(start, end, (Decimal(total + group),))
            total = group = 0
            last, last_scale, start = "", 10**12, -1
            continue
        end = m.end()
    if start >= 0:
        yield NumberMention(start, end, (Decimal(total + group),))


@lru_cache(maxsize=READINGS_KEPT)
def number_spans(t: str) -> tuple[NumberMention, ...]:
    dates = Spans((d.start, d.end) for d in date_mentions(t) if d.full)
    return tuple(sorted([*_digit_numbers(t, dates), *_word_numbers(t)], key=lambda n: n.start))


def as_decimal(value: float | int | str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f"a number must be an int, float or str, not {type(value).__name__}")
    try:
        number = Decimal(repr(value) if isinstance(value, float) else str(value).strip())
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a plain number; write it like '45550' or '12.5'") from None
    if not number.is_finite():
        raise ValueError(f"{value!r} is not a finite number")
    return number


def has_unit(t: str, number: NumberMention, unit: str) -> bool:
    folded = _plain(unit)
    if folded in ("%", "percent"):
        return _PERCENT.match(t, number.end) is not None
    for name in _UNIT_ALIASES.get(folded, (folded,)):
        edge = r"(?![^\W_])" if name[-1].isalnum() else ""
        if re.compile(r"\s?" + re.escape(name) + edge).match(t, number.end):
            return True
        head = t[max(0, number.start - len(name) - 2) : number.start]
        edge = r"(?<![^\W_])" if name[0].isalnum() else ""
        if re.search(edge + re.escape(name) + r"\s?$", head):
            return True
    return False


def numbers_in(text: str) -> list[Decimal]:
    """Every number `text` states, in order; an ambiguous one (45,550) gives both readings,
    the grouped one first. See the module docstring for what counts as a number."""
    return [v for n in number_spans(prepare(text)) for v in n.values]


def number_mentions(text: str) -> list[tuple[Decimal, ...]]:
    """Each number `text` states, in order, as its readings (two for an ambiguous 45,550)."""
    return [n.values for n in number_spans(prepare(text))]


def states_number(text: str, value: float | int | str, *, unit: str | None = None) -> bool:
    """Whether `text` states a number equal to `value` (exactly, as a Decimal), whatever its
    format; with `unit`, that unit must go with it ("%": a percent sign or "percent" after)."""
    wanted = as_decimal(value)
    t = prepare(text)
    for number in number_spans(t):
        if wanted in number.values and (unit is None or has_unit(t, number, unit)):
            return True
    return False


# ---------------------------------------------------------------------------------------
# Dates

_MONTHS = _index(
    "january jan|february feb|march mar|april apr|may|june jun|july jul|august aug|september sept sep"
    "|october oct|november nov|december dec",
    1,
)
_WEEKDAYS = _index(
    "monday mon|tuesday tues tue|wednesday wed|thursday thurs thur thu|friday fri|saturday sat|sunday sun"
)
_FULL_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _alternatives(names: Sequence[str]) -> str:
    return "|".join(sorted(names, key=len, reverse=True))


_WD = r"(?:(?P<wd>" + _alternatives(list(_WEEKDAYS)) + r")(?![a-z])\.?,?\s(?:the\s)?)?"
# an abbreviation may take a dot; after a full name a dot ends the sentence
_MON = r"(?P<m>{}(?![a-z])|(?:{})(?![a-z])\.?)".format(
    _alternatives([m for m in _MONTHS if len(m) > 4 or m in ("may", "june", "july")]),
    _alternatives([m for m in _MONTHS if len(m) <= 4 and m not in ("may", "june", "july")]),
)
_YEAR = r"(?:,?[\s-](?P<y>(?:19|20)[0-9]{2})(?![0-9]))?"
_DAY = r"(?P<d>[0-9]{1,2})(?:st|nd|rd|th)?(?![0-9]|[:.h][0-9]|[a-z])"
_NAMED_DATES = [
    re.compile(r"(?<![\w.:/])" + _WD + r"(?:the\s)?" + _DAY + r"[\s-]?(?:of\s)?" + _MON + _YEAR),
    re.compile(r"(?<![\w.:/])" + _WD + _MON + r"[\s-]?(?:the\s)?" + _DAY + _YEAR),
]
_ISO_DATE = re.compile(
    r"(?<![\w.:/-])"
    + _WD
    + r"(?P<y>[0-9]{4})(?P<s>[-/.])(?P<m>[0-9]{1,2})(?P=s)(?P<d>[0-9]{1,2})(?![0-9]|[.,:/-][0-9])"
)
_NUMERIC_DATE = re.compile(
    r"(?<![\w.:/-])"
    + _WD
    + r"(?P<a>[0-9]{1,2})(?P<s>[-/.])(?P<b>[0-9]{1,2})(?P=s)(?P<y>[0-9]{4}|[0-9]{2})(?![0-9]|[.,:/-][0-9])"
)
_WEEKDAY_ALONE = re.compile(rf"(?<![a-z])(?P<wd>{'|'.join(_FULL_WEEKDAYS)})(?![a-z])")


@dataclass(frozen=True)
class DateMention:
    start: int
    end: int
    days: tuple[tuple[int | None, int, int], ...]  # (year or None, month, day) readings
    weekday: int | None
    full: bool  # names a day of a month (not a weekday alone)

    def names(self, day: dt.date) -> bool:
        if self.weekday is not None and self.weekday != day.weekday():
            return False
        if not self.full:
            return True
        return any(m == day.month and d == day.day and y in (None, day.year) for y, m, d in self.days)


def _valid(year: int | None, month: int, day: int) -> bool:
    try:
        dt.date(2000 if year is None else year, month, day)
    except ValueError:
        return False
    return True


def _mention(m: re.Match[str], days: list[tuple[int | None, int, int]]) -> DateMention | None:
    days = [d for d in days if _valid(*d)]
    weekday = _WEEKDAYS[m.group("wd")] if m.group("wd") else None
    if not days:
        return None
    if weekday is not None:
        # a weekday that fits no reading leaves a mention that names no day
        days = [d for d in days if d[0] is None or dt.date(d[0], d[1], d[2]).weekday() == weekday]
    return DateMention(m.start(), m.end(), tuple(days), weekday, True)


@lru_cache(maxsize=READINGS_KEPT)
def date_mentions(t: str) -> tuple[DateMention, ...]:
    """Every date named in prepared text `t`, and every full weekday name outside them."""
    found: list[DateMention | None] = []
    for pattern in _NAMED_DATES:
        for m in pattern.finditer(t):
            year = int(m.group("y")) if m.group("y") else None
            found.append(_mention(m, [(year, _MONTHS[m.group("m").rstrip(".")], int(m.group("d")))]))
    for m in _ISO_DATE.finditer(t):
        found.append(_mention(m, [(int(m.group("y")), int(m.group("m")), int(m.group("d")))]))
    for m in _NUMERIC_DATE.finditer(t):
        year = int(m.group("y")) + (2000 if len(m.group("y")) == 2 else 0)
        a, b = int(m.group("a")), int(m.group("b"))
        readings: list[tuple[int | None, int, int]] = [(year, b, a)]
        if m.group("s") != ".":
            readings.append((year, a, b))
        found.append(_mention(m, readings))
    mentions = [d for d in found if d is not None]
    spans = Spans((d.start, d.end) for d in mentions)
    for m in _WEEKDAY_ALONE.finditer(t):
        if not spans.overlaps(m.start(), m.end()):
            mentions.append(DateMention(m.start(), m.end(), (), _WEEKDAYS[m.group("wd")], False))
    return tuple(sorted(mentions, key=lambda d: d.start))


def states_date(text: str, day: dt.date) -> bool:
    """Whether `text` names calendar day `day` (a year, when given, must match; a weekday,
    when given, must be right). See the module docstring for the forms read."""
    return any(d.full and d.names(day) for d in date_mentions(prepare(text)))


# ---------------------------------------------------------------------------------------
# Times

_AMPM = r"(?:\s?(?P<a{n}>[ap])\.?m(?![a-z])\.?)?"
_CLOCK = r"(?P<h{n}>[0-9]{{1,2}})(?:(?P<s{n}>[:.h])(?P<m{n}>[0-9]{{2}})(?::[0-9]{{2}})?)?"
_TIME = re.compile(
    r"(?<![0-9.:,$€£¥])"
    + _CLOCK.format(n=1)
    + _AMPM.format(n=1)
    + r"(?:\s?(?:-|to|until|till)\s?"
    + _CLOCK.format(n=2)
    + _AMPM.format(n=2)
    + r")?(?![0-9]|[.:,][0-9])"
)
_NOON = re.compile(r"(?<![a-z0-9])(?:12\s?)?(?P<w>noon|midday|midnight)(?![a-z])")

_ZONE_TABLE = """
UTC: utc gmt z
America/New_York: et est edt eastern new_york nyc boston washington
America/Chicago: ct cst cdt central chicago
America/Denver: mt mst mdt mountain denver
America/Los_Angeles: pt pst pdt pacific los_angeles san_francisco seattle
America/Anchorage: akst akdt
Pacific/Honolulu: hst
America/Toronto: toronto
America/Vancouver: vancouver
America/Mexico_City: mexico_city
America/Sao_Paulo: brt sao_paulo
Europe/Lisbon: wet lisbon
Europe/London: bst british_summer_time london
Europe/Dublin: dublin
Europe/Berlin: cet cest mez mesz central_european_time central_european_summer_time berlin munich frankfurt hamburg
Europe/Paris: paris
Europe/Madrid: madrid barcelona
Europe/Rome: rome milan
Europe/Amsterdam: amsterdam
Europe/Brussels: brussels
Europe/Vienna: vienna
Europe/Zurich: zurich geneva
Europe/Stockholm: stockholm
Europe/Oslo: oslo
Europe/Copenhagen: copenhagen
Europe/Helsinki: helsinki
Europe/Warsaw: warsaw
Europe/Prague: prague
Europe/Athens: eet eest athens
Europe/Istanbul: istanbul
Europe/Moscow: msk moscow
Asia/Kolkata: ist mumbai delhi new_delhi bangalore
Asia/Dubai: gst dubai
Asia/Jerusalem: tel_aviv
Asia/Singapore: sgt singapore
Asia/Hong_Kong: hkt hong_kong
Asia/Shanghai: beijing shanghai
Asia/Tokyo: jst tokyo
Asia/Seoul: kst seoul
Australia/Sydney: aest aedt sydney
Australia/Melbourne: melbourne
Pacific/Auckland: nzst nzdt auckland
Africa/Johannesburg: johannesburg
Africa/Cairo: cairo
Africa/Lagos: lagos
Africa/Nairobi: nairobi
"""
# abbreviations and city names (underscore = space) written after a time -> IANA zone
_ZONE_NAMES = {
    name.replace("_", " "): zone
    for line in _ZONE_TABLE.strip().splitlines()
    for zone, names in [line.split(": ")]
    for name in names.split()
}
_ZONE_AFTER = re.compile(
    r"\s?(?:\(\s?)?(?:in\s)?(?:"
    r"(?:utc|gmt)\s?(?P<sign>[+-])\s?(?P<oh>[0-9]{1,2})(?::?(?P<om>[0-9]{2}))?(?![0-9])"
    r"|(?P<isign>[+-])(?P<ioh>[0-9]{2}):?(?P<iom>[0-9]{2})(?![0-9])"
    r"|(?P<iana>[a-z]+(?:/[a-z0-9_+-]+)+)"
    r"|(?P<word>" + _alternatives([re.escape(k) for k in _ZONE_NAMES]) + r")(?![a-z])"
    r")"
)


@dataclass(frozen=True)
class TimeMention:
    start: int
    end: int
    minute: int  # minutes since midnight
    zone: dt.tzinfo | None


@cache
def _iana_names() -> dict[str, str]:
    return {name.casefold(): name for name in available_timezones()}


@cache
def zone_of(name: str) -> dt.tzinfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}; give an IANA name like 'Europe/Berlin'") from None


def named_zone(t: str, end: int) -> tuple[dt.tzinfo | None, int]:
    """The zone named right after a time ending at `end`, and where that name ends."""
    m = _ZONE_AFTER.match(t, end)
    if m is None:
        return None, end
    stop = m.end() + 1 if t.startswith(")", m.end()) else m.end()
    if m.group("oh") or m.group("ioh"):
        sign = m.group("sign") or m.group("isign")
        hours, minutes = int(m.group("oh") or m.group("ioh")), int(m.group("om") or m.group("iom") or 0)
        if hours > 14 or minutes > 59:
            return None, end
        offset = dt.timedelta(hours=hours, minutes=minutes)
        return dt.timezone(-offset if sign == "-" else offset), stop
    if m.group("iana"):
        name = _iana_names().get(m.group("iana"))
        return (zone_of(name), stop) if name else (None, end)
    return zone_of(_ZONE_NAMES[m.group("word")]), stop


def _clock(hour: str, minute: str | None, meridiem: str | None) -> int | None:
    h, mi = int(hour), int(minute or 0)
    if mi > 59:
        return None
    if meridiem:
        if 1 <= h <= 12:
            h = h % 12 + (12 if meridiem == "p" else 0)
        elif not (13 <= h <= 23 and meridiem == "p"):
            return None
    elif h > 23:
        return None
    return h * 60 + mi


def time_mentions(t: str, dates: Spans) -> Iterator[TimeMention]:
    for m in _TIME.finditer(t):
        if dates.overlaps(m.start(), m.end()):
            continue
        zone, _ = named_zone(t, m.end())
        h1, m1, a1, h2, m2, a2 = m.group("h1", "m1", "a1", "h2", "m2", "a2")
        second = _clock(h2, m2, a2) if h2 is not None and (m2 or a2) else None
        first = None
        if m1 or a1 or second is not None:
            first = _clock(h1, m1, a1 or a2)
            if not a1 and a2 and first is not None and second is not None and first > second:
                first = _clock(h1, m1, "a" if a2 == "p" else "p")
        for minute in (first, second):
            if minute is not None:
                yield TimeMention(m.start(), m.end(), minute, zone)
    for m in _NOON.finditer(t):
        zone, _ = named_zone(t, m.end())
        yield TimeMention(m.start(), m.end(), 0 if m.group("w") == "midnight" else 720, zone)


def sentence_bounds(t: str, spans: Spans) -> list[int]:
    """Where sentences of `t` end, outside the given spans (the dot of "p.m." or "Mar."
    ends nothing); a mention's sentence is `bisect_left(bounds, mention.start)`."""
    return [
        m.start()
        for m in re.finditer(r"[.!?;](?=\s|$)|\n\n", t)
        if not spans.overlaps(m.start(), m.start() + 1)
    ]


@dataclass(frozen=True)
class TimeLayout:
    """The dates and times a prepared text names, and where its sentences end."""

    dates: tuple[DateMention, ...]
    times: tuple[TimeMention, ...]
    bounds: list[int]

    def sentence(self, at: int) -> int:
        """The index of the sentence holding position `at`."""
        return bisect_left(self.bounds, at)

    def dates_in(self, sentence: int) -> list[DateMention]:
        return [d for d in self.dates if self.sentence(d.start) == sentence]


@lru_cache(maxsize=READINGS_KEPT)
def time_layout(t: str) -> TimeLayout:
    """The dates, times and sentence ends of prepared text `t`."""
    dates = date_mentions(t)
    full_dates = Spans((d.start, d.end) for d in dates if d.full)
    times = tuple(time_mentions(t, full_dates))
    bounds = sentence_bounds(
        t, Spans([*((d.start, d.end) for d in dates), *((m.start, m.end) for m in times)])
    )
    return TimeLayout(dates, times, bounds)


def times_naming(
    t: str, instant: dt.datetime, zones: Sequence[dt.tzinfo], *, date_required: bool = False
) -> list[tuple[TimeMention, dt.date]]:
    """The time mentions of prepared text `t` that name `instant` (in the zone named after
    them, else in one of `zones`), each with the local date it names; dates in the same
    sentence agree with that date (and, with `date_required`, state it)."""
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"instant {instant.isoformat()} has no time zone; give an aware datetime")
    layout = time_layout(t)
    found = []
    for mention in layout.times:
        for zone in [mention.zone] if mention.zone else zones:
            local = instant.astimezone(zone)
            if local.hour * 60 + local.minute != mention.minute:
                continue
            near = layout.dates_in(layout.sentence(mention.start))
            agrees = not near or any(d.names(local.date()) for d in near)
            stated = any(d.full and d.names(local.date()) for d in near)
            if agrees and (stated or not date_required):
                found.append((mention, local.date()))
                break
    return found


def states_time(
    text: str,
    instant: dt.datetime,
    *,
    zones: Sequence[str],
    date_required: bool = False,
) -> bool:
    """Whether `text` names `instant` as a wall-clock time, in the zone named right after the
    time or else in one of `zones` (IANA names); dates in the same sentence must agree with
    the local date, and with `date_required` that sentence must state it. See the module
    docstring for the forms read."""
    default_zones = [zone_of(z) for z in zones]
    return bool(times_naming(prepare(text), instant, default_zones, date_required=date_required))


# ---------------------------------------------------------------------------------------
# Tickets, people, phrases

_TICKET_LABEL = (
    r"(?<![a-z])(?:ticket|issue|incident)s?\s?(?:#|no\.?|nr\.?|num\.?|number|numbers|nos\.?|id)?\s?[:#-]?\s?"
)
TICKET_LABEL_BEFORE = re.compile(_TICKET_LABEL + r"#?$")
"""The label of a ticket reference ("ticket ", "Ticket-", "issue no. ") that ends a prepared
text: it belongs to the reference after it, so its "-" is no range."""
_TICKET_REF = re.compile(
    r"(?<![\w&#])#0*(?P<hash>[0-9]+)(?![0-9]|[.,][0-9])"
    r"|" + _TICKET_LABEL + r"(?P<list>#?[0-9]+(?:\s?(?:,|&|/|and|or)\s?#?[0-9]+)*)(?![0-9]|[.,][0-9])"
)


def ticket_mentions(t: str) -> list[tuple[int, int, int]]:
    """Every ticket reference in prepared text `t`, as (start, end, ticket id); each id of a
    list ("tickets 60, 61 and 62") is a mention of its own."""
    found = []
    for m in _TICKET_REF.finditer(t):
        if m.group("hash"):
            if len(m.group("hash")) <= 18:
                found.append((m.start(), m.end(), int(m.group("hash"))))
            continue
        for n in re.finditer(r"[0-9]+", m.group("list")):
            if len(n.group()) <= 18:
                found.append((m.start("list") + n.start(), m.start("list") + n.end(), int(n.group())))
    return found


def states_ticket(text: str, ticket_id: int) -> bool:
    """Whether `text` refers to ticket `ticket_id` (#61, ticket 61, ticket no. 61, Ticket-61,
    tickets 60 and 61); a bare number, (61), T-61 or #610 do not refer to ticket 61."""
    return any(i == ticket_id for _, _, i in ticket_mentions(prepare(text)))


_TITLES = {"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "sir", "dame", "herr", "frau"}
_SUFFIXES = {"md", "phd", "jr", "sr", "ii", "iii", "iv", "esq", "mba", "dds", "dvm", "rn", "cpa"}


def _name_tokens(name: str) -> list[str]:
    tokens = re.findall(r"[^\W_]+(?:['-][^\W_]+)*", _fold(name))
    while tokens and tokens[0] in _TITLES:
        tokens.pop(0)
    while tokens and tokens[-1] in _SUFFIXES:
        tokens.pop()
    return tokens


def _token_pattern(token: str) -> str:
    return re.escape(token).replace(r"\-", r"[-\s]?").replace("'", "'?")


def person_spans(t: str, name: str, email: str) -> list[tuple[int, int]]:
    """Where prepared text `t` names the person, by full name or email address."""
    tokens = _name_tokens(name)
    address = _plain(email)
    if not tokens and not address:
        raise ValueError("give a name or an email address to look for")
    spans = []
    if address:
        pattern = r"(?<![\w.+-])" + re.escape(address) + r"(?![\w-]|\.\w)"
        spans += [(m.start(), m.end()) for m in re.finditer(pattern, t)]
    if tokens:
        parts = [_token_pattern(tok) for tok in tokens]
        title = rf"(?:(?:{'|'.join(sorted(_TITLES))})\.?\s)?"
        orders = [parts[0] + (r"\s(?:[a-z]\.?\s)?" + r"\s".join(parts[1:]) if len(parts) > 1 else "")]
        orders += [
            r"\s".join(parts[k:]) + r"\s?,\s?" + title + r"\s".join(parts[:k]) for k in range(1, len(parts))
        ]
        pattern = r"(?<![^\W_])(?:" + "|".join(orders) + r")(?![^\W_])"
        spans += [(m.start(), m.end()) for m in re.finditer(pattern, t)]
    return sorted(spans)


def states_person(text: str, name: str, email: str) -> bool:
    """Whether `text` names the person by full name (titles and suffixes ignored, "Last,
    First" too) or by email address; the first name alone does not count."""
    return bool(person_spans(prepare(text), name, email))


def phrase_pattern(phrase: str) -> str:
    """The pattern `states_text` looks for: the phrase on word boundaries, any whitespace
    between its words; a phrase with digits matched whatever its separators."""
    wanted = _plain(phrase)
    if not wanted:
        raise ValueError("the phrase to look for is empty")
    if any(c.isdigit() for c in wanted):
        return _identifier_pattern(wanted)
    pattern = re.escape(wanted).replace("\\ ", r"\s")
    if wanted[0].isalnum():
        pattern = r"(?<![^\W_])" + pattern
    if wanted[-1].isalnum():
        pattern += r"(?![^\W_])"
    return pattern


def states_text(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` on word boundaries, ignoring case, accents, spacing,
    and typographic quotes and dashes. A phrase with digits (an order number, a version) is
    matched whatever the separators between its letter and digit runs (PO-7781 = PO 7781 =
    PO7781; 4.2.1 also in v4.2.1), but never inside a longer number."""
    return re.search(phrase_pattern(phrase), _plain(text)) is not None


def _identifier_pattern(wanted: str) -> str:
    tokens = re.findall(r"\d+|[^\W\d_]+", wanted)
    if not tokens:
        return re.escape(wanted)
    pattern = r"[\W_]{0,3}".join(re.escape(t) for t in tokens)
    lead = r"(?<!\d)(?<!\d[.,])" if tokens[0][0].isdigit() else r"(?<![^\W_])"
    tail = r"(?!\d)(?![.,]\d)" if tokens[-1][-1].isdigit() else r"(?![^\W_])"
    return lead + pattern + tail


# ---------------------------------------------------------------------------------------
# Leaks

_MAX_GAP = 3  # separator characters allowed between two characters of a disguised secret


def _spread_match(t: str, secret: str) -> bool:
    """The secret's letters and digits, in order, with only short runs of other characters
    between them, not extending a digit run of the text."""
    positions = [i for i, c in enumerate(t) if c.isalnum()]
    compact = "".join(t[i] for i in positions)
    at = compact.find(secret)
    while at >= 0:
        first, last = positions[at], positions[at + len(secret) - 1]
        joins_digits = (secret[0].isdigit() and first > 0 and t[first - 1].isdigit()) or (
            secret[-1].isdigit() and last + 1 < len(t) and t[last + 1].isdigit()
        )
        if not joins_digits and all(
            positions[k + 1] - positions[k] <= _MAX_GAP + 1 for k in range(at, at + len(secret) - 1)
        ):
            return True
        at = compact.find(secret, at + 1)
    return False


def _secret_number(secret: str) -> tuple[Decimal, ...]:
    """The readings of a secret that is one number with at most a currency or percent sign."""
    t = prepare(secret)
    numbers = number_spans(t)
    if len(numbers) != 1:
        return ()
    rest = (t[: numbers[0].start] + " " + t[numbers[0].end :]).strip(" %" + CURRENCY_SIGNS)
    return numbers[0].values if rest in ("", *CURRENCY_CODES) else ()


def _digit_windows(t: str) -> Iterator[str]:
    """Every 6 consecutive digits of `t`, read across separators but not across letters."""
    for chunk in re.split(r"[^\W\d_]+", t):
        digits = "".join(c for c in chunk if c.isdigit())
        for i in range(len(digits) - 5):
            yield digits[i : i + 6]


def leaks(text: str, secret: str) -> bool:
    """Whether `secret` appears in `text` in any disguise: case, separators or spacing
    changed, a numeric secret restated in another number format, or (for 8+ digits) six
    consecutive digits of it. See the module docstring for exactly what counts."""
    wanted = _plain(secret)
    if not wanted:
        raise ValueError("the secret to look for is empty")
    t = _plain(text)
    compact = "".join(c for c in wanted if c.isalnum())
    if compact and _spread_match(t, compact):
        return True
    if not compact and wanted in t:
        return True
    readings = set(_secret_number(secret))
    if readings and readings.intersection(numbers_in(text)):
        return True
    digits = "".join(c for c in wanted if c.isdigit())
    if len(digits) >= 8:
        windows = {digits[i : i + 6] for i in range(len(digits) - 5)}
        return any(w in windows for w in _digit_windows(t))
    return False
