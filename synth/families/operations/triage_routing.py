"""Triage and routing families: route new tickets to queues by a stated rule, and label new
mail by who sent it."""

from __future__ import annotations

from typing import Any

from coworkenv.task import Task

from ...family import FamilyContext, SeedDoesNotFit, family
from ...phrasing import Ask, first_name, request
from ._shared import _at, _field, _guard, _op, _plant, _ticket_values

# -- tickets_route_by_rule -----------------------------------------------------------------------

#: Tickets that belong elsewhere than Support, by the queue the routing rule sends them to.
ROUTED: dict[str, list[tuple[str, str]]] = {
    "Billing": [
        ("Invoice {invoice} was charged twice", "Our card shows two payments for invoice {invoice}."),
        ("Refund for returned order {order}", "We sent order {order} back two weeks ago; no refund yet."),
        ("Payment for invoice {invoice} not registered", "We paid {invoice} on Friday but got a reminder."),
        ("Wrong VAT rate on invoice {invoice}", "Invoice {invoice} charges 21% VAT instead of 9%."),
    ],
    "IT": [
        ("VPN disconnects every few minutes", "Working from home, my VPN drops every five minutes."),
        ("Cannot log in to my laptop", "Since last night's update my laptop rejects my password at login."),
        ("Login to the office wifi fails", "The office wifi login page says my account is unknown."),
        ("VPN client asks for a new certificate", "The VPN client says my certificate expired."),
    ],
    "Engineering": [
        ("Bug: order export fails with error 500", "Exporting orders to CSV in the portal gives error 500."),
        (
            "Portal crashes when uploading a price list",
            "Uploading a price list over 2 MB crashes the portal.",
        ),
        ("Bug: tracking page shows the wrong carrier", "The tracking page lists DHL for every shipment."),
        (
            "Portal search throws an unexpected error",
            "Any search with a dash in it shows 'unexpected error'.",
        ),
    ],
}
#: Tickets that the rule leaves in Support.
STAYS = [
    ("Delivery of order {order} is late", "Order {order} was due last Wednesday and has not arrived."),
    ("Change the delivery address for order {order}", "Please deliver order {order} to our new warehouse."),
    ("Damaged boxes in shipment {order}", "Two boxes of order {order} arrived crushed."),
    ("Need the delivery note for order {order}", "Our warehouse needs a copy of the delivery note."),
    ("Pickup time for order {order}", "When can our driver collect order {order} at your depot?"),
    ("Partial delivery of order {order}", "Only 8 of the 12 pallets of order {order} arrived."),
]
#: What the demo's rule sends where.
RULE = [
    ("billing questions (invoices, payments, refunds)", "Billing"),
    ("login and VPN problems", "IT"),
    ("bugs and error messages in our software", "Engineering"),
]


def _route_ticket(
    ctx: FamilyContext, title: str, body: str, requester: str, minutes_ago: int, front: str = "Support"
) -> dict:
    values = _ticket_values(ctx)
    return _op(
        "tickets",
        "add_ticket",
        title=title.format(**values),
        description=body.format(**values),
        queue=front,
        requester=requester,
        status="open",
        created_at=_at(ctx, minutes=-minutes_ago),
    )


def _requester(ctx: FamilyContext, queue: str) -> Any:
    """Staff file IT tickets; customers the rest (and now and then a colleague reports a bug).
    In other worlds, whoever the queue says files into it."""
    if not ctx.on_demo:
        filed_by = next(q.requested_by for q in ctx.the_world.queues if q.name == queue)
        return ctx.person(internal=filed_by == "colleagues")
    if queue == "IT" or (queue == "Engineering" and ctx.rng.random() < 0.3):
        return ctx.person(internal=True)
    return ctx.person(internal=False)


def _clause(description: str) -> str:
    """A queue's description as a clause: 'Fee notes and payment queries.' -> 'fee notes and
    payment queries' (an acronym such as 'KYC' keeps its case)."""
    text = description.strip().rstrip(".")
    return text if text[1:2].isupper() else text[:1].lower() + text[1:]


