"""Text of a world's files: policies, figures, notes and plans with concrete numbers.

Each writer takes a `Writer` (the world, a seeded Faker and the service's `rng`) and the
`Document` to write, and returns the file's text; `WRITERS` maps a document kind to its
writer. Numbers come from `rng`, so tasks can ask about them and verifiers can recompute
them; the annual report adds up the quarterly figures. The words come from the world's
vocabulary; the kinds only the demo company's tree uses (the travel policy, the deploy
runbook...) hold their own.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING

from faker import Faker

if TYPE_CHECKING:
    from coworkenv.world import Document, Person, World

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
PARAGRAPHS = [
    "We treat every colleague, customer and supplier with respect, in person and in writing.",
    "Disagreement is welcome; personal attacks, harassment and discrimination are not.",
    "Gifts from suppliers worth more than EUR 50 are declined politely and reported to Finance.",
    "Customer data stays in our systems: never forward it to private accounts or tools.",
    "If something feels wrong, say so early; nobody is blamed for raising a concern in good faith.",
]
COMPONENTS = {
    "portal": "Customers order parts, track shipments and open tickets in the portal.",
    "order service": "Takes orders from the portal and from sales, and hands them to the warehouse.",
    "billing": "Creates invoices every night from shipped orders and sends reminders for overdue ones.",
    "device gateway": "Collects status reports from installed line controllers, including error codes.",
}
MACRO_BODIES = {
    "refund request": (
        "Thank you for your message. We have received your return and started the refund of "
        "{amount}; it reaches your account within five working days."
    ),
    "password reset": (
        "We have sent a password reset link to your address. It is valid for 24 hours; if it "
        "expires, reply to this mail and we send a new one."
    ),
}


@dataclass
class Writer:
    """What every text writer draws on; `quarters` holds the figures once written."""

    world: World
    fake: Faker
    rng: random.Random
    quarters: dict[str, list[tuple[str, int, int, int, int]]] = field(default_factory=dict)

    def member(self, team: str, title: str | None = None) -> Person:
        """The member of `team` with `title` (the lead when none is given)."""
        members = self.world.team_members(team)
        return next((p for p in members if p.title == title), members[0])

    def pick(self, team: str) -> Person:
        return self.rng.choice(self.world.team_members(team))

    def some(self, options: list[str], n: int) -> list[str]:
        """`n` different options, in the order they are listed."""
        chosen = set(self.rng.sample(range(len(options)), n))
        return [o for i, o in enumerate(options) if i in chosen]


def travel_policy(w: Writer) -> str:
    owner = w.member("Finance")
    hotel, per_diem = w.rng.randrange(140, 230, 10), w.rng.randrange(40, 75, 5)
    hours, approval = w.rng.randint(4, 8), w.rng.randrange(1000, 3500, 500)
    return (
        f"# Travel policy\n\nOwner: {owner.name} ({owner.email})\n\n## Booking\n"
        f"- Book flights and hotels through the travel desk at least 14 days ahead.\n"
        f"- Economy class for flights under {hours} hours; premium economy above that.\n\n## Limits\n"
        f"- Hotel: at most EUR {hotel} per night.\n- Per diem for meals: EUR {per_diem} per day.\n"
        f"- Trips costing more than EUR {approval} in total need your manager's approval before booking.\n\n"
        "## Expenses\nSubmit receipts within 30 days of your return; see the expense policy.\n"
    )


def expense_policy(w: Writer) -> str:
    meal, receipt, days = w.rng.randrange(30, 65, 5), w.rng.choice([10, 20, 25]), w.rng.choice([10, 14, 21])
    return (
        f"# Expense policy\n\n- Client meals: up to EUR {meal} per person.\n"
        f"- Receipts are required for every expense above EUR {receipt}.\n"
        f"- Approved expenses are reimbursed within {days} days with the next payroll run.\n"
        f"- Questions go to {w.member('Finance', 'Accountant').email}.\n"
    )


def remote_work_policy(w: Writer) -> str:
    office_days, budget = w.rng.randint(1, 3), w.rng.randrange(300, 900, 100)
    return (
        f"# Remote work policy\n\n- Teams meet in the office {office_days} day(s) a week; "
        "each team picks its days.\n"
        f"- Home office equipment budget: EUR {budget} per person every two years.\n"
        "- Core hours are 10:00 to 15:00 in your own time zone.\n"
    )


def security_policy(w: Writer) -> str:
    length, days = w.rng.choice([12, 14, 16]), w.rng.choice([60, 90, 180])
    sre = w.member("Engineering", "SRE")
    return (
        f"# Security policy\n\n- Passwords have at least {length} characters; use the password manager.\n"
        "- Multi-factor authentication is required for mail, the portal and the file share.\n"
        f"- Access reviews happen every {days} days.\n"
        f"- Report a lost laptop or a suspicious mail at once to {sre.name} ({sre.email}).\n"
    )


def code_of_conduct(w: Writer) -> str:
    paragraphs = "\n\n".join(w.some(PARAGRAPHS, 4))
    return (
        f"# Code of conduct\n\n{paragraphs}\n\nConcerns can be raised with {w.member('Leadership').name}.\n"
    )


def quarter_figures(w: Writer, quarter: int) -> str:
    rows = []
    for month in MONTHS[3 * (quarter - 1) : 3 * quarter]:
        revenue = w.rng.randrange(180_000, 320_000, 500)
        costs = w.rng.randrange(140_000, 260_000, 500)
        rows.append((month, revenue, costs, w.rng.randint(3, 18), w.rng.randint(0, 6)))
    w.quarters[f"Q{quarter}"] = rows
    lines = ["month,revenue_eur,costs_eur,new_customers,churned_customers"]
    lines += [f"2025-{MONTHS.index(m) + 1:02d},{r},{c},{n},{ch}" for m, r, c, n, ch in rows]
    return "\n".join(lines) + "\n"


def annual_report(w: Writer) -> str:
    lines = [
        "# 2025 annual report",
        "",
        "| quarter | revenue (EUR) | costs (EUR) | profit (EUR) | new customers |",
    ]
    lines.append("| --- | --- | --- | --- | --- |")
    totals = [0, 0, 0]
    for quarter, rows in w.quarters.items():
        revenue, costs, new = sum(r[1] for r in rows), sum(r[2] for r in rows), sum(r[3] for r in rows)
        totals = [totals[0] + revenue, totals[1] + costs, totals[2] + new]
        lines.append(f"| {quarter} | {revenue} | {costs} | {revenue - costs} | {new} |")
    revenue, costs, new = totals
    lines.append(f"| 2025 | {revenue} | {costs} | {revenue - costs} | {new} |")
    best = max(w.quarters, key=lambda q: sum(r[1] for r in w.quarters[q]))
    lines += ["", f"Revenue peaked in {best}. All figures come from /shared/reports/2025-q*-figures.csv.", ""]
    return "\n".join(lines)


def support_metrics(w: Writer) -> str:
    lines = ["week_starting,tickets_opened,tickets_closed,median_first_response_hours,csat_percent"]
    for day in (2, 9, 16, 23):
        opened = w.rng.randint(40, 90)
        lines.append(
            f"2026-02-{day:02d},{opened},{opened + w.rng.randint(-12, 10)},"
            f"{w.rng.randint(2, 14) / 2:.1f},{w.rng.randint(78, 97)}"
        )
    return "\n".join(lines) + "\n"


def price_list(w: Writer) -> str:
    lines = [f"sku,product,unit,price_{w.world.currency.lower()}"]
    for product in w.world.products:
        price = round(product.price * w.rng.uniform(0.9, 1.15) / 5) * 5
        lines.append(f"{product.sku},{product.name},{product.unit},{price}.00")
    return "\n".join(lines) + "\n"


def onboarding_checklist(w: Writer) -> str:
    office = w.member("Finance", "Office Manager")
    sre = w.member("Engineering", "SRE")
    return (
        "# Onboarding checklist\n\n## Before day one\n"
        f"- [ ] Laptop ordered ({office.name})\n- [ ] Accounts for mail, portal and files ({sre.name})\n"
        "- [ ] A buddy from the new colleague's team is named\n\n## First week\n"
        "- [ ] Read the travel, expense and security policies in /shared/policies\n"
        "- [ ] Meet your manager and your buddy\n- [ ] Shadow a support shift for half a day\n\n"
        "## First month\n- [ ] Agree on goals with your manager\n- [ ] Give feedback on this checklist\n"
    )


def meeting_template(w: Writer) -> str:
    return (
        "# <Meeting> - YYYY-MM-DD\n\nAttendees:\n\n## Agenda\n1.\n\n## Notes\n\n"
        "## Decisions\n\n## Action items\n- [ ] owner: task (due date)\n"
    )


def meeting_notes(w: Writer, team: str, title: str, day: date) -> str:
    people = w.world.team_members(team)
    attendees = sorted(w.rng.sample(people, k=min(len(people), w.rng.randint(3, 4))), key=lambda p: p.name)
    notes = "\n".join(
        f"- {p.name} {u}."
        for p, u in zip(attendees, w.some(w.world.vocabulary.updates, len(attendees)), strict=True)
    )
    actions = "\n".join(
        f"- [ ] {p.name}: {a} (due {day + timedelta(days=w.rng.randint(3, 10))})"
        for p, a in zip(attendees[:2], w.some(w.world.vocabulary.actions, 2), strict=True)
    )
    return (
        f"# {title} - {day.isoformat()}\n\nAttendees: {', '.join(p.name for p in attendees)}\n\n"
        f"## Notes\n{notes}\n\n## Decisions\n- {w.rng.choice(w.world.vocabulary.decisions)}\n\n## Action items\n{actions}\n"
    )


def okrs(w: Writer) -> str:
    revenue, nps, response = w.rng.randrange(800, 1200, 50), w.rng.randint(35, 55), w.rng.randint(2, 6)
    return (
        "# OKRs 2026 Q1\n\n## Objective 1: grow revenue\n"
        f"- KR1: EUR {revenue}k revenue in Q1\n- KR2: sign two new enterprise accounts\n\n"
        f"## Objective 2: delight customers\n- KR1: NPS of {nps} or more\n"
        f"- KR2: median first response under {response} hours\n\n"
        "## Objective 3: ship the customer portal v2\n- KR1: beta with three customers by 31 March\n"
    )


def architecture(w: Writer) -> str:
    body = "\n\n".join(f"## {name.title()}\n{what}" for name, what in COMPONENTS.items())
    return f"# Architecture overview\n\n{body}\n"


def runbook_deploy(w: Writer) -> str:
    window = w.rng.choice(["Tuesday", "Wednesday", "Thursday"])
    return (
        f"# Deploy runbook\n\nDeploys happen on {window} between 10:00 and 12:00 UTC.\n\n"
        "1. Announce the deploy in the engineering channel.\n2. Run the smoke tests on staging.\n"
        "3. Roll out to 10% of traffic and watch the error rate for 15 minutes.\n"
        "4. Roll out to everyone, or roll back with the previous release tag.\n"
    )


def runbook_incident(w: Writer) -> str:
    sre = w.member("Engineering", "SRE")
    minutes = w.rng.choice([15, 30])
    return (
        f"# Incident response\n\n- The on-call engineer acknowledges a page within {minutes} minutes.\n"
        f"- Severity 1 (customer line down): page {sre.name} and the Engineering Manager at once.\n"
        "- Post updates to support every 30 minutes until resolved.\n"
        "- Write a post-mortem within five working days.\n"
    )


def pipeline(w: Writer) -> str:
    stages = ["qualified", "proposal", "negotiation", "won", "lost"]
    lines = ["account,contact_email,stage,value_eur,owner_email,expected_close"]
    for contact in w.world.contacts:
        owner = w.pick(w.world.team("sales"))
        close = date(2026, w.rng.randint(2, 4), w.rng.randint(1, 28)).isoformat()
        value = w.rng.randrange(8_000, 120_000, 1_000)
        lines.append(
            f"{contact.company},{contact.email},{w.rng.choice(stages)},{value},{owner.email},{close}"
        )
    return "\n".join(lines) + "\n"


def account(w: Writer, company: str) -> str:
    contacts = [p for p in w.world.contacts if p.company == company]
    owner = w.pick(w.world.team("sales"))
    listed = "\n".join(f"- {p.name}, {p.title} ({p.email})" for p in contacts)
    return (
        f"# {company}\n\nAccount owner: {owner.name} ({owner.email})\n"
        f"Customer since: {w.rng.randint(2018, 2024)}\n\n## Contacts\n{listed}\n\n"
        f"## Notes\n- Main site: {w.fake.city()}\n- Installed controllers: {w.rng.randint(4, 40)}\n"
    )


def contract(w: Writer, company: str) -> str:
    seats, price = w.rng.randint(10, 60), w.rng.randrange(20_000, 90_000, 1_000)
    return (
        f"# Master agreement 2026: {company}\n\n- Term: 1 January 2026 to 31 December 2026\n"
        f"- Portal seats: {seats}\n- Annual fee: EUR {price}\n- Support: premium plan, 4-hour response\n"
        "- Payment terms: 30 days net\n- Renewal: automatic unless cancelled 60 days before the end\n"
    )


def support_faq(w: Writer) -> str:
    questions = [
        (
            "How do I reset my portal password?",
            "Use 'Forgot password' on the login page; the link lasts 24 hours.",
        ),
        (
            "Where is my order?",
            "The portal shows tracking once the order ships; ask us if it has no tracking.",
        ),
        ("How do I return a part?", "Open a ticket with the order number; we send a return label."),
    ]
    return "# Support FAQ\n\n" + "\n\n".join(f"## {q}\n{a}" for q, a in questions) + "\n"


def sla_policy(w: Writer) -> str:
    std, prm = w.rng.choice([8, 12, 24]), w.rng.choice([2, 4])
    return (
        "# Support SLA\n\n| plan | first response | hours |\n| --- | --- | --- |\n"
        f"| standard | {std} hours | weekdays 08:00-18:00 |\n| premium | {prm} hours | every day, all day |\n\n"
        "Line-down reports from any customer are treated as premium.\n"
    )


def escalation(w: Writer) -> str:
    lead = w.member("Support")
    return (
        f"# Escalation process\n\n1. The specialist on shift triages the ticket.\n"
        f"2. Anything unresolved after one working day goes to {lead.name} ({lead.email}).\n"
        "3. Line-down or data-loss reports page the on-call engineer (see the incident runbook).\n"
        "4. Refunds over EUR 500 need approval from Finance.\n"
    )


def macro(w: Writer, topic: str) -> str:
    return (
        f"# Macro: {topic}\n\nHello {{customer_name}},\n\n{MACRO_BODIES[topic]}\n\n"
        "Best regards,\n{agent_name}\nNorthwind Support\n"
    )


def budget(w: Writer) -> str:
    lines = ["team,q1_eur,q2_eur,q3_eur,q4_eur"]
    for team in w.world.team_names:
        values = [w.rng.randrange(40_000, 250_000, 5_000) for _ in range(4)]
        lines.append(f"{team},{','.join(str(v) for v in values)}")
    return "\n".join(lines) + "\n"


def vendors(w: Writer) -> str:
    lines = ["vendor,category,contact_email,contract_end,annual_cost_eur"]
    for category in ["cloud hosting", "office cleaning", "payroll software", "shipping", "legal"]:
        name = w.fake.last_name()
        lines.append(
            f"{name} {category.split()[-1].title()} Ltd,{category},accounts@{name.lower()}.example,"
            f"2026-{w.rng.randint(3, 12):02d}-{w.rng.randint(1, 28):02d},{w.rng.randrange(3_000, 90_000, 500)}"
        )
    return "\n".join(lines) + "\n"


def invoices(w: Writer) -> str:
    lines = [f"invoice,customer,amount_{w.world.currency.lower()},due_date,status"]
    for n in range(8):
        contact = w.rng.choice(w.world.contacts)
        due = date(2026, w.rng.randint(1, 3), w.rng.randint(1, 28)).isoformat()
        status = "overdue" if due < w.world.start.date().isoformat() else "open"
        lines.append(
            f"INV-{w.world.start.year * 10000 + 100 + 7 * n},{contact.company},{w.rng.randrange(900, 40_000, 50)}.00,{due},{status}"
        )
    return "\n".join(lines) + "\n"


def project_plan(w: Writer, name: str, team: str) -> str:
    owner = w.member(team)
    milestones = "\n".join(
        f"- {date(2026, month, w.rng.randint(1, 28)).isoformat()}: {m}"
        for month, m in zip((3, 4, 6, 9), w.world.vocabulary.milestones, strict=False)
    )
    return (
        f"# Project plan: {name}\n\nOwner: {owner.name} ({owner.email})\n"
        f"Budget: {w.world.currency} {w.rng.randrange(20_000, 150_000, 5_000)}\n\n## Goal\n{w.rng.choice(w.world.vocabulary.goals)}\n\n"
        f"## Milestones\n{milestones}\n"
    )


def project_status(w: Writer, name: str) -> str:
    state = w.rng.choice(["on track", "at risk", "behind"])
    return (
        f"# Status: {name}\n\nOverall: {state}\nDone: {w.rng.randint(20, 70)}% of scope\n\n"
        "## This week\n" + "\n".join(f"- The team {u}." for u in w.some(w.world.vocabulary.updates, 3)) + "\n"
    )


# Kinds any world may use: they draw only on the world (its rules, queues, people, vocabulary).


def policy(w: Writer, doc: Document) -> str:
    """A policy of house rules, owned by the document's team lead."""
    owner = w.member(doc.team)
    rules = w.some(w.world.house_rules, min(len(w.world.house_rules), w.rng.randint(3, 5)))
    review = w.rng.choice([6, 12, 24])
    lines = "\n".join(f"- {r}" for r in rules)
    return (
        f"# {doc.subject}\n\nOwner: {owner.name} ({owner.email})\n\n## Rules\n{lines}\n\n"
        f"Reviewed every {review} months by {doc.team}.\n"
    )


