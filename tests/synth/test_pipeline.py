"""The procedural pipeline: kept tasks, provenance, the funnel, and validation in worker processes."""

from collections.abc import Sequence
from pathlib import Path

from coworkenv.synth.funnel import build_funnel, render_funnel_html
from coworkenv.synth.generators import DraftRequest, ProceduralGenerator
from coworkenv.synth.pipeline import DEFAULT_WORLDS, kept_tasks, plan_requests, read_drafts, synthesize
from coworkenv.synth.plan import world_plan
from coworkenv.task import Task


def test_slots_on_one_world_cycle_through_capabilities_families_and_difficulties() -> None:
    requests = plan_requests(5, ["triage_routing", "error_recovery"], seed=3, worlds=1)
    assert [(r.slot, r.capability, r.family, r.variant, r.difficulty, r.world) for r in requests] == [
        (0, "triage_routing", "mail_label_by_sender", 0, 0, "northwind"),
        (1, "error_recovery", "files_missing_folder", 0, 0, "northwind"),
        (2, "triage_routing", "tickets_escalate", 1, 1, "northwind"),
        (3, "error_recovery", "tickets_invalid_transition", 1, 1, "northwind"),
        (4, "triage_routing", "tickets_route_by_rule", 2, 2, "northwind"),
    ]


def world_of_seed(task: Task) -> str:
    params = task.seed.procedural.params
    if task.seed.procedural.name == "demo":
        return "northwind"
    return f"{params['profile']}:{params['size']}:{params['seed']}"


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
    assert sorted((t.provenance.generator, t.provenance.rounds, t.provenance.family) for t in one) == [
        ("procedural", 1, "mail_label_by_sender"),
        ("procedural", 1, "tickets_escalate"),
        ("procedural", 1, "tickets_route_by_rule"),
    ]
    planned = {r.family: r.world for r in plan_requests(3, ["triage_routing"], seed=0, worlds=DEFAULT_WORLDS)}
    assert {t.provenance.family: world_of_seed(t) for t in one} == planned
    generated = world_plan(DEFAULT_WORLDS, 0)[1:]
    ready = sorted(w for w in planned.values() if w != "northwind")
    assert len(ready) >= 2 and ready == sorted(generated[: len(ready)])  # escalate and route_by_rule at least
    assert [(r.slot, r.request) for r in read_drafts(tmp_path / "one")] == [
        (r.slot, r) for r in plan_requests(3, ["triage_routing"], seed=0, worlds=DEFAULT_WORLDS)
    ]
    funnel = build_funnel(read_drafts(tmp_path / "one"), one)
    assert funnel.counts["kept"] == 3 and funnel.counts["generated"] == 3
    assert funnel.diversity.coverage["triage_routing"]["tickets"] == 2
    page = render_funnel_html(funnel)
    assert '<section id="funnel">' in page and "http" not in page


class SameDraftTwice:
    """Drafts slot 0's procedural task for every slot: the second is a near-duplicate."""

    name, model = "procedural", None

    def __init__(self) -> None:
        self.procedural = ProceduralGenerator()

    async def draft(
        self,
        request: DraftRequest,
        previous: str | None,
        report: str | None,
        round: int,
        kept: Sequence[Task] = (),
    ) -> str:
        return await self.procedural.draft(
            request.model_copy(update={"slot": 0, "variant": 0, "difficulty": 0}), None, None, 0
        )


async def test_worker_processes_reject_a_near_duplicate_of_an_earlier_slot_as_one_process_does(
    tmp_path: Path,
) -> None:
    outcomes = []
    for concurrency in (1, 2):
        out = tmp_path / str(concurrency)
        state = await synthesize(
            SameDraftTwice(),
            count=2,
            out_dir=out,
            capabilities=["triage_routing"],
            max_rounds=1,
            concurrency=concurrency,
        )
        records = sorted(read_drafts(out), key=lambda r: r.slot)
        outcomes.append(
            (
                state.kept,
                state.rejected,
                [(r.slot, r.kept, r.failed_stage, r.passed[-1]) for r in records],
                [t.id for t in kept_tasks(out)],
            )
        )
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][:3] == (
        1,
        1,
        [(0, True, None, "right_variants_pass"), (1, False, "unique", "consistent")],
    )
    assert records[1].reason.startswith(f"unique: a near-duplicate of kept task {outcomes[1][3][0]!r}")


async def test_an_unknown_capability_is_refused(tmp_path: Path) -> None:
    try:
        await synthesize(ProceduralGenerator(), count=1, out_dir=tmp_path, capabilities=["juggling"])
    except ValueError as exc:
        assert str(exc).startswith("unknown capability 'juggling'; known: find_and_report, triage_routing")
    else:
        raise AssertionError("an unknown capability was accepted")
