"""Where a world keeps its documents, for the document families: its policy folder, a team's
folder, where meeting notes go and the archive, and how big its currency's amounts are.

Every answer comes from the world's own documents and folders, so the demo company gets its
own layout (/shared/policies, /teams/support/meeting-notes) and any other world its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from coworkenv.world import World

from ...builders import slug
from ...phrasing import first_name

#: Roughly how many units of a currency buy what one euro buys, so that a per diem of 40 in
#: euros reads as about 300 in Danish kroner; currencies not listed count as one.
CURRENCY_SCALE = {"DKK": 7, "SEK": 10, "NOK": 10, "INR": 80, "JPY": 150}


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def folders(world: World) -> set[str]:
    """Every folder the world's seed holds: the documents' folders and their parents, and the
    empty folders."""
    found: set[str] = set()
    for folder in [*(parent(d.path) for d in world.documents), *world.empty_folders]:
        while folder not in ("", "/"):
            found.add(folder)
            folder = parent(folder)
    return found


def policy_folder(world: World) -> str:
    """The folder of the world's first policy document (`/shared/policies` in the demo
    company), else /shared/policies."""
    for doc in world.documents:
        if doc.kind == "policy" or doc.kind.endswith("_policy"):
            return parent(doc.path)
    return "/shared/policies"


def team_folder(world: World, team: str) -> str | None:
    """The folder `/teams/<team>` when the world has one, else None."""
    folder = f"/teams/{slug(team)}"
    return folder if folder in folders(world) else None


def notes_folder(world: World, team: str | None) -> str:
    """Where `team`'s meeting notes live: the folder of its notes in the world, else of any
    team's notes under its own team folder, else `/teams/<team>/meeting-notes`."""
    notes = [d for d in world.documents if d.kind == "meeting_notes"]
    for doc in notes:
        if doc.team == team:
            return parent(doc.path)
    return f"/teams/{slug(team or world.teams[0].name)}/meeting-notes"


def archive_folder(world: World, fallback: str) -> str:
    """The world's archive folder (`/shared/archive`), else `<fallback>/archive`."""
    for folder in world.empty_folders:
        if folder.rstrip("/").endswith("/archive"):
            return folder.rstrip("/")
    return f"{fallback}/archive"


def scale(currency: str) -> int:
    return CURRENCY_SCALE.get(currency, 1)


def unique_names(world: World, people: Sequence[Any], *, first: bool = True) -> list[Any]:
    """Those of `people` nobody else in the world shares a full name with (nor, with `first`,
    a first name), so a request or a check naming them is never ambiguous."""
    full = [p.name for p in world.people]
    firsts = [first_name(p.name) for p in world.people]
    return [
        p for p in people if full.count(p.name) == 1 and (not first or firsts.count(first_name(p.name)) == 1)
    ]
