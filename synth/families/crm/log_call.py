"""crm_log_call_move_deal (crm_pipeline): after a call, the customer's mail sums it up; log the
call on the right deal of the right account and move the deal to the stage the mail implies,
with the next step and close date it gives."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from coworkenv.checks import Check
from coworkenv.state import format_time
from coworkenv.task import Task, Turn, WorldCall

from ...builders import field_equals, guard, house_rules, operation, row_exists, states, step, text_fact
from ...family import FamilyContext, SeedDoesNotFit, family
from ...phrasing import Ask, first_name, request
from .crm_world import (
    DEAL_TAGS,
    accounts,
    clear_contacts,
    deal_names,
    domain_of,
    possessive,
    sellers,
    similar_name,
)


@dataclass(frozen=True)
class Move:
    """What the customer's mail says and where it takes the deal."""

    before: str
    after: str
    says: str
    """The mail's news, with {deal} and {day} to fill in."""
    next_step: str
    """The next step the mail asks for ('' for a closed deal), and the phrase checked in it."""
    phrase: str
    days: tuple[int, int]
    """Where the close date lies, in days from the start (negative: the past)."""
    logged: str
    """What the reference solution's call log says (no figures: nothing checks them)."""


MOVES = (
    Move(
        "qualification",
        "proposal",
        "Our budget for the {deal} is approved, so please send us your formal proposal. We aim to "
        "decide by {day}.",
        "Send the formal proposal",
        "formal proposal",
        (14, 45),
        "Their budget is approved; they want our formal proposal.",
    ),
    Move(
        "proposal",
        "negotiation",
        "We accept your proposal for the {deal} and would like to go through the contract terms "
        "now. Could you send us the contract draft? We would like to sign by {day}.",
        "Send the contract draft",
        "contract draft",
        (10, 40),
        "They accept our proposal and want the contract draft to go through the terms.",
    ),
    Move(
        "negotiation",
        "closed_won",
        "As promised on the phone: we signed the contract for the {deal} on {day}, so you can go ahead.",
        "",
        "",
        (-3, -1),
        "They signed the contract; we can go ahead.",
    ),
    Move(
        "proposal",
        "closed_lost",
        "As I said on the phone, we decided on {day} not to go ahead with the {deal}; we will stay with "
        "our current supplier.",
        "",
        "",
        (-4, -1),
        "They decided not to go ahead and stay with their current supplier.",
    ),
)


def _ask(ctx: FamilyContext, contact: str, account: str, deal: str, move: Move) -> Ask:
    first = first_name(contact)
    what = (
        "set the next step and the expected close date they give"
        if move.next_step
        else "set its close date to the date they give"
    )
    steps = ctx.choice(
        [
            (
                f"Log my call with {contact} of {account} as a call on the {deal} deal, with {first} as the contact.",
                f"Move that deal to the stage their mail implies and {what}.",
            ),
            (
                f"Record the call I had with {contact} ({account}) on their {deal} deal, {first} as the contact.",
                f"Update the deal: move it to the stage their mail implies and {what}.",
            ),
            (
                f"Log a call on {possessive(account)} {deal} deal with {contact} as the contact.",
                f"Move the deal to whichever stage their mail implies and {what}.",
            ),
        ]
    )
    context = ctx.choice(
        [
            f"I just got off the phone with {contact} from {account}; their mail afterwards sums the call up.",
            f"{first} and I spoke about the {deal} deal this morning and {first} has put it in writing.",
            "",
        ]
    )
    return Ask(
        steps=steps,
        context=context,
        short=f"Log my call with {contact} ({account}) on the {deal} deal and update the deal from their mail",
    )


