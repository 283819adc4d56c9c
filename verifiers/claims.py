"""Claims: whether a text asserts a fact, not merely mentions its value.

A verdict is a reward a policy optimises, and the cheapest way to mention a value is to
mention every candidate. So a checked fact is stated only when the text makes its value the
claim. A mention of the value counts when it is:

- asserted: not negated ("not at 16:00", "It is not the case that ...", "16:00 is wrong",
  "never #61") and not in an old-value role ("moved from 9 March to 3 March", "instead of
  #62", "GO-95359 is now GO-39257", "previously EUR 400", "GO-1 -> GO-2");
- alone: not joined to another value of its kind as an alternative ("#61 or #62", "12-13
  headsets", "GBP 41.50/45.50", "between 15:00 and 16:00") and not approximated ("about EUR
  400", "roughly 12", "at least 3 days");
- uncontradicted: no other value of the same kind and quantity is asserted anywhere in the
  text, unless the check lists that value too (another of its facts, or its `context`):
  another amount in the same currency or percentage, another count of the same noun, another
  ticket, another date or a weekday that does not fit the date, another time or a day (in a
  sentence without a time of its own) that does not fit the time, another reference of the same shape
  (GO-39257 beside GO-95359).

Nor is a value stated that the text also denies ("EUR 450. To be clear, it is not EUR 450."),
nor any value of a text that offers others ("P.S. It could also be ...", "Candidates: ...",
"or possibly"). A number in digits with nothing beside it to say what it counts ("Also:
4,501.") competes with a number of any quantity; years and numbers in words do not. A phrase
of digit groups (a phone number's "7946 0321") is a reference: another of the same shape
contradicts it.

An `absent` fact is violated when its value is asserted (even hedged); naming it in its old
role ("moved from Monday 9 March to Tuesday 3 March") or negated is allowed.

Everything here reads the text the fact matchers prepare (`facts.prepare`), is deterministic,
and is linear in the text but for the pairs of mentions of one kind, which are few.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum

from . import facts

__all__ = [
    "Claim",
    "Mention",
    "date_mentions",
    "judge_claim",
    "number_mentions",
    "person_mentions",
    "reference_shape",
    "text_mentions",
    "ticket_mentions",
    "time_mentions",
]


class Role(Enum):
    CURRENT = "current"
    NEGATED = "negated"
    OLD = "old"


@dataclass(frozen=True)
class Mention:
    """One mention of a value of the fact's kind in a prepared text.

    `wanted`: it names the fact's value. `allowed`: it names a value the check also lists.
    `groups`: what it competes with; two mentions compete when they share a group (an
    amount in EUR, a count of headsets, the tickets, the times)."""

    start: int
    end: int
    wanted: bool
    allowed: bool = False
    groups: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Claim:
    """What a text says of a fact: `stated` (asserted, alone, uncontradicted), `asserted`
    (some mention of the value is asserted, hedged or not: what an absent fact forbids), and
    in words why not."""

    stated: bool
    asserted: bool
    reason: str


# ---------------------------------------------------------------------------------------
# Words around a mention

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|[0-9][0-9.,:]*|[^\sa-z0-9]")
# Words that may stand between a cue and the value it bears on: "not at 16:00", "not the
# EUR 400", "instead of ticket #62", "was set to 5 March".
_FILLER = (
    frozenset(
        [
            "a",
            "an",
            "the",
            "at",
            "on",
            "in",
            "for",
            "by",
            "of",
            "to",
            "is",
            "are",
            "was",
            "were",
            "be",
            "been",
            "being",
            "it",
            "its",
            "this",
            "that",
            "set",
            "exactly",
            "just",
            "precisely",
            "actually",
            "really",
            "currently",
            "now",
            "ticket",
            "tickets",
            "issue",
            "incident",
            "number",
            "no",
            "nr",
            "id",
            "our",
            "your",
            "their",
            "my",
            "his",
            "her",
            "amount",
            "total",
            "sum",
            "price",
            "figure",
            "value",
            "date",
            "day",
            "time",
            "slot",
            "reference",
            "ref",
            "equal",
            "equals",
            "as",
            "which",
            "with",
            ":",
            "#",
            "(",
            ")",
            '"',
            "'",
            ".",
            ",",
            "-",
            "$",
            "€",
            "£",
            "¥",
            "₹",
            "per",
            "cent",
            "percent",
        ]
    )
    | frozenset(facts.CURRENCY_CODES)
    | frozenset(
        [
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
            "sunday",
            "mon",
            "tue",
            "tues",
            "wed",
            "thu",
            "thur",
            "thurs",
            "fri",
            "sat",
            "sun",
        ]
    )
)
_NEGATION = frozenset(
    [
        "not",
        "no",
        "never",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "doesn't",
        "don't",
        "didn't",
        "won't",
        "cannot",
        "can't",
        "couldn't",
        "shouldn't",
        "neither",
        "nor",
        "except",
        "excluding",
        "wrong",
        "incorrect",
        "false",
        "untrue",
        "invalid",
    ]
)
_OLD = frozenset(
    [
        "previously",
        "formerly",
        "originally",
        "old",
        "earlier",
        "prior",
        "replacing",
        "replaces",
        "replaced",
        "superseding",
        "superseded",
        "outdated",
        "obsolete",
    ]
)
_TWO_WORD_OLD = {("instead", "of"), ("rather", "than"), ("other", "than"), ("in", "place"), ("no", "longer")}
_APPROXIMATE = frozenset(
    [
        "about",
        "around",
        "approximately",
        "approx",
        "roughly",
        "circa",
        "ca",
        "some",
        "maybe",
        "perhaps",
        "possibly",
        "probably",
        "likely",
        "nearly",
        "almost",
        "either",
        "between",
        "guess",
        "guessing",
        "estimate",
        "estimated",
    ]
)
_TWO_WORD_APPROXIMATE = {
    ("at", "least"),
    ("at", "most"),
    ("up", "to"),
    ("more", "than"),
    ("less", "than"),
    ("fewer", "than"),
    ("greater", "than"),
    ("might", "be"),
    ("could", "be"),
    ("may", "be"),
}
_SENTENCE_NEGATION = re.compile(
    r"(?:not|n't|never)\s(?:the\scase|true|so|correct|right)\sthat|(?:false|untrue|incorrect|wrong)\sthat"
    r"|not\strue:|contrary\sto\s(?:what|the)"
    r"|(?<![a-z])(?:nobody|no\sone|no-one)\s(?:said|says|claimed|claims|confirmed|confirms|thinks|thought)"
)
_AFTER_NEGATED = re.compile(
    r"\s?\)?\s?,?\s?(?:(?:is|was|are|were|seems|looks)\s)?(?:(?:now|also)\s)?"
    r"(?:wrong|incorrect|false|outdated|obsolete|invalid|superseded"
    r"|not\s(?:right|correct|valid|current|accurate|true|the\scase|it|so)|no\slonger\b)"
    r"|\s?(?:is|was)\sn't\b|\s?isn't\b|\s?wasn't\b"
    r"|\s?[,\u2014\u2013-]*\s?(?:wait,?\sno|scratch\sthat|strike\sthat)\b"
)
_AFTER_APPROXIMATE = re.compile(r"\s?(?:or\sso|or\sthereabouts|give\sor\stake|-?ish\b|\+/-|±)")
# Unsure of a value, after it: "EUR 450 (unverified)", "#61, to be confirmed".
_AFTER_UNSURE = re.compile(
    r"\s?[,(\u2014\u2013-]?\s?(?:unverified|unconfirmed|tbc|to\sbe\sconfirmed|not\s(?:yet\s)?(?:confirmed|verified))\b"
)
# The value as what a question or a condition asks of something, not as what it is: "Is it
# #61?", "Could the total be EUR 450?", "If it is #61, ...". Up to two short words (a label,
# a currency) may stand between. "Could you join at 16:00?" asks the reader, so it is a claim.
_ASKED_OF = r"(?:it|that|this|the\s[a-z]+(?:\s[a-z]+)?)"
_QUESTION_LEAD = re.compile(
    rf"(?<![a-z])(?:(?:is|are|was|were)\s{_ASKED_OF}|(?:could|might|may|would|can)\s{_ASKED_OF}\sbe)"
    r"(?:\s\S{1,8}){0,2}\s?$"
)
_CONDITION_LEAD = re.compile(
    rf"(?<![a-z])if\s{_ASKED_OF}\s(?:is|was|turns\sout\sto\sbe)(?:\s\S{{1,8}}){{0,2}}\s?$"
)
# A text that tells the reader to ignore what it said takes all of it back.
_TAKES_BACK = re.compile(
    r"(?<![a-z])(?:ignore|disregard)\s(?:the|my|that)\s(?:previous|last|above|earlier|first)"
    r"(?:\s(?:sentence|line|message|figure|value|number|answer|part))?(?![a-z])"
)
_CHANGE_VERB = re.compile(
    r"(?<![a-z])(?:mov|chang|reschedul|shift|push|brought|bring|correct|updat|increas|decreas|rais|lower"
    r"|reduc|cut|went|go(?:es|ne)?|rose|fell|drop|revis|amend|switch|swap|replac|renam|retitl|reassign"
    r"|postpon|delay|advanc|adjust)[a-z]*"
)
_CHANGED_FROM = re.compile(_CHANGE_VERB.pattern + r"(?:\s(?:it|this|that|them))?\sfrom\s(?:\S+\s?)?$")
# A text that offers other values of what it states hedges all of them, wherever it does so
# ("P.S. It could also be ...", "Candidates: ...", "or possibly ...").
_OFFERS_OTHERS = re.compile(
    r"(?<![a-z])(?:(?:could|might|may)\s(?:also|equally|just\sas\swell)\sbe|or\s(?:possibly|perhaps|maybe)"
    r"|(?:other\s)?(?:candidates|possibilities|possible\s(?:values|answers))\s?:|other\s(?:values|figures|options)"
    r"\s(?:seen|found|mentioned|include|are))(?![a-z])"
)
_ALTERNATIVE = frozenset({"or", "/", "either", "versus", "vs", "between", "and/or", "nor"})
_RANGE = frozenset({"-", "to", "until", "till", "through", "and"})
_CONNECTOR_FILLER = _FILLER | frozenset({"and", ",", "or", "/", "-", "to", "either", "vs", "versus", "&"})


def _clause_start(t: str, at: int) -> int:
    """Where the clause holding position `at` starts: after the last sentence or clause mark
    (. ! ? ; : a newline, a comma, "but") before it."""
    head = t[:at]
    marks = [head.rfind(c) for c in ".!?;\n,"] + [head.rfind(" but "), head.rfind(" however ")]
    # a dot inside a number, an abbreviation ("no.", "p.m.") or a time does not end a clause
    best = -1
    for m in marks:
        if m > best and not (head[m] == "." and (m + 1 < len(head) and not head[m + 1].isspace())):
            best = m
    return best + 1


def _clause_end(t: str, at: int) -> int:
    found = [t.find(c, at) for c in "!?;\n"] + [t.find(". ", at), t.find(" but ", at), t.find(", ", at)]
    found = [f for f in found if f >= 0]
    return min(found) if found else len(t)


def _sentence_start(t: str, at: int) -> int:
    head = t[:at]
    return max(head.rfind(". "), head.rfind("! "), head.rfind("? "), head.rfind(";"), head.rfind("\n")) + 1


def _words_before(t: str, m: Mention, others: Sequence[Mention]) -> list[str]:
    """The words of the mention's clause before it, nearest first, stopping at another mention."""
    start = _clause_start(t, m.start)
    for o in others:
        if start <= o.end <= m.start and o is not m:
            start = max(start, o.end)
    return [w for w in reversed(_TOKEN.findall(t[start : m.start]))]


