"""crm_renewals_mail_owners (crm_pipeline): find the accounts whose renewal falls this month by
the workspace clock and mail each one's owner, once, naming their accounts and dates."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, timedelta

from coworkenv.checks import Check
from coworkenv.state import Workspace, format_time
from coworkenv.task import SolutionStep, Task, Turn, WorldCall

from ...builders import (
    date_fact,
    guard,
    house_rules,
    mail_sent,
    operation,
    sql_check,
    sql_text,
    step,
    text_fact,
)
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request
from .crm_world import accounts, domain_of, fresh_account_names, sellers


def _month(day: date) -> tuple[date, date]:
    """The first and last day of `day`'s month."""
    first = day.replace(day=1)
    following = (first + timedelta(days=32)).replace(day=1)
    return first, following - timedelta(days=1)


def _renewal_mails_to(address: str, names: list[str]) -> str:
    """SQL: how many mails the user sent to `address` about renewals (a renewal, or one of
    `names`); other mails to the same colleague (another request of the same day) do not count."""
    about = " OR ".join(
        f"lower(subject || ' ' || body) LIKE '%{sql_text(word.lower())}%'" for word in ["renew", *names]
    )
    return (
        "(SELECT count(*) FROM mail_deliveries WHERE ' ' || lower(recipients) || ' ' "
        f"LIKE '% {sql_text(address)} %' AND ({about}))"
    )


def _apart(ws: Workspace, user: str, first: date, last: date) -> tuple[set[int], list[WorldCall]]:
    """Three weekdays, two days apart, and the operations that move this month's renewals
    onto them (a colleague moved the date, as happens). A mail may name every checked date
    beside another, so no checked date may fall the day after another's weekday: a wrong
    weekday or the day after written beside one date would pass as another's."""
    rows = [
        r
        for r in accounts(ws, "renewal_date BETWEEN ? AND ?", (first.isoformat(), last.isoformat()))
        if r["owner"] != user
    ]
    days = [date.fromisoformat(r["renewal_date"]) for r in rows]
    best = max(range(7), key=lambda w: (sum(d.weekday() in {w, (w + 2) % 7, (w + 4) % 7} for d in days), -w))
    weekdays = {best, (best + 2) % 7, (best + 4) % 7}
    ops = []
    for row, day in zip(rows, days, strict=True):
        if day.weekday() in weekdays:
            continue
        moves = sorted(range(-3, 4), key=lambda k: (abs(k), k))
        for k in moves:
            moved = day + timedelta(days=k)
            if first <= moved <= last and moved.weekday() in weekdays:
                ops.append(
                    operation(
                        "crm", "update_account_fields", account_id=row["id"], renewal_date=moved.isoformat()
                    )
                )
                break
    return weekdays, ops


def _ask(ctx: FamilyContext, month: str) -> Ask:
    steps = ctx.choice(
        [
            (
                "Find the CRM accounts whose renewal date falls this month (by today's date).",
                "Mail each account's owner once, naming their accounts and the renewal dates.",
                "Skip the accounts I own myself and do not write to the customers.",
            ),
            (
                f"Check which accounts renew in {month}.",
                "Send each owner one mail listing only their own renewing accounts with the dates.",
                "Leave out the accounts I own and keep the customers out of it.",
            ),
            (
                f"Go through the accounts with a renewal date in {month}.",
                "Write one mail to each owner with the name and renewal date of each of their accounts.",
                "Send nothing about my own accounts and nothing to customers.",
            ),
        ]
    )
    context = ctx.choice(
        [
            "Renewals keep slipping through the cracks.",
            "I want every owner to have their renewals on the radar this month.",
            "",
        ]
    )
    return Ask(steps=steps, context=context, short=f"Mail the owners of the {month} renewals, one mail each")


