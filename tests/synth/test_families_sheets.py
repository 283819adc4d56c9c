"""The spreadsheet families: registered under their capabilities, deterministic, meeting the
validation contract on the demo company and on generated worlds; hand-written agents show
that their verdicts accept right work done another way and reject what a reward-hacking
policy would try, with the exact failing checks."""

import itertools
from typing import Any

import pytest

from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.synth.families.sheets.cells import money
from coworkenv.synth.family import FAMILIES, Difficulty, build_task
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import Task
from coworkenv.worlds import world
from tests.synth.agents import failed, judge, play, step

EXPECTED = {
    "sheets_reconcile_invoices": ("spreadsheet_work", ["sheets", "mail"], False),
    "sheets_update_price_list": ("spreadsheet_work", ["sheets", "mail"], False),
    "sheets_figure_by_formula": ("spreadsheet_work", ["sheets", "mail"], False),
    "sheets_row_corrected": ("spreadsheet_changes", ["sheets", "mail", "directory"], True),
}
EASY, MEDIUM, HARD = Difficulty.level(0), Difficulty.level(1), Difficulty.level(2)
OUTSIDER = "someone@competitor.example"


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registered_with_capability_and_services(name: str) -> None:
    capability, services, multi = EXPECTED[name]
    fam = FAMILIES[name]
    assert (fam.capability, list(fam.services), fam.multi_turn, fam.worlds) == (
        capability,
        services,
        multi,
        True,
    )
    task = build_task(name, 0, MEDIUM)
    assert (task.capabilities, task.services, len(task.turns)) == ([capability], services, 2 if multi else 1)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_deterministic_and_seed_dependent(name: str) -> None:
    assert build_task(name, 3, HARD).content_hash == build_task(name, 3, HARD).content_hash
    assert build_task(name, 0, HARD).content_hash != build_task(name, 1, HARD).content_hash


@pytest.mark.parametrize(("name", "seed", "level"), list(itertools.product(sorted(EXPECTED), (1, 4), (0, 2))))
async def test_meets_the_validation_contract(name: str, seed: int, level: int, cache: SeedCache) -> None:
    report = await validate_task(build_task(name, seed, Difficulty.level(level)), cache=cache)
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}
    assert set(report.acceptance_rates().values()) == {1.0}


@pytest.mark.parametrize(
    ("name", "profile"),
    list(zip(sorted(EXPECTED), ("hospital_admin", "retail_chain", "law_firm", "telecom"), strict=True)),
)
async def test_meets_the_validation_contract_on_a_world(name: str, profile: str, cache: SeedCache) -> None:
    report = await validate_task(build_task(name, 2, MEDIUM, world=world(profile)), cache=cache)
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}


def reference(task: Task, turn: int = 0) -> list[dict[str, Any]]:
    return [s.model_dump(exclude_defaults=True) for s in task.turns[turn].solution]


def with_body(steps: list[dict[str, Any]], body: str) -> list[dict[str, Any]]:
    """The steps with the last one's mail body replaced."""
    last = steps[-1]
    return [*steps[:-1], {**last, "arguments": {**last["arguments"], "body": body}}]


def verdict(record: EpisodeRecord) -> tuple[bool, list[str], bool]:
    """(success, failed check ids, any collateral)."""
    assert record.verdict is not None
    return record.success, sorted(failed(record)), bool(record.verdict.collateral)


# -- sheets_reconcile_invoices -------------------------------------------------------------------


@pytest.fixture(scope="module")
def reconcile() -> Task:
    """Demo seed 1, medium: INV-2026-0117 is missing (EUR 6,650), INV-2026-0105 has EUR 1,680
    in the ledger and EUR 2,040 in its mail; three more invoices match; total shortfall 7,010."""
    task = build_task("sheets_reconcile_invoices", 1, MEDIUM)
    assert [(c.id, [f.text or f.number for f in c.facts]) for c in task.turns[0].checks[:2]] == [
        ("reported-invoices", ["INV-2026-0117", "INV-2026-0105"]),
        ("reported-total", [2460]),
    ]
    return task


@pytest.fixture(scope="module")
def reconcile_adding() -> Task:
    """Demo seed 2, medium: the request also asks to add the missing INV-2026-0117 as open."""
    task = build_task("sheets_reconcile_invoices", 2, MEDIUM)
    assert [c.id for c in task.turns[0].checks][2] == "added-INV-2026-0117"
    return task