# Words an approximation may stand across: "about EUR 400", "roughly the 12", "around #61"; but
# "the line you asked about is 400" does not approximate 400.
_TIGHT = frozenset(
    {"the", "a", "an", "#", "ticket", "tickets", "number", "no", "nr", "id", ":", "(", "-"}
) | (frozenset(facts.CURRENCY_CODES) | frozenset("$€£¥₹"))


def _cue(words: list[str]) -> str | None:
    """The first word before a mention that is not filler, read with the word before it.
    An approximation counts only across the tight filler of a figure ("about EUR")."""
    tight = True
    for i, word in enumerate(words):
        if word in _FILLER and not (word == "no" and (i == 0 or words[i - 1] != ".")):
            tight = tight and word in _TIGHT
            continue
        # read with the word before it ("rather than") or the filler after it ("instead of")
        pairs = [(words[i + 1] if i + 1 < len(words) else "", word), (word, words[i - 1] if i else "")]
        if ("other", "than") in pairs:
            return "negated"
        if any(p in _TWO_WORD_OLD for p in pairs):
            return "old"
        if any(p in _TWO_WORD_APPROXIMATE for p in pairs):
            return "approximate" if tight else None
        if word in _NEGATION or word.endswith("n't"):
            return "negated"
        if word in _OLD:
            return "old"
        if word in _APPROXIMATE or word == "~":
            return "approximate" if tight else None
        return None
    return None


