"""crm_merge_duplicate_contact (crm_pipeline): one person is in the CRM twice, the later record
misspelt; merge it into the older one so every call and deal link stays with the person."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.checks import Check
from coworkenv.state import format_time
from coworkenv.task import Task, Turn, WorldCall

from ...builders import count_is, field_equals, guard, house_rules, operation, sql_check, step
from ...family import FamilyContext, SeedDoesNotFit, family
from ...phrasing import Ask, request
from .crm_world import accounts

FIRST_NAMES = (
    "Katherine",
    "Jonathan",
    "Michaela",
    "Frederick",
    "Annabelle",
    "Christopher",
    "Gabriella",
    "Nathaniel",
)
LAST_NAMES = (
    "Whitfield",
    "Okonkwo",
    "Lindqvist",
    "Carrington",
    "Delacroix",
    "Hargreaves",
    "Montague",
    "Pemberton",
)
OTHER_FIRST = ("Daniel", "Ruth", "Oscar", "Leah")


def _misspelt(name: str) -> str:
    """The name with its second-to-last vowel dropped ('Katherine' -> 'Kathrine')."""
    vowels = [i for i, ch in enumerate(name) if ch in "aeiou" and 0 < i < len(name) - 1]
    i = vowels[-1] if len(vowels) == 1 else vowels[-2]
    return name[:i] + name[i + 1 :]


def _ask(ctx: FamilyContext, person: str, misspelt: str, account: str) -> Ask:
    steps = ctx.choice(
        [
            (
                f"Merge the two CRM records of {person} at {account}: the newer one is spelt {misspelt}.",
                "Keep the older record, so none of their history is lost.",
            ),
            (
                f"Merge the duplicate contact {misspelt} at {account} into the original record of {person}.",
                "Keep the older record and every call logged on either.",
            ),
            (
                f"Clean up the duplicate of {person} ({account}): someone added them again as {misspelt}.",
                "Merge that newer duplicate into the older contact without losing any activity.",
            ),
        ]
    )
    context = ctx.choice(["Their calls are split over two records.", "The duplicate confuses the team.", ""])
    return Ask(
        steps=steps, context=context, short=f"Merge {misspelt} into {person} at {account}, history kept"
    )


@family("crm_merge_duplicate_contact", capability_id="crm_pipeline", services=["crm"], worlds=True)
def crm_merge_duplicate_contact(ctx: FamilyContext) -> Task:
    """A person at an account is in the CRM twice: the older record (no phone) and a newer one
    with the first name misspelt (with the phone). Both have calls on the account's deals.
    Merge the newer into the older: its calls move over with their deal links, the phone is
    kept. More items: more calls on the duplicate; with two or more distractors, a colleague
    of the person with the same surname at the account stays as they are. Runs on every world."""
    services = ["crm"]
    _, ws = ctx.seeded(services, [])
    with_deals = [
        a
        for a in accounts(ws, "kind IN ('customer', 'partner')")
        if ws.conn.execute("SELECT count(*) FROM crm_deals WHERE account_id = ?", (a["id"],)).fetchone()[0]
    ]
    if not with_deals:
        raise SeedDoesNotFit("no customer or partner account with deals")
    account = ctx.choice(with_deals)
    deals = [
        r[0]
        for r in ws.conn.execute(
            "SELECT id FROM crm_deals WHERE account_id = ? ORDER BY id", (account["id"],)
        )
    ]
    taken = {r[0].lower() for r in ws.conn.execute("SELECT name FROM crm_contacts")} | {
        p.name.lower() for p in ctx.the_world.people
    }
    names = [(f, s) for f in FIRST_NAMES for s in LAST_NAMES if f"{f} {s}".lower() not in taken]
    first, last = ctx.choice(names)
    person, misspelt = f"{first} {last}", f"{_misspelt(first)} {last}"
    domain = account["domain"] or "example.com"
    address = f"{first.lower()}.{last.lower()}@{domain}"
    phone = f"+1 555 01{ctx.rng.randint(10, 99)}"
    title = ctx.choice(["Procurement Manager", "Operations Lead", "Head of Purchasing", "Finance Director"])
    ops: list[WorldCall] = [
        operation(
            "crm",
            "add_contact",
            account_id=account["id"],
            name=person,
            email=address,
            title=title,
            created_at=format_time(ctx.start - timedelta(days=ctx.rng.randint(200, 500))),
        ),
        operation(
            "crm",
            "add_contact",
            account_id=account["id"],
            name=misspelt,
            email=ctx.choice([address, f"{first[0].lower()}.{last.lower()}@{domain}"]),
            phone=phone,
            created_at=format_time(ctx.start - timedelta(days=ctx.rng.randint(5, 30))),
        ),
    ]
    if ctx.difficulty.distractors >= 2:
        other = ctx.choice(OTHER_FIRST)
        ops.append(
            operation(
                "crm",
                "add_contact",
                account_id=account["id"],
                name=f"{other} {last}",
                email=f"{other.lower()}.{last.lower()}@{domain}",
                title="Operations Lead",
                created_at=format_time(ctx.start - timedelta(days=60)),
            )
        )
    results = ctx.plant(services, ops)
    keep, duplicate = results[0]["contact_id"], results[1]["contact_id"]
    colleague = results[2]["contact_id"] if len(results) > 2 else None
    calls = []
    for who, n in ((keep, 1), (duplicate, ctx.difficulty.items), *(((colleague, 1),) if colleague else ())):
        for _ in range(n):
            deal = ctx.choice(deals)
            calls.append(
                (
                    who,
                    deal,
                    operation(
                        "crm",
                        "add_activity",
                        kind=ctx.choice(["call", "meeting"]),
                        subject=f"Call with {person if who != colleague else 'their operations lead'}",
                        body="Went through the open points on the deal.",
                        account_id=account["id"],
                        deal_id=deal,
                        contact_id=who,
                        author=account["owner"],
                        occurred_at=format_time(
                            ctx.start - timedelta(days=ctx.rng.randint(1, 60), hours=ctx.rng.randint(0, 8))
                        ),
                    ),
                )
            )
    ops += [op for _, _, op in calls]
    results = ctx.plant(services, ops)
    activity_ids = [r["activity_id"] for r in results if "activity_id" in r]
    history = [
        (aid, deal) for aid, (who, deal, _) in zip(activity_ids, calls, strict=True) if who != colleague
    ]
    kept_links = " OR ".join(f"(id = {aid} AND deal_id = {deal})" for aid, deal in history)
    checks: list[Check] = [
        field_equals(
            "duplicate-merged",
            f"Contact {duplicate} ({misspelt}) is merged",
            "crm_contacts",
            {"id": duplicate},
            "status",
            "merged",
        ),
        field_equals(
            "merged-into-original",
            f"Contact {duplicate} is merged into contact {keep} ({person})",
            "crm_contacts",
            {"id": duplicate},
            "merged_into",
            keep,
        ),
        sql_check(
            "history-kept",
            f"Every call of both records is on contact {keep}, on the same deal as before",
            f"SELECT count(*) FROM crm_activities WHERE contact_id = {keep} AND ({kept_links})",
            len(history),
        ),
        count_is(
            "nothing-left-on-duplicate",
            f"No activity is left on contact {duplicate}",
            "crm_activities",
            {"contact_id": duplicate},
            0,
        ),
        field_equals(
            "phone-kept",
            f"Contact {keep} has the duplicate's phone {phone}",
            "crm_contacts",
            {"id": keep},
            "phone",
            phone,
        ),
        guard(
            field_equals(
                "original-active",
                f"Contact {keep} stays active",
                "crm_contacts",
                {"id": keep},
                "status",
                "active",
            )
        ),
    ]
    if colleague is not None:
        checks.append(
            guard(
                field_equals(
                    "colleague-untouched",
                    f"Contact {colleague} ({last}'s colleague, another person) stays active",
                    "crm_contacts",
                    {"id": colleague},
                    "status",
                    "active",
                )
            )
        )
    solution = [
        step("crm_search_accounts", query=account["name"]),
        step("crm_search_contacts", account_id=account["id"], query=last),
        step("crm_merge_contacts", keep_contact_id=keep, duplicate_contact_id=duplicate),
    ]
    return ctx.task(
        capability_id="crm_pipeline",
        services=services,
        operations=ops,
        title=f"Merge the duplicate contact of {person} at {account['name']}",
        context=house_rules(ctx),
        turns=[
            Turn(
                user=request(ctx, _ask(ctx, person, misspelt, account["name"])),
                checks=checks,
                solution=solution,
            )
        ],
    )
