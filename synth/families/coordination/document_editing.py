"""Document families (`document_editing`): precise edits to a policy document, and meeting
notes compiled from the calendar and the mail that followed.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from coworkenv.state import format_time
from coworkenv.task import Task
from coworkenv.world import Person, World

from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, request
from ._documents_world import (
    archive_folder,
    notes_folder,
    parent,
    policy_folder,
    scale,
    slug,
    team_folder,
    unique_names,
)
from ._shared import (
    Json,
    _core_name,
    _day_text,
    _event,
    _guard,
    _next_day,
    _person,
    _python,
    _states,
    _step,
)

# -- edit_policy_document ------------------------------------------------------------------------

#: Policies of figures, by the role of the team that owns them. A row's currency None is the
#: world's own currency (amounts then scale with it); per diem rates are in the destination's.
POLICIES: list[Json] = [
    {
        "name": "per-diem-rates.md",
        "title": "Per diem rates",
        "kind": "per diem",
        "role": "finance",
        "proper": True,
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
        "name": "purchase-approvals.md",
        "title": "Purchase approval thresholds",
        "kind": "approval threshold",
        "role": "finance",
        "intro": "Purchases above these amounts need written approval before you order.",
        "line": "| {label} | {currency} {amount} |",
        "header": ["| purchase | threshold |", "| --- | --- |"],
        "rows": [
            ("Software subscriptions", None, 200, 900),
            ("Laptops and hardware", None, 1000, 3000),
            ("Conference tickets", None, 300, 1200),
            ("Consulting services", None, 2000, 9000),
            ("Office furniture", None, 400, 1500),
            ("Marketing campaigns", None, 1500, 6000),
        ],
        "outro": ["Approvals are given by your manager; above {currency} {ceiling} {leadership} decides."],
    },
    {
        "name": "home-office-allowance.md",
        "title": "Home office allowance",
        "kind": "allowance",
        "role": "finance",
        "intro": "What {company} reimburses for a home workplace, once every three years unless noted.",
        "line": "- {label}: up to {currency} {amount}",
        "rows": [
            ("Desk chair", None, 150, 450),
            ("Monitor", None, 150, 400),
            ("Headset", None, 50, 150),
            ("Desk", None, 200, 600),
            ("Internet (per month)", None, 20, 60),
            ("Desk lamp", None, 25, 80),
        ],
        "outro": ["Send receipts to {finance} within 30 days of the purchase."],
    },
    {
        "name": "on-call-compensation.md",
        "title": "On-call compensation",
        "kind": "on-call rate",
        "role": "tech",
        "intro": "What a colleague on call earns on top of their salary, per shift.",
        "line": "- {label}: {currency} {amount}",
        "rows": [
            ("Weekday night", None, 40, 90),
            ("Saturday", None, 100, 220),
            ("Sunday", None, 100, 220),
            ("Public holiday", None, 150, 320),
            ("Incident call-out", None, 30, 90),
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


def _team_policy(world: World) -> Json:
    """Spending limits for the world's own teams."""
    return {
        "name": "spending-limits.md",
        "title": "Spending limits by team",
        "kind": "spending limit",
        "role": "finance",
        "proper": True,
        "intro": "What each team may spend on a single purchase without further approval.",
        "line": "- {label}: up to {currency} {amount} per purchase",
        "rows": [(t.name, None, 500, 5000) for t in world.teams[:6]],
        "outro": ["Anything above a team's limit goes to {finance} first."],
    }


def _policy(ctx: FamilyContext) -> Json:
    """One policy of figures, in the world's policy folder (the on-call rates in the tech
    team's folder where it has one), with the world's currency, teams and name filled in."""
    world = ctx.the_world
    home, taken = policy_folder(world).rstrip("/"), {d.path for d in world.documents}
    k = scale(world.currency)
    leadership = world.team("leadership")
    lead = next((t.lead for t in world.teams if t.name == leadership), "")
    boss = next((p.title for p in world.staff if p.email == lead), leadership)
    fill = {
        "company": world.name,
        "finance": world.team("finance"),
        "leadership": f"the {boss}",
        "currency": world.currency,
        "ceiling": 10000 * k,
    }
    options = []
    for doc in [*POLICIES, *([_team_policy(world)] if len(world.teams) >= 3 else [])]:
        folder = team_folder(world, world.team("tech")) if doc["role"] == "tech" else None
        path = f"{folder or home}/{doc['name']}"
        if path in taken:
            continue
        rows = [
            (label, cur or world.currency, lo * (1 if cur else k), hi * (1 if cur else k))
            for label, cur, lo, hi in doc["rows"]
        ]
        options.append(
            {
                **doc,
                "path": path,
                "rows": rows,
                "intro": doc["intro"].format(**fill),
                "outro": [line.format(**fill) for line in doc["outro"]],
            }
        )
    return dict(ctx.choice(options))


