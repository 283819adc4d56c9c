"""The procedural pipeline: kept tasks, provenance, the funnel, and validation in worker processes."""

from pathlib import Path

from coworkenv.synth.funnel import build_funnel, render_funnel_html
from coworkenv.synth.generators import ProceduralGenerator
from coworkenv.synth.pipeline import kept_tasks, plan_requests, read_drafts, synthesize


def test_slots_cycle_through_capabilities_and_difficulties() -> None:
    requests = plan_requests(5, ["triage_routing", "error_recovery"], seed=3)
    assert [(r.slot, r.capability, r.variant, r.difficulty, r.seed) for r in requests] == [
        (0, "triage_routing", 0, 0, 3),
        (1, "error_recovery", 0, 0, 3),
        (2, "triage_routing", 1, 1, 3),
        (3, "error_recovery", 1, 1, 3),
        (4, "triage_routing", 2, 2, 3),
    ]


async def test_worker_processes_keep_exactly_the_tasks_a_single_process_keeps(tmp_path: Path) -> None:
    single = await synthesize(
        ProceduralGenerator(),
        count=3,
        out_dir=tmp_path / "one",
        capabilities=["triage_routing"],
        concurrency=1,
    )
    workers = await synthesize(
        ProceduralGenerator(),
        count=3,
        out_dir=tmp_path / "two",
        capabilities=["triage_routing"],
        concurrency=2,
    )
    assert (single.kept, workers.kept) == (3, 3)
    one, two = kept_tasks(tmp_path / "one"), kept_tasks(tmp_path / "two")
    assert [t.content_hash for t in one] == [t.content_hash for t in two]
    assert [(t.provenance.generator, t.provenance.rounds, t.provenance.family) for t in one] == [
        ("procedural", 1, "mail_label_by_sender"),
        ("procedural", 1, "tickets_escalate"),
        ("procedural", 1, "tickets_route_by_rule"),
    ]
    funnel = build_funnel(read_drafts(tmp_path / "one"), one)
    assert funnel.counts["kept"] == 3 and funnel.counts["generated"] == 3
    assert funnel.diversity.coverage["triage_routing"]["tickets"] == 2
    page = render_funnel_html(funnel)
    assert '<section id="funnel">' in page and "http" not in page


async def test_an_unknown_capability_is_refused(tmp_path: Path) -> None:
    try:
        await synthesize(ProceduralGenerator(), count=1, out_dir=tmp_path, capabilities=["juggling"])
    except ValueError as exc:
        assert str(exc).startswith("unknown capability 'juggling'; known: find_and_report, triage_routing")
    else:
        raise AssertionError("an unknown capability was accepted")
