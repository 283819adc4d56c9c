"""Document families (`document_editing`): precise edits to a policy document, and meeting
notes compiled from the calendar and the mail that followed.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from coworkenv.servers.demo import DemoPerson
from coworkenv.state import format_time
from coworkenv.task import Task

from ...family import FamilyContext, family
from ._shared import (
    Json,
    _core_name,
    _day_text,
    _event,
    _first,
    _guard,
    _next_day,
    _person,
    _python,
    _states,
    _step,
)

# -- edit_policy_document ------------------------------------------------------------------------

POLICIES = [
    {
        "path": "/shared/policies/per-diem-rates.md",
        "title": "Per diem rates",
        "kind": "per diem",
        "intro": "Daily allowance for meals and local transport on business trips, by destination.",
        "line": "- {label}: {currency} {amount} per day",
        "rows": [
            ("Berlin", "EUR", 35, 70),
            ("London", "GBP", 40, 75),
            ("New York", "USD", 55, 95),
            ("Singapore", "SGD", 60, 120),
            ("Paris", "EUR", 40, 75),
            ("Madrid", "EUR", 30, 60),
            ("Toronto", "CAD", 50, 90),
        ],
        "outro": ["Travel days count as full days.", "Alcohol is never reimbursed."],
    },
    {
        "path": "/shared/policies/purchase-approvals.md",
        "title": "Purchase approval thresholds",
        "kind": "approval threshold",
        "intro": "Purchases above these amounts need written approval before you order.",
        "line": "| {label} | {currency} {amount} |",
        "header": ["| purchase | threshold |", "| --- | --- |"],
        "rows": [
            ("Software subscriptions", "EUR", 200, 900),
            ("Laptops and hardware", "EUR", 1000, 3000),
            ("Conference tickets", "EUR", 300, 1200),
            ("Consulting services", "EUR", 2000, 9000),
            ("Office furniture", "EUR", 400, 1500),
            ("Marketing campaigns", "EUR", 1500, 6000),
        ],
        "outro": ["Approvals are given by your manager; above EUR 10000 the COO decides."],
    },
    {
        "path": "/shared/policies/home-office-allowance.md",
        "title": "Home office allowance",
        "kind": "allowance",
        "intro": "What Northwind reimburses for a home workplace, once every three years unless noted.",
        "line": "- {label}: up to {currency} {amount}",
        "rows": [
            ("Desk chair", "EUR", 150, 450),
            ("Monitor", "EUR", 150, 400),
            ("Headset", "EUR", 50, 150),
            ("Desk", "EUR", 200, 600),
            ("Internet, per month", "EUR", 20, 60),
            ("Desk lamp", "EUR", 25, 80),
        ],
        "outro": ["Send receipts to Finance within 30 days of the purchase."],
    },
    {
        "path": "/teams/engineering/on-call-compensation.md",
        "title": "On-call compensation",
        "kind": "on-call rate",
        "intro": "What an engineer on call earns on top of their salary, per shift.",
        "line": "- {label}: {currency} {amount}",
        "rows": [
            ("Weekday night", "EUR", 40, 90),
            ("Saturday", "EUR", 100, 220),
            ("Sunday", "EUR", 100, 220),
            ("Public holiday", "EUR", 150, 320),
            ("Incident call-out", "EUR", 30, 90),
        ],
        "outro": ["Shifts are swapped in the on-call calendar, never by mail alone."],
    },
]
POLICY_LIB = """import json
import re


def lines(conn):
    query = "SELECT content FROM files_nodes WHERE path = ? AND kind = 'file'"
    row = conn.execute(query, (P["path"],)).fetchone()
    if row is None:
        return None
    out = [line.rstrip() for line in row[0].split("\\n")]
    while out and not out[-1]:
        out.pop()
    return out


def amount(text):
    \"\"\"The whole amount a cell states (1050, 1,050, 1 050 or 1050.00), or None.\"\"\"
    m = re.fullmatch(r"(\\d{1,3}(?:[,' ]\\d{3})+|\\d+)(?:[.,]00?)?", text.strip())
    return int(re.sub(r"\\D", "", m.group(1))) if m else None