def _step_of(hi: int) -> int:
    return 5 if hi < 1000 else 50


def _policy_text(doc: Json, owner: Person, amounts: dict[str, int], year: int) -> str:
    rows = [
        doc["line"].format(label=label, currency=cur, amount=amounts[label]) for label, cur, *_ in doc["rows"]
    ]
    head = [f"# {doc['title']} {year}", "", f"Owner: {owner.name} ({owner.email})", "", doc["intro"], ""]
    return "\n".join([*head, *doc.get("header", []), *rows, "", *doc["outro"]]) + "\n"


def _file(path: str, content: str, owner: Person, at: datetime) -> Json:
    params = {"path": path, "content": content, "modified_by": owner.email, "created_at": format_time(at)}
    return {"service": "files", "operation": "add_file", "params": params}


def _policy_distractors(ctx: FamilyContext, doc: Json, owner: Person, amounts: dict[str, int]) -> list[Json]:
    """An FAQ quoting today's values (in the desk team's folder) and archived versions of
    earlier years: all stay as they are."""
    world = ctx.the_world
    home = parent(doc["path"]).rstrip("/")
    name = doc["name"].removesuffix(".md")
    year = ctx.start.year
    ops = []
    for i in range(ctx.difficulty.distractors):
        at = ctx.start - timedelta(days=ctx.rng.randint(20, 400))
        if i == 0:
            faq = [f"# {doc['title']}: questions and answers", ""]
            for label, cur, *_ in doc["rows"]:
                faq += [f"Q: What is the {doc['kind']} for {label}?", f"A: {cur} {amounts[label]}.", ""]
            folder = team_folder(world, world.team("desk")) or home
            ops.append(_file(f"{folder}/{name}-faq.md", "\n".join(faq), owner, at))
        else:
            older = {
                label: max(_step_of(hi), amounts[label] - _step_of(hi) * ctx.rng.randint(1, 4))
                for label, _, _, hi in doc["rows"]
            }
            path = f"{archive_folder(world, home)}/{name}-{year - i}.md"
            ops.append(_file(path, _policy_text(doc, owner, older, year - i), owner, at))
    return ops


def _policy_changes(
    ctx: FamilyContext, doc: Json, amounts: dict[str, int]
) -> tuple[dict[str, str], str, list[tuple[str, str, int]]]:
    """Old line -> new line for the values to change, how the request words the changes, and
    (label, currency, new amount) of each."""
    changes, asks, values = {}, [], []
    for label, cur, _, hi in ctx.rng.sample(doc["rows"], min(ctx.difficulty.items, len(doc["rows"]))):
        step = _step_of(hi)
        old = amounts[label]
        new = old + ctx.choice([-2, -1, 1, 2, 3, 4]) * step
        new = new if new > 0 else old + step
        changes[doc["line"].format(label=label, currency=cur, amount=old)] = doc["line"].format(
            label=label, currency=cur, amount=new
        )
        named = label if doc.get("proper") else label.lower()
        asks.append(f"for {named} from {cur} {old} to {cur} {new}")
        values.append((label, cur, new))
    listed = asks[0] if len(asks) == 1 else ", ".join(asks[:-1]) + f" and {asks[-1]}"
    return changes, f"the {doc['kind']} {listed}", values


def _policy_request(ctx: FamilyContext, doc: Json, wanted: str, owner: Person) -> str:
    """The user's request: the changes, the stamp with today's date, nothing else touched."""
    path, today = doc["path"], ctx.start.date()
    stamp = f"Last updated: {today.isoformat()}"
    change = ctx.choice(
        [
            f"Change {wanted} in {path}.",
            f"Update {path}: change {wanted}.",
            f"Edit {path} to change {wanted}.",
        ]
    )
    stamp_step = ctx.choice(
        [
            f"Add a last line '{stamp}'.",
            f"End the file with today's date as the line '{stamp}'.",
            f"Finish it with a line '{stamp}' (today is {today.day} {today:%B %Y}).",
        ]
    )
    keep = ctx.choice(
        [
            "Leave everything else in that file exactly as it is and do not touch any other file.",
            "Keep every other line as it is, and leave the other files alone.",
            "Do not change anything else, in that document or anywhere else.",
        ]
    )
    finance = ctx.the_world.team("finance")
    context, sender = ctx.choice(
        [
            (f"{finance} approved new figures for the {doc['title'].lower()}.", None),
            (f"The {doc['kind']} figures were revised this week.", None),
            (f"The new {doc['kind']} figures are signed off and should be in the document today.", owner),
            ("", None),
        ]
    )
    ask = Ask(
        steps=(change, stamp_step, keep),
        context=context,
        short=f"{path}: change {wanted}, add '{stamp}' as the last line, nothing else",
        forwarded_from=sender,
    )
    return request(ctx, ask)


