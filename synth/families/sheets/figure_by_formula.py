"""sheets_figure_by_formula (spreadsheet_work): a colleague asks for a figure over a filtered
part of the expenses sheet (a cost centre's total or average spend in one month); the agent
answers by mail with exactly that figure, never the unfiltered total or another month's, and
leaves the sheet as it is.

sheets_row_corrected (spreadsheet_changes): the same question answered, then, between the
turns, a colleague silently corrects one of the rows the figure sums; the second turn asks
for the figure for the monthly report, and only the corrected figure is right."""

from __future__ import annotations

from typing import Any

from coworkenv.checks import Allowance, Guards
from coworkenv.task import Task, Turn

from ...builders import ago, event, house_rules, operation, step
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request
from .cells import a1, money, spreadsheet_id
from .expenses import (
    SHEET,
    TITLE,
    Expenses,
    asked_text,
    figure_check,
    plan_expenses,
    read_steps,
    well_apart,
)

SERVICES = ["sheets", "mail"]
SCRATCH_COLUMN = "D"
"""The column of the Summary sheet a request may lend for working formulas."""


def _scratch_allowance(sid: int) -> Guards:
    """Cells of the lent column may be written, rewritten and cleared."""
    where = {"spreadsheet_id": sid, "sheet": "Summary", "col": ord(SCRATCH_COLUMN) - ord("A") + 1}
    return Guards(
        allow=[
            Allowance(table="sheets_cells", where=where, columns=["input", "value"], added=True, removed=True)
        ]
    )


def _request_mail(ctx: FamilyContext, asker: Any, plan: Expenses) -> tuple[str, str]:
    q = plan.question
    subject = ctx.choice(
        [f"{q.centre} spend, {q.label}", "Quick figure from the expenses sheet", "Cost centre question"]
    )
    body = (
        f"{greeting(ctx.user)}\n\ncould you tell me {asked_text(q)}? It should be in the {TITLE} "
        f"spreadsheet.\n\nThanks,\n{first_name(asker.name)}"
    )
    return subject, body


def _ask(ctx: FamilyContext, asker: Any, plan: Expenses, scratch: bool) -> Ask:
    first, q = first_name(asker.name), plan.question
    keep = (
        (
            f"Use column {SCRATCH_COLUMN} of the Summary sheet for a formula if it helps.",
            "Change nothing else there.",
        )
        if scratch
        else ("Leave the spreadsheet as it is.",)
    )
    steps = ctx.choice(
        [
            (f"Answer {asker.name}'s question about the {q.centre} cost centre from the {TITLE} sheet.",),
            (
                f"Work out {asked_text(q)} from the {TITLE} spreadsheet.",
                f"Reply to {first} with the figure.",
            ),
        ]
    )
    return Ask(
        steps=(*steps, *keep),
        context=ctx.choice([f"{first} needs it for the budget review.", f"{first} asked me by mail.", ""]),
        short=f"Send {first} {asked_text(q)} from the {TITLE} sheet; "
        + (
            f"scratch formulas in Summary column {SCRATCH_COLUMN} only" if scratch else "change nothing there"
        ),
    )


def _answer(ctx: FamilyContext, person: Any, plan: Expenses) -> str:
    return (
        f"{greeting(person)}\n\n{asked_text(plan.question)[0].upper()}{asked_text(plan.question)[1:]} was "
        f"{money(plan.currency, plan.answer)}, from the {TITLE} sheet.\n\nBest,\n{first_name(ctx.user.name)}"
    )


def _seeded(
    ctx: FamilyContext, plan: Expenses, asker: Any, services: list[str]
) -> tuple[list[Any], int, int]:
    """The seed operations, the request's message id and the spreadsheet's id."""
    finance_lead = next(t.lead for t in ctx.the_world.teams if t.name == ctx.the_world.team("finance"))
    subject, body = _request_mail(ctx, asker, plan)
    operations = [
        plan.sheet_operation(ctx, finance_lead),
        operation(
            "mail",
            "deliver_inbound",
            from_addr=asker.email,
            subject=subject,
            body=body,
            sent_at=ago(ctx, hours=1),
        ),
    ]
    results, ws = ctx.seeded(services, operations)
    return operations, int(results[-1]["id"]), spreadsheet_id(ws, TITLE)


def _first_turn(
    ctx: FamilyContext, plan: Expenses, asker: Any, request_id: int, sid: int, scratch: bool = False
) -> Turn:
    return Turn(
        user=request(ctx, _ask(ctx, asker, plan, scratch)),
        checks=[figure_check("figure", plan, asker.email, request_id, [])],
        solution=[
            step("mail_search_messages", query=first_name(asker.name), folder="inbox"),
            step("mail_get_message", message_id=request_id),
            *read_steps(sid, len(plan.rows)),
            step("mail_reply", message_id=request_id, body=_answer(ctx, asker, plan)),
        ],
    )