def _role(t: str, m: Mention, same_kind: Sequence[Mention]) -> Role:
    """Whether the mention is asserted, negated, or named as the old value of a change."""
    words = _words_before(t, m, same_kind)
    cue = _cue(words)
    if cue == "negated":
        return Role.NEGATED
    if cue == "old":
        return Role.OLD
    sentence = t[_sentence_start(t, m.start) : m.start]
    if _CHANGED_FROM.search(sentence):
        return Role.OLD  # "16:00 (moved from 15:00)", but not "lower my gift from 25 February"
    if _SENTENCE_NEGATION.search(sentence):
        return Role.NEGATED
    if _AFTER_NEGATED.match(t, m.end):
        return Role.NEGATED
    if _is_old_of_change(t, m, same_kind, words):
        return Role.OLD
    return Role.CURRENT


def _is_old_of_change(t: str, m: Mention, same_kind: Sequence[Mention], words: list[str]) -> bool:
    """ "from X to Y", "X is now Y", "X -> Y", "X changed to Y": X, when a later mention of
    the same kind completes the change."""
    later = [
        o
        for o in same_kind
        if (o.start >= m.end and o.groups & m.groups) or (o.start >= m.end and not m.groups)
    ]
    if not later:
        return False
    nxt = min(later, key=lambda o: o.start)
    gap = t[m.end : nxt.start]
    if len(gap) > 60 or any(c in gap for c in ".;\n!?"):
        return False
    if re.search(r"->|=>|→|»", gap):
        return True
    if re.search(
        r"(?<![a-z])(?:is|are|was|has\sbeen|have\sbeen)?\s?now(?![a-z])|(?<![a-z])becomes?(?![a-z])", gap
    ):
        return True
    if _CHANGE_VERB.search(gap) and re.search(r"(?<![a-z])(?:to|into|with|for|by)(?![a-z])", gap):
        return True
    first = next((w for w in words if w not in ("the", "a", "an", "#", "ticket", "$", "€", "£")), "")
    if first == "from" and re.search(r"(?<![a-z])to(?![a-z])", gap):
        sentence = t[_sentence_start(t, m.start) : m.start]
        return bool(_CHANGE_VERB.search(sentence))
    return False


