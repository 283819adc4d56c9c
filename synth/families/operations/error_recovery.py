"""Error recovery families: close tickets through the allowed status steps after a refused
direct close, and save files into a folder that has to be created first."""

from __future__ import annotations

from typing import Any

from coworkenv.state import Workspace
from coworkenv.task import Task

from ...family import FamilyContext, family
from ...phrasing import Ask, request
from ._shared import _at, _field, _guard, _max_id, _op, _plant, _slug, _states, _ticket_values

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
#: In other worlds: why a ticket is done, with the reference the note must carry.
WORLD_REASONS = [
    ("the requester confirmed it is settled, reference {key}", "REF-{n4}"),
    ("it was settled under case {key}", "SC-{n5}"),
    ("follow-up {key} confirmed that it is done", "FU-{n4}"),
    ("the requester's written confirmation {key} is on file", "CONF-{n4}"),
]


def _closing_key(ctx: FamilyContext, pattern: str) -> str:
    return pattern.format(
        a=ctx.rng.randint(1, 9),
        b=ctx.rng.randint(1, 9),
        n4=ctx.rng.randint(1000, 9999),
        n5=ctx.rng.randint(10000, 99999),
    )


def _closings(ctx: FamilyContext) -> list[tuple[str, str, str]]:
    """(title, reason, key pattern) of tickets to close: the demo's, or in another world the
    topics of the queues customers file into, each with a reason any field gives."""
    if ctx.on_demo:
        return CLOSINGS
    topics = [t.title for q in ctx.the_world.queues if q.requested_by == "customers" for t in q.topics]
    return [(title, *WORLD_REASONS[i % len(WORLD_REASONS)]) for i, title in enumerate(topics)]


def _front(ctx: FamilyContext) -> str:
    if ctx.on_demo:
        return "Support"
    return next(q.name for q in ctx.the_world.queues if q.requested_by == "customers")


def _stuck_ticket(ctx: FamilyContext, title: str, customer: Any, status: str) -> dict:
    values = _ticket_values(ctx)
    created = -ctx.rng.uniform(3, 12)
    return _op(
        "tickets",
        "add_ticket",
        title=title.format(**values),
        queue=_front(ctx),
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
        _states(
            f"note-{tid}",
            "tickets_comments",
            {"ticket_id": tid, "visibility": "internal", "id": {"ge": first_comment}},
            ["body"],
            [{"text": key}],
            f"A new internal note on #{tid} gives the reason ({key})",
        ),
    ]


def _closing_ask(ctx: FamilyContext, ids: list[int], titles: list[str], reasons: list[str]) -> Ask:
    """Close these tickets, each for its reason, with an internal note saying why."""
    done = list(zip(ids, titles, reasons, strict=True))
    variant = ctx.rng.randrange(3)
    if variant == 0:
        steps = [f"Close #{tid} ({title}), since {reason}." for tid, title, reason in done]
        steps.append("Leave an internal note on each saying why it is done.")
    elif variant == 1:
        steps = [f"Close ticket #{tid}, {title}, as {reason}." for tid, title, reason in done]
        steps.append("Add an internal note to each with the reason.")
    else:
        listing = "; ".join(f"#{tid} ({title}), because {reason}" for tid, title, reason in done)
        steps = [f"Close these tickets: {listing}.", "Put the reason on each one as an internal note."]
    context = ctx.choice(
        [
            "These are done but still open in the system.",
            "I went through my tickets and these are finished.",
            "",
        ]
    )
    short = "; ".join(f"#{tid}: {reason}" for tid, _, reason in done)
    return Ask(steps=tuple(steps), context=context, short=f"Close {short}, with an internal note each")


@family("tickets_invalid_transition", capability_id="error_recovery", services=["tickets"], worlds=True)
def tickets_invalid_transition(ctx: FamilyContext) -> Task:
    """The user asks to close tickets that are pending or in progress, which cannot be closed
    directly (tickets store.py: only open or resolved tickets close); the agent reads the error,
    resolves first, closes, and notes the reason. Items: tickets to close; distractors: the
    same customers' other unfinished tickets, which keep their status. Runs on every world."""
    services = ["tickets"]
    closings = _closings(ctx)
    picks = ctx.rng.sample(closings, min(len(closings) - 1, ctx.difficulty.items))
    customers = [ctx.person(internal=False) for _ in picks]
    keys = [_closing_key(ctx, pattern) for *_, pattern in picks]
    reasons = [reason.format(key=key) for (_, reason, _), key in zip(picks, keys, strict=True)]
    operations = [
        _stuck_ticket(ctx, title, c, ctx.choice(["pending", "in_progress"]))
        for (title, _, _), c in zip(picks, customers, strict=True)
    ]
    rest = [t for t in closings if t not in picks]
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
        _guard(_field(f"kept-{tid}", "tickets_tickets", {"id": tid}, "status", s, f"#{tid} stays {s}"))
        for tid, s in ((tid, op["params"]["status"]) for tid, op in kept)
    ]
    solution = [
        step for i, tid in enumerate(closing) for step in _closing_steps(tid, reasons[i], try_first=i == 0)
    ]
    titles = [op["params"]["title"] for op in operations[: len(closing)]]
    return ctx.task(
        capability_id="error_recovery",
        services=services,
        operations=operations,
        title="Close unfinished tickets through the allowed status steps, with notes",
        turns=[
            {
                "user": request(ctx, _closing_ask(ctx, closing, titles, reasons)),
                "checks": checks,
                "solution": solution,
            }
        ],
    )


# -- files_missing_folder ------------------------------------------------------------------------

NEXT_STEPS = ["send the revised quote", "book a site visit", "share the rollout plan"]
MEETING_KINDS = ["renewal call", "onboarding call", "quarterly review", "escalation review"]


