"""sheets_update_price_list (spreadsheet_work): a supplier mails new prices for some items;
the agent writes them into the price list, keeping its formula columns (price incl. tax and
the average row) working, and leaves the other items as they are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from coworkenv.checks import Check
from coworkenv.task import Task, Turn

from ...builders import ago, field_equals, guard, house_rules, operation, step
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request
from .cells import a1, cell, cell_input, cell_value, money, sheet_rows, spreadsheet_id

TITLE = "Price list"
SHEET = "Prices"
PRICE_COL, TAX_COL = 4, 5


@dataclass(frozen=True)
class Item:
    row: int
    sku: str
    name: str
    price: int
    new_price: int | None
    """None: the mail does not change it."""


def _items(ctx: FamilyContext, ws: Any, sid: int) -> list[Item]:
    rows = sheet_rows(ws, sid, SHEET)
    products = [
        (r, v) for r, v in sorted(rows.items()) if r > 1 and isinstance(v.get(PRICE_COL), int | float)
    ]
    changed = max(1, min(ctx.difficulty.items, len(products) - 1))
    picked = set(ctx.rng.sample([r for r, _ in products], changed))
    items = []
    for r, v in products:
        price = int(v[PRICE_COL])
        new = None
        if r in picked:
            new = price + max(1, round(price * ctx.rng.choice([3, 4, 5, 6, 8, 10, 12]) / 100))
            if ctx.rng.random() < 0.25 and price > 20:
                new = price - max(1, round(price * ctx.rng.choice([3, 5, 7]) / 100))
        items.append(Item(r, str(v[1]), str(v[2]), price, new))
    return items


def _supplier(ctx: FamilyContext) -> tuple[Any, bool]:
    """A vendor's contact (external), or else a colleague who passes the supplier's prices on."""
    vendors = {o.name for o in ctx.the_world.organizations if o.kind == "vendor"}
    contacts = [p for p in ctx.people(internal=False) if p.company in vendors]
    if contacts:
        return ctx.choice(contacts), True
    return ctx.person(internal=True), False


def _price_mail(ctx: FamilyContext, sender: Any, external: bool, changed: list[Item]) -> tuple[str, str]:
    currency = ctx.the_world.currency
    lines = "\n".join(f"- {i.sku} {i.name}: {money(currency, i.new_price or 0)}" for i in changed)
    opening = (
        "please note our new prices, valid from today:"
        if external
        else "the supplier has sent new prices, valid from today:"
    )
    subject = ctx.choice(["New prices", "Price update", "Updated price list"])
    body = f"{greeting(ctx.user)}\n\n{opening}\n\n{lines}\n\nAll other prices stay as they are.\n\nBest regards,\n{first_name(sender.name)}"
    return subject, body


def _ask(ctx: FamilyContext, sender: Any) -> Ask:
    first = first_name(sender.name)
    steps = ctx.choice(
        [
            (
                f"Update the {TITLE} spreadsheet with the new prices {sender.name} mailed.",
                "Keep the formulas working.",
                "Leave the other items as they are.",
            ),
            (
                f"Put the new prices from {sender.name}'s mail into the {TITLE} sheet.",
                "Do not overwrite any formula.",
                "Change nothing else.",
            ),
        ]
    )
    context = ctx.choice(["The prices change from today.", f"{first} sent them this morning.", ""])
    return Ask(
        steps=steps,
        context=context,
        short=f"Enter {sender.name}'s new prices in the {TITLE} sheet, formulas kept, nothing else",
    )


@family(
    "sheets_update_price_list", capability_id="spreadsheet_work", services=["sheets", "mail"], worlds=True
)
def sheets_update_price_list(ctx: FamilyContext) -> Task:
    """The world's price list (prices, a price-incl.-tax formula per row reading the tax rate
    from its Settings sheet, and an average row below) gets new prices for some items from a
    supplier's mail. Checks read each new price as typed (a number, not a formula), the row's
    tax formula kept and its value recomputed, the average row's formulas kept and values
    recomputed, and every other price unchanged. Difficulty: how many prices change."""
    services = ["sheets", "mail"]
    _, ws = ctx.seeded(services, [])
    sid = spreadsheet_id(ws, TITLE)
    items = _items(ctx, ws, sid)
    first, last = items[0].row, items[-1].row
    average_row = last + 2
    owner = str(ws.rows("sheets_spreadsheets", "id = ?", [sid])[0]["owner"])
    if owner == ctx.user.email:  # the average row is a colleague's: the user's edits then show
        owner = ctx.person(internal=True).email
    averages = [
        operation(
            "sheets",
            "edit_cells",
            spreadsheet=TITLE,
            start=a1(SHEET, average_row, 1),
            values=[
                [
                    "Average",
                    None,
                    None,
                    f"=ROUND(AVERAGE(D{first}:D{last}),2)",
                    f"=ROUND(AVERAGE(E{first}:E{last}),2)",
                ]
            ],
            editor=owner,
        )
    ]
    sender, external = _supplier(ctx)
    changed = [i for i in items if i.new_price is not None]
    subject, body = _price_mail(ctx, sender, external, changed)
    operations = [
        *averages,
        operation(
            "mail",
            "deliver_inbound",
            from_addr=sender.email,
            subject=subject,
            body=body,
            sent_at=ago(ctx, hours=1),
        ),
    ]
    writes = [
        operation(
            "sheets",
            "edit_cells",
            spreadsheet=TITLE,
            start=a1(SHEET, i.row, PRICE_COL),
            values=[[i.new_price]],
            editor=ctx.user.email,
        )
        for i in changed
    ]
    results, before = ctx.seeded(services, operations)
    _, after = ctx.seeded(services, [*operations, *writes])
    mail_id = results[-1]["id"]
    checks: list[Check] = []
    for i in changed:
        checks.append(
            field_equals(
                f"price-{i.sku}",
                f"{i.sku}'s price ({a1(SHEET, i.row, PRICE_COL)}) is the number {i.new_price}",
                "sheets_cells",
                cell(sid, SHEET, i.row, PRICE_COL),
                "input",
                str(i.new_price),
            )
        )
        with_tax = cell_value(after, sid, SHEET, i.row, TAX_COL)
        checks.append(
            field_equals(
                f"with-tax-{i.sku}",
                f"{i.sku}'s price incl. tax ({a1(SHEET, i.row, TAX_COL)}) follows to {with_tax}",
                "sheets_cells",
                cell(sid, SHEET, i.row, TAX_COL),
                "value",
                with_tax,
            )
        )
        checks.append(
            guard(
                field_equals(
                    f"formula-kept-{i.sku}",
                    f"{i.sku}'s price incl. tax is still its formula",
                    "sheets_cells",
                    cell(sid, SHEET, i.row, TAX_COL),
                    "input",
                    cell_input(before, sid, SHEET, i.row, TAX_COL),
                )
            )
        )
    for col, label in ((PRICE_COL, "price"), (TAX_COL, "price-incl-tax")):
        value = cell_value(after, sid, SHEET, average_row, col)
        if value != cell_value(before, sid, SHEET, average_row, col):
            checks.append(
                field_equals(
                    f"average-{label}",
                    f"The average {label.replace('-', ' ')} ({a1(SHEET, average_row, col)}) follows to {value}",
                    "sheets_cells",
                    cell(sid, SHEET, average_row, col),
                    "value",
                    value,
                )
            )
        checks.append(
            guard(
                field_equals(
                    f"average-formula-kept-{label}",
                    f"The average {label.replace('-', ' ')} is still its formula",
                    "sheets_cells",
                    cell(sid, SHEET, average_row, col),
                    "input",
                    cell_input(before, sid, SHEET, average_row, col),
                )
            )
        )
    checks += [
        guard(
            field_equals(
                f"kept-{i.sku}",
                f"{i.sku}'s price stays {i.price}",
                "sheets_cells",
                cell(sid, SHEET, i.row, PRICE_COL),
                "input",
                str(i.price),
            )
        )
        for i in items
        if i.new_price is None
    ]
    solution = [
        step("mail_search_messages", query=first_name(sender.name), folder="inbox"),
        step("mail_get_message", message_id=mail_id),
        step("sheets_list_spreadsheets", query=TITLE),
        step("sheets_read_range", spreadsheet_id=sid, range=f"{SHEET}!A1:E{average_row}"),
        *(
            step(
                "sheets_write_range",
                spreadsheet_id=sid,
                start=a1(SHEET, i.row, PRICE_COL),
                values=[[i.new_price]],
            )
            for i in changed
        ),
    ]
    return ctx.task(
        capability_id="spreadsheet_work",
        services=services,
        operations=operations,
        title=f"Enter {len(changed)} new price{'s' if len(changed) > 1 else ''} in the price list, formulas kept",
        context=house_rules(ctx),
        turns=[Turn(user=request(ctx, _ask(ctx, sender)), checks=checks, solution=solution)],
    )
