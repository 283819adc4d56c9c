"""Requests in registers: every register keeps the facts of the steps, the choice follows the
world's culture, and `seams` finds what templates leave behind."""

from collections import Counter

import pytest

from coworkenv.synth.family import FamilyContext
from coworkenv.synth.phrasing import REGISTERS, Ask, first_name, greeting, register_for, request, seams
from coworkenv.world import Person
from coworkenv.worlds import world

ASK = Ask(
    steps=("Move ticket #61 to the Billing queue.", "Assign it to Maria Lopez."),
    context="The customer was charged 1,250.00 EUR twice on 3 March.",
    short="#61 to Billing, Maria Lopez owns it",
    forwarded_from=Person(
        email="a.b@x.example", name="Ana Bell", title="Clerk", time_zone="UTC", company="X"
    ),
)


@pytest.mark.parametrize("register", REGISTERS)
@pytest.mark.parametrize("seed", range(6))
def test_every_register_keeps_the_facts_and_leaves_no_seam(register: str, seed: int) -> None:
    text = request(FamilyContext("phrasing", seed), ASK, register=register)
    for fact in ("#61", "Billing", "Maria Lopez"):
        assert fact in text, (register, text)
    assert seams(text) == [], (register, text)


def test_the_forwarded_register_puts_the_ask_at_the_bottom() -> None:
    text = request(FamilyContext("phrasing", 0), ASK, register="forwarded")
    assert text.index("Ana Bell") < text.index("charged") < text.index("#61")


def test_a_register_that_needs_a_context_falls_back_without_one() -> None:
    bare = Ask(steps=("Close ticket #7.",))
    assert request(FamilyContext("phrasing", 0), bare, register="forwarded").startswith(
        ("Hello", "Good", "Hi")
    )
    assert "#7" in request(FamilyContext("phrasing", 0), bare, register="context_first")


def test_registers_follow_the_culture() -> None:
    def counts(profile: str) -> Counter[str]:
        w = world(profile)
        return Counter(register_for(FamilyContext("phrasing", s, world=w)) for s in range(400))

    formal, casual = counts("law_firm"), counts("marketing_agency")
    assert formal["polite"] > casual["polite"] and casual["chatty"] > formal["chatty"]
    assert set(formal) == set(REGISTERS) and set(casual) == set(REGISTERS)


def test_an_ask_is_checked() -> None:
    with pytest.raises(ValueError, match="at least one step"):
        Ask(steps=())
    with pytest.raises(ValueError, match="one sentence ending in"):
        Ask(steps=("close it",))
    with pytest.raises(ValueError, match="unknown register 'rude'"):
        request(FamilyContext("phrasing", 0), ASK, register="rude")


def test_greetings_use_the_given_name() -> None:
    dr = Person(email="d@x.example", name="Dr. Maria Lopez", title="Physician", time_zone="UTC", company="X")
    assert first_name(dr.name) == "Maria"
    assert greeting(dr) == "Hi Maria,"
    assert greeting(dr, formal=True) == "Dear Maria Lopez,"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (
            "Add 'Last updated: <today's date as YYYY-MM-DD>'.",
            ['placeholder: "<today\'s date as YYYY-MM-DD>"'],
        ),
        ("Hi Dr., please reply.", ["greeting: 'Hi Dr.,'"]),
        ("Reply before before the meeting.", ["doubled word: 'before before'"]),
        ("Send it to {name} .", ["placeholder: '{name}'", "spacing: ' .'"]),
        ("Hi Maria, the total is 45,550 EUR for 2 2-day passes.", []),
        ("Write to Sam <sam@x.example>.", []),
    ],
)
def test_seams(text: str, found: list[str]) -> None:
    assert seams(text) == found