@family("sheets_figure_by_formula", capability_id="spreadsheet_work", services=SERVICES, worlds=True)
def sheets_figure_by_formula(ctx: FamilyContext) -> Task:
    """An expenses sheet over three months with the world's teams as cost centres; a colleague
    asks one centre's total (SUMIF) or average (AVERAGE over the filtered rows) spend in one
    month. The mail must state that figure and none of its near misses (every centre that
    month, the centre in another month or in all of them, the total instead of the average).
    On some draws the request lends a column of the Summary sheet for working formulas (the
    collateral guard then allows its cells); otherwise the sheet stays unchanged. Difficulty:
    how many cost centres the sheet holds."""
    plan = plan_expenses(ctx)
    asker = ctx.person(internal=True)
    operations, request_id, sid = _seeded(ctx, plan, asker, SERVICES)
    scratch = ctx.rng.random() < 0.4
    return ctx.task(
        capability_id="spreadsheet_work",
        services=SERVICES,
        operations=operations,
        title=f"Answer {asked_text(plan.question)} from the expenses sheet",
        context=house_rules(ctx),
        turns=[_first_turn(ctx, plan, asker, request_id, sid, scratch)],
        guards=_scratch_allowance(sid) if scratch else None,
    )


def _correction(ctx: FamilyContext, plan: Expenses) -> tuple[Expenses, int, int]:
    """A corrected copy of the sheet (one of the asked rows gets another amount), the row
    and the new amount, such that the new figure is apart from the old one and its rivals."""
    q = plan.question
    asked = [e for e in plan.rows if e.centre == q.centre and e.month == q.month]
    for _ in range(60):
        expense = ctx.choice(asked)
        amount = ctx.rng.randrange(120, 4800, 5)
        fixed = plan.corrected(expense, amount)
        if (
            amount != expense.amount
            and well_apart(fixed)
            and fixed.answer != plan.answer
            and plan.answer not in fixed.rivals()
            and plan.answer not in {e.amount for e in fixed.rows}
        ):
            return fixed, plan.row_of(expense), amount
    raise ValueError("no correction keeps the figures apart")  # pragma: no cover (never with these ranges)


@family(
    "sheets_row_corrected",
    capability_id="spreadsheet_changes",
    services=[*SERVICES, "directory"],
    multi_turn=True,
    worlds=True,
)
def sheets_row_corrected(ctx: FamilyContext) -> Task:
    """Turn 1 answers a colleague's figure from the expenses sheet (as sheets_figure_by_formula).
    Between the turns a finance colleague silently corrects the amount of one row the figure
    reads. Turn 2 asks the same figure for a manager's monthly report: only the corrected
    figure is right, and the figure of turn 1 is its tempting wrong answer."""
    plan = plan_expenses(ctx)
    asker = ctx.person(internal=True)
    operations, request_id, sid = _seeded(ctx, plan, asker, [*SERVICES, "directory"])
    fixed, row, amount = _correction(ctx, plan)
    finance = ctx.people(internal=True, team=ctx.the_world.team("finance"), exclude=[asker.email])
    editor = ctx.choice(finance or ctx.people(internal=True, exclude=[asker.email]))
    manager = ctx.person(internal=True, exclude=[asker.email])
    q = fixed.question
    second = Ask(
        steps=ctx.choice(
            [
                (f"Mail {manager.name} {asked_text(q)} for the monthly report, from the {TITLE} sheet.",),
                (f"Send {manager.name} {asked_text(q)} from the {TITLE} spreadsheet.",),
            ]
        ),
        context=ctx.choice(
            ["It goes into the monthly report.", f"{first_name(manager.name)} needs it today.", ""]
        ),
        short=f"Mail {manager.name} {asked_text(q)} from the {TITLE} sheet",
    )
    body = (
        f"{greeting(manager)}\n\n{asked_text(q)[0].upper()}{asked_text(q)[1:]} was {money(fixed.currency, fixed.answer)}, "
        f"from the {TITLE} sheet.\n\nBest,\n{first_name(ctx.user.name)}"
    )
    return ctx.task(
        capability_id="spreadsheet_changes",
        services=[*SERVICES, "directory"],
        operations=operations,
        title=f"Answer {asked_text(q)}, then again after a colleague corrected a row",
        context=house_rules(ctx),
        turns=[
            _first_turn(ctx, plan, asker, request_id, sid),
            Turn(
                user=request(ctx, second),
                events=[
                    event(
                        "sheets",
                        "edit_cells",
                        minutes=120,
                        announced=False,
                        spreadsheet=TITLE,
                        start=a1(SHEET, row, 5),
                        values=[[amount]],
                        editor=editor.email,
                    )
                ],
                checks=[figure_check("figure-corrected", fixed, manager.email, None, [plan.answer])],
                solution=[
                    *read_steps(sid, len(fixed.rows)),
                    step("directory_search_people", query=manager.name),
                    step(
                        "mail_send_message",
                        to=[manager.email],
                        subject=f"{q.centre} spend, {q.label}",
                        body=body,
                    ),
                ],
            ),
        ],
    )