def item(line):
    \"\"\"(label, amount) when the line is one of the changed items, written as the document does.\"\"\"
    for label, (prefix, suffix) in P["items"].items():
        if line.startswith(prefix) and line.endswith(suffix) and len(line) >= len(prefix) + len(suffix):
            return label, amount(line[len(prefix) : len(line) - len(suffix)])
    return None
"""
VALUE_CHECK = """def check(initial, final, audit):
    after = lines(final)
    if after is None:
        return False, "the document is gone"
    found = [a for label, a in filter(None, map(item, after)) if label == P["label"]]
    if found == [P["new"]]:
        return True, f"{P['label']} is now {P['new']}"
    return False, f"the lines for {P['label']} give {found}, expected [{P['new']}]"
"""
STAMP_CHECK = """DATES = "|".join(map(re.escape, P["dates"]))
STAMP = re.compile(r"^[*_]*last updated:?[*_]*\\s*(" + DATES + r")[*_.]*$", re.I)


def check(initial, final, audit):
    after = lines(final)
    if not after:
        return False, "the document is gone or empty"
    if not STAMP.match(after[-1].strip()):
        return False, f"the last line is {after[-1]!r}, not 'Last updated: {P['dates'][0]}'"
    return True, "the last line is the stamp"
"""
REST_CHECK = """def check(initial, final, audit):
    before, after = lines(initial), lines(final)
    if after is None:
        return False, "the document is gone"
    if after and re.match(r"^[*_]*last updated", after[-1].strip(), re.I):
        after = after[:-1]
    while after and not after[-1]:
        after.pop()
    if len(after) != len(before):
        return False, f"the document has {len(after)} lines besides the stamp, the original {len(before)}"
    for number, (got, was) in enumerate(zip(after, before), start=1):
        if item(was) is not None:
            if item(got) is None or item(got)[0] != item(was)[0]:
                return False, f"line {number} is {got!r}, expected the line for {item(was)[0]}"
        elif got != was:
            return False, f"line {number} is {got!r}, expected {was!r}"
    return True, "every line outside the requested edit is as it was"
"""


def _policy_text(doc: Json, owner: DemoPerson, amounts: dict[str, int], year: int) -> str:
    rows = [
        doc["line"].format(label=label, currency=cur, amount=amounts[label]) for label, cur, *_ in doc["rows"]
    ]
    head = [f"# {doc['title']} {year}", "", f"Owner: {owner.name} ({owner.email})", "", doc["intro"], ""]
    return "\n".join([*head, *doc.get("header", []), *rows, "", *doc["outro"]]) + "\n"


def _file(path: str, content: str, owner: DemoPerson, at: datetime) -> Json:
    params = {"path": path, "content": content, "modified_by": owner.email, "created_at": format_time(at)}
    return {"service": "files", "operation": "add_file", "params": params}


def _policy_distractors(
    ctx: FamilyContext, doc: Json, owner: DemoPerson, amounts: dict[str, int]
) -> list[Json]:
    """An FAQ quoting today's values and archived versions of earlier years: all stay as they are."""
    slug = doc["path"].rsplit("/", 1)[1].removesuffix(".md")
    ops = []
    for i in range(ctx.difficulty.distractors):
        at = ctx.start - timedelta(days=ctx.rng.randint(20, 400))
        if i == 0:
            faq = [f"# {doc['title']}: questions and answers", ""]
            for label, cur, *_ in doc["rows"]:
                faq += [f"Q: What is the {doc['kind']} for {label}?", f"A: {cur} {amounts[label]}.", ""]
            ops.append(_file(f"/teams/support/{slug}-faq.md", "\n".join(faq), owner, at))
        else:
            older = {label: max(5, amounts[label] - 5 * ctx.rng.randint(1, 4)) for label in amounts}
            ops.append(
                _file(
                    f"/shared/archive/{slug}-{2026 - i}.md",
                    _policy_text(doc, owner, older, 2026 - i),
                    owner,
                    at,
                )
            )
    return ops