@family("crm_log_call_move_deal", capability_id="crm_pipeline", services=["crm", "mail"], worlds=True)
def crm_log_call_move_deal(ctx: FamilyContext) -> Task:
    """A customer's mail sums up a call about one of their deals: log the call on that deal
    (the customer as the contact) and move the deal to the stage the mail implies, with its
    next step and close date. Distractors: another deal of the account for the same product
    in the same stage; with two or more, an account of a similar name with a deal of the very
    same name. Runs on every world."""
    services = ["crm", "mail"]
    _, ws = ctx.seeded(services, [])
    candidates = [
        (a, c) for a in accounts(ws, "kind IN ('customer', 'partner')") for c in clear_contacts(ws, a["id"])
    ]
    if not candidates:
        raise SeedDoesNotFit("no customer or partner account with a contact of its own")
    account, contact = ctx.choice(candidates)
    move: Move = ctx.choice(MOVES)
    product = ctx.choice(ctx.the_world.products)
    used = deal_names(ws, account["id"])
    tags = [t for t in DEAL_TAGS if f"{account['name']}: {product.name} {t}".lower() not in used]
    tag, other_tag = ctx.rng.sample(tags, 2)
    deal = f"{product.name} {tag}"
    qty = ctx.rng.randint(3, 40)
    close = ctx.start + timedelta(days=ctx.rng.randint(20, 60))

    def deal_op(account_id: int, name: str, owner: str) -> WorldCall:
        return operation(
            "crm",
            "add_deal",
            account_id=account_id,
            name=name,
            stage=move.before,
            amount=product.price * qty,
            currency=ctx.the_world.currency,
            close_date=close.date().isoformat(),
            owner=owner,
            next_step="Follow up after the call",
            created_at=format_time(ctx.start - timedelta(days=ctx.rng.randint(20, 60))),
        )

    ops = [deal_op(account["id"], f"{account['name']}: {deal}", account["owner"])]
    if ctx.difficulty.distractors >= 1:
        ops.append(deal_op(account["id"], f"{account['name']}: {product.name} {other_tag}", account["owner"]))
    similar_ops: list[WorldCall] = []
    if ctx.difficulty.distractors >= 2:
        similar = similar_name(ctx, ws, account["name"])
        owner = ctx.choice(sellers(ctx)).email
        similar_ops.append(
            operation(
                "crm",
                "add_account",
                name=similar,
                kind=account["kind"],
                domain=domain_of(similar),
                owner=owner,
                created_at=format_time(ctx.start - timedelta(days=200)),
            )
        )
    day = (ctx.start + timedelta(days=ctx.rng.randint(*move.days))).date()
    body = move.says.format(deal=deal, day=_day(day))
    follow = f" Next step on your side: {move.next_step.lower()}." if move.next_step else ""
    mail = operation(
        "mail",
        "deliver_inbound",
        from_addr=contact.email,
        subject=f"{deal}: after our call",
        body=f"Hello,\n\nthanks for the call earlier. {body}{follow}\n\nBest regards,\n{contact.name}\n{account['name']}",
        sent_at=format_time(ctx.start - timedelta(minutes=40)),
    )
    results = ctx.plant(services, [*ops, *similar_ops])
    deal_id = results[0]["deal_id"]
    operations = [*ops, *similar_ops]
    if similar_ops:
        similar_id = results[len(ops)]["account_id"]
        operations.append(deal_op(similar_id, f"{similar}: {deal}", owner))
    operations.append(mail)
    results = ctx.plant(services, operations)
    distractor_deals = [r["deal_id"] for r in results[1:] if "deal_id" in r]
    checks: list[Check] = [
        row_exists(
            "call-logged",
            f"A call by the user is logged on deal {deal_id} ({account['name']}: {deal}) with {contact.name}",
            "crm_activities",
            {
                "kind": "call",
                "account_id": account["id"],
                "deal_id": deal_id,
                "contact_id": contact.id,
                "author": ctx.user.email,
            },
        ),
        field_equals(
            "deal-stage",
            f"Deal {deal_id} is in stage {move.after}",
            "crm_deals",
            {"id": deal_id},
            "stage",
            move.after,
        ),
        field_equals(
            "deal-close-date",
            f"Deal {deal_id} closes on {day.isoformat()}",
            "crm_deals",
            {"id": deal_id},
            "close_date",
            day.isoformat(),
        ),
    ]
    if move.next_step:
        checks.append(
            states(
                "deal-next-step",
                f"Deal {deal_id}'s next step is to {move.next_step.lower()}",
                "crm_deals",
                {"id": deal_id},
                ["next_step"],
                [text_fact(move.phrase)],
            )
        )
    checks += [
        guard(
            field_equals(
                f"deal-{other}-stays",
                f"Deal {other} (not the one the mail is about) stays in {move.before}",
                "crm_deals",
                {"id": other},
                "stage",
                move.before,
            )
        )
        for other in distractor_deals
    ]
    update: dict[str, Any] = {"stage": move.after, "close_date": day.isoformat()}
    if move.next_step:
        update["next_step"] = move.next_step
    solution = [
        step("mail_search_messages", "m", query=contact.name),
        step("mail_get_message", message_id={"$ref": "m.messages.0.id"}),
        step("crm_search_accounts", query=account["name"]),
        step("crm_get_account", account_id=account["id"]),
        step(
            "crm_log_activity",
            kind="call",
            subject=f"Call with {contact.name} about the {deal}",
            body=f"{first_name(contact.name)}: {move.logged}",
            deal_id=deal_id,
            contact_id=contact.id,
        ),
        step("crm_update_deal", deal_id=deal_id, **update),
    ]
    return ctx.task(
        capability_id="crm_pipeline",
        services=services,
        operations=operations,
        title=f"Log the call about {possessive(account['name'])} {deal} deal and move the deal",
        context=house_rules(ctx),
        turns=[
            Turn(
                user=request(ctx, _ask(ctx, contact.name, account["name"], deal, move)),
                checks=checks,
                solution=solution,
            )
        ],
    )


def _day(day: date) -> str:
    return f"{day.day} {day:%B}"