_UNSURE = re.compile(
    r"(?<![a-z])(?:not\s(?:sure|certain)|unsure|uncertain|unclear|(?:don't|do\snot|doesn't)\sknow|guess"
    r"|probably|possibly|perhaps|maybe|presumably|i\ssuppose"
    r"|(?:can(?:not|'t)|could(?:\snot|n't)|unable\sto)\s(?:confirm|verify)|not\s(?:yet\s)?(?:confirmed|verified)"
    r"|unverified|unconfirmed|to\sbe\sconfirmed|(?:it|that|this)\s(?:might|could|may)\sbe"
    r"|unless\si(?:'m|\sam)\s(?:wrong|mistaken)|if\si(?:'m|\sam)\snot\s(?:wrong|mistaken))(?![a-z])"
)


def _sentence_end(t: str, at: int) -> int:
    found = [f for f in (t.find(c, at) for c in ("?", "!", "\n", ". ")) if f >= 0]
    return min(found) if found else len(t)


def _hedged(
    t: str,
    m: Mention,
    same_kind: Sequence[Mention],
    roles: dict[int, Role],
    *,
    ranges_are_alternatives: bool,
    measured: bool,
) -> str | None:
    """Why the mention is not alone: an approximation (of a measured value: a number, a day,
    a time; "about" before a phrase says what it is about), a guess, or another value of its
    kind joined to it as an alternative. None when it stands alone."""
    if measured and _cue(_words_before(t, m, same_kind)) == "approximate":
        return "approximately"
    if measured and _AFTER_APPROXIMATE.match(t, m.end):
        return "approximately"
    start = _sentence_start(t, m.start)
    if _UNSURE.search(t, start, m.start) or _AFTER_UNSURE.match(t, m.end):
        return "as a guess"
    lead = t[start : m.start]
    if _CONDITION_LEAD.search(lead):
        return "as a condition"
    if _QUESTION_LEAD.search(lead) and t[_sentence_end(t, m.end) : _sentence_end(t, m.end) + 1] == "?":
        return "as a question"
    for other in same_kind:
        if other.wanted or roles[id(other)] is not Role.CURRENT:
            continue
        left, right = (other, m) if other.end <= m.start else (m, other)
        if right.start < left.end:
            continue
        gap = t[left.end : right.start]
        if len(gap) > 40:
            continue
        if "ticket" in right.groups:  # "Ticket-4, Ticket-61": the label's "-" is no range
            gap = facts.TICKET_LABEL_BEFORE.sub("", gap)
        tokens = _TOKEN.findall(gap)
        if not all(w in _CONNECTOR_FILLER for w in tokens):
            continue
        before = _words_before(t, left, ())
        if any(w in _ALTERNATIVE for w in tokens) or (before[:1] and before[0] in ("between", "either")):
            return "beside an alternative"
        if ranges_are_alternatives and any(w in _RANGE - {"and"} for w in tokens):
            return "as a range"
    return None


