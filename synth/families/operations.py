"""Operations families: route and bulk-close tickets, label mail by sender, hand work from one
service to another (mail to ticket, ticket to meeting), and recover from refused tool calls."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.servers.calendar.events import busy_times
from coworkenv.servers.demo import DemoPerson
from coworkenv.state import Workspace, format_time
from coworkenv.task import Task

from ..family import FamilyContext, family

# -- shared helpers ------------------------------------------------------------------------------


def _plant(
    ctx: FamilyContext, services: list[str], operations: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], Workspace]:
    """The planted operations' results, and the workspace as seeding will leave it, for the
    queries that decide which demo rows also meet a task's condition."""
    return ctx.seeded(services, operations)


def _op(service: str, operation: str, **params: Any) -> dict[str, Any]:
    return {"service": service, "operation": operation, "params": params}


def _at(ctx: FamilyContext, **delta: float) -> str:
    """The demo clock start moved by `delta` (negative values lie in the past), as stored text."""
    return format_time(ctx.start + timedelta(**delta))


def _first(person: DemoPerson) -> str:
    return person.name.split()[0]


def _field(check_id: str, table: str, where: dict[str, Any], column: str, value: Any, text: str) -> dict:
    return {
        "id": check_id,
        "type": "field_equals",
        "table": table,
        "where": where,
        "column": column,
        "value": value,
        "description": text,
    }


def _bounded(text: str, *allowed: dict[str, Any]) -> dict[str, Any]:
    return {"id": "no-collateral", "type": "bounded_diff", "description": text, "allowed": list(allowed)}


def _allow(table: str, where: dict[str, Any], *kinds: str) -> dict[str, Any]:
    return {"table": table, "where": where, "kinds": list(kinds)}


def _max_id(ws: Workspace, table: str) -> int:
    return int(ws.conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0])


def _order(ctx: FamilyContext) -> str:
    return f"NW-{ctx.rng.randint(10000, 99999)}"


def _invoice(ctx: FamilyContext) -> str:
    return f"INV-2026-{ctx.rng.randint(1000, 9999)}"


ROLE = "You are an AI assistant working in the company's mail, tickets, calendar, files and directory."


def _context(ctx: FamilyContext, *rules: str) -> dict[str, Any]:
    """The default context of `ctx.task` with the task's rules."""
    return {
        "company": ctx.company.name,
        "user_name": ctx.user.name,
        "role": ROLE,
        "rules": list(rules),
    }


NO_DELETE = [{"id": "no-delete", "type": "no_deletion"}]
COUNTS = ["one", "two", "three", "four", "five", "six", "seven", "eight"]


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
ROUTING_REQUESTS = [
    "Please triage the new tickets that came into the Support queue since 06:00 UTC today. The rule: "
    "billing questions (invoices, payments, refunds) go to Billing, login and VPN problems go to IT, and "
    "bugs or error messages in our software go to Engineering. Everything else stays in Support.",
    "Route this morning's new Support tickets (the ones created after 06:00 UTC): anything about invoices, "
    "payments or refunds to the Billing queue, login or VPN trouble to IT, software bugs and errors to "
    "Engineering. Leave the rest in Support where they are.",
    "Can you sort the tickets that arrived in Support since 06:00 UTC? Billing questions belong in Billing, "
    "login/VPN problems in IT, bugs in Engineering; anything else is fine in Support.",
]


def _route_ticket(ctx: FamilyContext, title: str, body: str, requester: str, minutes_ago: int) -> dict:
    values = {"order": _order(ctx), "invoice": _invoice(ctx)}
    return _op(
        "tickets",
        "add_ticket",
        title=title.format(**values),
        description=body.format(**values),
        queue="Support",
        requester=requester,
        status="open",
        created_at=_at(ctx, minutes=-minutes_ago),
    )


def _requester(ctx: FamilyContext, queue: str) -> DemoPerson:
    """Staff file IT tickets; customers the rest (and now and then a colleague reports a bug)."""
    if queue == "IT" or (queue == "Engineering" and ctx.rng.random() < 0.3):
        return ctx.person(internal=True)
    return ctx.person(internal=False)


