"""The procedural world generator: a `World` from a profile, a size and a seed, offline.

Deterministic: the same (profile, size, seed) gives the same world, field for field, and so
the same rendered seed state. Names come from Faker locales that fit each person's time zone,
folded to ASCII for their email address.
"""

from __future__ import annotations

import random
import re
import unicodedata
from datetime import UTC, datetime, time, timedelta
from functools import lru_cache
from typing import Any

from faker import Faker

from coworkenv.world import World

from .profile import Profile, TeamSpec

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
"""Monday 2 March 2026, 09:00 UTC: every generated world's seed data leads up to it."""
MIN_SIZE, MAX_SIZE = 8, 300
TICKETS = 60

LOCALES = {
    "Europe/London": "en_GB",
    "Europe/Dublin": "en_IE",
    "Europe/Berlin": "de_DE",
    "Europe/Vienna": "de_AT",
    "Europe/Zurich": "de_CH",
    "Europe/Paris": "fr_FR",
    "Europe/Madrid": "es_ES",
    "Europe/Rome": "it_IT",
    "Europe/Amsterdam": "nl_NL",
    "Europe/Stockholm": "sv_SE",
    "Europe/Warsaw": "pl_PL",
    "Europe/Lisbon": "pt_PT",
    "America/Sao_Paulo": "pt_BR",
    "America/Mexico_City": "es_MX",
    "America/Toronto": "en_CA",
    "Australia/Sydney": "en_AU",
    "Pacific/Auckland": "en_NZ",
    "Asia/Kolkata": "en_IN",
    "Africa/Johannesburg": "en_US",
}
"""Faker locale by time zone; any other zone uses en_US."""

ANSWERS = {
    "customer_answers": [
        "Thanks, that settles it for us.",
        "Great, thank you for the quick help.",
        "Understood. Please keep me posted.",
        "That works for us; thanks for sorting it out.",
    ],
    "user_answers": [
        "Thanks for letting us know. I have logged it and the team will come back to you within a day.",
        "I have looked into it and we are on it; you will have an update by tomorrow.",
        "Sorry for the trouble. This is corrected on our side now.",
        "Thanks for flagging this. I passed it to the right colleague, who will contact you directly.",
    ],
    "internal_answers": [
        "Yes, I can take care of that.",
        "Good point; let's go over it in our weekly meeting.",
        "Done, see my comments inline.",
        "I'll check and get back to you by tomorrow.",
    ],
    "closers": [
        "Let me know if you need anything else.",
        "Happy to talk it through if that is easier.",
        "Thanks in advance for your help.",
        "Please let me know by the end of the week.",
    ],
    "draft_openings": [
        "Thanks for your patience. I am still checking this with the team and will",
        "Quick update on your request:",
        "Sorry for the slow reply. Regarding your question,",
    ],
    "ticket_replies": [
        "Thanks for raising this. We are looking into it and will get back to you today.",
        "Could you send us the reference and any documents you have on this?",
        "We have passed this to the right team and will update you by tomorrow.",
        "This should be sorted now. Please let us know if it happens again.",
    ],
    "requester_replies": [
        "Any news on this? It is getting urgent on our side.",
        "Thanks, the details are in my earlier message.",
        "That worked, thank you!",
        "Still the same this morning.",
    ],
    "ticket_notes": [
        "Two other requests this week look like the same problem.",
        "Waiting for the owner to confirm before we reply.",
        "Requester is a key account; keep the reply time short.",
        "Checked the history: this came up last quarter too.",
    ],
    "milestones": ["scoping", "pilot", "rollout", "review"],
}


def _slug(text: str, sep: str = "") -> str:
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", sep, folded).strip(sep)


@lru_cache(maxsize=32)
def _faker(locale: str) -> Faker:
    return Faker(locale)


class _Names:
    """Unique person names from the locale of each time zone."""

    def __init__(self, salt: str) -> None:
        self.salt, self.used, self.seeded = salt, set[str](), set[str]()

    def name(self, zone: str) -> str:
        locale = LOCALES.get(zone, "en_US")
        fake = _faker(locale)
        if locale not in self.seeded:
            fake.seed_instance(f"{self.salt}:{locale}")
            self.seeded.add(locale)
        for _ in range(200):
            name = f"{fake.first_name()} {fake.last_name()}"
            if name not in self.used and _slug(name.split()[0]) and _slug(name.split()[-1]):
                self.used.add(name)
                return name
        raise RuntimeError(f"no fresh name left in {locale}")


def _email(name: str, domain: str, taken: set[str]) -> str:
    first, last = _slug(name.split()[0]), _slug(name.split()[-1])
    base = f"{first}.{last}"
    email, n = f"{base}@{domain}", 2
    while email in taken:
        email, n = f"{base}{n}@{domain}", n + 1
    taken.add(email)
    return email


