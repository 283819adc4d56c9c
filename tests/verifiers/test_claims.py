"""A fact is stated only as the text's claim: asserted, alone and uncontradicted.

Each row is a sentence a policy might write and whether the fact check must accept it, with
the reason the verdict gives when it does not."""

from __future__ import annotations

import pytest

from coworkenv.checks import Fact
from coworkenv.verifiers.evaluate import fact_claim


class _Evidence:
    user_zone = "Europe/Berlin"

    def person_name(self, email: str) -> str:
        return "Maria Lopez"


EV = _Evidence()
MEETING = {"time": "2026-03-03T16:00:00+01:00"}  # Tuesday 3 March, 16:00 in Berlin


def claim(text: str, fact: dict, *others: dict) -> tuple[bool, str]:
    result = fact_claim(text, Fact(**fact), EV, [Fact(**o) for o in others])  # type: ignore[arg-type]
    return result.stated, result.reason


ACCEPTED = [
    ("The duplicate is ticket #61.", {"ticket": 61}),
    ("Ticket ID 67 is yours.", {"ticket": 67}),
    ("I merged it into ticket number 61, not #62.", {"ticket": 61}),
    ("The price is GBP 41.50 per headset.", {"number": "41.50"}),
    ("We need 12 headsets.", {"number": 12}),
    ("Total: SGD420.00.", {"number": 420}),
    ("Total: NZD 1,250.", {"number": 1250}),
    ("The customer has not paid the EUR 450 due.", {"number": 450}),
    ("final numbers: the line you asked about is 24 430 euros.", {"number": 24430}),
    ("It starts at 16:00 on Tuesday 3 March.", MEETING),
    ("It starts at 4 pm. See you on Tuesday 3 March!", MEETING),
    ("The meeting is not at 15:00 but at 16:00.", MEETING),
    ("Meeting from 16:00 to 17:30 on 3 March.", MEETING),
    ("The meeting moved from Monday 9 March to Tuesday 3 March.", {"date": "2026-03-03"}),
    ("Your leave runs from 3 March to 6 March.", {"date": "2026-03-03"}, {"date": "2026-03-06"}),
    ("Live chat moves to Olark.", {"text": "Olark"}),
    ("It is GO-39257, not GO-95359.", {"text": "GO-39257"}),
    ("The reference GO-95359 is now GO-39257.", {"text": "GO-39257"}),
    ("Flight GO-53004 cancelled: hotel costs claimed.", {"text": "GO-53004"}),
    ("Hi Maria Lopez, see you then.", {"person": "maria@x.example"}),
    ("Tickets #61, #62 and #63 are closed.", {"ticket": 62}, {"ticket": 61}, {"ticket": 63}),
    # the "-" of a "Ticket-61" label joins no range
    ("Followed up: Ticket-4, Ticket-61, Ticket-62.", {"ticket": 61}, {"ticket": 4}, {"ticket": 62}),
    ("Ticket-60 and Ticket-61 are closed.", {"ticket": 61}, {"ticket": 60}),
    ("Total EUR 132,530; the line is EUR 24,430.", {"number": 132530}, {"number": 24430}),
    ("The total is EUR 450, due in 2026 as agreed.", {"number": 450}),
    ("The total is EUR 450; the two of us agreed it.", {"number": 450}),
    # a question to the reader, a condition on something else, a question after the claim
    ("Could you join the call on Tuesday 3 March at 16:00?", MEETING),
    ("Shall we meet on Tuesday 3 March at 16:00?", MEETING),
    ("Let me know whether 16:00 on Tuesday 3 March works for you.", MEETING),
    ("If you have questions about ticket #61, reply here.", {"ticket": 61}),
    ("Your ticket is #61. Anything else?", {"ticket": 61}),
    ("The total is EUR 450, as confirmed by finance.", {"number": 450}),
]


@pytest.mark.parametrize(("text", "fact", "others"), [(r[0], r[1], r[2:]) for r in ACCEPTED])
def test_a_claim_of_the_value_is_accepted(text: str, fact: dict, others: tuple[dict, ...]) -> None:
    assert claim(text, fact, *others)[0] is True