def _policy_changes(
    ctx: FamilyContext, doc: Json, amounts: dict[str, int]
) -> tuple[dict[str, str], list[str], list[tuple[str, str, int]]]:
    """Old line -> new line for the values to change, how the request words each change, and
    (label, currency, new amount) of each."""
    changes, asks, values = {}, [], []
    for label, cur, _, hi in ctx.rng.sample(doc["rows"], min(ctx.difficulty.items, len(doc["rows"]))):
        step = 5 if hi < 1000 else 50
        old = amounts[label]
        new = old + ctx.choice([-2, -1, 1, 2, 3, 4]) * step
        new = new if new > 0 else old + step
        changes[doc["line"].format(label=label, currency=cur, amount=old)] = doc["line"].format(
            label=label, currency=cur, amount=new
        )
        asks.append(f"the {doc['kind']} for {label} from {cur} {old} to {cur} {new}")
        values.append((label, cur, new))
    return changes, asks, values


@family("edit_policy_document", capability_id="document_editing", services=["files"])
def edit_policy_document(ctx: FamilyContext) -> Task:
    """Change one or more values in a policy document and stamp it "Last updated: <today>";
    every other line stays identical. More items: more values to change; more distractors:
    an FAQ quoting the values and archived copies that must not change."""
    doc = ctx.choice(POLICIES)
    owner = ctx.person(team="Finance")
    amounts = {}
    for label, _, lo, hi in doc["rows"]:
        amounts[label] = ctx.rng.randrange(lo, hi + 1, 5 if hi < 1000 else 50)
    content = _policy_text(doc, owner, amounts, 2026)
    changes, asks, new_values = _policy_changes(ctx, doc, amounts)
    today = ctx.start.date()
    new_content = "\n".join(changes.get(line, line) for line in content.rstrip("\n").split("\n"))
    new_content += f"\n\nLast updated: {today.isoformat()}\n"
    ops = [_file(doc["path"], content, owner, ctx.start - timedelta(days=ctx.rng.randint(30, 200)))]
    ops += _policy_distractors(ctx, doc, owner, amounts)
    ctx.plant(["files"], ops)
    wanted = "; ".join(asks)
    request = ctx.choice(
        [
            f"Please update {doc['path']}: change {wanted}. Then add a last line 'Last updated: ' with "
            "today's date (YYYY-MM-DD). Leave everything else in that file exactly as it is and do not "
            "touch any other file.",
            f"Finance approved new numbers for the {doc['title'].lower()} document ({doc['path']}): "
            f"change {wanted}. Add 'Last updated: <today's date as YYYY-MM-DD>' as the final line. Nothing "
            "else in the document (or anywhere else) should change.",
        ]
    )
    dates = [today.isoformat(), f"{today.day} {today:%B %Y}", f"{today:%B} {today.day}, {today.year}"]
    items = {}  # the changed lines, as (text before the amount, text after it)
    for label, cur, _ in new_values:
        prefix, suffix = doc["line"].format(label=label, currency=cur, amount="\0").split("\0")
        items[label] = (prefix.rstrip(), suffix.lstrip().rstrip())
    checks = [
        _python(
            f"value-{i}",
            f"The document gives {label} as {cur} {new}",
            POLICY_LIB,
            {"path": doc["path"], "items": items, "label": label, "new": new},
            VALUE_CHECK,
        )
        for i, (label, cur, new) in enumerate(new_values)
    ]
    checks.append(
        _python(
            "stamped",
            f"The last line is 'Last updated: {today.isoformat()}'",
            POLICY_LIB,
            {"path": doc["path"], "items": items, "dates": dates},
            STAMP_CHECK,
        )
    )
    rest = "Every line outside the requested values and the stamp is as it was"
    checks.append(
        _guard(_python("rest-unchanged", rest, POLICY_LIB, {"path": doc["path"], "items": items}, REST_CHECK))
    )
    solution = [
        _step("files_read_file", path=doc["path"]),
        _step("files_write_file", path=doc["path"], content=new_content, mode="overwrite"),
    ]
    return ctx.task(
        capability_id="document_editing",
        services=["files"],
        operations=ops,
        title=f"Update {doc['path']}",
        turns=[{"user": request, "checks": checks, "solution": solution}],
    )


# -- compile_meeting_notes -----------------------------------------------------------------------

