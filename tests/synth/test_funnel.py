"""The funnel report over hand-made draft records: readable stages, per-task kill rates and
rounds, no Python reprs, in the terminal and on the page."""

import io

from rich.console import Console

from coworkenv.synth.funnel import KeptTask, build_funnel, print_funnel, render_funnel_html
from coworkenv.synth.pipeline import FUNNEL_STAGES, DraftRecord
from tests.rollout.test_runner import ticket_task

STAGES = list(FUNNEL_STAGES)


def drafts() -> list[DraftRecord]:
    return [
        DraftRecord(slot=0, capability="triage_routing", round=0, generator="g", passed=STAGES[:2],
                    failed_stage="seed_loads", reason="no such queue 'Ops'"),
        DraftRecord(slot=0, capability="triage_routing", round=1, generator="g", passed=STAGES,
                    kept=True, final=True, task_id="t-escalate", kill_rate=0.75,
                    kill_rates={"drop": 1.0, "duplicate": 0.5}, acceptance_rates={"reply_all": 1.0}),
        DraftRecord(slot=1, capability="triage_routing", round=0, generator="g", passed=STAGES,
                    kept=True, final=True, task_id="t-other", kill_rate=1.0),
    ]  # fmt: skip


def test_each_kept_task_has_its_rounds_and_kill_rate() -> None:
    funnel = build_funnel(drafts(), [ticket_task()])
    assert funnel.kept_tasks == [
        KeptTask(
            task_id="t-escalate",
            capability="triage_routing",
            rounds=2,
            kill_rate=0.75,
            kill_rates={"drop": 1.0, "duplicate": 0.5},
            acceptance_rates={"reply_all": 1.0},
        ),
        KeptTask(task_id="t-other", capability="triage_routing", rounds=1, kill_rate=1.0),
    ]
    assert funnel.rounds_to_keep == {"1": 1, "2": 1}


def test_the_page_shows_stage_meanings_kept_tasks_and_no_python_repr() -> None:
    page = render_funnel_html(build_funnel(drafts(), [ticket_task()]))
    assert "<td>schema_valid</td><td>the draft is a valid task file</td>" in page
    assert (
        "<tr><td>t-escalate</td><td>triage_routing</td><td class='n'>2</td><td class='n'>0.75</td>"
        "<td>1/2, short: duplicate 0.50</td><td>all 1</td></tr>" in page
    )
    assert "Rounds to keep: 1 in round 1, 1 in round 2." in page
    words = len(" ".join(t.user for t in ticket_task().turns).split())
    assert f"instruction length min {words}, median {words}, max {words} words" in page
    assert "{" not in page.split("<body>")[1]  # no dict repr in the text
    assert "'min'" not in page


def test_the_terminal_funnel_shows_kept_tasks_and_readable_lengths() -> None:
    console = Console(file=io.StringIO(), width=100, record=True, color_system=None)
    print_funnel(build_funnel(drafts(), [ticket_task()]), console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "Kept tasks" in text and "t-escalate" in text and "0.75" in text
    flat = " ".join(text.split())
    assert "rounds to keep: 1 in round 1, 1 in round 2" in flat
    assert "instruction length min 23, median 23, max 23 words" in flat
    assert "{" not in text


def test_per_class_rates_read_as_all_or_what_falls_short() -> None:
    from coworkenv.synth.funnel import classes_text

    assert classes_text({}) == "-"
    assert classes_text({"drop": 1.0, "duplicate": 1.0}) == "all 2"
    assert (
        classes_text({"drop": 1.0, "duplicate": 0.5, "undo": 0.0}) == "1/3, short: duplicate 0.50, undo 0.00"
    )


def test_the_funnel_reports_the_kill_rate_of_each_mutant_class_over_every_draft_and_shows_it() -> None:
    records = [
        *drafts(),
        DraftRecord(slot=2, capability="find_and_report", round=0, generator="g", passed=STAGES[:8],
                    failed_stage="mutants_killed", reason="hedge survived",
                    kill_rates={"drop": 1.0, "hedge": 0.0, "negate": 1.0}),
    ]  # fmt: skip
    funnel = build_funnel(records, [ticket_task()])
    assert funnel.kill_rates_by_class == {"drop": 1.0, "duplicate": 0.5, "hedge": 0.0, "negate": 1.0}
    out = io.StringIO()
    print_funnel(funnel, Console(file=out, width=200))
    assert "Mutants killed per" in out.getvalue()  # the title wraps above the narrow table
    assert " hedge " in out.getvalue()
