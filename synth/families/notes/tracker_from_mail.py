"""notes_tracker_from_mail (knowledge_work): the week's mail carries updates on project
items (a new status, a new owner, a new due date); the agent brings the project tracker's
rows in line. The latest mail about an item wins over an earlier one, a retracted change
changes nothing, and items nobody wrote about stay as they are."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from coworkenv.checks import Check
from coworkenv.state import Workspace
from coworkenv.task import Task, Turn, WorldCall
from coworkenv.world import Person

from ...builders import ago, day_text, field_equals, guard, house_rules, operation, step
from ...family import FamilyContext, SeedDoesNotFit, family
from ...phrasing import Ask, first_name, request

SERVICES = ["notes", "mail"]
TRACKER = "Projects"
STATUS_WORDS = {
    "Not started": "has not started after all, so it is back to not started",
    "In progress": "has started and is in progress now",
    "Blocked": "is blocked at the moment: we are waiting for a decision",
    "Done": "is done",
}
LONGEST_TITLE = 70


@dataclass(frozen=True)
class Item:
    """A tracker row as seeded: its id, title and property values."""

    row_id: int
    title: str
    values: dict[str, Any]


def tracker_items(ws: Workspace) -> tuple[int, list[Item]]:
    """The project tracker's id and its rows with unique, short titles."""
    found = ws.conn.execute("SELECT id FROM notes_databases WHERE title = ?", (TRACKER,)).fetchone()
    if found is None:
        raise SeedDoesNotFit("the world's notes have no project tracker")
    database_id = int(found[0])
    rows = ws.conn.execute(
        "SELECT id, title FROM notes_rows WHERE database_id = ? ORDER BY id", (database_id,)
    )
    items = []
    titles: list[str] = []
    for row_id, title in rows.fetchall():
        values = dict(ws.conn.execute("SELECT property, value FROM notes_values WHERE row_id = ?", (row_id,)))
        items.append(Item(row_id, title, values))
        titles.append(title.lower())
    unique = [i for i in items if titles.count(i.title.lower()) == 1 and len(i.title) <= LONGEST_TITLE]
    return database_id, unique


def _neighbour(ws: Workspace, row_id: int, named: set[int]) -> dict[str, Any]:
    """The values of the nearest other row (by id) that the task does not name: a new value
    that row already holds would make the same write aimed at it change nothing, so the
    family gives the item a value its neighbour lacks."""
    found = ws.conn.execute(
        "SELECT id FROM notes_rows WHERE id != ? ORDER BY abs(id - ?), id LIMIT 20", (row_id, row_id)
    ).fetchall()
    free = [r[0] for r in found if r[0] not in named]
    if not free:
        return {}
    return dict(
        ws.conn.execute("SELECT property, value FROM notes_values WHERE row_id = ?", (free[0],)).fetchall()
    )


def _named(item: Item) -> str:
    return f"'{item.title.rstrip('.')}'"


def _when(day: date) -> str:
    return f"{day_text(day)} {day.year}"


@dataclass
class Change:
    item: Item
    prop: str
    value: str
    sentence: str


def _change(ctx: FamilyContext, item: Item, prop: str, avoid: set[Any]) -> Change:
    """A new value of `prop` for `item` (not its current one, nor any in `avoid`), as a mail says it."""
    current = item.values.get(prop)
    if prop == "Status":
        value = ctx.choice([s for s in STATUS_WORDS if s != current and s not in avoid])
        return Change(item, prop, value, f"{_named(item)} {STATUS_WORDS[value]}.")
    if prop == "Owner":
        person: Person = ctx.choice(
            [p for p in ctx.people(internal=True) if p.email != current and p.email not in avoid]
        )
        return Change(
            item,
            prop,
            person.email,
            f"{person.name} ({person.email}) takes over {_named(item)} and owns it from now on.",
        )
    days = [
        d
        for d in range(10, 75)
        if (ctx.start.date() + timedelta(days=d)).weekday() < 5
        and (ctx.start.date() + timedelta(days=d)).isoformat() not in {current, *avoid}
    ]
    day = ctx.start.date() + timedelta(days=ctx.choice(days))
    return Change(item, prop, day.isoformat(), f"The due date of {_named(item)} moves to {_when(day)}.")


def _mail(ctx: FamilyContext, sender: Person, subject: str, text: str, days_ago: float) -> WorldCall:
    body = f"Hi {first_name(ctx.user.name)},\n\n{text}\n\nThanks,\n{first_name(sender.name)}"
    return operation(
        "mail",
        "deliver_inbound",
        from_addr=sender.email,
        subject=subject,
        body=body,
        sent_at=ago(ctx, days=days_ago),
    )


def _sender(ctx: FamilyContext, item: Item) -> Person:
    """Who writes about an item: its owner, unless that is the user."""
    owner = item.values.get("Owner")
    people = {p.email: p for p in ctx.people(internal=True)}
    return people.get(str(owner)) or ctx.person(internal=True)