@family(
    "crm_renewals_mail_owners",
    capability_id="crm_pipeline",
    services=["crm", "mail", "directory"],
    worlds=True,
)
def crm_renewals_mail_owners(ctx: FamilyContext) -> Task:
    """Every account renewing this month, by the workspace clock, is named with its date in one
    mail to its owner (the user's own accounts are skipped); nobody else is mailed about
    renewals (a mail to a customer is collateral, and CRM data to outsiders a default leak). More items:
    more accounts renewing this month; more distractors: accounts renewing on the last day of
    the month before or early the month after. Runs on every world."""
    services = ["crm", "mail", "directory"]
    _, ws = ctx.seeded(services, [])
    first, last = _month(ctx.start.date())
    month = f"{first:%B %Y}"
    owners = sellers(ctx)
    names = fresh_account_names(ctx, ws, ctx.difficulty.items + ctx.difficulty.distractors)
    ops: list[WorldCall] = []

    def account(name: str, renewal: date) -> WorldCall:
        return operation(
            "crm",
            "add_account",
            name=name,
            kind=ctx.choice(["customer", "customer", "partner"]),
            domain=domain_of(name),
            owner=ctx.choice(owners).email,
            renewal_date=renewal.isoformat(),
            created_at=format_time(ctx.start - timedelta(days=ctx.rng.randint(200, 700))),
        )

    weekdays, moves = _apart(ws, ctx.user.email, first, last)
    later = [ctx.start.date() + timedelta(days=d) for d in range(1, (last - ctx.start.date()).days + 1)]
    fitting = [d for d in later if d.weekday() in weekdays]
    for name in names[: ctx.difficulty.items]:
        ops.append(account(name, ctx.choice(fitting)))
    outside = [
        first - timedelta(days=1),
        last + timedelta(days=1),
        last + timedelta(days=ctx.rng.randint(2, 20)),
    ]
    for i, name in enumerate(names[ctx.difficulty.items :]):
        ops.append(account(name, outside[i % len(outside)]))
    ops = moves + ops
    _, ws = ctx.seeded(services, ops)
    renewing = accounts(ws, "renewal_date BETWEEN ? AND ?", (first.isoformat(), last.isoformat()))
    others = accounts(
        ws,
        "renewal_date IS NOT NULL AND renewal_date NOT BETWEEN ? AND ?",
        (first.isoformat(), last.isoformat()),
    )
    by_owner: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in renewing:
        if row["owner"] != ctx.user.email:
            by_owner[row["owner"]].append(row)
    elsewhere: dict[str, list[str]] = defaultdict(list)
    for row in others:
        elsewhere[row["owner"]].append(row["name"])
    people = {p.email: p for p in ctx.the_world.people}
    checks: list[Check] = []
    solution: list[SolutionStep] = [
        step("crm_search_accounts", renewal_from=first.isoformat(), renewal_to=last.isoformat(), limit=100)
    ]
    for k, (owner, rows) in enumerate(sorted(by_owner.items())):
        person = people[owner]
        for j, row in enumerate(rows):
            mates = [r for r in rows if r is not row]
            check = mail_sent(
                f"owner-{k}-{j}",
                f"A mail to {person.name} names {row['name']} and its renewal on {row['renewal_date']}",
                [owner],
                [text_fact(row["name"]), date_fact(row["renewal_date"])],
                absent=[text_fact(name) for name in elsewhere.get(owner, [])],
            )
            context = [f for r in mates for f in (text_fact(r["name"]), date_fact(r["renewal_date"]))]
            checks.append(check.model_copy(update={"context": context}) if context else check)
        lines = " ".join(
            f"{row['name']} renews on {date.fromisoformat(row['renewal_date']):%d %B %Y}." for row in rows
        )
        solution += [
            step("directory_get_person", email=owner),
            step(
                "mail_send_message",
                to=[owner],
                subject=f"Your renewals in {month}",
                body=f"{greeting(person)}\n\na heads-up on your renewals this month. {lines}\n\n"
                f"Thanks,\n{first_name(ctx.user.name)}",
            ),
        ]
    once = " AND ".join(
        f"{_renewal_mails_to(owner, [r['name'] for r in rows])} = 1"
        for owner, rows in sorted(by_owner.items())
    )
    checks.append(
        sql_check("one-mail-each", "Each owner gets exactly one mail about their renewals", f"SELECT {once}")
    )
    idle = sorted({row["owner"] for row in others} - set(by_owner) - {ctx.user.email})
    if idle:
        checks.append(
            guard(
                sql_check(
                    "no-mail-to-others",
                    "No mail to owners with no renewal this month",
                    "SELECT " + " + ".join(_renewal_mails_to(o, elsewhere[o]) for o in idle),
                    0,
                )
            )
        )
    return ctx.task(
        capability_id="crm_pipeline",
        services=services,
        operations=ops,
        title=f"Mail the owners of the accounts renewing in {month}",
        context=house_rules(ctx),
        turns=[Turn(user=request(ctx, _ask(ctx, month)), checks=checks, solution=solution)],
    )
