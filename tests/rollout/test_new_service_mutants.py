"""The validation contract covers the CRM, the notes workspace and the spreadsheets: harm to
their unrelated objects, a created deal or logged activity wrong in one column or lost at
once, and earlier work undone in them must each fail; every such variant is played here."""

from pathlib import Path

from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.runner import reference_footprint
from coworkenv.synth.validation.created_mutants import created_mutants
from coworkenv.synth.validation.mutants import _undo, mutants
from coworkenv.synth.validation.variants import replace_step, step_of
from coworkenv.task import load_task
from tests.rollout.test_created_variants import played

EXAMPLES = Path(__file__).resolve().parents[2] / "tasks" / "examples"


async def test_harm_to_unrelated_crm_notes_and_sheets_objects_fails() -> None:
    cache = SeedCache()
    seen = []
    for name in ("crm-log-call-move-deal", "notes-meeting-row", "sheets-mark-invoice-paid"):
        task = load_task(EXAMPLES / f"{name}.json")
        footprint = await reference_footprint(task, cache)
        harms = [v for v in mutants(task, cache.fork(task), footprint) if v.kind.startswith("collateral_")]
        seen += [(name, v.kind, v.description) for v in harms]
        assert [success for _, success, _ in await played(harms, cache, footprint)] == [False] * len(harms)
    assert seen == [
        ("crm-log-call-move-deal", "collateral_close", "mark unrelated deal 1 lost"),
        ("crm-log-call-move-deal", "collateral_overwrite", "rename unrelated deal 1"),
        ("crm-log-call-move-deal", "collateral_junk_create", "log a junk activity on unrelated account 1"),
        ("notes-meeting-row", "collateral_overwrite", "overwrite unrelated page 1"),
        ("notes-meeting-row", "collateral_overwrite", "rename unrelated database row 1"),
        ("notes-meeting-row", "collateral_junk_create", "create a junk page"),
        ("sheets-mark-invoice-paid", "collateral_overwrite", "write over a cell of unrelated spreadsheet 1"),
        ("sheets-mark-invoice-paid", "collateral_junk_create", "create a junk spreadsheet"),
    ]


async def test_a_created_deal_wrong_in_a_column_or_lost_at_once_fails() -> None:
    example = load_task(EXAMPLES / "crm-log-call-move-deal.json")
    deal = step_of(
        "crm_create_deal",
        account_id=2,
        name="Globex S10 sensors, second batch",
        amount=18000,
        close_date="2026-04-30",
        stage="proposal",
        owner="april.snyder@northwind.example",
    )
    task = replace_step(example, 0, 3, deal)
    cache = SeedCache()
    footprint = await reference_footprint(task, cache)
    variants = created_mutants(task, cache.fork(task), footprint)
    assert [(v.kind, v.description) for v in variants] == [
        ("created_column", "turns[0].solution[2] (crm_log_activity) with another kind"),
        ("created_column", "turns[0].solution[3] (crm_create_deal) with another amount"),
        ("created_column", "turns[0].solution[3] (crm_create_deal) with another close_date"),
        ("created_column", "turns[0].solution[3] (crm_create_deal) with another stage"),
        ("created_column", "turns[0].solution[3] (crm_create_deal) with another owner"),
        ("create_then_close", "turns[0].solution[3] (crm_create_deal), then closed_lost at once"),
    ]
    results = await played(variants, cache, footprint)
    assert [(success, [f.rsplit(" (", 1)[1] for f in found]) for _, success, found in results] == [
        (False, ["not asked for)"]),  # a note is not the call the task's check asked for
        (False, ["amount 36000, expected 18000)"]),
        (False, ["close_date '2026-05-07', expected '2026-04-30')"]),
        (False, ["stage 'negotiation', expected 'proposal')"]),
        (False, ["owner 'kimberly.smith@northwind.example', expected 'april.snyder@northwind.example')"]),
        (False, ["stage 'closed_lost', expected 'proposal')"]),
    ]


def test_undoing_an_update_puts_back_what_the_seed_held() -> None:
    task = load_task(EXAMPLES / "crm-log-call-move-deal.json")
    seed = SeedCache().fork(task)
    stage, next_step = seed.conn.execute("SELECT stage, next_step FROM crm_deals WHERE id = 2").fetchone()
    assert _undo(
        step_of("crm_update_deal", deal_id=2, stage="negotiation", next_step="Send it"), seed
    ) == step_of("crm_update_deal", deal_id=2, next_step=next_step, stage=stage)
    assert _undo(step_of("crm_update_deal", deal_id=999, stage="negotiation"), seed) is None
    notes_task = load_task(EXAMPLES / "notes-meeting-row.json")
    seed = SeedCache().fork(notes_task)
    body = seed.conn.execute("SELECT body FROM notes_pages WHERE id = 1").fetchone()[0]
    assert _undo(step_of("notes_update_page", page_id=1, append="More."), seed) == step_of(
        "notes_update_page", page_id=1, body=body
    )
    seed = SeedCache().fork(load_task(EXAMPLES / "sheets-mark-invoice-paid.json"))
    inputs = seed.conn.execute(
        "SELECT col, input FROM sheets_cells WHERE spreadsheet_id = 2 AND sheet = 'Invoices' AND row = 6 "
        "AND col IN (5, 6) ORDER BY col"
    ).fetchall()
    written = step_of(
        "sheets_write_range", spreadsheet_id=2, start="Invoices!E6", values=[["x", "paid", "y"]]
    )
    assert _undo(written, seed) == step_of(
        "sheets_write_range",
        spreadsheet_id=2,
        start="Invoices!E6",
        values=[[inputs[0][1], inputs[1][1], None]],
    )
    assert (
        _undo(step_of("sheets_write_range", spreadsheet_id=2, start="Nowhere!A1", values=[[1]]), seed) is None
    )