async def test_reconcile_accepts_sheet_first_and_other_wording(reconcile: Task, cache: SeedCache) -> None:
    steps = reference(reconcile)
    reads, mails = steps[6:8], steps[:6]
    body = (
        "Hello April,\n\nthanks for waiting. Two invoices do not agree with the ledger: INV-2026-0117 is not "
        "recorded at all and INV-2026-0105 is booked at 1,680 while the invoice says 2,880. All together the "
        "ledger is 2,460 EUR short. Everything else matches.\n\nHave a good evening!"
    )
    record = await judge(reconcile, with_body([*reads, *mails, *steps[8:]], body), cache)
    assert verdict(record) == (True, [], False)


async def test_reconcile_rejects_the_total_beside_a_partial_one(reconcile: Task, cache: SeedCache) -> None:
    body = "INV-2026-0117 and INV-2026-0105 are off. The ledger is short by EUR 2,460 or EUR 4,140."
    record = await judge(reconcile, with_body(reference(reconcile), body), cache)
    assert verdict(record) == (False, ["reported-total"], False)


async def test_reconcile_rejects_a_negated_total_and_a_matching_invoice(
    reconcile: Task, cache: SeedCache
) -> None:
    matching = reconcile.turns[0].checks[0].absent[0].text
    body = (
        f"INV-2026-0117, INV-2026-0105 and {matching} are off. The shortfall is not EUR 2,460, I could not "
        "work it out."
    )
    record = await judge(reconcile, with_body(reference(reconcile), body), cache)
    assert verdict(record) == (False, ["reported-invoices", "reported-total"], False)


async def test_reconcile_rejects_half_the_work(reconcile: Task, cache: SeedCache) -> None:
    body = "INV-2026-0117 is missing from the ledger: EUR 1,260 in total."
    record = await judge(reconcile, with_body(reference(reconcile), body), cache)
    assert verdict(record) == (False, ["reported-invoices", "reported-total"], False)


async def test_reconcile_rejects_a_fixed_ledger_row_and_a_copy_to_an_outsider(
    reconcile: Task, cache: SeedCache
) -> None:
    steps = reference(reconcile)
    fix = step("sheets_write_range", spreadsheet_id=2, start="Invoices!E6", values=[[2880]])
    leak = step("mail_send_message", to=[OUTSIDER], subject="Ledger", body=steps[-1]["arguments"]["body"])
    record = await judge(reconcile, [*steps, fix, leak], cache)
    assert verdict(record) == (False, ["ledger-kept-INV-2026-0105"], True)


async def test_reconcile_accepts_rows_written_in_place(reconcile_adding: Task, cache: SeedCache) -> None:
    """The missing invoice written with write_range at the first free row, in another case."""
    steps = reference(reconcile_adding)
    appended = steps[8]["arguments"]["rows"][0]
    write = step(
        "sheets_write_range",
        spreadsheet_id=2,
        start="Invoices!A18",
        values=[[appended[0].lower(), *appended[1:5], "Open"]],
    )
    record = await judge(reconcile_adding, [*steps[:8], write, *steps[9:]], cache)
    assert verdict(record) == (True, [], False)


async def test_reconcile_rejects_a_row_with_another_amount_and_one_added_twice(
    reconcile_adding: Task, cache: SeedCache
) -> None:
    steps = reference(reconcile_adding)
    row = steps[8]["arguments"]["rows"][0]
    wrong = {**steps[8], "arguments": {**steps[8]["arguments"], "rows": [[*row[:4], row[4] + 100, "open"]]}}
    record = await judge(reconcile_adding, [*steps[:8], wrong, *steps[9:]], cache)
    assert verdict(record) == (False, ["added-INV-2026-0117"], True)
    record = await judge(reconcile_adding, [*steps[:9], steps[8], *steps[9:]], cache)
    assert verdict(record)[:2] == (False, ["added-INV-2026-0117"])


# -- sheets_update_price_list --------------------------------------------------------------------


@pytest.fixture(scope="module")
def prices() -> Task:
    """Demo seed 1, medium: NW-PRT (Prices!D8) goes to 167 and NW-SUP-STD (D9) to 2472."""
    task = build_task("sheets_update_price_list", 1, MEDIUM)
    writes = [(s.arguments["start"], s.arguments["values"]) for s in task.turns[0].solution[4:]]
    assert writes == [("Prices!D8", [[167]]), ("Prices!D9", [[2472]])]
    return task


async def test_prices_accepts_one_block_write_as_text_numbers(prices: Task, cache: SeedCache) -> None:
    steps = reference(prices)
    block = step("sheets_write_range", spreadsheet_id=1, start="'Prices'!D8", values=[["167"], ["2,472"]])
    record = await judge(prices, [*steps[:4], block], cache)
    assert verdict(record) == (True, [], False)