def _world_rule(
    ctx: FamilyContext,
) -> tuple[str, dict[str, list[tuple[str, str]]], list[tuple[str, str]], list[tuple[str, str]]]:
    """Any world: the first queue customers file into, the other queues' topics as what the
    rule routes, the first queue's own topics as what stays, and the rule (what goes where)."""
    world = ctx.the_world
    front = next(q for q in world.queues if q.requested_by == "customers")
    targets = [q for q in world.queues if q.name != front.name]
    routed = {q.name: [(t.title, t.body) for t in q.topics] for q in targets}
    stays = [(t.title, t.body) for t in front.topics]
    return front.name, routed, stays, [(_clause(q.description), q.name) for q in targets]


def _routing_ask(ctx: FamilyContext, front: str, rule: list[tuple[str, str]]) -> Ask:
    """The routing request: which new tickets, the rule queue by queue, the rest stays."""
    variant = ctx.rng.randrange(3)
    if variant == 0:
        steps = (
            f"Triage the new tickets that came into the {front} queue in the last three hours.",
            *(f"Move {what} to {queue}." for what, queue in rule),
            f"Leave everything else in {front}.",
        )
    elif variant == 1:
        said = "; ".join(f"{what} go to {queue}" for what, queue in rule)
        steps = (
            f"Sort the tickets that arrived in {front} over the last three hours by this rule: {said}.",
            f"Keep the rest in {front}.",
        )
    else:
        steps = (
            f"Route the {front} tickets created in the last three hours.",
            *(f"Send {what} to the {queue} queue." for what, queue in rule),
            f"Keep anything else in {front}.",
        )
    context = ctx.choice(
        [
            f"The {front} queue filled up this morning.",
            "The other teams are waiting for their tickets.",
            "",
        ]
    )
    short = ", ".join(f"{what} to {queue}" for what, queue in rule)
    return Ask(
        steps=steps,
        context=context,
        short=f"Route the last three hours of {front} tickets: {short}, the rest stays",
    )


