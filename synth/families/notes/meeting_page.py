"""notes_meeting_page (knowledge_work): after a team meeting, the agent writes its row in the
team's meeting-notes database: the date, the attendees, the type and the project it was
about as properties, and the decision and action items from the organizer's notes mail."""

from __future__ import annotations

import json
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.checks import Check, Guards
from coworkenv.state import format_time
from coworkenv.task import Task, Turn, WorldCall
from coworkenv.world import Person

from ...builders import (
    ago,
    date_fact,
    day_text,
    house_rules,
    max_id,
    next_day,
    number_fact,
    operation,
    person_fact,
    sql_check,
    sql_text,
    states,
    step,
    text_fact,
)
from ...family import FamilyContext, SeedDoesNotFit, family
from ...phrasing import Ask, first_name, request
from ..calendar_planning import event_operation, unambiguous
from .tracker_from_mail import tracker_items

SERVICES = ["notes", "calendar", "mail", "directory"]
#: The type of meeting and how its invitation is titled.
TYPES = {
    "Weekly sync": "Weekly sync on {project}",
    "Planning": "Planning session: {project}",
    "Review": "Review of {project}",
}
SHORT_TITLE = 40
"""The longest project title a meeting's title takes, where the tracker has one that short."""
ACTIONS = (
    "sends the revised plan to everyone",
    "books the follow-up meeting",
    "writes up the open questions",
    "checks the figures with Finance",
    "shares the draft with the wider team",
)


def _amounts(ctx: FamilyContext) -> tuple[int, int]:
    """The agreed figure and a proposed one, neither inside the other."""
    while True:
        agreed, proposed = (ctx.rng.randrange(5_000, 90_000, 500) for _ in range(2))
        if str(agreed) not in str(proposed) and str(proposed) not in str(agreed):
            return agreed, proposed


def _last_workday(ctx: FamilyContext, zone: ZoneInfo) -> datetime:
    """10:00 on the last working day before today, in the user's zone."""
    day = ctx.start.astimezone(zone).date() - timedelta(days=1)
    while day.weekday() >= 5:
        day -= timedelta(days=1)
    return datetime.combine(day, time(10), zone)


def _ask(ctx: FamilyContext, title: str, database: str, organizer: Person, when: str) -> Ask:
    first = first_name(organizer.name)
    return ctx.choice(
        [
            Ask(
                steps=(
                    f"Add a row for '{title}' ({when}) to the {database} database in the notes, titled after the meeting.",
                    "Set its date, its attendees (everyone on the invite), its type and the project it was about.",
                    f"Put the decision and the action items from {first}'s notes mail in it.",
                ),
                short=f"write up '{title}' ({when}) in {database}: properties set, decision and actions from {first}'s mail",
            ),
            Ask(
                steps=(
                    f"Write up the meeting '{title}' of {when} in {database}, as a row named after the meeting.",
                    "Fill in the date, who was invited, the type of meeting and its project.",
                    f"Add the decision and the action items {first} mailed round afterwards.",
                ),
                context="I want the meeting notes database to be complete.",
                short=f"'{title}' ({when}) into {database}: date, invitees, type, project, decision, actions",
            ),
        ]
    )