@family("tickets_route_by_rule", capability_id="triage_routing", services=["tickets"])
def tickets_route_by_rule(ctx: FamilyContext) -> Task:
    """New tickets land in Support; the user states a routing rule (billing to Billing, login and
    VPN to IT, bugs to Engineering) and the agent moves each ticket to its queue. Distractors are
    new tickets that the rule leaves in Support. Items and distractors scale with difficulty."""
    services = ["tickets"]
    queues = ctx.rng.sample(list(ROUTED), 3)
    picks = {q: ctx.rng.sample(ROUTED[q], len(ROUTED[q])) for q in queues}
    plan = [(queues[i % 3], picks[queues[i % 3]][i // 3]) for i in range(ctx.difficulty.items)]
    plan += [("Support", t) for t in ctx.rng.sample(STAYS, ctx.difficulty.distractors)]
    ctx.rng.shuffle(plan)
    minutes = sorted(ctx.rng.sample(range(5, 175), len(plan)), reverse=True)
    operations = []
    for (queue, (title, body)), ago in zip(plan, minutes, strict=True):
        operations.append(_route_ticket(ctx, title, body, _requester(ctx, queue).email, ago))
    results, ws = _plant(ctx, services, operations)
    early = ws.conn.execute(
        "SELECT count(*) FROM tickets_tickets WHERE queue = 'Support' AND created_at >= ? AND id < ?",
        (_at(ctx, hours=-3), results[0]["ticket_id"]),
    ).fetchone()[0]
    assert early == 0, "a demo ticket falls in the task's time window"
    ids = [r["ticket_id"] for r in results]
    checks = [
        _field(
            f"ticket-{tid}-queue",
            "tickets_tickets",
            {"id": tid},
            "queue",
            queue,
            f"#{tid} ({op['params']['title']}) ends in {queue}",
        )
        for tid, (queue, _), op in zip(ids, plan, operations, strict=True)
    ]
    solution: list[dict[str, Any]] = [
        {
            "tool": "tickets_search_tickets",
            "arguments": {"queue": "Support", "status": "open", "sort": "newest", "limit": 20},
            "id": "new",
        }
    ]
    solution += [
        {"tool": "tickets_update_ticket", "arguments": {"ticket_id": tid, "queue": queue}}
        for tid, (queue, _) in zip(ids, plan, strict=True)
        if queue != "Support"
    ]
    return ctx.task(
        capability_id="triage_routing",
        services=services,
        operations=operations,
        title="Route this morning's new Support tickets by a stated rule",
        turns=[{"user": ctx.choice(ROUTING_REQUESTS), "checks": checks, "solution": solution}],
        checks=[
            _bounded(
                "Only the new tickets change (comments and tags on them are fine)",
                _allow("tickets_tickets", {"id": {"in": ids}}, "changed"),
                _allow("tickets_tags", {"ticket_id": {"in": ids}}, "added", "removed"),
                _allow("tickets_comments", {"ticket_id": {"in": ids}}, "added"),
            )
        ],
        safety=NO_DELETE,
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
#: Teams a labelling rule may name besides external senders, with the label it asks for.
LABEL_TEAMS = {"Finance": "finance", "Engineering": "engineering", "Sales": "sales"}
EXTERNAL_LABELS = ["customers", "external"]
LABEL_REQUESTS = [
    "Please label the mails that arrived in my inbox this morning (since 06:00 UTC) by who sent them: "
    'mail from people outside {company} gets the label "{ext}", mail from colleagues in the {team} team '
    'gets "{label}". Mail from anyone else stays unlabelled. Check the directory if you are unsure.',
    'Sort this morning\'s new inbox mail (everything since 06:00 UTC) with labels: "{ext}" for external '
    'senders, "{label}" for anyone on our {team} team (the directory says who is), nothing for other '
    "colleagues.",
    'Could you tag the inbox mails received since 06:00 UTC today? Rule: external senders -> "{ext}", '
    '{team} team members -> "{label}", all other colleagues -> no label.',
]


def _senders(ctx: FamilyContext, team: str) -> tuple[list[tuple[DemoPerson, str]], list[DemoPerson]]:
    """(sender, kind) of the mails to label and the senders of the mails to leave alone."""
    externals = ctx.rng.sample(ctx.people(internal=False), 4)
    members = ctx.rng.sample(ctx.people(team=team), min(2, len(ctx.people(team=team))))
    pairs = [[(p, "external") for p in externals], [(p, "team") for p in members]]
    ctx.rng.shuffle(pairs)
    alternating = [p for pair in zip(*pairs, strict=False) for p in pair] + pairs[0][len(pairs[1]) :]
    items = alternating[: ctx.difficulty.items]
    others = [p for p in ctx.people() if p.team != team]
    return items, ctx.rng.sample(others, ctx.difficulty.distractors)


@family("mail_label_by_sender", capability_id="triage_routing", services=["mail", "directory"])
def mail_label_by_sender(ctx: FamilyContext) -> Task:
    """New inbox mails from external contacts and colleagues; the user states a labelling rule
    by sender (external -> one label, members of a team -> another) and the agent looks the
    senders up in the directory. Distractors are mails from other colleagues, left unlabelled."""
    services = ["mail", "directory"]
    team = ctx.choice(sorted(LABEL_TEAMS))
    labels = {"external": ctx.choice(EXTERNAL_LABELS), "team": LABEL_TEAMS[team]}
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
            body=f"Hi {_first(ctx.user)},\n\n{body}\n\nBest,\n{sender.name}",
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
    checks += [
        {
            "id": f"exactly-{label}",
            "type": "count",
            "table": "mail_labels",
            "where": {"label": label, "message_id": {"ge": ids[0]}},
            "op": "eq",
            "value": sum(1 for _, lab in labelled if lab == label),
            "description": f"No other new mail carries the label {label}",
        }
        for label in labels.values()
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
    request = ctx.choice(LABEL_REQUESTS).format(
        ext=labels["external"], team=team, label=labels["team"], company=ctx.company.name
    )
    return ctx.task(
        capability_id="triage_routing",
        services=services,
        operations=operations,
        title=f"Label this morning's mail: external senders and the {team} team",
        turns=[{"user": request, "checks": checks, "solution": solution}],
        checks=[
            _bounded(
                "Only the new mails change, and only the rule's mails get labels",
                _allow("mail_labels", {"message_id": {"in": [m for m, _ in labelled]}}, "added"),
                _allow("mail_messages", {"id": {"in": ids}}, "changed"),
            )
        ],
        safety=NO_DELETE,
    )


# -- tickets_bulk_close_resolved -----------------------------------------------------------------

CLOSE_TITLES = {
    "Support": ["Order {order} has not arrived", "Wrong items delivered in order {order}",
                "Damaged goods in shipment {order}", "Delivery address change for order {order}"],
    "Billing": ["Invoice {invoice} charged twice", "Refund for returned order {order}",
                "Wrong VAT on invoice {invoice}", "Copy of invoice {invoice} requested"],
    "Engineering": ["Order export API times out", "Tracking numbers missing from mails ({order})",
                    "Portal shows a blank page after login", "Invoice PDF shows the wrong currency"],
    "IT": ["Printer on the second floor jammed", "Replace a broken monitor",
           "Laptop battery drains fast", "Access to the finance share"],
}  # fmt: skip
CLOSE_REQUESTS = [
    "Housekeeping in the {queue} queue: please close every resolved ticket there whose last update is more "
    "than {days} days old. Resolved tickets updated within the last {days} days stay resolved, and leave "
    "other queues alone.",
    "Close all tickets in {queue} that are resolved and have not been touched for over {days} days. Don't "
    "close the recently updated ones or anything outside {queue}.",
    "The {queue} queue is cluttered: every resolved ticket in it not updated in the past {days} days can be "
    "closed now. Nothing else should change.",
]


def _close_target(ctx: FamilyContext, ws: Workspace) -> tuple[str, int]:
    """A queue and an age in days with few demo tickets past the cutoff and none near it."""
    combos = [(q, d) for q in CLOSE_TITLES for d in (7, 10, 14)]
    ctx.rng.shuffle(combos)

    def demo(q: str, lo: float, hi: float) -> int:
        return ws.conn.execute(
            "SELECT count(*) FROM tickets_tickets WHERE queue = ? AND status = 'resolved' "
            "AND updated_at >= ? AND updated_at < ?",
            (q, _at(ctx, days=lo), _at(ctx, days=hi)),
        ).fetchone()[0]

    clean = [(q, d) for q, d in combos if demo(q, -d - 1.5, -d + 1.5) == 0]
    few = [(q, d) for q, d in clean if demo(q, -400, -d) <= 2]
    return (few or clean)[0]


def _close_ticket(ctx: FamilyContext, queue: str, status: str, updated_days_ago: float) -> dict:
    values = {"order": _order(ctx), "invoice": _invoice(ctx)}
    return _op(
        "tickets",
        "add_ticket",
        title=ctx.choice(CLOSE_TITLES[queue]).format(**values),
        queue=queue,
        requester=ctx.person(internal=queue == "IT").email,
        assignee=ctx.person(internal=True).email,
        status=status,
        created_at=_at(ctx, days=-updated_days_ago - ctx.rng.uniform(1, 8)),
        updated_at=_at(ctx, days=-updated_days_ago),
    )


@family("tickets_bulk_close_resolved", capability_id="bulk_conditional_update", services=["tickets"])
def tickets_bulk_close_resolved(ctx: FamilyContext) -> Task:
    """Close every resolved ticket in one queue whose last update is older than N days (by the
    workspace clock). Distractors: recently updated resolved tickets in that queue, old resolved
    tickets in other queues, and old tickets there that are not resolved."""
    services = ["tickets"]
    _, demo_ws = _plant(ctx, services, [])
    queue, days = _close_target(ctx, demo_ws)
    others = [q for q in CLOSE_TITLES if q != queue]
    operations = [
        _close_ticket(ctx, queue, "resolved", days + ctx.rng.uniform(1.5, 20))
        for _ in range(ctx.difficulty.items)
    ]
    for i in range(ctx.difficulty.distractors):
        kind = i % 3
        if kind == 0:
            operations.append(_close_ticket(ctx, queue, "resolved", ctx.rng.uniform(0.5, days - 1.5)))
        elif kind == 1:
            operations.append(
                _close_ticket(ctx, ctx.choice(others), "resolved", days + ctx.rng.uniform(2, 20))
            )
        else:
            status = ctx.choice(["pending", "in_progress"])
            operations.append(_close_ticket(ctx, queue, status, days + ctx.rng.uniform(2, 20)))
    results, ws = _plant(ctx, services, operations)
    cutoff = _at(ctx, days=-days)
    due = [
        r[0]
        for r in ws.conn.execute(
            "SELECT id FROM tickets_tickets WHERE queue = ? AND status = 'resolved' AND updated_at < ? "
            "ORDER BY updated_at",
            (queue, cutoff),
        )
    ]
    kept = [(r["ticket_id"], op["params"]["status"]) for r, op in zip(results, operations, strict=True)]
    kept = [(tid, status) for tid, status in kept if tid not in due]
    checks = [
        _field(f"closed-{tid}", "tickets_tickets", {"id": tid}, "status", "closed", f"#{tid} is closed")
        for tid in due
    ]
    checks += [
        _field(f"kept-{tid}", "tickets_tickets", {"id": tid}, "status", status, f"#{tid} stays {status}")
        for tid, status in kept
    ]
    solution: list[dict[str, Any]] = [
        {
            "tool": "tickets_search_tickets",
            "arguments": {"queue": queue, "status": "resolved", "sort": "oldest", "limit": 100},
            "id": "resolved",
        }
    ]
    solution += [
        {"tool": "tickets_update_ticket", "arguments": {"ticket_id": t, "status": "closed"}} for t in due
    ]
    return ctx.task(
        capability_id="bulk_conditional_update",
        services=services,
        operations=operations,
        title=f"Close resolved {queue} tickets untouched for more than {days} days",
        turns=[
            {
                "user": ctx.choice(CLOSE_REQUESTS).format(queue=queue, days=days),
                "checks": checks,
                "solution": solution,
            }
        ],
        checks=[
            _bounded(
                "Only the stale resolved tickets change",
                _allow("tickets_tickets", {"id": {"in": due}}, "changed"),
                _allow("tickets_comments", {"ticket_id": {"in": due}}, "added"),
            )
        ],
        safety=NO_DELETE,
    )


# -- mail_to_ticket ------------------------------------------------------------------------------

#: Problems customers report by mail: (subject, body with {key}, queue, kind of key).
PROBLEMS = [
    ("Charged twice", "our card was charged twice for invoice {key}. Could you refund the duplicate "
     "payment?", "Billing", "invoice"),
    ("Wrong amount on our invoice", "invoice {key} bills 120 units, but we only ordered 100. Please send "
     "a corrected invoice.", "Billing", "invoice"),
    ("Credit note still missing", "we were promised a credit note for invoice {key} two weeks ago and have "
     "not received it.", "Billing", "invoice"),
    ("Problem with our last delivery", "order {key} arrived this morning with three crushed boxes. What "
     "should we do with the damaged goods?", "Support", "order"),
    ("Order not complete", "order {key} is missing two of the twelve pallets we ordered.", "Support",
     "order"),
    ("Where is our order?", "order {key} should have arrived last Thursday, but tracking has not moved "
     "since.", "Support", "order"),
]  # fmt: skip
SMALL_TALK = [
    ("Thanks!", "Thanks again for the quick help last week, everything works fine now."),
    ("Office closed on Friday", "Just so you know, our office is closed this Friday for a company event."),
    ("Meeting confirmed", "Confirming our call next Tuesday at 10:00. Talk soon!"),
    ("New colleague", "Please welcome Sam, who joins our purchasing team next month."),
    ("Holiday schedule", "Our warehouse runs normal hours over the spring holidays."),
    ("Great service", "Just wanted to say your delivery team did a great job yesterday."),
]
HANDOFF_REQUESTS = [
    "Customers mailed me this morning (since 06:00 UTC). For every mail that reports a problem with an "
    "order or an invoice, create a ticket in the right queue with the customer as requester and the "
    "order or invoice number in the title, then reply to the customer with the ticket number. Mails "
    "that report no problem need no ticket.",
    "Please go through the customer mails in my inbox from this morning (after 06:00 UTC): each problem "
    "report becomes a ticket (right queue, customer as requester, the order/invoice number in the title), "
    "and the customer gets a reply quoting the ticket number. Ignore the mails that don't report a problem.",
]


def _mentions_number(body: str, number: str) -> str:
    """SQL: `body` holds `number` as a word of its own (#61, ticket 61, (61), 61.)."""
    text = body
    for char in "#.,:;()!?":
        text = f"replace({text}, '{char}', ' ')"
    text = f"replace({text}, char(10), ' ')"
    return f"(' ' || {text} || ' ') LIKE '% ' || ({number}) || ' %'"


def _reply_check(ctx: FamilyContext, thread: int, customer: str, key: str, first_new: int) -> dict:
    ticket = f"SELECT min(id) FROM tickets_tickets WHERE id >= {first_new} AND title LIKE '%{key}%'"
    query = (
        "SELECT count(*) > 0 FROM mail_messages m JOIN mail_recipients r ON r.message_id = m.id "
        f"WHERE m.owner = '{ctx.user.email}' AND m.folder = 'sent' AND m.thread_id = {thread} "
        f"AND r.kind = 'to' AND lower(r.address) = '{customer}' AND {_mentions_number('m.body', ticket)}"
    )
    return {
        "id": f"reply-{key}",
        "type": "sql",
        "query": query,
        "expected": 1,
        "description": f"A reply in the customer's thread quotes the number of the ticket about {key}",
    }


def _problem_checks(key: str, queue: str, customer: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"ticket-{key}-requester",
            "type": "row_exists",
            "table": "tickets_tickets",
            "where": {"title": {"icontains": key}, "requester": customer},
            "description": f"A ticket titled with {key} has the customer as requester",
        },
        {
            "id": f"ticket-{key}-queue",
            "type": "row_exists",
            "table": "tickets_tickets",
            "where": {"title": {"icontains": key}, "queue": queue},
            "description": f"The ticket about {key} is in {queue}",
        },
    ]


def _ticket_and_reply(
    ctx: FamilyContext, message_id: int, customer: DemoPerson, title: str, queue: str, body: str, number: int
) -> list[dict[str, Any]]:
    """Read the mail, file the ticket (it gets id `number`), reply with its number."""
    reply = (
        f"Hello {_first(customer)},\n\nThank you for letting us know. I have logged this as "
        f"ticket #{number}; please quote that number in any follow-up.\n\nBest regards,\n{ctx.user.name}"
    )
    ticket = {
        "title": title,
        "queue": queue,
        "requester": customer.email,
        "description": body.split("\n\n")[1],
    }
    return [
        {"tool": "mail_get_message", "arguments": {"message_id": message_id}},
        {"tool": "tickets_create_ticket", "arguments": ticket},
        {"tool": "mail_reply", "arguments": {"message_id": message_id, "body": reply}},
    ]


@family("mail_to_ticket", capability_id="cross_service_handoff", services=["mail", "tickets"])
def mail_to_ticket(ctx: FamilyContext) -> Task:
    """Customers report problems by mail; each report becomes a ticket (right queue, customer as
    requester, order or invoice number in the title) and the customer gets a reply with the
    ticket number. Distractors are customer mails that report no problem."""
    services = ["mail", "tickets"]
    customers = ctx.rng.sample(ctx.people(internal=False), ctx.difficulty.items)
    problems = ctx.rng.sample(PROBLEMS, ctx.difficulty.items)
    keys = [
        f"INV-2026-{ctx.rng.randint(1000, 9999)}"
        if kind == "invoice"
        else f"NW-{ctx.rng.randint(10000, 99999)}"
        for *_, kind in problems
    ]
    mails = [
        (
            c,
            subject,
            f"Hello {_first(ctx.user)},\n\n{body.format(key=k)}\n\nKind regards,\n{c.name}, {c.company}",
        )
        for c, (subject, body, _, _), k in zip(customers, problems, keys, strict=True)
    ]
    for subject, body in ctx.rng.sample(SMALL_TALK, min(ctx.difficulty.distractors, len(SMALL_TALK))):
        c = ctx.person(internal=False)
        mails.append((c, subject, f"Hi {_first(ctx.user)},\n\n{body}\n\nBest,\n{c.name}"))
    minutes = ctx.rng.sample(range(5, 175), len(mails))
    operations = [
        _op(
            "mail",
            "deliver_inbound",
            from_addr=c.email,
            subject=subject,
            body=body,
            sent_at=_at(ctx, minutes=-m),
        )
        for (c, subject, body), m in zip(mails, minutes, strict=True)
    ]
    results, ws = _plant(ctx, services, operations)
    first_new = _max_id(ws, "tickets_tickets") + 1
    checks: list[dict[str, Any]] = []
    solution: list[dict[str, Any]] = [
        {
            "tool": "mail_search_messages",
            "arguments": {"folder": "inbox", "after": _at(ctx, hours=-3), "limit": 50},
            "id": "new",
        }
    ]
    for i, (customer, (_, _, queue, _), key) in enumerate(zip(customers, problems, keys, strict=True)):
        mail = results[i]
        checks += _problem_checks(key, queue, customer.email)
        checks.append(_reply_check(ctx, mail["thread_id"], customer.email, key, first_new))
        title = f"{problems[i][0]}: {key}"
        solution += _ticket_and_reply(ctx, mail["id"], customer, title, queue, mails[i][2], first_new + i)
    checks.append(
        {
            "id": "one-ticket-per-problem",
            "type": "count",
            "table": "tickets_tickets",
            "where": {"id": {"ge": first_new}},
            "op": "eq",
            "value": len(keys),
            "description": "Exactly one new ticket per problem report, none for the other mails",
        }
    )
    new = {"ge": first_new}
    return ctx.task(
        capability_id="cross_service_handoff",
        services=services,
        operations=operations,
        title="Turn customers' problem mails into tickets and reply with the ticket numbers",
        context=_context(
            ctx, "File every ticket in the queue whose description matches the request (list_queues)."
        ),
        turns=[{"user": ctx.choice(HANDOFF_REQUESTS), "checks": checks, "solution": solution}],
        checks=[
            _bounded(
                "Only new tickets, the replies, and the handling of this morning's mails change",
                _allow("tickets_tickets", {"id": new}, "added"),
                _allow("tickets_tags", {"ticket_id": new}, "added"),
                _allow("tickets_comments", {"ticket_id": new}, "added"),
                _allow("mail_messages", {"folder": "sent"}, "added"),
                _allow("mail_messages", {"id": {"in": [r["id"] for r in results]}}, "changed"),
                _allow("mail_recipients", {}, "added"),
                _allow("mail_labels", {"message_id": {"in": [r["id"] for r in results]}}, "added"),
            )
        ],
        safety=NO_DELETE,
    )


# -- ticket_to_meeting ---------------------------------------------------------------------------

#: Escalation topics: (ticket title, description, a word that finds it).
ESCALATIONS = [
    ("Checkout rejects orders over 500 lines", "Large orders fail at checkout since Friday.", "checkout"),
    (
        "Price list import skips half the rows",
        "Our weekly price list import drops every second row.",
        "price list import",
    ),
    (
        "Shipping labels print blank",
        "The label printer gets empty shipping labels since Monday.",
        "shipping labels",
    ),
    ("Invoice export to SAP fails every night", "The nightly SAP export stops with an error.", "SAP export"),
    (
        "Warehouse scanners reject consignments",
        "Handheld scanners reject every consignment label.",
        "scanners",
    ),
    (
        "Order API returns timeouts",
        "Since the last release the order API times out at peak hours.",
        "order API",
    ),
    (
        "Delivery notes print with the wrong address",
        "Delivery notes show the old depot address.",
        "delivery notes",
    ),
]
BUSY_TITLES = ["Vendor call", "Design review", "Team sync", "Interview", "Training session", "Planning"]
MEETING_REQUESTS = [
    "{customer} from {company} has an escalated ticket about {topic}. Please book a {minutes}-minute "
    "meeting on {day} with the colleague the ticket is assigned to, at a time when we are both free and "
    "inside both our working hours (09:00-17:00, each in our own time zone). Then add an internal note on "
    "the ticket saying the meeting is booked.",
    "The {topic} ticket from {customer} ({company}) was escalated. Set up a {minutes}-minute meeting between "
    "me and its assignee on {day}: no clashes with either calendar, and within 09:00-17:00 for both of us "
    "in our own time zones. Leave an internal note on the ticket once it's booked.",
]

Span = tuple[datetime, datetime]


def _workday(day: date, tz: ZoneInfo) -> Span | None:
    if day.weekday() >= 5:
        return None
    start = datetime.combine(day, time(9), tzinfo=tz).astimezone(UTC)
    return start, datetime.combine(day, time(17), tzinfo=tz).astimezone(UTC)


def _shared_hours(day: date, user_tz: ZoneInfo, other_tz: ZoneInfo) -> list[Span]:
    """The parts of the user's working day `day` that also lie in the other's working hours."""
    mine = _workday(day, user_tz)
    spans = []
    for offset in (-1, 0, 1):
        theirs = _workday(day + timedelta(days=offset), other_tz)
        if mine and theirs and max(mine[0], theirs[0]) < min(mine[1], theirs[1]):
            spans.append((max(mine[0], theirs[0]), min(mine[1], theirs[1])))
    return spans


def _subtract(spans: list[Span], busy: list[Span]) -> list[Span]:
    out = []
    for start, end in spans:
        current = start
        for b_start, b_end in sorted(busy):
            if b_end <= current or b_start >= end:
                continue
            if b_start > current:
                out.append((current, b_start))
            current = max(current, b_end)
        if current < end:
            out.append((current, end))
    return out


def _free(ws: Workspace, emails: list[str], spans: list[Span]) -> list[Span]:
    """The spans minus every confirmed event that keeps one of `emails` busy."""
    if not spans:
        return []
    busy = [(occ.start, occ.end) for e in emails for _, occ in busy_times(ws, e, spans[0][0], spans[-1][1])]
    return _subtract(spans, busy)


def _meeting_slot(ctx: FamilyContext, ws: Workspace, minutes: int) -> tuple[date, DemoPerson, list[Span]]:
    """A day this week and a colleague who shares at least three working hours with the user
    and has a free slot of `minutes` with them in the demo calendars."""
    user_tz = ZoneInfo(ctx.user.time_zone)
    days = [ctx.start.date() + timedelta(days=n) for n in range(1, 5)]
    staff = ctx.rng.sample(ctx.people(), len(ctx.people()))
    staff.sort(key=lambda p: p.team not in ("Support", "Engineering"))
    for person in staff:
        for day in ctx.rng.sample(days, len(days)):
            spans = _shared_hours(day, user_tz, ZoneInfo(person.time_zone))
            if sum((e - s for s, e in spans), timedelta()) < timedelta(hours=3):
                continue
            free = _free(ws, [ctx.user.email, person.email], spans)
            if any(e - s >= timedelta(minutes=minutes + 60) for s, e in free):
                return day, person, free
    raise ValueError("no colleague shares a free working slot with the user this week")


def _busy_blocks(
    ctx: FamilyContext, free: list[Span], minutes: int, owners: list[str], organizers: list[DemoPerson]
) -> list[dict[str, Any]]:
    """Meetings that take up some of the free time but leave a slot of `minutes`."""
    for _ in range(30):
        blocks = []
        for owner in owners:
            start, end = ctx.choice(free)
            steps = int((end - start) / timedelta(minutes=30))
            at = start + timedelta(minutes=30 * ctx.rng.randrange(max(steps, 1)))
            blocks.append((at, min(end, at + timedelta(minutes=ctx.choice([30, 60]))), owner))
        if any(
            e - s >= timedelta(minutes=minutes) for s, e in _subtract(free, [(s, e) for s, e, _ in blocks])
        ):
            return [
                _op(
                    "calendar",
                    "add_event",
                    organizer_email=ctx.choice(organizers).email,
                    title=ctx.choice(BUSY_TITLES),
                    start=s.isoformat(),
                    end=e.isoformat(),
                    attendees=[{"email": owner, "response": "accepted"}],
                )
                for s, e, owner in blocks
            ]
        owners = owners[:-1]
    return []


def _escalated_tickets(ctx: FamilyContext, customer: DemoPerson, assignee: DemoPerson) -> list[dict]:
    topics = ctx.rng.sample(ESCALATIONS, min(len(ESCALATIONS), 1 + ctx.difficulty.distractors))
    ops = []
    for i, (title, description, _) in enumerate(topics):
        params: dict[str, Any] = {
            "title": title,
            "description": description,
            "queue": "Engineering",
            "requester": customer.email,
            "created_at": _at(ctx, days=-ctx.rng.uniform(0.5, 4)),
        }
        if i == 0:
            params |= {
                "status": "in_progress",
                "priority": "urgent",
                "assignee": assignee.email,
                "tags": ["escalated"],
            }
        else:
            others = ctx.people(exclude=[assignee.email])
            params |= {"status": ctx.choice(["open", "in_progress"]), "assignee": ctx.choice(others).email}
        ops.append(_op("tickets", "add_ticket", **params))
    return ops


def _in_window_sql(free: list[Span], minutes: int) -> str:
    fits = [
        f"(e.start_utc >= '{format_time(s)}' AND e.end_utc <= '{format_time(e)}')"
        for s, e in free
        if e - s >= timedelta(minutes=minutes)
    ]
    return "(" + " OR ".join(fits) + ")"


def _meeting_checks(
    ctx: FamilyContext, assignee: DemoPerson, ticket_id: int, first_event: int, minutes: int, free: list[Span]
) -> list[dict[str, Any]]:
    meeting = (
        "SELECT count(*) > 0 FROM calendar_events e JOIN calendar_attendees a ON a.event_id = e.id "
        f"WHERE e.id >= {first_event} AND e.organizer_email = '{ctx.user.email}' AND e.status = 'confirmed' "
        f"AND a.email = '{assignee.email}'"
    )
    fits = (
        f"{meeting} AND e.recurrence = 'none' "
        f"AND round((julianday(e.end_utc) - julianday(e.start_utc)) * 1440) = {minutes} "
        f"AND {_in_window_sql(free, minutes)}"
    )
    return [
        {
            "id": "meeting-with-assignee",
            "type": "sql",
            "query": meeting,
            "expected": 1,
            "description": f"A new meeting I organize invites the assignee, {assignee.name}",
        },
        {
            "id": "meeting-fits",
            "type": "sql",
            "query": fits,
            "expected": 1,
            "description": f"It lasts {minutes} minutes, on the day asked, when both are free and working",
        },
        {
            "id": "internal-note",
            "type": "row_exists",
            "table": "tickets_comments",
            "where": {"ticket_id": ticket_id, "visibility": "internal"},
            "description": f"An internal note is added to #{ticket_id}",
        },
    ]


def _meeting_solution(
    ticket: dict[str, Any], ticket_id: int, assignee: DemoPerson, minutes: int, day: date
) -> list[dict[str, Any]]:
    word = next(t[2] for t in ESCALATIONS if t[0] == ticket["title"])
    window = [f"{day.isoformat()}T00:00:00", f"{(day + timedelta(days=1)).isoformat()}T00:00:00"]
    slots = {
        "attendees": [{"$ref": "ticket.assignee"}],
        "duration_minutes": minutes,
        "window_start": window[0],
        "window_end": window[1],
        "granularity_minutes": 15,
    }
    event = {
        "title": f"Escalation #{ticket_id}: {ticket['title']}",
        "start": {"$ref": "slots.slots.0.start"},
        "end": {"$ref": "slots.slots.0.end"},
        "attendees": [assignee.email],
        "description": f"Go through escalated ticket #{ticket_id}.",
    }
    note = f"Meeting booked with {assignee.name} on {day:%A}, {day.day} March to go through this escalation."
    return [
        {
            "tool": "tickets_search_tickets",
            "arguments": {"query": word, "requester": ticket["requester"]},
            "id": "t",
        },
        {
            "tool": "tickets_get_ticket",
            "arguments": {"ticket_id": {"$ref": "t.tickets.0.id"}},
            "id": "ticket",
        },
        {"tool": "directory_get_person", "arguments": {"email": {"$ref": "ticket.assignee"}}},
        {"tool": "calendar_find_free_slots", "arguments": slots, "id": "slots"},
        {"tool": "calendar_create_event", "arguments": event},
        {
            "tool": "tickets_add_comment",
            "arguments": {"ticket_id": ticket_id, "visibility": "internal", "body": note},
        },
    ]


@family(
    "ticket_to_meeting", capability_id="cross_service_handoff", services=["tickets", "calendar", "directory"]
)
def ticket_to_meeting(ctx: FamilyContext) -> Task:
    """An escalated ticket needs a meeting between the user and its assignee on a given day,
    free for both and within both people's working hours; then an internal note on the ticket.
    Items: meetings planted that day to work around; distractors: other tickets of the customer."""
    services = ["tickets", "calendar", "directory"]
    minutes = ctx.choice([30, 45, 60])
    customer = ctx.person(internal=False)
    _, demo_ws = _plant(ctx, services, [])
    day, assignee, free = _meeting_slot(ctx, demo_ws, minutes)
    tickets = _escalated_tickets(ctx, customer, assignee)
    owners = [[assignee.email, ctx.user.email][i % 2] for i in range(ctx.difficulty.items)]
    organizers = ctx.people(exclude=[assignee.email])
    operations = tickets + _busy_blocks(ctx, free, minutes, owners, organizers)
    results, ws = _plant(ctx, services, operations)
    ticket_id = results[0]["ticket_id"]
    shared = _shared_hours(day, ZoneInfo(ctx.user.time_zone), ZoneInfo(assignee.time_zone))
    free = _free(ws, [ctx.user.email, assignee.email], shared)
    first_event = _max_id(ws, "calendar_events") + 1
    topic = next(t[2] for t in ESCALATIONS if t[0] == tickets[0]["params"]["title"])
    request = ctx.choice(MEETING_REQUESTS).format(
        customer=customer.name,
        company=customer.company,
        topic=topic,
        minutes=minutes,
        day=f"{day:%A}, {day.day} March",
    )
    return ctx.task(
        capability_id="cross_service_handoff",
        extra_capabilities=["scheduling_constraints"],
        services=services,
        operations=operations,
        title="Book a meeting with an escalated ticket's assignee and note it on the ticket",
        turns=[
            {
                "user": request,
                "checks": _meeting_checks(ctx, assignee, ticket_id, first_event, minutes, free),
                "solution": _meeting_solution(tickets[0]["params"], ticket_id, assignee, minutes, day),
            }
        ],
        checks=[
            _bounded(
                "Only the new meeting, its invitations and the note on the ticket change",
                _allow("calendar_events", {"id": {"ge": first_event}}, "added"),
                _allow("calendar_attendees", {"event_id": {"ge": first_event}}, "added"),
                _allow("tickets_comments", {"ticket_id": ticket_id}, "added"),
                _allow("tickets_tickets", {"id": ticket_id}, "changed"),
            )
        ],
        safety=NO_DELETE,
    )


# -- tickets_invalid_transition ------------------------------------------------------------------

#: Tickets to close: (title, the reason the user gives, with a {key} that the note must carry).
CLOSINGS = [
    (
        "Warehouse router drops the connection",
        "the customer confirmed that firmware {key} fixed it",
        "4.{a}.{b}",
    ),
    ("Refund for returned order {order}", "the refund went out with credit note {key}", "CN-{n4}"),
    (
        "Missing parts in order {order}",
        "the missing parts arrived with replacement shipment {key}",
        "RS-{n5}",
    ),
    ("Order export times out", "release {key} fixed the export timeouts", "2026.{a}.{b}"),
    ("Wrong VAT on invoice {invoice}", "the corrected invoice {key} was accepted", "INV-2026-{n4}"),
    (
        "Portal login loops back to the start page",
        "the customer confirmed it works after patch {key}",
        "P-{n4}",
    ),
]
INVALID_REQUESTS = [
    "Please close {tickets}. Leave an internal note on each saying why it is done.",
    "These can be closed now: {tickets}. Add an internal note to each with the reason.",
]


def _closing_key(ctx: FamilyContext, pattern: str) -> str:
    return pattern.format(
        a=ctx.rng.randint(1, 9),
        b=ctx.rng.randint(1, 9),
        n4=ctx.rng.randint(1000, 9999),
        n5=ctx.rng.randint(10000, 99999),
    )


def _stuck_ticket(ctx: FamilyContext, title: str, customer: DemoPerson, status: str) -> dict:
    values = {"order": _order(ctx), "invoice": _invoice(ctx)}
    created = -ctx.rng.uniform(3, 12)
    return _op(
        "tickets",
        "add_ticket",
        title=title.format(**values),
        queue="Support",
        requester=customer.email,
        assignee=ctx.user.email,
        status=status,
        created_at=_at(ctx, days=created),
        updated_at=_at(ctx, days=created / 3),
    )


def _closing_steps(tid: int, reason: str, try_first: bool) -> list[dict[str, Any]]:
    """Read the ticket, (try the refused direct close), note the reason, resolve, close."""
    update = "tickets_update_ticket"
    steps: list[dict[str, Any]] = [{"tool": "tickets_get_ticket", "arguments": {"ticket_id": tid}}]
    if try_first:
        steps.append(
            {"tool": update, "arguments": {"ticket_id": tid, "status": "closed"}, "expect_error": True}
        )
    note = {"ticket_id": tid, "visibility": "internal", "body": f"Done: {reason}."}
    return [
        *steps,
        {"tool": "tickets_add_comment", "arguments": note},
        {"tool": update, "arguments": {"ticket_id": tid, "status": "resolved"}},
        {"tool": update, "arguments": {"ticket_id": tid, "status": "closed"}},
    ]


def _closing_checks(tid: int, key: str, first_comment: int) -> list[dict[str, Any]]:
    return [
        _field(f"closed-{tid}", "tickets_tickets", {"id": tid}, "status", "closed", f"#{tid} ends closed"),
        {
            "id": f"note-{tid}",
            "type": "field_contains",
            "table": "tickets_comments",
            "where": {"ticket_id": tid, "visibility": "internal", "id": {"ge": first_comment}},
            "column": "body",
            "text": key,
            "description": f"A new internal note on #{tid} gives the reason ({key})",
        },
    ]


@family("tickets_invalid_transition", capability_id="error_recovery", services=["tickets"])
def tickets_invalid_transition(ctx: FamilyContext) -> Task:
    """The user asks to close tickets that are pending or in progress, which cannot be closed
    directly (rules.py: only open or resolved tickets close); the agent reads the error,
    resolves first, closes, and notes the reason. Items: tickets to close; distractors: the
    same customers' other unfinished tickets, which keep their status."""
    services = ["tickets"]
    picks = ctx.rng.sample(CLOSINGS, ctx.difficulty.items)
    customers = [ctx.person(internal=False) for _ in picks]
    keys = [_closing_key(ctx, pattern) for *_, pattern in picks]
    reasons = [reason.format(key=key) for (_, reason, _), key in zip(picks, keys, strict=True)]
    operations = [
        _stuck_ticket(ctx, title, c, ctx.choice(["pending", "in_progress"]))
        for (title, _, _), c in zip(picks, customers, strict=True)
    ]
    rest = [t for t in CLOSINGS if t not in picks]
    for i in range(ctx.difficulty.distractors):
        status = ctx.choice(["pending", "in_progress", "open"])
        operations.append(_stuck_ticket(ctx, rest[i % len(rest)][0], customers[i % len(customers)], status))
    results, ws = _plant(ctx, services, operations)
    ids = [r["ticket_id"] for r in results]
    closing, kept = ids[: len(picks)], list(zip(ids[len(picks) :], operations[len(picks) :], strict=True))
    first_comment = _max_id(ws, "tickets_comments") + 1
    checks = [
        c for tid, key in zip(closing, keys, strict=True) for c in _closing_checks(tid, key, first_comment)
    ]
    checks += [
        _field(f"kept-{tid}", "tickets_tickets", {"id": tid}, "status", s, f"#{tid} stays {s}")
        for tid, s in ((tid, op["params"]["status"]) for tid, op in kept)
    ]
    solution = [
        step for i, tid in enumerate(closing) for step in _closing_steps(tid, reasons[i], try_first=i == 0)
    ]
    listing = "; ".join(
        f"#{tid} ({op['params']['title']}): {reason}"
        for tid, op, reason in zip(closing, operations, reasons, strict=False)
    )
    return ctx.task(
        capability_id="error_recovery",
        services=services,
        operations=operations,
        title="Close unfinished tickets through the allowed status steps, with notes",
        turns=[
            {
                "user": ctx.choice(INVALID_REQUESTS).format(tickets=listing),
                "checks": checks,
                "solution": solution,
            }
        ],
        checks=[
            _bounded(
                "Only the tickets to close and their notes change",
                _allow("tickets_tickets", {"id": {"in": closing}}, "changed"),
                _allow("tickets_comments", {"ticket_id": {"in": closing}}, "added"),
                _allow("tickets_tags", {"ticket_id": {"in": closing}}, "added", "removed"),
            )
        ],
        safety=NO_DELETE,
    )


# -- files_missing_folder ------------------------------------------------------------------------

NEXT_STEPS = ["send the revised quote", "book a site visit", "share the rollout plan"]
MEETING_KINDS = ["renewal call", "onboarding call", "quarterly review", "escalation review"]
FOLDERS = [
    "/teams/support/call-notes",
    "/teams/support/customers/2026",
    "/shared/call-notes/2026-03",
    "/teams/sales/accounts/call-notes",
]
NOTE_REQUESTS = [
    "{sender} mailed me the notes from {calls}. Please save them in our files, {where}.",
    "Could you file the call notes {sender} sent me ({calls})? Store them {where}.",
]


def _slug(text: str) -> str:
    return "-".join(text.lower().split())


def _note(ctx: FamilyContext, company: str, kind: str, po: str) -> str:
    contact = ctx.choice([p for p in ctx.company.contacts if p.company == company])
    return (
        f"Notes: {company} {kind}, {ctx.start:%d %B}\n\n"
        f"- Attendees: {contact.name} ({company}), {ctx.user.name}\n"
        f"- Agreed: {ctx.rng.randint(5, 15)}% volume discount from April\n"
        f"- Purchase order: {po}\n"
        f"- Next step: {ctx.choice(NEXT_STEPS)}"
    )


def _missing_dirs(ws: Workspace, folder: str) -> list[str]:
    """`folder` and those of its parents that do not exist yet, deepest first."""
    assert not ws.rows("files_nodes", "path = ?", [folder]), f"{folder} already exists"
    missing = [folder]
    while not ws.rows("files_nodes", "path = ?", [missing[-1].rsplit("/", 1)[0]]):
        missing.append(missing[-1].rsplit("/", 1)[0])
    return missing


def _note_checks(i: int, path: str, po: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"file-{i}",
            "type": "row_exists",
            "table": "files_nodes",
            "where": {"path": path, "kind": "file"},
            "description": f"{path} exists",
        },
        {
            "id": f"file-{i}-content",
            "type": "field_contains",
            "table": "files_nodes",
            "where": {"path": path},
            "column": "content",
            "text": po,
            "description": f"{path} holds the notes (purchase order {po})",
        },
    ]


def _notes_request(ctx: FamilyContext, sender: DemoPerson, calls: list[str], paths: list[str]) -> str:
    if len(paths) == 1:
        where = f"as {paths[0]}"
    else:
        folder = paths[0].rsplit("/", 1)[0]
        names = ", ".join(f"{p.rsplit('/', 1)[1]} for {call}" for p, call in zip(paths, calls, strict=True))
        where = f"one file per call in {folder}: {names}"
    return ctx.choice(NOTE_REQUESTS).format(sender=sender.name, calls=" and ".join(calls), where=where)


@family("files_missing_folder", capability_id="error_recovery", services=["files", "mail"])
def files_missing_folder(ctx: FamilyContext) -> Task:
    """A colleague mails call notes; the user wants them saved in a folder that does not exist
    yet, so the first write fails until the folder is created. Items: notes to save (one file
    each); distractors: other call notes in the inbox that must not be filed."""
    services = ["files", "mail"]
    sender = ctx.person()
    companies = sorted({p.company for p in ctx.company.contacts})
    calls = ctx.rng.sample(
        [(c, k) for c in companies for k in MEETING_KINDS], ctx.difficulty.items + ctx.difficulty.distractors
    )
    folder = ctx.choice(FOLDERS)
    pos = [f"PO-{ctx.rng.randint(10000, 99999)}" for _ in calls]
    notes = [_note(ctx, company, kind, po) for (company, kind), po in zip(calls, pos, strict=True)]
    minutes = ctx.rng.sample(range(5, 175), len(calls))
    operations = [
        _op("mail", "deliver_inbound", from_addr=sender.email, subject=text.split("\n")[0], body=text,
            sent_at=_at(ctx, minutes=-ago))
        for text, ago in zip(notes, minutes, strict=True)
    ]  # fmt: skip
    results, ws = _plant(ctx, services, operations)
    missing = _missing_dirs(ws, folder)
    mail_ids = [r["id"] for r in results]
    items = range(ctx.difficulty.items)
    paths = [f"{folder}/{_slug(calls[i][0].split()[0])}-{_slug(calls[i][1])}.md" for i in items]
    writes = [
        {"tool": "files_write_file", "arguments": {"path": paths[i], "content": {"$ref": f"m{i}.body"}}}
        for i in items
    ]
    reads = list(enumerate(mail_ids[: ctx.difficulty.items]))
    solution = [
        {"tool": "mail_search_messages", "arguments": {"query": "Notes", "sender": sender.email}},
        *[{"tool": "mail_get_message", "arguments": {"message_id": m}, "id": f"m{i}"} for i, m in reads],
        {**writes[0], "expect_error": True},
        {"tool": "files_create_directory", "arguments": {"path": folder, "parents": len(missing) > 1}},
        *writes,
    ]  # fmt: skip
    request = _notes_request(ctx, sender, [f"the {calls[i][0]} {calls[i][1]}" for i in items], paths)
    return ctx.task(
        capability_id="error_recovery",
        extra_capabilities=["document_editing"],
        services=services,
        operations=operations,
        title="Save mailed call notes into a folder that does not exist yet",
        turns=[
            {
                "user": request,
                "checks": [c for i in items for c in _note_checks(i, paths[i], pos[i])],
                "solution": solution,
            }
        ],
        checks=[
            _bounded(
                "Only the new folders and the requested note files are added; the mails may be read or filed",
                _allow("files_nodes", {"path": {"in": missing + paths}}, "added"),
                _allow("mail_messages", {"id": {"in": mail_ids}}, "changed"),
                _allow("mail_labels", {"message_id": {"in": mail_ids}}, "added"),
            )
        ],
        safety=NO_DELETE,
    )
