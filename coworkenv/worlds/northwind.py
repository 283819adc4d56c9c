"""Northwind, the demo company: a world written by hand, with its people drawn from a seed.

`northwind.json` is Northwind as a world file (the `World` format, as `coworkenv world write`
writes one): its teams, queues and their topics, documents, meetings, vocabulary and house
rules, and its people at seed 0. `northwind(seed)` keeps all of that and draws the people
anew: each keeps their title, team and organization, and gets a name, an email address and
a time zone from the seed, so tasks on different seeds meet different people. Seed 0 gives
the file itself.
"""

from __future__ import annotations

import random
from datetime import UTC
from functools import lru_cache
from importlib.resources import files

from faker import Faker

from coworkenv.world import Person, World, parse_world

NAME = "northwind"
"""The world name (and `profile`) of the demo company."""
ZONES = ("Europe/Berlin", "Europe/London", "America/New_York", "America/Los_Angeles", "Asia/Singapore")
"""Where Northwind's people sit, in the order a seed draws from."""


@lru_cache(maxsize=1)
def _written() -> World:
    source = files("coworkenv.worlds") / "northwind.json"
    return parse_world(source.read_bytes(), source=str(source))


def _email(name: str, domain: str, taken: set[str]) -> str:
    first, *rest = name.lower().replace("'", "").split()
    base = f"{first}.{rest[-1] if rest else 'x'}"
    email, n = f"{base}@{domain}", 2
    while email in taken:
        email, n = f"{base}{n}@{domain}", n + 1
    taken.add(email)
    return email


@lru_cache(maxsize=64)
def northwind(seed: int = 0) -> World:
    """The demo company at `seed`: the world of `northwind.json` with its people drawn from
    the seed. Made once per seed and process (it is frozen)."""
    written = _written()
    fake = Faker("en_US")
    fake.seed_instance(seed)
    rng = random.Random(seed)
    domains = {written.name: written.domain} | {o.name: o.domain for o in written.organizations}
    taken: set[str] = set()
    drawn: list[tuple[Person, str, str, str]] = []  # (as written, name, email, time zone)
    for person in written.people:
        name = fake.unique.name()
        drawn.append((person, name, _email(name, domains[person.company], taken), rng.choice(ZONES)))
    renamed = {person.email: email for person, _, email, _ in drawn}
    people = [
        person.model_dump()
        | {
            "email": email,
            "name": name,
            "time_zone": zone,
            "manager_email": renamed[person.manager_email] if person.manager_email else None,
        }
        for person, name, email, zone in drawn
    ]
    data = written.model_dump()
    data |= {
        "seed": seed,
        "start": written.start.astimezone(UTC),  # datetime's own UTC, as generated worlds have
        "user": renamed[written.user],
        "teams": [t.model_dump() | {"lead": renamed[t.lead]} for t in written.teams],
        "people": people,
        "queues": [q.model_dump() | {"owner": renamed[q.owner]} for q in written.queues],
    }
    return World.model_validate(data)
