"""Files part of a world's seed: its documents in its folder layout.

The world lists every document (path, kind, owning team, subject, day); `demo_content`
writes each kind. Every file was created and last changed before the clock start, by a
member of the team it belongs to.
"""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING

from coworkenv.state import Workspace, format_time

from . import demo_content as text
from .paths import parent_of
from .world import AddDirectory, AddFile, add_directory, add_file

if TYPE_CHECKING:
    from coworkenv.world import Document, World


def _times(rng: random.Random, start: datetime, day: date | None) -> tuple[datetime, datetime]:
    """When a file was created and last modified: both before `start`."""
    if day is not None:
        created = datetime.combine(day, time(9), start.tzinfo) + timedelta(minutes=rng.randint(0, 420))
        return created, created + timedelta(minutes=rng.randint(20, 240))
    created = start - timedelta(days=rng.randint(40, 400), minutes=rng.randint(0, 600))
    age_days = (start - created).days
    return created, created + timedelta(days=rng.randint(0, age_days - 2), minutes=rng.randint(0, 300))


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Create the world's directories (the empty ones too) and its documents."""
    writer = text.Writer(world, world.faker("files"), rng)
    found: set[str] = set()
    for directory in [*(parent_of(d.path) for d in world.documents), *world.empty_folders]:
        while directory is not None and directory != "/":
            found.add(directory)
            directory = parent_of(directory)
    office = writer.member(world.team("finance"), "Office Manager")
    founded = world.start - timedelta(days=420)
    for i, directory in enumerate(sorted(found)):
        add_directory(
            ws,
            AddDirectory(
                path=directory, modified_by=office.email, created_at=format_time(founded + timedelta(hours=i))
            ),
        )
    for doc in world.documents:
        content = _write(writer, doc)
        created, modified = _times(rng, world.start, doc.day)
        add_file(
            ws,
            AddFile(
                path=doc.path,
                content=content,
                modified_by=writer.pick(doc.team).email,
                created_at=format_time(created),
                modified_at=format_time(modified),
            ),
        )


def _write(writer: text.Writer, doc: Document) -> str:
    write = text.WRITERS.get(doc.kind)
    if write is None:
        raise ValueError(
            f"{doc.path}: unknown document kind {doc.kind!r}; known: {', '.join(sorted(text.WRITERS))}"
        )
    return write(writer, doc)