def judge_claim(
    t: str,
    mentions: Sequence[Mention],
    label: str,
    *,
    ranges_are_alternatives: bool = True,
    measured: bool = True,
) -> Claim:
    """What prepared text `t` claims of the fact whose mentions are given. With
    `ranges_are_alternatives`, "12-13" hedges (numbers), else it is a span (times, days);
    `measured` values (numbers, days, times) can be approximated, names and phrases cannot."""
    wanted = [m for m in mentions if m.wanted]
    if not wanted:
        return Claim(False, False, f"does not state {label}")
    roles = {id(m): _role(t, m, mentions) for m in mentions}
    asserted = [m for m in wanted if roles[id(m)] is Role.CURRENT]
    if not asserted:
        how = {roles[id(m)] for m in wanted}
        word = "as an old value" if how == {Role.OLD} else "only negated"
        return Claim(False, False, f"states {label} {word}")
    hedges = {
        id(m): _hedged(
            t, m, mentions, roles, ranges_are_alternatives=ranges_are_alternatives, measured=measured
        )
        for m in asserted
    }
    alone = [m for m in asserted if hedges[id(m)] is None]
    if not alone:
        return Claim(False, True, f"states {label} only {hedges[id(asserted[0])]}")
    if any(roles[id(m)] is Role.NEGATED for m in wanted):
        return Claim(False, True, f"states {label} and also denies it")
    offered = _OFFERS_OTHERS.search(t)
    if offered:
        return Claim(False, True, f"states {label} but offers others ({offered.group()!r})")
    taken = _TAKES_BACK.search(t)
    if taken:
        return Claim(False, True, f"states {label} but takes it back ({taken.group()!r})")
    groups = frozenset().union(*(m.groups for m in alone))
    for rival in mentions:
        if rival.wanted or rival.allowed or not (rival.groups & groups or (groups and ANY in rival.groups)):
            continue
        if roles[id(rival)] is Role.CURRENT:
            quoted = " ".join(t[rival.start : rival.end].split())
            return Claim(False, True, f"states {label} but also {quoted!r} as the same kind of value")
    return Claim(True, True, f"states {label}")


# ---------------------------------------------------------------------------------------
# Mentions of each kind of fact

_UNIT_STOP = frozenset(
    [
        "and",
        "or",
        "to",
        "of",
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "for",
        "by",
        "per",
        "from",
        "with",
        "is",
        "are",
        "was",
        "were",
        "be",
        "each",
        "as",
        "than",
        "if",
        "but",
        "so",
        "it",
        "that",
        "this",
        "which",
        "who",
        "per",
        "cent",
        "percent",
        "between",
    ]
)
_CURRENCY_WORDS = {
    "euro": "eur",
    "euros": "eur",
    "dollars": "usd",
    "dollar": "usd",
    "pounds": "gbp",
    "pound": "gbp",
}
_SIGNS = {"€": "eur", "$": "usd", "£": "gbp", "¥": "jpy", "₹": "inr"}