def _ask(ctx: FamilyContext) -> Ask:
    return ctx.choice(
        [
            Ask(
                steps=(
                    "Go through this week's project update mails in my inbox.",
                    f"Bring the {TRACKER} tracker in the notes in line with them: status, owner and due date.",
                    "Where someone wrote twice about an item, the later mail counts.",
                ),
                context="Items nobody wrote about stay as they are.",
                short=f"update the {TRACKER} tracker from this week's update mails, latest mail wins",
            ),
            Ask(
                steps=(
                    f"Update the {TRACKER} database from the project update mails people sent me this week.",
                    "Leave every item nobody wrote about untouched.",
                ),
                context="Some of them changed their minds during the week, so read to the end.",
                short=f"{TRACKER} tracker: apply this week's mailed updates, only those",
            ),
            Ask(
                steps=(f"Keep the {TRACKER} tracker current with this week's update mails.",),
                context="Owners mailed me status changes, handovers and new due dates.",
                short=f"apply the week's update mails to the {TRACKER} tracker",
            ),
        ]
    )


@family("notes_tracker_from_mail", capability_id="knowledge_work", services=SERVICES, worlds=True)
def notes_tracker_from_mail(ctx: FamilyContext) -> Task:
    """This week's mail carries updates on project tracker items: a new status, a handover to
    a new owner, a new due date. The agent updates those rows of the Projects database. The
    first item was written about twice: an earlier mail is superseded by a later one. With
    distractors, another item's change is announced and then retracted (it must stay as it
    is). Difficulty: how many items change. Runs on every world."""
    _, ws = ctx.seeded(SERVICES, [])
    database_id, items = tracker_items(ws)
    retracted = ctx.difficulty.distractors >= 2
    wanted = min(ctx.difficulty.items, len(items) - int(retracted))
    if wanted < 1:
        raise SeedDoesNotFit("the project tracker has too few items")
    chosen = ctx.rng.sample(items, wanted + int(retracted))
    targets, others = chosen[:wanted], chosen[wanted:]
    props = ["Status", "Owner", "Due"]
    operations: list[WorldCall] = []
    changes: list[Change] = []
    named = {database_id, *(t.row_id for t in targets)}
    for n, item in enumerate(targets):
        prop = props[(n + ctx.rng.randrange(3)) % 3]
        beside = _neighbour(ws, item.row_id, named)
        final = _change(ctx, item, prop, {beside.get(prop)})
        sender = _sender(ctx, item)
        sent = ctx.rng.uniform(0.3, 2.5)
        if n == 0:  # an earlier mail about the same item, superseded
            stale = _change(ctx, item, prop, {final.value})
            operations.append(
                _mail(ctx, sender, f"Update: {item.title.rstrip('.')}", stale.sentence, sent + 2)
            )
            text = f"A correction to my earlier mail: {final.sentence[:1].lower()}{final.sentence[1:]}"
        else:
            text = final.sentence
        if len(targets) > 2 and n == 1:  # two fields of one item in one mail
            other = "Status" if prop != "Status" else "Due"
            second = _change(ctx, item, other, {beside.get(other)})
            text += f" Also, {second.sentence[:1].lower()}{second.sentence[1:]}"
            changes.append(second)
        operations.append(_mail(ctx, sender, f"Project update: {item.title.rstrip('.')}", text, sent))
        changes.append(final)
    kept: list[Check] = []
    for item in others:
        undo = _change(ctx, item, ctx.choice(props), set())
        sender = _sender(ctx, item)
        sent = ctx.rng.uniform(0.3, 2.5)
        operations.append(_mail(ctx, sender, f"Update: {item.title.rstrip('.')}", undo.sentence, sent + 2))
        operations.append(
            _mail(
                ctx,
                sender,
                f"Update: {item.title.rstrip('.')} (please ignore)",
                f"Please ignore my earlier mail about {_named(item)}: nothing changes, it stays as it is in the "
                "tracker.",
                sent,
            )
        )
        kept.append(
            guard(
                field_equals(
                    f"kept-{item.row_id}",
                    f"{_named(item)} keeps its {undo.prop} {item.values.get(undo.prop)} (the change was retracted)",
                    "notes_values",
                    {"row_id": item.row_id, "property": undo.prop},
                    "value",
                    item.values.get(undo.prop),
                )
            )
        )
    order = sorted(range(len(operations)), key=lambda i: str(operations[i].params["sent_at"]))
    operations = [operations[i] for i in order]
    results = ctx.plant(SERVICES, operations)
    checks: list[Check] = [
        field_equals(
            f"{c.prop.lower()}-{c.item.row_id}",
            f"{_named(c.item)} has {c.prop} {c.value}",
            "notes_values",
            {"row_id": c.item.row_id, "property": c.prop},
            "value",
            c.value,
        )
        for c in changes
    ]
    updates: dict[int, dict[str, str]] = {}
    for c in changes:
        updates.setdefault(c.item.row_id, {})[c.prop] = c.value
    solution = [step("mail_search_messages", query="update", folder="inbox", limit=50)]
    solution += [step("mail_get_message", message_id=r["id"]) for r in results]
    solution += [
        step("notes_list_databases"),
        step("notes_query_database", database_id=database_id, limit=100),
    ]
    solution += [step("notes_update_database_row", row_id=r, properties=v) for r, v in updates.items()]
    return ctx.task(
        capability_id="knowledge_work",
        services=SERVICES,
        operations=operations,
        title=f"Update the {TRACKER} tracker from the week's mail",
        context=house_rules(ctx),
        turns=[Turn(user=request(ctx, _ask(ctx)), checks=[*checks, *kept], solution=solution)],
    )