@family("edit_policy_document", capability_id="document_editing", services=["files"], worlds=True)
def edit_policy_document(ctx: FamilyContext) -> Task:
    """Change one or more values in a policy document and stamp it "Last updated: <today>";
    every other line stays identical. The policy lives in the world's policy folder and is
    written in its currency. More items: more values to change; more distractors: an FAQ
    quoting the values and archived copies that must not change."""
    doc = _policy(ctx)
    owner = ctx.choice(ctx.people(team=ctx.the_world.team(doc["role"])) or ctx.people())
    amounts = {}
    for label, _, lo, hi in doc["rows"]:
        amounts[label] = ctx.rng.randrange(lo, hi + 1, _step_of(hi))
    content = _policy_text(doc, owner, amounts, ctx.start.year)
    changes, wanted, new_values = _policy_changes(ctx, doc, amounts)
    today = ctx.start.date()
    new_content = "\n".join(changes.get(line, line) for line in content.rstrip("\n").split("\n"))
    new_content += f"\n\nLast updated: {today.isoformat()}\n"
    ops = [_file(doc["path"], content, owner, ctx.start - timedelta(days=ctx.rng.randint(30, 200)))]
    ops += _policy_distractors(ctx, doc, owner, amounts)
    ctx.plant(["files"], ops)
    user_text = _policy_request(ctx, doc, wanted, owner)
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
        turns=[{"user": user_text, "checks": checks, "solution": solution}],
    )


# -- compile_meeting_notes -----------------------------------------------------------------------

DECISIONS = [
    (
        "We go with {v} as the courier for express deliveries from next month.",
        ["Parcelwise", "Swiftline", "Cargonet", "Bluebird Express", "Northstar Freight"],
    ),
    (
        "The new knowledge base will be built in {v}.",
        ["Document360", "Helpjuice", "Guru", "Zendesk Guide", "Confluence"],
    ),
    (
        "Satisfaction surveys go out through {v} from April.",
        ["Typeform", "SurveyMonkey", "Qualtrics", "Jotform", "Formstack"],
    ),
    ("The team offsite will be in {v} in May.", ["Lisbon", "Porto", "Ljubljana", "Krakow", "Tallinn"]),
    ("The website relaunch is code-named {v}.", ["Kestrel", "Bluefin", "Juniper", "Halcyon", "Marlin"]),
    (
        "Live chat on the website moves to {v} by the end of the quarter.",
        ["Intercom", "LiveAgent", "Olark", "Tidio", "Drift"],
    ),
]
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


def _mail(sender: Person, to: list[str], subject: str, body: str, at: datetime) -> Json:
    params = {
        "from_addr": sender.email,
        "to": to,
        "subject": subject,
        "body": body,
        "sent_at": format_time(at),
    }
    return {"service": "mail", "operation": "add_message", "params": params}


def _seeded_titles(ctx: FamilyContext) -> set[str]:
    """Titles of the seed's events and subjects of its mail (lower case), which a notes
    meeting must not share."""
    _, ws = ctx.seeded(["calendar", "mail"], [])
    titles = {str(r["title"]).lower() for r in ws.rows("calendar_events")}
    return titles | {str(r["subject"]).lower() for r in ws.rows("mail_messages")}


def _note_titles(ctx: FamilyContext) -> list[str]:
    """Meetings the user's team could have held: a workshop, a planning, a sync, or one on a
    topic of the world's own meetings; none shares a title with a seeded event or mail."""
    team = ctx.user.team or ctx.the_world.teams[0].name
    quarter = (ctx.start.month - 1) // 3 % 4 + 2
    sync = f"{team} sync" if team.lower().endswith("operations") else f"{team} operations sync"
    titles = [f"{team} tooling workshop", f"Q{min(quarter, 4)} {team} planning", sync]
    for topic in ctx.the_world.vocabulary.meeting_topics:
        titles.append(f"Review of {topic}" if topic.startswith("the ") else topic[:1].upper() + topic[1:])
    taken = _seeded_titles(ctx)
    return [t for t in titles if t.lower() not in taken and f"decisions: {t.lower()}" not in taken]


def _other_meetings(ctx: FamilyContext) -> list[str]:
    """Meetings of the other teams, whose decisions the notes leave out."""
    teams = [t.name for t in ctx.the_world.teams if t.name != ctx.user.team] or ["Leadership"]
    return [f"{t} {kind}" for t in teams for kind in ("planning sync", "roadmap review")]