def _folders(ctx: FamilyContext, ws: Workspace) -> list[str]:
    """Folders for call notes that do not exist yet: under the user's desk team, the sales
    team's accounts, or a shared folder for the month."""
    world = ctx.the_world
    desk, sales = _slug(world.team("desk")), _slug(world.team("sales"))
    candidates = [
        f"/teams/{desk}/call-notes",
        f"/teams/{desk}/customers/{ctx.start.year}",
        f"/shared/call-notes/{ctx.start:%Y-%m}",
        f"/teams/{sales}/accounts/call-notes",
    ]
    return [f for f in candidates if not ws.rows("files_nodes", "path = ?", [f])]


def _note(ctx: FamilyContext, company: str, kind: str, po: str, discount: int, step: str) -> str:
    contact = ctx.choice([p for p in ctx.company.contacts if p.company == company])
    return (
        f"Notes: {company} {kind}, {ctx.start.day} {ctx.start:%B}\n\n"
        f"- Attendees: {contact.name} ({company}), {ctx.user.name}\n"
        f"- Agreed: {discount}% volume discount from April\n"
        f"- Purchase order: {po}\n"
        f"- Next step: {step}"
    )


def _missing_dirs(ws: Workspace, folder: str) -> list[str]:
    """`folder` and those of its parents that do not exist yet, deepest first."""
    assert not ws.rows("files_nodes", "path = ?", [folder]), f"{folder} already exists"
    missing = [folder]
    while not ws.rows("files_nodes", "path = ?", [missing[-1].rsplit("/", 1)[0]]):
        missing.append(missing[-1].rsplit("/", 1)[0])
    return missing


def _note_checks(i: int, path: str, po: str, discount: int, step: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"file-{i}",
            "type": "row_exists",
            "table": "files_nodes",
            "where": {"path": path, "kind": "file"},
            "description": f"{path} exists",
        },
        _states(
            f"file-{i}-content",
            "files_nodes",
            {"path": path},
            ["content"],
            [{"text": po}, {"number": discount, "unit": "%"}, {"text": step}],
            f"{path} holds those notes (purchase order {po}, {discount}% discount, next step: {step})",
        ),
    ]


def _listed(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


def _notes_ask(ctx: FamilyContext, sender: Any, calls: list[str], paths: list[str]) -> Ask:
    """Save each call's notes at its path; the others stay in the inbox."""
    save = ctx.choice(
        [
            "Save the notes from the {call} as {path}.",
            "File the {call} notes in our files as {path}.",
            "Put the notes of the {call} into {path}.",
        ]
    )
    steps = [save.format(call=call, path=path) for call, path in zip(calls, paths, strict=True)]
    steps.append(ctx.choice(["Leave the other call notes in my inbox.", "Do not file the other call notes."]))
    who = sender.name
    context = ctx.choice(
        [
            f"{who} mailed me the notes from the {_listed(calls)}.",
            f"{who} sent over the notes from our customer calls.",
            f"I have the call notes from {who} in my inbox and want them in our files.",
        ]
    )
    short = "; ".join(f"{call} notes to {path}" for call, path in zip(calls, paths, strict=True))
    return Ask(steps=tuple(steps), context=context, short=f"Save the notes {who} mailed: {short}")


@family("files_missing_folder", capability_id="error_recovery", services=["files", "mail"], worlds=True)
def files_missing_folder(ctx: FamilyContext) -> Task:
    """A colleague mails call notes; the user wants them saved in a folder that does not exist
    yet, so the first write fails until the folder is created. Items: notes to save (one file
    each); distractors: other call notes in the inbox that must not be filed. Runs on every
    world (the folder lies under its desk or sales team, or in a shared folder of the month)."""
    services = ["files", "mail"]
    sender = ctx.person()
    companies = sorted({p.company for p in ctx.company.contacts})
    calls = ctx.rng.sample(
        [(c, k) for c in companies for k in MEETING_KINDS], ctx.difficulty.items + ctx.difficulty.distractors
    )
    _, seed_ws = _plant(ctx, services, [])
    folder = ctx.choice(_folders(ctx, seed_ws))
    pos = [f"PO-{ctx.rng.randint(10000, 99999)}" for _ in calls]
    discounts = [ctx.rng.randint(5, 15) for _ in calls]
    next_steps = [ctx.choice(NEXT_STEPS) for _ in calls]
    notes = [
        _note(ctx, company, kind, po, discount, step)
        for (company, kind), po, discount, step in zip(calls, pos, discounts, next_steps, strict=True)
    ]
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
        {"tool": "files_write_file", "arguments": {"path": paths[i], "content": notes[i]}} for i in items
    ]
    reads = list(enumerate(mail_ids[: ctx.difficulty.items]))
    solution = [
        {"tool": "mail_search_messages", "arguments": {"query": "Notes", "folder": "inbox"}},
        *[{"tool": "mail_get_message", "arguments": {"message_id": m}, "id": f"m{i}"} for i, m in reads],
        {**writes[0], "expect_error": True},
        {"tool": "files_create_directory", "arguments": {"path": folder, "parents": len(missing) > 1}},
        *writes,
    ]  # fmt: skip
    ask = _notes_ask(ctx, sender, [f"{calls[i][0]} {calls[i][1]}" for i in items], paths)
    return ctx.task(
        capability_id="error_recovery",
        extra_capabilities=["document_editing"],
        services=services,
        operations=operations,
        title="Save mailed call notes into a folder that does not exist yet",
        turns=[
            {
                "user": request(ctx, ask),
                "checks": [
                    c for i in items for c in _note_checks(i, paths[i], pos[i], discounts[i], next_steps[i])
                ],
                "solution": solution,
            }
        ],
    )