def _quantity(t: str, n: facts.NumberMention) -> str | None:
    """What a number counts: its currency, "%", or the noun right after it ("headsets")."""
    start, end = n.start, n.end
    if facts.has_unit(t, n, "%"):
        return "%"
    head = t[max(0, start - 6) : start].rstrip()
    for code in facts.CURRENCY_CODES:
        if head.endswith(code) and (len(head) == len(code) or not head[-len(code) - 1].isalpha()):
            return code
    if head[-1:] in _SIGNS:
        return _SIGNS[head[-1]]
    tail = re.match(r"\s?([a-z][a-z'-]*)", t[end : end + 30])
    if tail:
        word = tail.group(1)
        if word in facts.CURRENCY_CODES:
            return word
        if word in _CURRENCY_WORDS:
            return _CURRENCY_WORDS[word]
        if word not in _UNIT_STOP and len(word) > 1:
            return "noun:" + (word[:-1] if word.endswith("s") and len(word) > 3 else word)
    return None


ANY = "*"
"""The group of a bare number (no currency, percent or noun beside it): it competes with a
number of any quantity, since nothing says it is another one. Years are not bare numbers."""


def number_mentions(t: str, wanted: Decimal, unit: str | None, allowed: Iterable[Decimal]) -> list[Mention]:
    allowed = set(allowed)
    tickets = facts.Spans((start, end) for start, end, _ in facts.ticket_mentions(t))
    out = []
    for n in facts.number_spans(t):
        if tickets.overlaps(n.start, n.end):
            continue  # a ticket's number is no figure
        group = _quantity(t, n)
        is_wanted = wanted in n.values and (unit is None or facts.has_unit(t, n, unit))
        out.append(
            Mention(
                n.start,
                n.end,
                is_wanted,
                allowed=bool(allowed.intersection(n.values)),
                groups=frozenset({group or _bare_group(t, n)}) - {""},
            )
        )
    return out


def _bare_group(t: str, n: facts.NumberMention) -> str:
    """ANY for a number in digits with nothing beside it to say what it counts; "" for a
    year or a number in words ("the two of us")."""
    if not any(c.isdigit() for c in t[n.start : n.end]):
        return ""
    if len(n.values) == 1 and n.values[0] == n.values[0].to_integral_value() and 1900 <= n.values[0] <= 2100:
        return ""
    return ANY


def date_mentions(t: str, day: dt.date, allowed: Iterable[dt.date]) -> list[Mention]:
    allowed = list(allowed)
    found = facts.date_mentions(t)
    # A weekday alone may be that of another allowed date only where the text names that date.
    named = [a for a in allowed if any(d.full and d.names(a) for d in found)]
    out = []
    for d in found:
        if d.full:
            out.append(
                Mention(d.start, d.end, d.names(day), any(d.names(a) for a in allowed), frozenset({"date"}))
            )
        else:  # a weekday alone states no date, but one that does not fit contradicts it
            fits = d.names(day) or any(d.names(a) for a in named)
            out.append(Mention(d.start, d.end, False, fits, frozenset({"date"})))
    return out


def time_mentions(
    t: str,
    instant: dt.datetime,
    zones: Sequence[dt.tzinfo],
    date_required: bool,
    allowed: Iterable[dt.datetime],
    allowed_days: Iterable[dt.date],
) -> list[Mention]:
    """The text's times (competing within their sentence; the other end of a range is
    allowed) and the days of sentences that name no time (competing with the time's day)."""
    layout = facts.time_layout(t)
    naming = dict(
        (id(m), day) for m, day in facts.times_naming(t, instant, zones, date_required=date_required)
    )
    allowed_spans = {(m.start, m.end) for m in layout.times if id(m) in naming}
    for other in allowed:
        allowed_spans |= {(m.start, m.end) for m, _ in facts.times_naming(t, other, zones)}
    days = set(allowed_days) | set(naming.values())
    days |= {other.astimezone(z).date() for other in allowed for z in zones}
    if not naming:
        days |= {instant.astimezone(z).date() for z in zones}
    out = []
    timed = set()
    for m in layout.times:
        sentence = layout.sentence(m.start)
        timed.add(sentence)
        groups = {"time"} | ({"day"} if id(m) in naming else set())
        out.append(
            Mention(m.start, m.end, id(m) in naming, (m.start, m.end) in allowed_spans, frozenset(groups))
        )
    for d in layout.dates:
        if layout.sentence(d.start) in timed:
            continue  # judged with the times of its sentence
        fits = any(d.names(day) for day in days)
        out.append(Mention(d.start, d.end, False, fits, frozenset({"day"})))
    return sorted(out, key=lambda m: m.start)


