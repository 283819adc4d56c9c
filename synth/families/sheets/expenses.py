"""An expenses spreadsheet (date, month, cost centre, item, amount) over the three months
before the task's day, and the figures a colleague asks of it: a cost centre's total or
average spend in one month. Used by sheets_figure_by_formula and sheets_row_corrected."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta

from coworkenv.checks import Check, Fact
from coworkenv.task import SolutionStep, WorldCall

from ...builders import mail_sent, number_fact, operation, start_shifted, step
from ...family import FamilyContext, SeedDoesNotFit
from .cells import distinct, money, with_context

TITLE = "Cost centre expenses"
SHEET = "Expenses"
MONTHS = 3
ITEMS = ("Travel", "Software", "Training", "Office supplies", "Catering", "Equipment", "Consultancy")
ATTEMPTS = 60


@dataclass(frozen=True)
class Expense:
    day: date
    centre: str
    item: str
    amount: int

    @property
    def month(self) -> str:
        return f"{self.day:%Y-%m}"


@dataclass(frozen=True)
class Question:
    """What is asked: `kind` total or average of `centre`'s expenses in `month`."""

    kind: str
    centre: str
    month: str
    label: str
    """The month as people say it: 'February 2026'."""


@dataclass(frozen=True)
class Expenses:
    rows: list[Expense]
    """In sheet order (row 2 on), by date."""
    question: Question
    currency: str

    def row_of(self, expense: Expense) -> int:
        return self.rows.index(expense) + 2

    def figure(self, centre: str | None = None, month: str | None = None, kind: str | None = None) -> float:
        """The figure over the rows of `centre` (None: every centre) in `month` (None: every month)."""
        q = self.question
        amounts = [
            e.amount
            for e in self.rows
            if (centre is None or e.centre == centre) and (month is None or e.month == month)
        ]
        if (kind or q.kind) == "total":
            return sum(amounts)
        return round(sum(amounts) / len(amounts), 2) if amounts else 0

    @property
    def answer(self) -> float:
        return self.figure(self.question.centre, self.question.month)

    def rivals(self) -> list[float]:
        """The near misses: every centre that month, the centre in other months or in all of
        them, and (for an average) the centre's total that month."""
        q = self.question
        months = sorted({e.month for e in self.rows})
        out = [self.figure(None, q.month), self.figure(q.centre, None)]
        out += [self.figure(q.centre, m) for m in months if m != q.month]
        if q.kind == "average":
            out.append(self.figure(q.centre, q.month, "total"))
        return [v for v in distinct(out) if v != self.answer and v != 0]

    def sheet_operation(self, ctx: FamilyContext, owner: str) -> WorldCall:
        last = len(self.rows) + 1
        return operation(
            "sheets",
            "add_spreadsheet",
            title=TITLE,
            owner=owner,
            sheets=[
                {
                    "name": SHEET,
                    "rows": [
                        ["Date", "Month", "Cost centre", "Item", f"Amount ({self.currency})"],
                        *([e.day.isoformat(), e.month, e.centre, e.item, e.amount] for e in self.rows),
                    ],
                },
                {
                    "name": "Summary",
                    "rows": [
                        ["Total spend", f"=SUM({SHEET}!E2:E{last})"],
                        ["Entries", f"=COUNT({SHEET}!E2:E{last})"],
                    ],
                },
            ],
            created_at=start_shifted(ctx, days=-100),
        )

    def corrected(self, expense: Expense, amount: int) -> Expenses:
        rows = [replace(e, amount=amount) if e is expense else e for e in self.rows]
        return replace(self, rows=rows)


def _months(ctx: FamilyContext) -> list[date]:
    first = ctx.start.date().replace(day=1)
    out: list[date] = []
    for _ in range(MONTHS):
        first = (first - timedelta(days=1)).replace(day=1)
        out.insert(0, first)
    return out


def _draw(ctx: FamilyContext, centres: list[str], kind: str) -> Expenses:
    rows = []
    for first in _months(ctx):
        for centre in centres:
            for _ in range(ctx.rng.randint(2, 3)):
                day = first + timedelta(days=ctx.rng.randint(0, 27))
                rows.append(Expense(day, centre, ctx.choice(ITEMS), ctx.rng.randrange(120, 4800, 5)))
    rows.sort(key=lambda e: (e.day, e.centre, e.item))
    month = ctx.choice(_months(ctx))
    question = Question(kind, ctx.choice(centres), f"{month:%Y-%m}", f"{month:%B %Y}")
    return Expenses(rows, question, ctx.the_world.currency)


def well_apart(plan: Expenses) -> bool:
    """Whether the answer is no rival and no single amount of the sheet (a reply quoting a
    row would otherwise read as the answer)."""
    amounts = {e.amount for e in plan.rows}
    answer = plan.answer
    return (
        answer not in plan.rivals() and answer not in amounts and all(r not in amounts for r in plan.rivals())
    )


def plan_expenses(ctx: FamilyContext) -> Expenses:
    """The sheet and its question; cost centres are the world's teams."""
    teams = [t.name for t in ctx.the_world.teams]
    centres = sorted(ctx.rng.sample(teams, min(len(teams), 3 + min(2, ctx.difficulty.distractors // 3))))
    kind = ctx.choice(["total", "total", "average"])
    for _ in range(ATTEMPTS):
        plan = _draw(ctx, centres, kind)
        if well_apart(plan):
            return plan
    raise SeedDoesNotFit("no draw keeps the asked figure apart from its near misses")


def asked_text(question: Question) -> str:
    if question.kind == "total":
        return f"the total spend of the {question.centre} cost centre in {question.label}"
    return f"the average amount of the {question.centre} cost centre's expenses in {question.label}"


def figure_check(
    check_id: str, plan: Expenses, to: str, request_id: int | None, absent: list[float]
) -> Check:
    """A mail to `to` gives the asked figure, not one of its near misses or `absent`."""
    q = plan.question
    check = mail_sent(
        check_id,
        f"A mail to {to} gives {asked_text(q)}: {money(plan.currency, plan.answer)}",
        [to],
        [number_fact(plan.answer)],
        absent=[number_fact(v) for v in distinct([*plan.rivals(), *absent]) if v != plan.answer],
        thread_of=request_id,
    )
    # The rows the figure comes from may be quoted beside it.
    sources = [e.amount for e in plan.rows if e.centre == q.centre and e.month == q.month]
    context: list[Fact] = [number_fact(a) for a in distinct(sources) if a != plan.answer]
    return with_context(check, context)


def read_steps(spreadsheet: int, rows: int) -> list[SolutionStep]:
    return [
        step("sheets_list_spreadsheets", query="expenses"),
        step("sheets_read_range", spreadsheet_id=spreadsheet, range=f"{SHEET}!A1:E{rows + 1}"),
    ]