def procedure(w: Writer, doc: Document) -> str:
    """How a request of one queue is handled, step by step, with a response target."""
    queue = w.world.queues[w.rng.randrange(len(w.world.queues))]
    owner = next((p for p in w.world.staff if p.email == queue.owner), w.member(doc.team))
    hours = w.rng.choice([2, 4, 8, 24])
    first, second = w.some(w.world.vocabulary.actions, 2)
    return (
        f"# {doc.subject}\n\nApplies to the {queue.name} queue: {queue.description}\n\n"
        f"1. Log every request as a ticket in {queue.name} within {hours} working hours.\n"
        f"2. Tag it ({', '.join(queue.tags[:3])}) and set a priority.\n"
        f"3. {first[0].upper()}{first[1:]}.\n4. {second[0].upper()}{second[1:]}.\n"
        f"5. Anything unresolved after two working days goes to {owner.name} ({owner.email}).\n"
    )


def figures(w: Writer, doc: Document) -> str:
    """Monthly figures of the world's metrics for the last six months (CSV)."""
    metrics = w.world.vocabulary.metrics or ["requests", "completed", "backlog"]
    month = date(w.world.start.year, w.world.start.month, 1)
    lines = ["month," + ",".join(metrics)]
    for back in range(6, 0, -1):
        y, m = divmod(month.year * 12 + month.month - 1 - back, 12)
        values = [w.rng.randrange(10, 5000) for _ in metrics]
        lines.append(f"{y}-{m + 1:02d}," + ",".join(str(v) for v in values))
    return "\n".join(lines) + "\n"


