"""sheets_reconcile_invoices (spreadsheet_work): copies of this month's invoices arrive in
mail; the agent compares them with the invoice ledger and tells the colleague who asked which
invoices are missing from the ledger or differ from it, and by how much the ledger falls
short in total; on some draws it also adds the missing invoices to the ledger."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from coworkenv.checks import Check
from coworkenv.task import Task, Turn, WorldCall

from ...builders import (
    ago,
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
from .cells import cell, distinct, money, sheet_rows, spreadsheet_id, with_context

SHEET = "Invoices"
AMOUNT_COL = 5
MAX_MATCHING = 6
ATTEMPTS = 50


@dataclass(frozen=True)
class Invoice:
    """An invoice as its mail states it, and what the ledger has for it (None: not there)."""

    number: str
    customer: str
    issued: str
    due: str
    amount: int
    ledger_amount: int | None
    ledger_row: int | None

    @property
    def missing(self) -> bool:
        return self.ledger_row is None

    @property
    def shortfall(self) -> int:
        """How much more the mail says than the ledger has (the whole amount when missing)."""
        return self.amount - (self.ledger_amount or 0)

    def mail_text(self, currency: str) -> str:
        return (
            f"Invoice {self.number}\nCustomer: {self.customer}\nIssued: {self.issued}\n"
            f"Due: {self.due}\nAmount: {money(currency, self.amount)}\n"
        )


@dataclass(frozen=True)
class Reconciliation:
    spreadsheet: int
    title: str
    invoices: list[Invoice]
    """In the order their mails arrive."""

    @property
    def problems(self) -> list[Invoice]:
        """The invoices missing or differing, the latest number first."""
        return sorted((i for i in self.invoices if i.shortfall != 0), key=lambda i: i.number, reverse=True)

    @property
    def matching(self) -> list[Invoice]:
        return [i for i in self.invoices if i.shortfall == 0]

    @property
    def total(self) -> int:
        return sum(i.shortfall for i in self.problems)

    def stated_amounts(self) -> list[int]:
        """Every amount a right report may quote beside the total: the mailed and ledger
        amounts and each invoice's difference."""
        out = []
        for i in self.invoices:
            out.append(i.amount)
            if i.ledger_amount is not None:
                out.append(i.ledger_amount)
            out.append(i.shortfall)
        return [a for a in distinct(out) if a != 0]  # type: ignore[misc]

    def wrong_totals(self) -> list[int]:
        """Totals a careless reconciliation gives: the missing invoices or the differences
        alone, the mailed amounts of the problem invoices, every mailed amount."""
        missing = sum(i.amount for i in self.problems if i.missing)
        differing = sum(i.shortfall for i in self.problems if not i.missing)
        candidates = [
            missing,
            differing,
            sum(i.amount for i in self.problems),
            sum(i.amount for i in self.invoices),
        ]
        quoted = set(self.stated_amounts()) | {self.total, 0}
        return [c for c in distinct(candidates) if c not in quoted]  # type: ignore[misc]


def _plan(ctx: FamilyContext, ws: Any) -> Reconciliation:
    """A draw whose total shortfall is no amount of a matching invoice (a report quoting that
    invoice's amount would then read as the total)."""
    for _ in range(ATTEMPTS):
        plan = _draw(ctx, ws)
        if plan.total not in {a for i in plan.matching for a in (i.amount, i.ledger_amount)}:
            return plan
    raise SeedDoesNotFit("every draw's total difference equals the amount of a matching invoice")