def _team_sizes(profile: Profile, size: int, leaders: int) -> list[int]:
    """Colleagues per team: at least one each, the rest in proportion to the titles listed."""
    teams = profile.teams
    left = size - leaders
    weights = [len(t.titles) for t in teams]
    sizes = [1] * len(teams)
    left -= len(teams)
    total = sum(weights)
    shares = [left * w / total for w in weights]
    for i, share in enumerate(shares):
        sizes[i] += int(share)
    rest = size - leaders - sum(sizes)
    for i in sorted(range(len(teams)), key=lambda i: shares[i] - int(shares[i]), reverse=True)[:rest]:
        sizes[i] += 1
    return sizes


def generate_world(profile: Profile, size: int | None = None, seed: int = 0) -> World:
    """A world of `profile` with `size` colleagues (default: the profile's), from `seed`."""
    size = profile.size if size is None else size
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"a world has {MIN_SIZE} to {MAX_SIZE} colleagues; got {size}")
    if size < 1 + len(profile.teams) + 1:
        raise ValueError(f"profile {profile.key!r} needs at least {len(profile.teams) + 2} colleagues")
    salt = f"{profile.key}:{size}:{seed}"
    rng = random.Random(salt)
    names = _Names(salt)
    org = profile.names[seed % len(profile.names)]
    domain = _slug(org) + ".example"
    hq, zones = profile.zones[0], profile.zones
    zone_weights = [3] + [1] * (len(zones) - 1)
    taken: set[str] = set()
    people: list[dict[str, Any]] = []
    teams: list[dict[str, Any]] = []

    def hours() -> dict[str, str] | None:
        shift = rng.random()
        start, end = profile.hours
        if shift < 0.1:
            return {"start": time(start - 1).isoformat(), "end": time(end - 1).isoformat()}
        if shift < 0.2:
            return {"start": time(start + 1).isoformat(), "end": time(end + 1).isoformat()}
        return None

    def add(team: TeamSpec, title: str, manager: str | None, zone: str) -> str:
        name = names.name(zone)
        email = _email(name, domain, taken)
        people.append(
            {
                "email": email,
                "name": name,
                "title": title,
                "team": team.name,
                "manager_email": manager,
                "time_zone": zone,
                "internal": True,
                "company": org,
                "working_hours": hours(),
            }
        )
        return email

    leaders = 1 if size < 20 else 2 if size < 80 else 3
    head = add(profile.leadership, profile.leadership.titles[0], None, hq)
    for i in range(1, leaders):
        titles = profile.leadership.titles[1:] or profile.leadership.titles
        add(profile.leadership, titles[(i - 1) % len(titles)], head, hq)
    teams.append({"name": profile.leadership.name, "purpose": profile.leadership.purpose, "lead": head})
    leads: dict[str, str] = {profile.leadership.name: head}
    for team, count in zip(profile.teams, _team_sizes(profile, size, leaders), strict=True):
        home = hq if team.name == profile.user_team else rng.choices(zones, zone_weights)[0]
        lead = add(team, team.titles[0], head, home)
        leads[team.name] = lead
        member_titles = team.titles[1:] or team.titles
        for i in range(count - 1):
            zone = home if rng.random() < 0.7 else rng.choices(zones, zone_weights)[0]
            add(team, member_titles[i % len(member_titles)], lead, zone)
        teams.append({"name": team.name, "purpose": team.purpose, "lead": lead})

    organizations = []
    for outside in profile.organizations:
        name = outside.name
        org_domain = _slug(name) + ".example"
        organizations.append({"name": name, "kind": outside.kind, "domain": org_domain})
        for title in profile.contact_titles:
            zone = rng.choice(zones)
            person = names.name(zone)
            people.append(
                {
                    "email": _email(person, org_domain, taken),
                    "name": person,
                    "title": title,
                    "team": None,
                    "manager_email": None,
                    "time_zone": zone,
                    "internal": False,
                    "company": name,
                }
            )

    weights = [q.weight for q in profile.queues]
    tickets = [max(1, round(TICKETS * w / sum(weights))) for w in weights]
    queues = [
        {
            "name": q.name,
            "description": q.description,
            "owner": leads[q.teams[0]],
            "teams": list(q.teams),
            "tickets": n,
            "requested_by": q.requested_by,
            "requester_teams": list(q.requester_teams),
            "topics": [t.model_dump() for t in q.topics],
            "tags": list(q.tags),
        }
        for q, n in zip(profile.queues, tickets, strict=True)
    ]
    user = leads[profile.user_team]
    user_title = profile.teams[[t.name for t in profile.teams].index(profile.user_team)].titles[0]
    return World.model_validate(
        {
            "name": org,
            "domain": domain,
            "industry": profile.industry,
            "profile": profile.key,
            "seed": seed,
            "headquarters_time_zone": hq,
            "working_hours": {
                "start": time(profile.hours[0]).isoformat(),
                "end": time(profile.hours[1]).isoformat(),
            },
            "start": START,
            "currency": profile.currency,
            "reference_prefix": profile.prefix,
            "user": user,
            "teams": teams,
            "people": people,
            "organizations": organizations,
            "products": [
                {"sku": f"{profile.prefix}-{i:03d}", "name": p.name, "unit": p.unit, "price": p.price}
                for i, p in enumerate(profile.products, 1)
            ],
            "queues": queues,
            "documents": _documents(profile),
            "empty_folders": ["/shared/archive"],
            "meetings": _meetings(profile, user_title),
            "customer_calls": _calls(profile, user_title),
            "offices": {z: f"{z.split('/')[-1].replace('_', ' ')} office" for z in zones},
            "roles": {"leadership": profile.leadership.name, "desk": profile.user_team, **profile.roles},
            "vocabulary": _vocabulary(profile, org),
            "house_rules": list(profile.house_rules),
            "culture": profile.culture,
        }
    )


