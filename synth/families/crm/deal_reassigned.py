"""crm_deal_reassigned (crm_deal_changes): turn 1 updates a deal's amount and tells its
owner; between the turns a colleague silently reassigns the deal or changes its amount, and
turn 2's right answer depends on the deal as it is now."""

from __future__ import annotations

import re
from datetime import timedelta

from coworkenv.checks import Check
from coworkenv.state import format_time
from coworkenv.task import Task, Turn

from ...builders import (
    date_fact,
    event,
    field_equals,
    guard,
    house_rules,
    mail_sent,
    number_fact,
    operation,
    sql_check,
    sql_text,
    step,
    text_fact,
)
from ...family import FamilyContext, SeedDoesNotFit, family
from ...phrasing import Ask, first_name, greeting, request
from ..calendar_planning import unambiguous
from .crm_world import DEAL_TAGS, accounts, deal_names, possessive, sellers


def _mails_to(address: str) -> str:
    return f"SELECT count(*) FROM mail_deliveries WHERE ' ' || lower(recipients) || ' ' LIKE '% {sql_text(address)} %'"


@family(
    "crm_deal_reassigned",
    capability_id="crm_deal_changes",
    services=["crm", "mail", "directory"],
    multi_turn=True,
    worlds=True,
)
def crm_deal_reassigned(ctx: FamilyContext) -> Task:
    """Turn 1: a customer wants a new quantity; set the deal's amount and mail its owner.
    Silently, a colleague reassigns the deal to someone else (then turn 2 asks to mail the
    deal's owner the customer's target date, which must reach the new owner and not the old)
    or changes its amount (then turn 2 asks to give a colleague the deal's current amount,
    which must be the colleague's figure, not the one set in turn 1). Runs on every world."""
    services = ["crm", "mail", "directory"]
    _, ws = ctx.seeded(services, [])
    owners = sellers(ctx)
    if len(owners) < 2:
        raise SeedDoesNotFit("fewer than two colleagues to own deals")
    account = ctx.choice(accounts(ws, "kind IN ('customer', 'partner')"))
    # No figure in the deal's name: the mails give amounts, and a figure nobody checks could be anything.
    products = [p for p in ctx.the_world.products if not re.search(r"\b\d", p.name)]
    product = ctx.choice(products or ctx.the_world.products)
    used = deal_names(ws, account["id"])
    what = product.name if products else "order"
    tags = [t for t in DEAL_TAGS if f"{account['name']}: {what} {t}".lower() not in used]
    ctx.rng.shuffle(tags)
    tag, others = tags[0], tags[1 : 1 + min(ctx.difficulty.distractors, 2)]
    deal = f"{what} {tag}"
    owner = ctx.choice(owners)
    qty, new_qty = ctx.rng.sample(range(4, 60), 2)
    price = product.price or 50  # a free service still has a price on the deal
    amount, new_amount = price * qty, price * new_qty
    ops = [
        operation(
            "crm",
            "add_deal",
            account_id=account["id"],
            name=f"{account['name']}: {deal}",
            stage=ctx.choice(["qualification", "proposal"]),
            amount=amount,
            currency=ctx.the_world.currency,
            close_date=(ctx.start + timedelta(days=ctx.rng.randint(30, 70))).date().isoformat(),
            owner=owner.email,
            next_step="Confirm the quantity",
            created_at=format_time(ctx.start - timedelta(days=ctx.rng.randint(15, 50))),
        )
    ]
    for other in others:
        ops.append(
            operation(
                "crm",
                "add_deal",
                account_id=account["id"],
                name=f"{account['name']}: {what} {other}",
                stage="proposal",
                amount=price * ctx.rng.randint(4, 60),
                currency=ctx.the_world.currency,
                close_date=(ctx.start + timedelta(days=ctx.rng.randint(30, 70))).date().isoformat(),
                owner=owner.email,
                created_at=format_time(ctx.start - timedelta(days=ctx.rng.randint(15, 50))),
            )
        )
    planted = ctx.plant(services, ops)
    deal_id = planted[0]["deal_id"]
    untouched = [
        guard(
            field_equals(
                f"deal-{r['deal_id']}-amount-stays",
                f"The account's other deal {r['deal_id']} keeps its amount",
                "crm_deals",
                {"id": r["deal_id"]},
                "amount",
                op.params["amount"],
            )
        )
        for r, op in zip(planted[1:], ops[1:], strict=True)
    ]
    currency = ctx.the_world.currency
    first_turn = Turn(
        user=request(
            ctx,
            Ask(
                steps=(
                    f"Set the amount of {possessive(account['name'])} {deal} deal to {new_amount} {currency}.",
                    "Mail the deal's owner the new amount.",
                ),
                context=ctx.choice(
                    [
                        f"Their buyer called me this morning: they now want {new_qty} units.",
                        f"They confirmed {new_qty} units on the phone.",
                    ]
                ),
                short=f"{account['name']} {deal}: amount now {new_amount} {currency}, tell the deal's owner",
            ),
        ),
        checks=[
            field_equals(
                "amount-set",
                f"Deal {deal_id}'s amount is {new_amount}",
                "crm_deals",
                {"id": deal_id},
                "amount",
                new_amount,
            ),
            mail_sent(
                "owner-told",
                f"A mail to {owner.name} gives the new amount {new_amount}",
                [owner.email],
                [number_fact(new_amount)],
            ),
            *untouched,
        ],
        solution=[
            step("crm_search_deals", "d", query=deal),
            step("crm_get_deal", deal_id=deal_id),
            step("crm_update_deal", deal_id=deal_id, amount=new_amount),
            step(
                "mail_send_message",
                to=[owner.email],
                subject=f"{account['name']}: {deal}",
                body=f"{greeting(owner)}\n\n{account['name']} changed the quantity, so I set the deal's amount "
                f"to {new_amount} {currency}.\n\nThanks,\n{first_name(ctx.user.name)}",
            ),
        ],
    )
    variant = ctx.choice(["reassigned", "repriced"])
    if variant == "reassigned":
        successor = ctx.choice([p for p in owners if p.email != owner.email])
        change = event(
            "crm", "update_deal_fields", minutes=120, announced=False, deal_id=deal_id, owner=successor.email
        )
        day = (ctx.start + timedelta(days=ctx.rng.randint(10, 25))).date()
        checks: list[Check] = [
            mail_sent(
                "current-owner-told",
                f"A mail to the deal's owner now, {successor.name}, gives the target date {day.isoformat()}",
                [successor.email],
                [date_fact(day)],
            ),
            guard(
                field_equals(
                    "amount-still-set",
                    f"Deal {deal_id} keeps the amount {new_amount} set in turn 1",
                    "crm_deals",
                    {"id": deal_id},
                    "amount",
                    new_amount,
                )
            ),
            guard(
                sql_check(
                    "old-owner-not-told",
                    f"{owner.name} (no longer the owner) gets no second mail",
                    _mails_to(owner.email),
                    1,
                )
            ),
        ]
        ask = Ask(
            steps=(
                f"Tell the deal's owner by mail that {account['name']} want to sign the {deal} deal by "
                f"{day.day} {day:%B}.",
            ),
            context=ctx.choice(["Good news on that deal.", "They just confirmed it.", ""]),
            short=f"{account['name']} want to sign the {deal} deal by {day.day} {day:%B}: tell the deal's owner",
        )
        solution = [
            step("crm_get_deal", "now", deal_id=deal_id),
            step(
                "mail_send_message",
                to=[{"$ref": "now.owner"}],
                subject=f"{account['name']}: target date",
                body=f"{greeting(successor)}\n\n{account['name']} want to sign the {deal} deal by "
                f"{day.day} {day:%B}.\n\nThanks,\n{first_name(ctx.user.name)}",
            ),
        ]
    else:
        corrected = new_amount - price * ctx.rng.randint(1, 3)
        colleague = ctx.choice([p for p in owners if p.email != owner.email])
        change = event(
            "crm", "update_deal_fields", minutes=120, announced=False, deal_id=deal_id, amount=corrected
        )
        askers = [p for p in ctx.people(internal=True) if p.email not in (owner.email, colleague.email)]
        asker = ctx.choice(unambiguous(ctx, askers) or askers)
        checks = [
            mail_sent(
                "current-amount",
                f"A mail to {asker.name} gives the deal's amount now, {corrected} (not {new_amount})",
                [asker.email],
                [number_fact(corrected), text_fact(account["name"])],
                absent=[number_fact(new_amount)],
            ),
            guard(
                field_equals(
                    "colleague-amount-kept",
                    f"Deal {deal_id} keeps the colleague's amount {corrected}",
                    "crm_deals",
                    {"id": deal_id},
                    "amount",
                    corrected,
                )
            ),
        ]
        ask = Ask(
            steps=(
                f"Mail {asker.name} the current amount of the {account['name']} {deal} deal from the CRM.",
            ),
            context=f"{first_name(asker.name)} asked what it is worth right now.",
            short=f"Mail {asker.name} the current amount of the {account['name']} {deal} deal",
        )
        solution = [
            step("crm_get_deal", deal_id=deal_id),
            step("directory_search_people", query=asker.name, internal=True),
            step(
                "mail_send_message",
                to=[asker.email],
                subject=f"{account['name']}: {deal}",
                body=f"{greeting(asker)}\n\nthe {account['name']} {deal} deal stands at {corrected} {currency} "
                f"in the CRM.\n\nBest,\n{first_name(ctx.user.name)}",
            ),
        ]
    second_turn = Turn(user=request(ctx, ask), events=[change], checks=checks, solution=solution)
    return ctx.task(
        capability_id="crm_deal_changes",
        extra_capabilities=["state_change_adaptation", "crm_pipeline"],
        services=services,
        operations=ops,
        title=f"Keep up with the {account['name']} {deal} deal after a colleague changed it",
        context=house_rules(ctx),
        turns=[first_turn, second_turn],
    )
