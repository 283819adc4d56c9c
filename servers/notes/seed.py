"""Notes part of a world's seed: a knowledge base (a how-to article for each ticket queue and
its common requests, and the house rules as a policy), a page for each team, and the team
space's databases: a project tracker, meeting notes related to its projects, and a to-do list."""

from __future__ import annotations

import random
import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from coworkenv.state import Workspace, format_time

from .world import AddDatabase, AddPage, AddRow, SeedProperty, add_database, add_page, add_row

if TYPE_CHECKING:
    from coworkenv.world import Queue, World

#: What the placeholders of request templates read as in a general article.
PLACEHOLDERS = {
    "order": "the order",
    "invoice": "the invoice",
    "amount": "the amount",
    "city": "the site",
    "date": "the date given",
    "n": "the number",
}
STATUSES = ["Not started", "In progress", "Blocked", "Done"]
PRIORITIES = ["High", "Medium", "Low"]
MEETING_TYPES = ["Weekly sync", "Planning", "Review", "Customer call"]
TODO_TAGS = ["admin", "customer", "finance", "follow-up", "internal"]
#: Articles about requests: how many of each queue's topics get one.
TOPIC_ARTICLES = 2


def _general(text: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: PLACEHOLDERS.get(m.group(1), m.group(1)), text)


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Insert the knowledge base, the team pages and the team space with its databases."""
    past = world.start - timedelta(days=200)
    leads = {t.name: t.lead for t in world.teams}
    desk_lead = leads[world.team("desk")]

    def page(title: str, body: str, parent: int | None, author: str, kind: str = "page", age: int = 0) -> int:
        created = past + timedelta(days=rng.randint(0, 20))
        updated = world.start - timedelta(days=age or rng.randint(3, 150))
        data = {
            "title": title,
            "body": body,
            "parent_id": parent,
            "kind": kind,
            "author": author,
            "created_at": format_time(created),
            "updated_at": format_time(max(created, updated)),
        }
        return int(add_page(ws, AddPage.model_validate(data))["page_id"])

    kb = page(
        "Knowledge base",
        f"How {world.name} handles requests, and the policies everyone follows. "
        "Articles are kept current by the team that owns them.",
        None,
        desk_lead,
    )
    if world.house_rules:
        rules = "\n".join(f"{n}. {rule}" for n, rule in enumerate(world.house_rules, start=1))
        page(
            "Policy: house rules",
            f"# House rules\n\nThese apply to every team.\n\n{rules}\n",
            kb,
            desk_lead,
            "article",
        )
    for queue in world.queues:
        page(f"How to handle {queue.name} requests", _queue_article(world, queue), kb, queue.owner, "article")
        for topic in queue.topics[:TOPIC_ARTICLES]:
            steps = rng.sample(world.vocabulary.ticket_notes, min(2, len(world.vocabulary.ticket_notes)))
            reply = rng.choice(world.vocabulary.ticket_replies)
            body = (
                f"# {_general(topic.title)}\n\nWhat customers write: {_general(topic.body)}\n\n"
                f"## Steps\n\n1. Check the {queue.name} queue for an open ticket from the same requester.\n"
                + "".join(f"{n}. {step}\n" for n, step in enumerate(steps, start=2))
                + f"\n## Reply\n\n{reply}\n\nOwner: {queue.owner}\n"
            )
            page(f"How-to: {_general(topic.title)}", body, kb, queue.owner, "article")
    teams = page("Teams", f"The teams of {world.name}.", None, leads[world.team("leadership")])
    for team in world.teams:
        members = "\n".join(f"- {p.name} ({p.title}), {p.email}" for p in world.team_members(team.name))
        page(
            team.name,
            f"# {team.name}\n\n{team.purpose}\n\nLead: {team.lead}\n\n## Members\n\n{members}\n",
            teams,
            team.lead,
        )
    space = page("Team space", "Our trackers, meeting notes and to-do lists.", None, desk_lead)
    _databases(ws, world, rng, space, desk_lead)


def _queue_article(world: World, queue: Queue) -> str:
    requests = "\n".join(f"- {_general(t.title)}" for t in queue.topics)
    return (
        f"# How to handle {queue.name} requests\n\n{queue.description}\n\n"
        f"## Who works it\n\n{', '.join(queue.teams)}; {queue.owner} owns the queue.\n\n"
        f"## Common requests\n\n{requests}\n\n"
        f"## Tags\n\n{', '.join(queue.tags)}\n"
    )


def _databases(ws: Workspace, world: World, rng: random.Random, space: int, author: str) -> None:
    created = format_time(world.start - timedelta(days=120))
    teams = list(world.team_names)
    projects = int(
        add_database(
            ws,
            AddDatabase(
                title="Projects",
                description="What each team is working on, its owner, status and due date.",
                parent_id=space,
                properties=[
                    SeedProperty(name="Status", type="select", options=STATUSES),
                    SeedProperty(name="Owner", type="person"),
                    SeedProperty(name="Team", type="select", options=teams),
                    SeedProperty(name="Priority", type="select", options=PRIORITIES),
                    SeedProperty(name="Due", type="date"),
                ],
                created_at=created,
            ),
        )["database_id"]
    )
    words = world.vocabulary
    project_ids: list[int] = []
    for title in [*words.goals, *words.milestones][:10]:
        owner = rng.choice(world.staff)
        due = world.start + timedelta(days=rng.randint(-20, 90))
        status = "Done" if due < world.start else rng.choice(STATUSES[:3])
        values: dict[str, Any] = {
            "Status": status,
            "Owner": owner.email,
            "Team": owner.team,
            "Priority": rng.choice(PRIORITIES),
            "Due": due.date().isoformat(),
        }
        project_ids.append(_row(ws, world, rng, projects, _general(title), values, owner.email))
    meetings = int(
        add_database(
            ws,
            AddDatabase(
                title="Meeting notes",
                description="One row per meeting: when, who ran it, what was decided.",
                parent_id=space,
                properties=[
                    SeedProperty(name="Date", type="date"),
                    SeedProperty(name="Organizer", type="person"),
                    SeedProperty(name="Type", type="select", options=MEETING_TYPES),
                    SeedProperty(name="Decisions", type="text"),
                    SeedProperty(name="Projects", type="relation", target_database_id=projects),
                ],
                created_at=created,
            ),
        )["database_id"]
    )
    for back in range(6, 0, -1):
        organizer = rng.choice(world.staff)
        topic = rng.choice(words.meeting_topics)
        values = {
            "Date": (world.start - timedelta(days=back * 4)).date().isoformat(),
            "Organizer": organizer.email,
            "Type": rng.choice(MEETING_TYPES[:3]),
            "Decisions": rng.choice(words.decisions),
            "Projects": rng.sample(project_ids, 1),
        }
        _row(ws, world, rng, meetings, _general(topic), values, organizer.email)
    todo = int(
        add_database(
            ws,
            AddDatabase(
                title="To-do",
                description="Small tasks with an assignee and a due date; tick Done when finished.",
                parent_id=space,
                properties=[
                    SeedProperty(name="Done", type="checkbox"),
                    SeedProperty(name="Assignee", type="person"),
                    SeedProperty(name="Due", type="date"),
                    SeedProperty(name="Tags", type="multi_select", options=TODO_TAGS),
                ],
                created_at=created,
            ),
        )["database_id"]
    )
    for action in words.actions[:8]:
        assignee = rng.choice(world.team_members(world.team("desk")) or world.staff)
        due = world.start + timedelta(days=rng.randint(-7, 21))
        values = {
            "Done": due < world.start and rng.random() < 0.7,
            "Assignee": assignee.email,
            "Due": due.date().isoformat(),
            "Tags": rng.sample(TODO_TAGS, rng.randint(1, 2)),
        }
        _row(ws, world, rng, todo, _general(action), values, author)


def _row(
    ws: Workspace,
    world: World,
    rng: random.Random,
    database_id: int,
    title: str,
    values: dict[str, Any],
    author: str,
) -> int:
    created = format_time(world.start - timedelta(days=rng.randint(20, 110)))
    row = AddRow(database_id=database_id, title=title, properties=values, author=author, created_at=created)
    return int(add_row(ws, row)["row_id"])