DECISIONS = [
    (
        "We go with {v} as the courier for express shipments from next month.",
        ["Parcelwise", "Swiftline", "Cargonet", "Bluebird Express", "Northstar Freight"],
    ),
    (
        "The new knowledge base will be built in {v}.",
        ["Document360", "Helpjuice", "Guru", "Zendesk Guide", "Confluence"],
    ),
    (
        "Customer satisfaction surveys go out through {v} from April.",
        ["Typeform", "SurveyMonkey", "Qualtrics", "Jotform", "Formstack"],
    ),
    ("The team offsite will be in {v} in May.", ["Lisbon", "Porto", "Ljubljana", "Krakow", "Tallinn"]),
    ("The portal relaunch is code-named {v}.", ["Kestrel", "Bluefin", "Juniper", "Halcyon", "Marlin"]),
    (
        "Live chat moves to {v} by the end of the quarter.",
        ["Intercom", "LiveAgent", "Olark", "Tidio", "Drift"],
    ),
]
NOTE_MEETINGS = [
    "Support tooling workshop",
    "Q2 support planning",
    "Customer experience review",
    "Support operations sync",
]
OTHER_MEETINGS = ["Sales pipeline review", "Finance planning sync", "Engineering roadmap review"]
LAYOUT_CHECK = """def check(initial, final, audit):
    row = final.execute(
        "SELECT content FROM files_nodes WHERE path = ? AND kind = 'file'", (P["path"],)
    ).fetchone()
    if row is None:
        return False, "the notes do not exist"
    lines = [line.lower() for line in row[0].split("\\n")]
    for names in P["items"]:
        if not any(any(n in line for n in names) for line in lines):
            return False, f"no line names {names[-1]!r}"
    for line in lines:
        named = [names[-1] for names in P["items"] if any(n in line for n in names)]
        if len(named) > 1:
            return False, f"one line names {named}: {line.strip()[:80]!r}"
    return True, "one line per attendee and per decision"
"""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _mail(sender: DemoPerson, to: list[str], subject: str, body: str, at: datetime) -> Json:
    params = {
        "from_addr": sender.email,
        "to": to,
        "subject": subject,
        "body": body,
        "sent_at": format_time(at),
    }
    return {"service": "mail", "operation": "add_message", "params": params}


def _notes_meeting(ctx: FamilyContext) -> Json:
    """The meeting (last Thursday or Friday, in the user's working day), who came and who organized it."""
    day = ctx.start.date() - timedelta(days=ctx.choice([3, 4]))
    people = ctx.rng.sample(ctx.people(), min(ctx.difficulty.items + 1, 5))
    organizer = ctx.choice([ctx.user, people[0]])
    invited = [p for p in people if p is not organizer] + ([ctx.user] if organizer is not ctx.user else [])
    start = datetime.combine(day, time(ctx.rng.randint(10, 14)), ZoneInfo(ctx.user.time_zone)).astimezone(UTC)
    return {"day": day, "people": people, "organizer": organizer, "invited": invited, "start": start}


def _decision_mails(
    ctx: FamilyContext, title: str, people: list[DemoPerson], decisions: list[str], after: datetime
) -> list[Json]:
    """A thread in which the attendees write down the decisions, one per mail."""
    everyone = [ctx.user.email] + [p.email for p in people]
    ops = []
    for i, decision in enumerate(decisions):
        sender = people[i % len(people)]
        to = [e for e in everyone if e != sender.email]
        if i == 0:
            body = f"Hi all,\n\nthanks for {title} today. Writing down what we agreed:\n\n- {decision}\n\n"
            ops.append(_mail(sender, to, f"Decisions: {title}", body + "Add anything I missed.", after))
        else:
            body = f"One more from the meeting: {decision}\n\n{_first(sender)}"
            ops.append(_mail(sender, to, f"Re: Decisions: {title}", body, after + timedelta(minutes=20 * i)))
    return ops