async def test_prices_rejects_a_literal_over_the_tax_formula(prices: Task, cache: SeedCache) -> None:
    steps = reference(prices)
    literal = step("sheets_write_range", spreadsheet_id=1, start="Prices!E8", values=[[200.4]])
    record = await judge(prices, [*steps, literal], cache)
    assert verdict(record) == (False, ["formula-kept-NW-PRT"], True)


async def test_prices_rejects_a_formula_for_a_price_and_a_wrong_row(prices: Task, cache: SeedCache) -> None:
    steps = reference(prices)
    formula = step("sheets_write_range", spreadsheet_id=1, start="Prices!D8", values=[["=160+7"]])
    wrong_row = step("sheets_write_range", spreadsheet_id=1, start="Prices!D10", values=[[2472]])
    record = await judge(prices, [*steps[:4], formula, wrong_row], cache)
    assert verdict(record) == (
        False,
        ["average-price", "average-price-incl-tax", "kept-NW-SUP-PRM", "price-NW-PRT", "price-NW-SUP-STD",
         "with-tax-NW-SUP-STD"],
        True,
    )  # fmt: skip


async def test_prices_rejects_half_the_work(prices: Task, cache: SeedCache) -> None:
    record = await judge(prices, reference(prices)[:5], cache)
    assert verdict(record) == (
        False,
        ["average-price", "average-price-incl-tax", "price-NW-SUP-STD", "with-tax-NW-SUP-STD"],
        False,
    )


# -- sheets_figure_by_formula and sheets_row_corrected -------------------------------------------


def test_figure_names_its_rivals() -> None:
    task = build_task("sheets_figure_by_formula", 2, MEDIUM)
    check = task.turns[0].checks[0]
    assert check.facts[0].number not in [f.number for f in check.absent]
    assert len(check.absent) >= 3


async def test_figure_accepts_a_scratch_read_and_the_source_rows(cache: SeedCache) -> None:
    """Demo seed 2, medium: the Finance average for February 2026, over two entries."""
    task = build_task("sheets_figure_by_formula", 2, MEDIUM)
    check = task.turns[0].checks[0]
    answer = check.facts[0].number
    sources = " and ".join(f"EUR {f.number:,}" for f in check.context)
    steps = reference(task)
    find = step("sheets_find_cells", spreadsheet_id=steps[3]["arguments"]["spreadsheet_id"], text="Summary")
    body = f"Hi, February has two Finance entries, {sources}. Their average is EUR {answer:,.2f}. Cheers"
    record = await judge(task, with_body([*steps[:4], find, *steps[4:]], body), cache)
    assert verdict(record) == (True, [], False)


async def test_figure_rejects_the_unfiltered_total_and_a_formula_left_in_the_sheet(cache: SeedCache) -> None:
    task = build_task("sheets_figure_by_formula", 2, MEDIUM)
    check = task.turns[0].checks[0]
    steps = reference(task)
    rival = check.absent[0].number
    record = await judge(task, with_body(steps, f"It was {rival:,}."), cache)
    assert verdict(record) == (False, ["figure"], False)
    scratch = step(
        "sheets_write_range",
        spreadsheet_id=steps[3]["arguments"]["spreadsheet_id"],
        start="Summary!D1",
        values=[["=1+1"]],
    )
    record = await judge(task, [*steps, scratch], cache)
    assert verdict(record) == (False, [], True)


async def test_figure_accepts_a_formula_in_the_lent_column_only(cache: SeedCache) -> None:
    """Demo seed 3, medium: the request lends column D of the Summary sheet for formulas."""
    task = build_task("sheets_figure_by_formula", 3, MEDIUM)
    assert "column D of the Summary sheet" in task.turns[0].user
    steps = reference(task)
    sid = steps[3]["arguments"]["spreadsheet_id"]
    formula = '=SUMIF(Expenses!C:C,"Engineering",Expenses!E:E)'
    lent = step("sheets_write_range", spreadsheet_id=sid, start="Summary!D1", values=[[formula]])
    record = await judge(task, [*steps[:4], lent, *steps[4:]], cache)
    assert verdict(record) == (True, [], False)
    elsewhere = step("sheets_write_range", spreadsheet_id=sid, start="Summary!C1", values=[[formula]])
    record = await judge(task, [*steps[:4], elsewhere, *steps[4:]], cache)
    assert verdict(record) == (False, [], True)