def register(w: Writer, doc: Document) -> str:
    """The outside organizations and their contacts, with the colleague who owns each (CSV)."""
    lines = ["organization,kind,contact,email,owner_email"]
    kinds = {o.name: o.kind for o in w.world.organizations}
    for contact in w.world.contacts:
        owner = w.pick(doc.team)
        lines.append(
            f"{contact.company},{kinds.get(contact.company, 'partner')},{contact.name},{contact.email},{owner.email}"
        )
    return "\n".join(lines) + "\n"


def checklist(w: Writer, doc: Document) -> str:
    """A checklist of actions, each with a named owner."""
    actions = w.some(w.world.vocabulary.actions, min(len(w.world.vocabulary.actions), 4))
    items = "\n".join(f"- [ ] {a} ({w.pick(doc.team).name})" for a in actions)
    return f"# {doc.subject}\n\n{items}\n"


def roster(w: Writer, doc: Document) -> str:
    """Who is on duty each day of the coming week (CSV)."""
    monday = w.world.start.date() - timedelta(days=w.world.start.weekday())
    lines = ["day,on_duty_email,backup_email"]
    people = w.world.team_members(doc.team)
    for i in range(5):
        first, second = w.rng.sample(people, 2) if len(people) > 1 else [people[0], people[0]]
        lines.append(f"{(monday + timedelta(days=i)).isoformat()},{first.email},{second.email}")
    return "\n".join(lines) + "\n"


