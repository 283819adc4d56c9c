"""Sheets part of a world's seed: its price list, invoice ledger, budget, monthly figures and
rota, each with the formulas people keep in them (totals, tax, counts, averages)."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import TYPE_CHECKING

from coworkenv.state import Workspace, format_time

from .world import AddSpreadsheet, Cell, SeedSheet, add_spreadsheet

if TYPE_CHECKING:
    from coworkenv.world import World

#: The tax rate every price list applies (its Settings sheet holds it, so a task can change it).
TAX_RATE = 0.2
#: How many invoices a ledger holds, and the months of figures kept.
INVOICES = 16
MONTHS = 6
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri")


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Insert the world's spreadsheets, oldest first."""
    for spreadsheet in (
        _price_list(world),
        _ledger(world, rng),
        _budget(world, rng),
        _figures(world, rng),
        _rota(world, rng),
    ):
        if spreadsheet is not None:
            add_spreadsheet(ws, spreadsheet)


def _lead(world: World, role: str) -> str:
    team = world.team(role)
    return next(t.lead for t in world.teams if t.name == team)


def _price_list(world: World) -> AddSpreadsheet | None:
    if not world.products:
        return None
    rows: list[list[Cell]] = [["SKU", "Product", "Unit", f"Price ({world.currency})", "Price incl. tax"]]
    for n, product in enumerate(world.products, start=2):
        rows.append(
            [product.sku, product.name, product.unit, product.price, f"=ROUND(D{n}*(1+Settings!B1),2)"]
        )
    return AddSpreadsheet(
        title="Price list",
        owner=_lead(world, "sales"),
        sheets=[
            SeedSheet(name="Prices", rows=rows),
            SeedSheet(name="Settings", rows=[["Tax rate", TAX_RATE]]),
        ],
        created_at=format_time(world.start - timedelta(days=90)),
    )


def _ledger(world: World, rng: random.Random) -> AddSpreadsheet:
    customers = [o.name for o in world.organizations if o.kind == "customer"] or [
        o.name for o in world.organizations
    ]
    prices = [p.price for p in world.products] or [100]
    year = world.start.year
    rows: list[list[Cell]] = [
        ["Invoice", "Customer", "Issued", "Due", f"Amount ({world.currency})", "Status"]
    ]
    for n in range(INVOICES):
        issued = world.start - timedelta(days=90 - n * 5 - rng.randint(0, 3))
        due = issued + timedelta(days=30)
        amount = rng.choice(prices) * rng.randint(1, 12)
        status = "paid" if due < world.start - timedelta(days=10) and rng.random() < 0.8 else "open"
        rows.append(
            [
                f"INV-{year}-{n + 101:04d}",
                rng.choice(customers) if world.organizations else "Walk-in",
                issued.date().isoformat(),
                due.date().isoformat(),
                amount,
                status,
            ]
        )
    summary: list[list[Cell]] = [
        ["Total invoiced", "=SUM(Invoices!E:E)"],
        ["Open amount", '=SUMIF(Invoices!F:F,"open",Invoices!E:E)'],
        ["Open invoices", '=COUNTIF(Invoices!F:F,"open")'],
        ["Average invoice", "=ROUND(AVERAGE(Invoices!E:E),2)"],
    ]
    return AddSpreadsheet(
        title=f"Invoice ledger {year}",
        owner=_lead(world, "finance"),
        sheets=[SeedSheet(name="Invoices", rows=rows), SeedSheet(name="Summary", rows=summary)],
        created_at=format_time(world.start - timedelta(days=95)),
    )


def _budget(world: World, rng: random.Random) -> AddSpreadsheet:
    year = world.start.year
    rows: list[list[Cell]] = [["Team", "Q1", "Q2", "Q3", "Q4", "Total"]]
    for n, team in enumerate(world.teams, start=2):
        base = 5000 * max(1, len(world.team_members(team.name)))
        quarters: list[Cell] = [base + rng.randint(-4, 8) * 500 for _ in range(4)]
        rows.append([team.name, *quarters, f"=SUM(B{n}:E{n})"])
    last = len(world.teams) + 1
    rows.append(["Total", *[f"=SUM({col}2:{col}{last})" for col in "BCDEF"]])
    return AddSpreadsheet(
        title=f"Budget {year}",
        owner=_lead(world, "finance"),
        sheets=[SeedSheet(name="Budget", rows=rows)],
        created_at=format_time(world.start - timedelta(days=60)),
    )


def _figures(world: World, rng: random.Random) -> AddSpreadsheet | None:
    metrics = world.vocabulary.metrics
    if not metrics:
        return None
    first = world.start.replace(day=1)
    months: list[str] = []
    for back in range(MONTHS, 0, -1):
        day = first
        for _ in range(back):
            day = (day - timedelta(days=1)).replace(day=1)
        months.append(day.strftime("%Y-%m"))
    rows: list[list[Cell]] = [["Month", *metrics]]
    scales = [rng.choice([20, 50, 200, 1000, 25000]) for _ in metrics]
    for month in months:
        rows.append([month, *[scale + rng.randint(0, scale) for scale in scales]])
    last = MONTHS + 1
    columns = [chr(ord("B") + i) for i in range(len(metrics))]
    rows.append(["Average", *[f"=ROUND(AVERAGE({c}2:{c}{last}),1)" for c in columns]])
    return AddSpreadsheet(
        title="Monthly figures",
        owner=_lead(world, "leadership"),
        sheets=[SeedSheet(name="Figures", rows=rows)],
        created_at=format_time(world.start - timedelta(days=180)),
    )


def _rota(world: World, rng: random.Random) -> AddSpreadsheet:
    team = world.team("desk")
    people = [p.name for p in world.team_members(team)]
    monday = (world.start - timedelta(days=world.start.weekday())).date()
    rows: list[list[Cell]] = [["Week of", *WEEKDAYS]]
    for week in range(4):
        rows.append([(monday + timedelta(weeks=week)).isoformat(), *[rng.choice(people) for _ in WEEKDAYS]])
    counts: list[list[Cell]] = [["Person", "Days on duty"]]
    for n, name in enumerate(sorted(people), start=2):
        counts.append([name, f"=COUNTIF(Rota!B2:F5,A{n})"])
    return AddSpreadsheet(
        title=f"{team} duty rota",
        owner=_lead(world, "desk"),
        sheets=[SeedSheet(name="Rota", rows=rows), SeedSheet(name="Totals", rows=counts)],
        created_at=format_time(world.start - timedelta(days=7)),
    )