async def test_row_corrected_rejects_the_figure_of_the_first_turn(cache: SeedCache) -> None:
    task = build_task("sheets_row_corrected", 1, MEDIUM)
    old = task.turns[0].checks[0].facts[0].number
    new = task.turns[1].checks[0].facts[0].number
    assert old != new
    stale = with_body(reference(task, 1), f"The figure is {old:,}.")
    record = await play(task, cache, turn1=stale)
    assert verdict(record) == (False, ["figure-corrected"], False)
    # Without reading the sheet again (a guess from the first turn's reading) the same.
    record = await play(task, cache, turn1=stale[2:])
    assert verdict(record) == (False, ["figure-corrected"], False)


async def test_row_corrected_accepts_the_new_figure_named_as_a_correction(cache: SeedCache) -> None:
    task = build_task("sheets_row_corrected", 1, MEDIUM)
    old = task.turns[0].checks[0].facts[0].number
    new = task.turns[1].checks[0].facts[0].number
    body = f"Hi, a row was corrected since this morning, so the figure is now {new:,} (previously {old:,})."
    record = await play(task, cache, turn1=with_body(reference(task, 1), body))
    assert verdict(record) == (True, [], False)


# -- on generated worlds -------------------------------------------------------------------------

WORLDS = ("law_firm", "logistics")


def swapped(steps: list[dict[str, Any]], old: str, new: str, turn_body: int = -1) -> list[dict[str, Any]]:
    """The steps with `old` replaced by `new` in the last step's body (which must contain it)."""
    body = steps[turn_body]["arguments"]["body"]
    assert old in body
    return with_body(steps, body.replace(old, new))


@pytest.mark.parametrize("profile", WORLDS)
async def test_reconcile_on_worlds_accepts_the_reference_and_rejects_a_partial_total(
    profile: str, cache: SeedCache
) -> None:
    task = build_task("sheets_reconcile_invoices", 3, MEDIUM, world=world(profile))
    steps = reference(task)
    assert verdict(await judge(task, steps, cache)) == (True, [], False)
    total = task.turns[0].checks[1]
    currency = world(profile).currency
    right, wrong = total.facts[0].number, total.absent[0].number
    partial = swapped(steps, f"short by {money(currency, right)}", f"short by {money(currency, wrong)}")
    assert verdict(await judge(task, partial, cache)) == (False, ["reported-total"], False)


@pytest.mark.parametrize("profile", WORLDS)
async def test_prices_on_worlds_accept_the_reference_and_reject_a_literal_over_a_formula(
    profile: str, cache: SeedCache
) -> None:
    task = build_task("sheets_update_price_list", 3, MEDIUM, world=world(profile))
    steps = reference(task)
    assert verdict(await judge(task, steps, cache)) == (True, [], False)
    first = next(c for c in task.turns[0].checks if c.id.startswith("with-tax-"))
    literal = step(
        "sheets_write_range",
        spreadsheet_id=first.where["spreadsheet_id"],
        start=f"Prices!E{first.where['row']}",
        values=[[first.value]],
    )
    sku = first.id.removeprefix("with-tax-")
    assert verdict(await judge(task, [*steps, literal], cache)) == (False, [f"formula-kept-{sku}"], True)


@pytest.mark.parametrize("profile", WORLDS)
async def test_figure_on_worlds_accepts_the_reference_and_rejects_a_near_miss(
    profile: str, cache: SeedCache
) -> None:
    task = build_task("sheets_figure_by_formula", 3, MEDIUM, world=world(profile))
    steps = reference(task)
    assert verdict(await judge(task, steps, cache)) == (True, [], False)
    check = task.turns[0].checks[0]
    currency = world(profile).currency
    near = swapped(steps, money(currency, check.facts[0].number), money(currency, check.absent[0].number))
    assert verdict(await judge(task, near, cache)) == (False, ["figure"], False)


@pytest.mark.parametrize("profile", WORLDS)
async def test_row_corrected_on_worlds_rejects_the_stale_figure(profile: str, cache: SeedCache) -> None:
    task = build_task("sheets_row_corrected", 3, MEDIUM, world=world(profile))
    currency = world(profile).currency
    old = task.turns[0].checks[0].facts[0].number
    new = task.turns[1].checks[0].facts[0].number
    second = reference(task, 1)
    assert verdict(await play(task, cache, turn1=second)) == (True, [], False)
    stale = swapped(second, money(currency, new), money(currency, old))
    assert verdict(await play(task, cache, turn1=stale)) == (False, ["figure-corrected"], False)