@family("tickets_route_by_rule", capability_id="triage_routing", services=["tickets"], worlds=True)
def tickets_route_by_rule(ctx: FamilyContext) -> Task:
    """New tickets land in Support; the user states a routing rule (billing to Billing, login and
    VPN to IT, bugs to Engineering) and the agent moves each ticket to its queue. Distractors are
    new tickets that the rule leaves in Support. Items and distractors scale with difficulty. In
    other worlds the rule routes by what each of the world's queues is for. Runs on every world."""
    services = ["tickets"]
    front, routed, stays, rule = "Support", ROUTED, STAYS, RULE
    if not ctx.on_demo:
        front, routed, stays, rule = _world_rule(ctx)
    queues = ctx.rng.sample(list(routed), min(3, len(routed)))
    picks = {q: ctx.rng.sample(routed[q], len(routed[q])) for q in queues}
    n = len(queues)
    plan = [
        (queues[i % n], picks[queues[i % n]][(i // n) % len(picks[queues[i % n]])])
        for i in range(ctx.difficulty.items)
    ]
    plan += [(front, t) for t in ctx.rng.sample(stays, min(len(stays), ctx.difficulty.distractors))]
    ctx.rng.shuffle(plan)
    minutes = sorted(ctx.rng.sample(range(5, 175), len(plan)), reverse=True)
    operations = []
    for (queue, (title, body)), ago in zip(plan, minutes, strict=True):
        operations.append(_route_ticket(ctx, title, body, _requester(ctx, queue).email, ago, front))
    results, ws = _plant(ctx, services, operations)
    early = ws.conn.execute(
        "SELECT count(*) FROM tickets_tickets WHERE queue = ? AND created_at >= ? AND id < ?",
        (front, _at(ctx, hours=-3), results[0]["ticket_id"]),
    ).fetchone()[0]
    if early:
        raise SeedDoesNotFit(f"{early} seed ticket(s) of {front} fall in the task's three-hour window")
    ids = [r["ticket_id"] for r in results]
    checks = []
    for tid, (queue, _), op in zip(ids, plan, operations, strict=True):
        title = op["params"]["title"]
        check = _field(
            f"ticket-{tid}-queue",
            "tickets_tickets",
            {"id": tid},
            "queue",
            queue,
            f"#{tid} ({title}) ends in {queue}",
        )
        checks.append(check if queue != front else _guard(check))
    solution: list[dict[str, Any]] = [
        {
            "tool": "tickets_search_tickets",
            "arguments": {"queue": front, "status": "open", "sort": "newest", "limit": 20},
            "id": "new",
        }
    ]
    solution += [
        {"tool": "tickets_update_ticket", "arguments": {"ticket_id": tid, "queue": queue}}
        for tid, (queue, _) in zip(ids, plan, strict=True)
        if queue != front
    ]
    return ctx.task(
        capability_id="triage_routing",
        services=services,
        operations=operations,
        title=f"Route this morning's new tickets in {front} by a stated rule",
        turns=[
            {"user": request(ctx, _routing_ask(ctx, front, rule)), "checks": checks, "solution": solution}
        ],
    )


# -- mail_label_by_sender ------------------------------------------------------------------------

NEUTRAL_MAILS = [
    ("Quick question", "Do you have five minutes later today? I would like to check something with you."),
    ("Following up", "Just following up on what we discussed last week; let me know what you think."),
    ("Numbers for Thursday", "I have put together the numbers we talked about for Thursday."),
    ("Can you take a look?", "Could you take a look at the attached summary before I send it on?"),
    ("Heads-up for next week", "A short heads-up: next week will be busy on our side, plan accordingly."),
    ("Documents you asked for", "Here are the documents you asked for; tell me if anything is missing."),
    ("Planning for March", "Shall we plan the March items together? I have a few ideas."),
    ("Small favour", "Could you do me a small favour and forward me last month's overview?"),
    ("Update", "A short update from my side: things are moving, more details on Friday."),
    ("Re: our call", "Thanks for the call earlier. As promised, a summary follows tomorrow."),
    ("Timing question", "What timing works best for you for the next review?"),
]
EXTERNAL_LABELS = ["customers", "external"]


def _label_teams(ctx: FamilyContext) -> list[str]:
    """Teams a labelling rule may name besides external senders: the finance, tech and sales
    teams (else any other team), never the user's own, each with a colleague besides the user."""
    world = ctx.the_world
    staffed = {p.team for p in ctx.people()}
    roles = {world.team(role) for role in ("finance", "tech", "sales")}
    teams = sorted(t for t in roles if t != ctx.user.team and t in staffed)
    return teams or sorted(t for t in world.team_names if t != ctx.user.team and t in staffed)


def _team_words(team: str) -> str:
    """'Finance' -> 'the Finance team'; 'Executive Team' stays 'the Executive Team'."""
    return f"the {team}" if team.lower().endswith("team") else f"the {team} team"


def _label_ask(ctx: FamilyContext, ext: str, team: str, label: str) -> Ask:
    """The labelling rule: outside senders, the team's members, nobody else."""
    company, members = ctx.company.name, _team_words(team)
    steps = ctx.choice(
        [
            (
                "Label the mails that reached my inbox in the last three hours by who sent them.",
                f'Give mail from people outside {company} the label "{ext}".',
                f'Give mail from colleagues on {members} the label "{label}".',
                "Leave mail from other colleagues without a label.",
            ),
            (
                f'Tag every inbox mail of the last three hours from an outside sender with "{ext}".',
                f'Tag the ones from people on {members} with "{label}".',
                "Leave the other colleagues' mail untagged.",
            ),
            (
                f'Sort the new inbox mail of the last three hours with labels: "{ext}" for anyone outside '
                f'{company} and "{label}" for {members}.',
                "Leave mail from everyone else unlabelled.",
            ),
        ]
    )
    context = ctx.choice(
        ["The directory says who is on which team.", "I want to see at a glance who is waiting for me.", ""]
    )
    return Ask(
        steps=steps,
        context=context,
        short=f'Label the last three hours of inbox mail: "{ext}" for outside senders, "{label}" for {members}',
    )


def _senders(ctx: FamilyContext, team: str) -> tuple[list[tuple[Any, str]], list[Any]]:
    """(sender, kind) of the mails to label and the senders of the mails to leave alone."""
    externals = ctx.rng.sample(ctx.people(internal=False), 4)
    members = ctx.rng.sample(ctx.people(team=team), min(2, len(ctx.people(team=team))))
    pairs = [[(p, "external") for p in externals], [(p, "team") for p in members]]
    ctx.rng.shuffle(pairs)
    alternating = [p for pair in zip(*pairs, strict=False) for p in pair] + pairs[0][len(pairs[1]) :]
    items = alternating[: ctx.difficulty.items]
    others = [p for p in ctx.people() if p.team != team]
    return items, ctx.rng.sample(others, min(len(others), ctx.difficulty.distractors))


@family("mail_label_by_sender", capability_id="triage_routing", services=["mail", "directory"], worlds=True)
def mail_label_by_sender(ctx: FamilyContext) -> Task:
    """New inbox mails from external contacts and colleagues; the user states a labelling rule
    by sender (external -> one label, members of a team -> another) and the agent looks the
    senders up in the directory. Distractors are mails from other colleagues, left unlabelled.
    Runs on every world (the team is its finance, tech or sales team)."""
    services = ["mail", "directory"]
    team = ctx.choice(_label_teams(ctx))
    labels = {"external": ctx.choice(EXTERNAL_LABELS), "team": team.lower()}
    items, others = _senders(ctx, team)
    mails = [(p, labels[kind]) for p, kind in items] + [(p, None) for p in others]
    ctx.rng.shuffle(mails)
    texts = ctx.rng.sample(NEUTRAL_MAILS, len(mails))
    minutes = sorted(ctx.rng.sample(range(5, 175), len(mails)), reverse=True)
    operations = [
        _op(
            "mail",
            "deliver_inbound",
            from_addr=sender.email,
            subject=subject,
            body=f"Hi {first_name(ctx.user.name)},\n\n{body}\n\nBest,\n{sender.name}",
            sent_at=_at(ctx, minutes=-ago),
        )
        for (sender, _), (subject, body), ago in zip(mails, texts, minutes, strict=True)
    ]
    results, _ = _plant(ctx, services, operations)
    ids = [r["id"] for r in results]
    labelled = [(mid, label) for mid, (_, label) in zip(ids, mails, strict=True) if label]
    checks: list[dict[str, Any]] = [
        {
            "id": f"mail-{mid}-{label}",
            "type": "row_exists",
            "table": "mail_labels",
            "where": {"message_id": mid, "label": label},
            "description": f"Mail {mid} carries the label {label}",
        }
        for mid, label in labelled
    ]
    solution: list[dict[str, Any]] = [
        {
            "tool": "mail_search_messages",
            "arguments": {"folder": "inbox", "after": _at(ctx, hours=-3), "limit": 50},
            "id": "new",
        }
    ]
    solution += [{"tool": "directory_get_person", "arguments": {"email": p.email}} for p, _ in mails]
    solution += [
        {"tool": "mail_add_label", "arguments": {"message_id": m, "label": lab}} for m, lab in labelled
    ]
    return ctx.task(
        capability_id="triage_routing",
        services=services,
        operations=operations,
        title=f"Label this morning's mail: external senders and the {team} team",
        turns=[
            {
                "user": request(ctx, _label_ask(ctx, labels["external"], team, labels["team"])),
                "checks": checks,
                "solution": solution,
            }
        ],
    )