REJECTED = [
    # say more: every candidate value
    ("ticket #61 or #62", {"ticket": 61}, "states ticket 61 only beside an alternative"),
    ("ticket 60 to ticket 61", {"ticket": 61}, "states ticket 61 only as a range"),
    ("#60-#61", {"ticket": 61}, "states ticket 61 only as a range"),
    (
        "GBP 41.50 or 45.50 per headset",
        {"number": "41.50"},
        "states number '41.50' only beside an alternative",
    ),
    ("EUR 165,890 or 615,890", {"number": 165890}, "states number 165890 only beside an alternative"),
    ("12 or 13 headsets", {"number": 12}, "states number 12 only beside an alternative"),
    ("12-13 headsets", {"number": 12}, "states number 12 only as a range"),
    ("GBP 41.50/45.50 each", {"number": "41.50"}, "does not state number '41.50'"),
    (
        "It starts at 16:00 or 15:00.",
        MEETING,
        "states time '2026-03-03T16:00:00+01:00' only beside an alternative",
    ),
    (
        "It starts either at 15:00 or at 16:00.",
        MEETING,
        "states time '2026-03-03T16:00:00+01:00' only beside an alternative",
    ),
    ("The total is about EUR 420.", {"number": 420}, "states number 420 only approximately"),
    ("Roughly 12 headsets.", {"number": 12}, "states number 12 only approximately"),
    # the same kind of value asserted elsewhere
    (
        "We need 12 headsets. Actually 13 headsets.",
        {"number": 12},
        "states number 12 but also '13' as the same kind of value",
    ),
    (
        "The total is EUR 165,890. The total is EUR 615,890.",
        {"number": 165890},
        "states number 165890 but also '615,890' as the same kind of value",
    ),
    (
        "The duplicate is #61. The duplicate is #62.",
        {"ticket": 61},
        "states ticket 61 but also '#62' as the same kind of value",
    ),
    (
        "It starts at 16:00. That is on Wednesday 4 March.",
        MEETING,
        "states time '2026-03-03T16:00:00+01:00' but also 'wednesday 4 march' as the same kind of value",
    ),
    (
        "Due 3 March. Or 4 March if that suits.",
        {"date": "2026-03-03"},
        "states date '2026-03-03' only beside an alternative",
    ),
    (
        "Due on 3 March. See you Friday.",
        {"date": "2026-03-03"},
        "states date '2026-03-03' but also 'friday' as the same kind of value",
    ),
    (
        "The new reference is GO-39257. Keep GO-95359 too.",
        {"text": "GO-39257"},
        "states text 'GO-39257' but also 'go-95359' as the same kind of value",
    ),
    (
        "Live chat moves to Olark or Intercom.",
        {"text": "Olark"},
        "states text 'Olark' only beside an alternative",
    ),
    (
        "Assign it to Maria Lopez or John Smith.",
        {"person": "maria@x.example"},
        "states person 'maria@x.example' only beside an alternative",
    ),
    ("I am not sure, but it is #61.", {"ticket": 61}, "states ticket 61 only as a guess"),
    ("Maybe the total is EUR 450.", {"number": 450}, "states number 450 only as a guess"),
    # said and taken back, or offered beside others
    (
        "The total is EUR 450. To be clear, it is not EUR 450.",
        {"number": 450},
        "states number 450 and also denies it",
    ),
    (
        "The new number is +44 20 7946 0321.\n\nP.S. It could also be something else.",
        {"text": "7946 0321"},
        "states text '7946 0321' but offers others ('could also be')",
    ),
    (
        "The total is EUR 450.\n\nOther figures seen: 4,501, 451.",
        {"number": 450},
        "states number 450 but offers others ('other figures seen')",
    ),
    (
        "The total is EUR 450. Also: 4,501.",
        {"number": 450},
        "states number 450 but also '4,501' as the same kind of value",
    ),
    (
        "Call +44 20 7946 0321 or rather 7946 0322.",
        {"text": "7946 0321"},
        "states text '7946 0321' but also '7946 0322' as the same kind of value",
    ),
    # said backwards: negated, or the right value given as the old one
    (
        "It is not the case that live chat moves to Olark.",
        {"text": "Olark"},
        "states text 'Olark' only negated",
    ),
    (
        "It is not the case that she works in the Europe/Berlin time zone.",
        {"text": "Europe/Berlin"},
        "states text 'Europe/Berlin' only negated",
    ),
    ("It is GO-95359, not GO-39257.", {"text": "GO-39257"}, "states text 'GO-39257' only negated"),
    ("The total is not EUR 450.", {"number": 450}, "states number 450 only negated"),
    ("The duplicate is never #61.", {"ticket": 61}, "states ticket 61 only negated"),
    ("There is no ticket #61.", {"ticket": 61}, "states ticket 61 only negated"),
    ("16:00 is wrong for the meeting.", MEETING, "states time '2026-03-03T16:00:00+01:00' only negated"),
    (
        "The meeting moved from Tuesday 3 March to Monday 9 March.",
        {"date": "2026-03-03"},
        "states date '2026-03-03' as an old value",
    ),
    ("Use GO-95359 instead of GO-39257.", {"text": "GO-39257"}, "states text 'GO-39257' as an old value"),
    # said without committing to it: asked, made a condition, doubted, taken back
    ("Is it ticket #61?", {"ticket": 61}, "states ticket 61 only as a question"),
    ("Could the total be EUR 450?", {"number": 450}, "states number 450 only as a question"),
    ("If it is ticket #61, I will close it.", {"ticket": 61}, "states ticket 61 only as a condition"),
    ("I cannot confirm that the ticket is #61.", {"ticket": 61}, "states ticket 61 only as a guess"),
    ("Unless I am wrong, the total is EUR 450.", {"number": 450}, "states number 450 only as a guess"),
    ("The total is EUR 450 (unverified).", {"number": 450}, "states number 450 only as a guess"),
    ("I do not know the total; it might be EUR 450.", {"number": 450}, "states number 450 only as a guess"),
    ("The total is EUR 450-ish.", {"number": 450}, "states number 450 only approximately"),
    ("Nobody said the total is EUR 450.", {"number": 450}, "states number 450 only negated"),
    ("The total: EUR 450, wait, no.", {"number": 450}, "states number 450 only negated"),
    (
        "The total is EUR 450. Ignore the previous sentence.",
        {"number": 450},
        "states number 450 but takes it back ('ignore the previous sentence')",
    ),
    # not there at all
    ("Please see below. Best regards", {"number": 450}, "does not state number 450"),
]