@family("notes_meeting_page", capability_id="knowledge_work", services=SERVICES, worlds=True)
def notes_meeting_page(ctx: FamilyContext) -> Task:
    """After a team meeting (a calendar event about one project), the agent adds its row to the
    team's meeting-notes database: date, attendees (a multi-select of names), type (from the
    invitation), the related project (a relation to the Projects tracker), and the decision
    (an agreed figure) and action items (who does what by when) from the organizer's notes mail.
    Distractors: the same meeting a week earlier (already written up, and on the calendar), a
    proposal mail before the meeting with another figure. Difficulty: more action items,
    more attendees. Runs on every world."""
    _, ws = ctx.seeded(SERVICES, [])
    projects_db, items = tracker_items(ws)
    user = ctx.user
    members = unambiguous(ctx, ctx.people(internal=True, team=user.team))
    if len(members) < 2:  # a small team meets with colleagues of other teams
        members = unambiguous(ctx, ctx.people(internal=True))
    size = min(len(members), 1 + ctx.difficulty.items)
    if size < 2:
        raise SeedDoesNotFit("too few colleagues for a meeting")
    group: list[Person] = ctx.rng.sample(members, size)
    organizer, others = group[0], group[1:]
    # No figure in the project's title: the decision that names it must hold one figure only.
    plain = [i for i in items if not any(ch.isdigit() for ch in i.title)]
    plain = [i for i in plain if len(i.title) <= SHORT_TITLE] or plain  # a milestone reads best
    if not plain:
        raise SeedDoesNotFit("every project title holds a figure")
    kind = ctx.choice(list(TYPES))
    project = ctx.choice([i for i in plain if kind.split()[-1].lower() not in i.title.lower()] or plain)
    title = TYPES[kind].format(project=project.title.rstrip("."))
    zone = ZoneInfo(user.time_zone)
    start = _last_workday(ctx, zone)
    end = start + timedelta(minutes=45)
    invited = [(p.email, "accepted") for p in [user, *others]]
    space = ws.conn.execute("SELECT id FROM notes_pages WHERE title = 'Team space'").fetchone()
    team = user.team or "Team"
    database = f"{team} meetings"
    names = sorted({p.name for p in [user, *group]} | {p.name for p in ctx.the_world.team_members(user.team)})
    attendees = sorted(p.name for p in [user, *group])
    agreed, proposed = _amounts(ctx)
    currency = ctx.the_world.currency
    owners = ctx.rng.sample(group, min(len(group), 1 + ctx.difficulty.items // 2))
    weekdays = [d for d in range(3, 20) if (start.date() + timedelta(days=d)).weekday() < 5]
    dues = sorted(ctx.rng.sample(weekdays, len(owners)))
    actions = [
        (p, ctx.choice(ACTIONS), start.date() + timedelta(days=d)) for p, d in zip(owners, dues, strict=True)
    ]
    decision = f"The budget for {project.title.rstrip('.')} is capped at {currency} {agreed:,}."
    action_text = "\n".join(f"- {p.name} {what} by {day_text(due)}." for p, what, due in actions)
    week_before = start - timedelta(days=7)
    operations: list[WorldCall] = [
        event_operation(organizer, title, week_before, week_before + timedelta(minutes=45), invited),
        event_operation(
            organizer, title, start, end, invited, description=f"{kind} meeting about {project.title}"
        ),
        operation(
            "notes",
            "add_database",
            title=database,
            description=f"The {team} team's meetings: one row each, with what was decided and who does what.",
            parent_id=space[0] if space else None,
            properties=[
                {"name": "Date", "type": "date"},
                {"name": "Attendees", "type": "multi_select", "options": names},
                {"name": "Type", "type": "select", "options": list(TYPES)},
                {"name": "Project", "type": "relation", "target_database_id": projects_db},
                {"name": "Decisions", "type": "text"},
                {"name": "Action items", "type": "text"},
            ],
            created_at=ago(ctx, days=60),
        ),
        operation(
            "mail",
            "deliver_inbound",
            from_addr=organizer.email,
            to=[p.email for p in [user, *others]],
            subject=f"Proposal for {title}",
            body=f"Hi all,\n\nfor {day_text(start.date())}: I will propose capping the budget at "
            f"{currency} {proposed:,}.\n\n{first_name(organizer.name)}",
            sent_at=format_time(start - timedelta(days=1, hours=2)),
        ),
        operation(
            "mail",
            "deliver_inbound",
            from_addr=organizer.email,
            to=[p.email for p in [user, *others]],
            subject=f"Notes: {title}",
            body=f"Hi all,\n\nthanks for coming. What we agreed:\n\n- {decision}\n\nAction items:\n\n{action_text}"
            f"\n\n{first_name(organizer.name)}",
            sent_at=format_time(end + timedelta(hours=1)),
        ),
    ]
    results, seeded = ctx.seeded(SERVICES, operations)
    database_id = results[2]["database_id"]
    earlier = operation(
        "notes",
        "add_row",
        database_id=database_id,
        title=title,
        properties={
            "Date": week_before.date().isoformat(),
            "Attendees": attendees,
            "Type": kind,
            "Project": [project.row_id],
            "Decisions": "Agreed to meet again next week with a budget proposal.",
            "Action items": f"- {organizer.name} prepares the budget proposal.",
        },
        author=organizer.email,
        created_at=format_time(week_before + timedelta(hours=2)),
    )
    operations.append(earlier)
    results, seeded = ctx.seeded(SERVICES, operations)
    last = max_id(seeded, "notes_rows")
    # The text properties: the team database is the only one with Action items; the
    # company-wide Meeting notes also has Decisions, and one-row rejects a row written there.
    new: dict[str, Any] = {"row_id": {"gt": last}}
    values = {
        "Date": start.date().isoformat(),
        "Attendees": attendees,
        "Type": kind,
        "Project": [project.row_id],
        "Decisions": decision,
        "Action items": action_text,
    }
    stored = {
        "Date": values["Date"],
        "Attendees": json.dumps(attendees),
        "Type": kind,
        "Project": json.dumps([project.row_id]),
    }
    checks: list[Check] = [
        sql_check(
            "one-row",
            f"Exactly one new row in {database}",
            f"SELECT count(*) FROM notes_rows WHERE database_id = {database_id} AND id > {last}",
        ),
        states(
            "row-title",
            f"The new row is titled after '{title}'",
            "notes_rows",
            {"database_id": database_id, "id": {"gt": last}},
            ["title"],
            [text_fact(title)],
        ),
        *(
            sql_check(
                prop.lower(),
                f"The new row's {prop} is {value}",
                "SELECT count(*) FROM notes_rows r JOIN notes_values v ON v.row_id = r.id "
                f"WHERE r.database_id = {database_id} AND r.id > {last} AND v.property = '{prop}' "
                f"AND v.value = '{sql_text(value)}'",
            )
            for prop, value in stored.items()
        ),
        states(
            "decision",
            f"Its Decisions give the agreed cap {currency} {agreed:,} (not the proposed {proposed:,})",
            "notes_values",
            {**new, "property": "Decisions"},
            ["value"],
            [number_fact(agreed)],
            absent=[number_fact(proposed)],
        ),
        states(
            "action-items",
            "Its Action items name who does what by when: "
            + "; ".join(f"{p.name} by {due.isoformat()}" for p, _, due in actions),
            "notes_values",
            {**new, "property": "Action items"},
            ["value"],
            [f for p, _, due in actions for f in (person_fact(p), date_fact(due))],
        ),
    ]
    day = start.date()
    solution = [
        step(
            "calendar_list_events",
            "ev",
            start=day.isoformat(),
            end=next_day(day),
            time_zone=user.time_zone,
            query=title,
        ),
        step("calendar_get_event", event_id={"$ref": "ev.events.0.event_id"}),
        step("mail_search_messages", sender=organizer.email, folder="inbox"),
        step("mail_get_message", message_id=results[3]["id"]),
        step("mail_get_message", message_id=results[4]["id"]),
        step("notes_list_databases"),
        step("notes_query_database", database_id=projects_db, limit=100),
        step("notes_add_database_row", database_id=database_id, title=title, properties=values),
    ]
    when = day_text(day)
    return ctx.task(
        capability_id="knowledge_work",
        services=SERVICES,
        operations=operations,
        title=f"Write up '{title}' in the {database} database",
        context=house_rules(ctx),
        turns=[
            Turn(
                user=request(ctx, _ask(ctx, title, database, organizer, when)),
                checks=checks,
                solution=solution,
            )
        ],
        # The new row's values are the agent's to word (the decision, the action items) and
        # every one is checked above; the values of existing rows stay guarded.
        guards=Guards(free=["notes_values.value"]),
    )