def _documents(profile: Profile) -> list[dict[str, Any]]:
    """The profile's documents, plus what every world has: the user's team's meeting notes
    of the last two weeks and a meeting template."""
    docs = [d.model_dump(mode="json") for d in profile.documents]
    team = profile.user_team
    folder = f"/teams/{_slug(team, '-')}/meeting-notes"
    for days in (14, 7):
        day = (START - timedelta(days=days)).date()
        docs.append(
            {
                "path": f"{folder}/{day}-weekly.md",
                "kind": "meeting_notes",
                "team": team,
                "subject": f"{team} weekly",
                "day": day.isoformat(),
            }
        )
    docs.append({"path": "/shared/templates/meeting-notes-template.md", "kind": "meeting_template",
                 "team": profile.leadership.name})  # fmt: skip
    return docs


def _meetings(profile: Profile, user_title: str) -> list[dict[str, Any]]:
    user_team = next(t for t in profile.teams if t.name == profile.user_team)
    mates = list(user_team.titles[1:3]) or [user_team.titles[0]]
    meetings = [
        {"title": "Backlog review", "organizer": "me", "attendees": mates, "minutes": 45, "count": 2},
        {
            "title": "Interview: {name} (" + mates[0] + ")",
            "organizer": "me",
            "attendees": mates[:1],
            "minutes": 45,
            "count": 2,
        },
        {"title": "Focus time", "organizer": "me", "attendees": [], "minutes": 90, "count": 1},
        {
            "title": "Lunch & learn: {topic}",
            "organizer": "anyone",
            "attendees": ["anyone"] * 5,
            "minutes": 60,
            "count": 2,
        },
        {"title": "Focus time", "organizer": "anyone", "attendees": [], "minutes": 120, "count": 3},
        {"title": "Coffee chat", "organizer": "anyone", "attendees": ["anyone"], "minutes": 30, "count": 2},
    ]
    for topic in profile.meeting_topics:
        meetings.append({"title": topic[0].upper() + topic[1:], "organizer": "me",
                         "attendees": [t.titles[0] for t in profile.teams[:3] if t.name != profile.user_team],
                         "minutes": 30, "count": 1})  # fmt: skip
    for team in profile.teams:
        if team.name != profile.user_team:
            meetings.append({"title": f"{team.name} planning", "organizer": team.titles[0],
                             "attendees": list(team.titles[1:4]), "minutes": 60, "count": 1})  # fmt: skip
    return meetings


def _calls(profile: Profile, user_title: str) -> list[dict[str, Any]]:
    sales = next((t for t in profile.teams if t.name == profile.roles.get("sales")), None)
    organizers = [user_title, *([sales.titles[0]] if sales else [])]
    return [
        {
            "title": "{company}: " + kind,
            "organizer": organizers[i % len(organizers)],
            "attendees": [],
            "contacts": list(profile.contact_titles),
            "minutes": 45 if i else 60,
        }
        for i, kind in enumerate(profile.call_kinds)
    ]


def _vocabulary(profile: Profile, org: str) -> dict[str, Any]:
    slug = _slug(profile.industry, "")
    return {
        **ANSWERS,
        "customer_requests": [t.model_dump() for t in profile.customer_requests],
        "internal_requests": [t.model_dump() for t in profile.internal_requests],
        "meeting_topics": list(profile.meeting_topics),
        "newsletters": [
            {
                "sender": f"digest@{slug}weekly.example",
                "subject": f"{profile.industry.title()} Weekly #{{n}}: {{catch}}",
            },
            {
                "sender": "events@sectorsummit.example",
                "subject": "Sector Summit {n}: early-bird tickets end soon",
            },
            {
                "sender": "no-reply@status.cloudhost.example",
                "subject": "[Cloudhost] Scheduled maintenance window {n}",
            },
        ],
        "outbound_subjects": [f"Update on {t}" for t in profile.meeting_topics],
        "attachment_hints": ["invoice", "report", "plan", "policy"],
        "draft_note": {
            "title": f"Notes for the {profile.user_team} team meeting",
            "body": f"Draft agenda: {profile.meeting_topics[0]}, the open {profile.queues[0].name} requests, and",
        },
        "updates": list(profile.updates),
        "decisions": list(profile.decisions),
        "actions": list(profile.actions),
        "goals": list(profile.goals) or [f"Make {org} the most reliable {profile.industry} in the region."],
        "metrics": list(profile.metrics),
    }