def _subject(write: Callable[[Writer, str], str]) -> Callable[[Writer, Document], str]:
    return lambda w, doc: write(w, doc.subject)


def _plain(write: Callable[[Writer], str]) -> Callable[[Writer, Document], str]:
    return lambda w, doc: write(w)


def _notes(w: Writer, doc: Document) -> str:
    if doc.day is None:
        raise ValueError(f"{doc.path}: meeting notes need a day")
    return meeting_notes(w, doc.team, doc.subject, doc.day)


WRITERS: dict[str, Callable[[Writer, Document], str]] = {
    # Shared kinds.
    "policy": policy,
    "procedure": procedure,
    "figures": figures,
    "register": register,
    "checklist": checklist,
    "roster": roster,
    "meeting_notes": _notes,
    "price_list": _plain(price_list),
    "pipeline": _plain(pipeline),
    "account": _subject(account),
    "budget": _plain(budget),
    "project_plan": lambda w, doc: project_plan(w, doc.subject, doc.team),
    "project_status": _subject(project_status),
    "meeting_template": _plain(meeting_template),
    # Northwind's own documents.
    "travel_policy": _plain(travel_policy),
    "expense_policy": _plain(expense_policy),
    "remote_work_policy": _plain(remote_work_policy),
    "security_policy": _plain(security_policy),
    "code_of_conduct": _plain(code_of_conduct),
    "quarter_figures": lambda w, doc: quarter_figures(w, int(doc.subject)),
    "annual_report": _plain(annual_report),
    "support_metrics": _plain(support_metrics),
    "onboarding_checklist": _plain(onboarding_checklist),
    "okrs": _plain(okrs),
    "architecture": _plain(architecture),
    "runbook_deploy": _plain(runbook_deploy),
    "runbook_incident": _plain(runbook_incident),
    "contract": _subject(contract),
    "support_faq": _plain(support_faq),
    "sla_policy": _plain(sla_policy),
    "escalation": _plain(escalation),
    "macro": _subject(macro),
    "vendors": _plain(vendors),
    "invoices": _plain(invoices),
}
"""Document kind -> writer."""