def _draw(ctx: FamilyContext, ws: Any) -> Reconciliation:
    world = ctx.the_world
    title = f"Invoice ledger {world.start.year}"
    sid = spreadsheet_id(ws, title)
    rows = sheet_rows(ws, sid, SHEET)
    ledger = {r: v for r, v in rows.items() if r > 1 and str(v.get(1, "")).startswith("INV-")}
    last = max(ledger)
    problems = max(1, ctx.difficulty.items)
    # Rows of a free item (amount 0) stay out: a report would have to quote "0" beside the total.
    priced = sorted(
        r for r, v in ledger.items() if isinstance(v.get(AMOUNT_COL), int | float) and v[AMOUNT_COL]
    )
    differing = min(problems // 2, len(priced))
    missing = problems - differing
    matching = min(MAX_MATCHING, ctx.difficulty.distractors, len(priced) - differing)
    chosen = ctx.rng.sample(priced, differing + matching)
    prices = [p.price for p in world.products if p.price > 0] or [100, 250, 400]
    customers = sorted({str(v[2]) for v in ledger.values()})
    invoices = []
    for k, row in enumerate(chosen):
        v = ledger[row]
        ledger_amount = int(v[AMOUNT_COL])
        amount = (
            ledger_amount + ctx.choice(prices) * ctx.rng.randint(1, 3) if k < differing else ledger_amount
        )
        invoices.append(Invoice(str(v[1]), str(v[2]), str(v[3]), str(v[4]), amount, ledger_amount, row))
    number = int(str(ledger[last][1]).rsplit("-", 1)[1])
    for k in range(missing):
        issued = (world.start - timedelta(days=ctx.rng.randint(1, 6) + 2 * k)).date()
        invoices.append(
            Invoice(
                f"INV-{world.start.year}-{number + 1 + k:04d}",
                ctx.choice(customers),
                issued.isoformat(),
                (issued + timedelta(days=30)).isoformat(),
                ctx.choice(prices) * ctx.rng.randint(1, 12),
                None,
                None,
            )
        )
    ctx.rng.shuffle(invoices)
    return Reconciliation(sid, title, invoices)


def _invoice_mail(ctx: FamilyContext, clerk: Any, invoice: Invoice, hours: float) -> WorldCall:
    world = ctx.the_world
    intro = ctx.choice(
        [
            "A copy of the invoice we sent out, for the books:",
            "For the records, this invoice went out:",
            "Invoice copy below.",
        ]
    )
    return operation(
        "mail",
        "deliver_inbound",
        from_addr=clerk.email,
        subject=f"Invoice {invoice.number} - {invoice.customer}",
        body=f"{intro}\n\n{invoice.mail_text(world.currency)}\n{first_name(clerk.name)}",
        sent_at=ago(ctx, hours=hours),
    )


def _ask(ctx: FamilyContext, asker: Any, clerk: Any, plan: Reconciliation, add_rows: bool) -> Ask:
    first, clerk_first = first_name(asker.name), first_name(clerk.name)
    steps = [
        ctx.choice(
            [
                f"Compare the invoice copies {clerk.name} mailed with the {plan.title} spreadsheet.",
                f"Check every invoice mail from {clerk.name} against the {plan.title} sheet.",
            ]
        ),
        ctx.choice(
            [
                f"Mail {first} the numbers of the invoices that are missing from the ledger or have a "
                "different amount there, and the total amount by which the ledger falls short.",
                f"Tell {first} by mail which invoices the ledger is missing or has with another amount, "
                "and how much the ledger is short in total.",
            ]
        ),
    ]
    if add_rows:
        steps.append(
            "Add the missing invoices to the ledger as open, one row each, like the rows already there."
        )
        steps.append("Leave the rows already in the ledger as they are.")
    else:
        steps.append("Do not change the ledger.")
    context = ctx.choice(
        [
            f"{first} is closing the month and asked me for a reconciliation.",
            f"{clerk_first} forwards every invoice we send; {first} wants to know if the ledger is complete.",
            "",
        ]
    )
    return Ask(
        steps=tuple(steps),
        context=context,
        short=f"Reconcile {clerk_first}'s invoice mails with the {plan.title}; mail {first} what is missing or "
        "different and the total shortfall" + ("; add the missing rows" if add_rows else ""),
    )


def _report(ctx: FamilyContext, asker: Any, plan: Reconciliation) -> str:
    currency = ctx.the_world.currency
    lines = []
    for i in plan.problems:
        if i.missing:
            lines.append(f"- {i.number}: not in the ledger ({money(currency, i.amount)})")
        else:
            lines.append(
                f"- {i.number}: the invoice says {money(currency, i.amount)}, the ledger has "
                f"{money(currency, i.ledger_amount or 0)} (a difference of {money(currency, i.shortfall)})"
            )
    return (
        f"{greeting(asker)}\n\nI compared the invoice mails with the {plan.title} sheet. These do not "
        "match:\n"
        + "\n".join(lines)
        + f"\n\nIn total the ledger is short by {money(currency, plan.total)}.\n\n"
        f"Best,\n{first_name(ctx.user.name)}"
    )


def _row_check(plan: Reconciliation, invoice: Invoice) -> Check:
    """Exactly one ledger row for the invoice, with its customer, dates, amount and status open."""

    def at(col: int) -> str:
        return (
            f"(SELECT {'value' if col == AMOUNT_COL else 'lower(trim(input))'} FROM sheets_cells c "
            f"WHERE c.spreadsheet_id = a.spreadsheet_id AND c.sheet = a.sheet AND c.row = a.row AND c.col = {col})"
        )

    query = (
        f"SELECT count(*) FROM sheets_cells a WHERE a.spreadsheet_id = {plan.spreadsheet} AND a.sheet = '{SHEET}' "
        f"AND a.col = 1 AND upper(trim(a.input)) = '{invoice.number}' "
        f"AND {at(2)} = '{sql_text(invoice.customer.lower())}' AND {at(3)} = '{invoice.issued}' "
        f"AND {at(4)} = '{invoice.due}' AND {at(AMOUNT_COL)} = {invoice.amount} AND {at(6)} = 'open'"
    )
    return sql_check(
        f"added-{invoice.number}",
        f"The ledger has one row for {invoice.number}: {invoice.customer}, {invoice.issued}, {invoice.due}, "
        f"{invoice.amount}, open",
        query,
        1,
    )


def _added_rows(plan: Reconciliation, currency: str) -> list[list[Any]]:
    return [[i.number, i.customer, i.issued, i.due, i.amount, "open"] for i in plan.problems if i.missing]


@family(
    "sheets_reconcile_invoices", capability_id="spreadsheet_work", services=["sheets", "mail"], worlds=True
)
def sheets_reconcile_invoices(ctx: FamilyContext) -> Task:
    """Invoice copies arrive by mail from a finance colleague; some are missing from the world's
    invoice ledger, some have another amount there, the rest match. The agent mails the colleague
    who asked the problem invoices and the total shortfall (the matching invoices and the
    tempting partial totals must not be given as the answer); on about half the draws it also
    appends the missing invoices, checked cell by cell. Difficulty: how many invoices differ or
    are missing, how many match."""
    services = ["sheets", "mail"]
    _, ws = ctx.seeded(services, [])
    plan = _plan(ctx, ws)
    finance = ctx.people(internal=True, team=ctx.the_world.team("finance"))
    clerk = ctx.choice(finance or ctx.people(internal=True))
    asker = ctx.person(internal=True, exclude=[clerk.email])
    add_rows = ctx.rng.random() < 0.5
    currency = ctx.the_world.currency
    operations = [_invoice_mail(ctx, clerk, invoice, 30 - 2.5 * k) for k, invoice in enumerate(plan.invoices)]
    subject = ctx.choice(["Invoice reconciliation", "Are the invoices all in the ledger?", "Month-end check"])
    operations.append(
        operation(
            "mail",
            "deliver_inbound",
            from_addr=asker.email,
            subject=subject,
            body=f"{greeting(ctx.user)}\n\ncould you check {first_name(clerk.name)}'s invoice mails against the "
            f"ledger and tell me what is missing or different, with the total?\n\nThanks,\n{first_name(asker.name)}",
            sent_at=ago(ctx, hours=2),
        )
    )
    planted = [int(r["id"]) for r in ctx.plant(services, operations)]
    request_id = planted[-1]
    numbers = mail_sent(
        "reported-invoices",
        "A mail to the asker names every invoice missing from the ledger or differing from it, and no "
        "matching one",
        [asker.email],
        [text_fact(i.number) for i in plan.problems],
        absent=[text_fact(i.number) for i in plan.matching],
        thread_of=request_id,
    )
    total = with_context(
        mail_sent(
            "reported-total",
            f"A mail to the asker gives the total shortfall {money(currency, plan.total)}",
            [asker.email],
            [number_fact(plan.total)],
            absent=[number_fact(w) for w in plan.wrong_totals()],
            thread_of=request_id,
        ),
        [number_fact(a) for a in plan.stated_amounts() if a != plan.total],
    )
    checks: list[Check] = [numbers, total]
    solution = [
        step("mail_search_messages", query=first_name(clerk.name), limit=50),
        *(step("mail_get_message", message_id=mid) for mid in planted[:-1]),
        step("sheets_list_spreadsheets", query="invoice ledger"),
        step("sheets_read_range", spreadsheet_id=plan.spreadsheet, range=f"{SHEET}!A1:F40"),
    ]
    if add_rows:
        checks += [_row_check(plan, i) for i in plan.problems if i.missing]
        solution.append(
            step(
                "sheets_append_rows",
                spreadsheet_id=plan.spreadsheet,
                sheet=SHEET,
                rows=_added_rows(plan, currency),
            )
        )
    checks += [
        guard(
            field_equals(
                f"ledger-kept-{i.number}",
                f"The ledger keeps its amount {i.ledger_amount} for {i.number}",
                "sheets_cells",
                cell(plan.spreadsheet, SHEET, i.ledger_row or 0, AMOUNT_COL),
                "input",
                str(i.ledger_amount),
            )
        )
        for i in plan.problems
        if not i.missing
    ]
    solution += [
        step("mail_search_messages", query=first_name(asker.name), folder="inbox"),
        step("mail_reply", message_id=request_id, body=_report(ctx, asker, plan)),
    ]
    return ctx.task(
        capability_id="spreadsheet_work",
        services=services,
        operations=operations,
        title=f"Reconcile {len(plan.invoices)} invoice mails with the {plan.title}"
        + (" and add the missing rows" if add_rows else ""),
        context=house_rules(ctx),
        turns=[
            Turn(user=request(ctx, _ask(ctx, asker, clerk, plan, add_rows)), checks=checks, solution=solution)
        ],
    )