def _attendees(ctx: FamilyContext, n: int) -> list[Person]:
    """`n` colleagues, the user's team first, none sharing a name with anyone else (nor with
    an address that reads like a typo, "dr..webster@", which the notes would repeat)."""
    named = [p for p in unique_names(ctx.the_world, ctx.people(), first=False) if ".." not in p.email]
    mine = [p for p in named if p.team == ctx.user.team]
    others = [p for p in named if p.team != ctx.user.team]
    ctx.rng.shuffle(mine)
    ctx.rng.shuffle(others)
    return [*mine, *others][:n]


def _notes_meeting(ctx: FamilyContext) -> Json:
    """The meeting (last Thursday or Friday, in the user's working day), who came and who organized it."""
    day = ctx.start.date() - timedelta(days=ctx.choice([3, 4]))
    people = _attendees(ctx, min(ctx.difficulty.items + 1, 5))
    organizer = ctx.choice([ctx.user, people[0]])
    invited = [p for p in people if p is not organizer] + ([ctx.user] if organizer is not ctx.user else [])
    start = datetime.combine(day, time(ctx.rng.randint(10, 14)), ZoneInfo(ctx.user.time_zone)).astimezone(UTC)
    return {"day": day, "people": people, "organizer": organizer, "invited": invited, "start": start}


def _decision_mails(
    ctx: FamilyContext, title: str, people: list[Person], decisions: list[str], after: datetime
) -> list[Json]:
    """A thread in which the attendees write down the decisions, one per mail."""
    everyone = [ctx.user.email] + [p.email for p in people]
    ops = []
    for i, decision in enumerate(decisions):
        sender = people[i % len(people)]
        to = [e for e in everyone if e != sender.email]
        sign = first_name(sender.name)
        if i == 0:
            body = (
                f"Hi all,\n\nthanks for the meeting today. Writing down what we agreed:\n\n- {decision}\n\n"
                f"Add anything I missed.\n\n{sign}"
            )
            ops.append(_mail(sender, to, f"Decisions: {title}", body, after))
        else:
            body = f"One more from the meeting: {decision}\n\n{sign}"
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
        other, sender = ctx.choice(_other_meetings(ctx)), ctx.person()
        body = (
            f"Hi,\n\nfrom today's {other}: {kinds[k][0].format(v=value)}\n\nBest,\n{first_name(sender.name)}"
        )
        ops.append(
            _mail(sender, [ctx.user.email], f"Decisions: {other}", body, after + timedelta(minutes=10 * i))
        )
    return ops, values


def _notes_request(ctx: FamilyContext, title: str, day: date, path: str) -> str:
    """The user's request: where the notes go, the attendees and the mailed decisions."""
    when = _day_text(day)
    write = ctx.choice(
        [
            f"Write up notes for the '{title}' meeting on {when} and save them as {path}.",
            f"Create {path} with the notes of '{title}' ({when}).",
            f"Put the notes of the '{title}' meeting on {when} into a new file, {path}.",
        ]
    )
    who = ctx.choice(
        [
            "List who attended, from the calendar invite, one person per line.",
            "Name every attendee on a line of their own (the calendar invite has them).",
        ]
    )
    what = ctx.choice(
        [
            "Add every decision agreed in the follow-up mails, one per line, and only that meeting's.",
            "Record each decision people wrote down by mail afterwards on a line of its own, leaving "
            "out other meetings' decisions.",
        ]
    )
    context = ctx.choice(
        [
            "Nobody took minutes during the meeting.",
            "The decisions only live in a mail thread so far.",
            "",
        ]
    )
    short = f"Notes of '{title}' ({when}) in {path}: attendees and the mailed decisions, one per line"
    return request(ctx, Ask(steps=(write, who, what), context=context, short=short))


@family(
    "compile_meeting_notes",
    capability_id="document_editing",
    services=["files", "calendar", "mail", "directory"],
    worlds=True,
)
def compile_meeting_notes(ctx: FamilyContext) -> Task:
    """Write meeting notes at a given path: the attendees (from the calendar) and the decisions
    (from the follow-up mail thread). The meeting is one of the user's team (or on a topic of
    the world's meetings) and the notes go where the team keeps its notes. More items: more
    attendees and decisions; more distractors: decisions of other meetings that must stay out
    of the notes."""
    services = ["files", "calendar", "mail", "directory"]
    meeting = _notes_meeting(ctx)
    day, people, organizer = meeting["day"], meeting["people"], meeting["organizer"]
    title = ctx.choice(_note_titles(ctx))
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
    folder = notes_folder(ctx.the_world, ctx.user.team).rstrip("/")
    path = f"{folder}/{day.isoformat()}-{slug(title)}.md"
    attendees = [p for p in people if p is not ctx.user]
    user_text = _notes_request(ctx, title, day, path)
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
        turns=[{"user": user_text, "checks": checks, "solution": solution}],
    )