def _decoy_mails(
    ctx: FamilyContext, kinds: list, picks: list[list[str]], after: datetime
) -> tuple[list, list]:
    """Mails with decisions of other meetings (other values of the same kinds): the notes leave them out."""
    ops, values = [], []
    for i in range(ctx.difficulty.distractors):
        k = i % len(kinds)
        value = picks[k][1 + i // len(kinds)]
        values.append(value)
        other, sender = ctx.choice(OTHER_MEETINGS), ctx.person()
        body = f"Hi,\n\nfrom today's {other}: {kinds[k][0].format(v=value)}\n\nBest,\n{_first(sender)}"
        ops.append(
            _mail(sender, [ctx.user.email], f"Decisions: {other}", body, after + timedelta(minutes=10 * i))
        )
    return ops, values


@family(
    "compile_meeting_notes",
    capability_id="document_editing",
    services=["files", "calendar", "mail", "directory"],
)
def compile_meeting_notes(ctx: FamilyContext) -> Task:
    """Write meeting notes at a given path: the attendees (from the calendar) and the decisions
    (from the follow-up mail thread). More items: more attendees and decisions; more
    distractors: decisions of other meetings that must stay out of the notes."""
    services = ["files", "calendar", "mail", "directory"]
    meeting = _notes_meeting(ctx)
    day, people, organizer = meeting["day"], meeting["people"], meeting["organizer"]
    title = ctx.choice(NOTE_MEETINGS)
    kinds = ctx.rng.sample(DECISIONS, min(ctx.difficulty.items + 1, len(DECISIONS)))
    names = " ".join(f"{p.name} {p.email}" for p in ctx.company.people).lower()
    picks = [ctx.rng.sample(values, len(values)) for _, values in kinds]
    picks = [[v for v in values if v.lower() not in names] for values in picks]  # no value reads like a name
    tokens = [p[0] for p in picks]
    decisions = [text.format(v=v) for (text, _), v in zip(kinds, tokens, strict=True)]
    end = meeting["start"] + timedelta(minutes=60)
    invited = [(p.email, "accepted") for p in meeting["invited"]]
    ops = [_event(organizer, title, meeting["start"], end, invited)]
    ops += _decision_mails(ctx, title, people, decisions, end + timedelta(minutes=30))
    decoys, decoy_values = _decoy_mails(ctx, kinds, picks, end + timedelta(minutes=45))
    ops += decoys
    path = f"/teams/support/meeting-notes/{day.isoformat()}-{_slug(title)}.md"
    attendees = [p for p in people if p is not ctx.user]
    request = ctx.choice(
        [
            f"Please write up notes for the '{title}' meeting on {_day_text(day)} and save them as {path}. "
            "List who attended (from the calendar invite), one person per line, and every decision that "
            "was agreed in the follow-up mails, one per line. Only that meeting's decisions, please.",
            f"Can you create {path} with the notes of '{title}' ({_day_text(day)})? It needs the attendees "
            "and the decisions people wrote down by mail afterwards, each on a line of its own; do not mix "
            "in other meetings.",
        ]
    )
    notes_row = {"path": path, "kind": "file"}
    others = [{"text": v} for v in decoy_values]
    checks = [
        _states(
            f"attendee-{i}", f"The notes name {p.name}", "files_nodes", notes_row, ["content"], [_person(p)]
        )
        for i, p in enumerate(attendees)
    ]
    checks += [
        _states(
            f"decision-{i}",
            f"The notes record: {decision}" + (" (and no other meeting's decision)" if others else ""),
            "files_nodes",
            notes_row,
            ["content"],
            [{"text": token}],
            others,
        )
        for i, (token, decision) in enumerate(zip(tokens, decisions, strict=True))
    ]
    items = [[p.email.lower(), _core_name(p).lower()] for p in attendees] + [[t.lower()] for t in tokens]
    layout = "Each attendee and each decision is on a line of its own"
    checks.append(
        _python("one-per-line", layout, "import json", {"path": path, "items": items}, LAYOUT_CHECK)
    )
    notes = [f"# {title} - {day.isoformat()}", "", "Attendees:"]
    notes += [f"- {p.name} ({p.email})" for p in [*attendees, ctx.user]]
    notes += ["", "## Decisions", *[f"- {d}" for d in decisions]]
    solution = [
        _step("calendar_list_events", start=day.isoformat(), end=_next_day(day), query=title),
        _step("mail_search_messages", "found", query=f"Decisions {title}"),
        _step("mail_get_thread", thread_id={"$ref": "found.messages.0.thread_id"}),
        _step("files_write_file", path=path, content="\n".join(notes) + "\n"),
    ]
    return ctx.task(
        capability_id="document_editing",
        services=services,
        operations=ops,
        title=f"Meeting notes for {title}",
        extra_capabilities=["find_and_report"],
        turns=[{"user": request, "checks": checks, "solution": solution}],
    )