def ticket_mentions(t: str, ticket: int, allowed: Iterable[int]) -> list[Mention]:
    allowed = set(allowed)
    return [
        Mention(start, end, i == ticket, i in allowed, frozenset({"ticket"}))
        for start, end, i in facts.ticket_mentions(t)
    ]


_OR_AFTER = re.compile(r"\s?(?:,\s)?(?:or|and/or|/|nor|vs\.?|versus)\s?(?P<alt>[^\W_][\w'-]*)")
_OR_BEFORE = re.compile(r"(?P<alt>[^\W_][\w'-]*)\s?(?:,\s)?(?:or|and/or|/|nor|vs\.?|versus)\s?$")


def _alternatives_around(t: str, spans: Iterable[tuple[int, int]]) -> list[Mention]:
    """For values with no kind of their own to compete with (a phrase, a person), the word
    joined to a mention by "or": an alternative, never a rival."""
    out = []
    for start, end in spans:
        after = _OR_AFTER.match(t, end)
        if after:
            out.append(Mention(after.start("alt"), after.end("alt"), False))
        before = _OR_BEFORE.search(t[max(0, start - 40) : start])
        if before:
            offset = max(0, start - 40)
            out.append(Mention(offset + before.start("alt"), offset + before.end("alt"), False))
    return out


def person_mentions(t: str, name: str, email: str) -> list[Mention]:
    spans = facts.person_spans(t, name, email)
    found = [Mention(start, end, True) for start, end in spans]
    return sorted([*found, *_alternatives_around(t, spans)], key=lambda m: m.start)


def text_mentions(t: str, phrase: str, allowed: Iterable[str]) -> list[Mention]:
    """The phrase's occurrences; for a reference with digits (GO-95359, PO 7781), also every
    other reference of the same shape, which competes with it."""
    out = [Mention(m.start(), m.end(), True) for m in re.finditer(facts.phrase_pattern(phrase), t)]
    shape = reference_shape(phrase)
    if shape is None:
        alternatives = _alternatives_around(t, [(m.start, m.end) for m in out])
        return sorted([*out, *alternatives], key=lambda m: m.start)
    group = frozenset({"ref:" + shape})
    out = [Mention(m.start, m.end, True, groups=group) for m in out]
    taken = {(m.start, m.end) for m in out}
    allowed_patterns = [facts.phrase_pattern(a) for a in allowed]
    for m in re.finditer(shape, t):
        if any(m.start() < e and s < m.end() for s, e in taken):
            continue
        is_allowed = any(re.fullmatch(p, m.group()) for p in allowed_patterns)
        out.append(Mention(m.start(), m.end(), False, is_allowed, group))
    return sorted(out, key=lambda m: m.start)


def reference_shape(phrase: str) -> str | None:
    """A pattern for references like `phrase` when the phrase is one token of letters and
    digits such as GO-95359 (the same letters, any digits) or digits alone such as a phone
    number's 7946 0321 (the same groups of digits); else None."""
    folded = facts.prepare(phrase).strip()
    if re.fullmatch(r"\+?[0-9]+(?:[\s./-][0-9]+)*", folded):  # a number written as a code: 7946 0321
        groups = re.findall(r"[0-9]+", folded)
        return (
            r"(?<![\w.])" + r"[\W_]{0,3}".join(rf"[0-9]{{{len(g)}}}" for g in groups) + r"(?![\w]|[.,][0-9])"
        )
    if not re.fullmatch(r"[a-z]+[\s_/-]?[0-9]+(?:[\s_/-]?[0-9a-z]+)*", folded) or " " in folded.strip():
        return None
    letters = re.match(r"[a-z]+", folded)
    assert letters is not None
    return r"(?<![^\W_])" + re.escape(letters.group()) + r"[\W_]{0,3}[0-9][0-9a-z_/-]*(?<![_/-])(?![^\W_])"