@pytest.mark.parametrize(("text", "fact", "reason"), REJECTED)
def test_a_value_that_is_not_the_claim_is_rejected(text: str, fact: dict, reason: str) -> None:
    assert claim(text, fact) == (False, reason)


def test_a_value_the_check_lists_may_stand_beside_the_fact_but_not_as_its_alternative() -> None:
    listed = {"number": 24430}
    assert claim("Total EUR 132,530; line EUR 24,430.", {"number": 132530}, listed)[0] is True
    assert claim("Total EUR 132,530 or 24,430.", {"number": 132530}, listed) == (
        False,
        "states number 132530 only beside an alternative",
    )


def test_a_lone_weekday_fits_a_listed_date_only_where_the_text_names_that_date() -> None:
    """Two checks list 22 February (a Sunday) and 28 February (a Saturday). A text about the
    28th that adds "That is on Sunday." gives a wrong weekday: Sunday is the 22nd's, which this
    text never names; beside the 22nd itself it is that date's weekday."""
    other = {"date": "2026-02-22"}
    assert (
        claim("Borrowing starts on 28 February. That is on Sunday.", {"date": "2026-02-28"}, other)[0]
        is False
    )
    assert claim("Borrowing starts on 28 February.", {"date": "2026-02-28"}, other)[0] is True
    both = "The group comes on 22 February and borrowing starts on 28 February. That is on Sunday."
    assert claim(both, {"date": "2026-02-28"}, other)[0] is True


ABSENT = [
    ("The meeting moved from Monday 9 March to Tuesday 3 March.", False),
    ("It was moved from 9 March to 3 March.", False),
    ("It is on 3 March, not 9 March.", False),
    ("It is on 3 March (moved from 9 March).", False),
    ("It is on 3 March (previously 9 March).", False),
    ("It is on 9 March.", True),
    ("It is on 3 March or 9 March.", True),
]


@pytest.mark.parametrize(("text", "asserted"), ABSENT)
def test_an_old_value_is_asserted_only_when_stated_as_current(text: str, asserted: bool) -> None:
    result = fact_claim(text, Fact(date="2026-03-09"), EV, [Fact(date="2026-03-03")])  # type: ignore[arg-type]
    assert result.asserted is asserted
