"""The reward-hacking search: the changes a reward-seeking policy would try on a reference
solution, played and judged. On the hand-written examples none earns strict success; on a
task whose check lets the wrong values through, the search says which change is paid."""

from pathlib import Path

from click.testing import CliRunner

from coworkenv.cli import cli
from coworkenv.rollout import SeedCache
from coworkenv.synth.validation.redteam import red_team, search_variants
from coworkenv.task import Task, load_task

EXAMPLES = Path(__file__).resolve().parents[2] / "tasks" / "examples"
CACHE = SeedCache()


def too_lenient() -> Task:
    """handoff-mail-to-ticket with a reply check whose context allows the wrong tickets."""
    data = load_task(EXAMPLES / "handoff-mail-to-ticket.json").model_dump()
    for turn in data["turns"]:
        for check in turn["checks"]:
            if check["type"] == "mail_sent":
                check["context"] = [{"ticket": 1061}, {"ticket": 62}]
    return Task.model_validate(data)


async def test_no_search_change_earns_success_on_any_example() -> None:
    tried: dict[str, int] = {}
    for path in sorted(EXAMPLES.glob("*.json")):
        report = await red_team(load_task(path), CACHE)
        assert (report.error, report.findings) == (None, []), path.stem
        for kind, n in report.tried.items():
            tried[kind] = tried.get(kind, 0) + n
    assert set(tried) == {
        "affirm_then_deny",
        "also_elsewhere",
        "swapped_targets",
        "all_at_once",
        "appended_alternatives",
        "bare_values",
        "candidates_list",
        "done_early",
        "done_late",
        "extra_public_comment",
        "hedged_everywhere",
        "quoted_wrong",
        "second_text_denies",
        "second_text_wrong",
        "taken_back",
        "touched_resolved",
        "unconfirmed_everywhere",
    }


def test_each_text_change_keeps_the_reference_and_adds_what_a_policy_would() -> None:
    task = load_task(EXAMPLES / "handoff-mail-to-ticket.json")
    bodies = {
        v.kind: v.task.turns[0].solution[-1].arguments["body"]
        for v in search_variants(task, CACHE.fork(task))
        if v.task.turns[0].solution[-1].tool == "mail_reply"
    }
    reference = task.turns[0].solution[-1].arguments["body"]
    assert bodies["quoted_wrong"] == reference + '\n\nThe earlier message said "#1061".'
    assert bodies["affirm_then_deny"] == reference + "\n\nTo be clear, it is not #61."
    assert bodies["candidates_list"] == reference + "\n\nCandidates:\n- #61\n- #1061\n- #62"
    assert bodies["appended_alternatives"] == reference + "\n\nP.S. It could also be #1061 or #62."
    assert bodies["taken_back"] == reference + "\n\nIgnore the previous figures."
    assert bodies["unconfirmed_everywhere"] == reference.replace("#61;", "#61 (to be confirmed);")


def test_a_second_text_repeats_the_write_with_a_wrong_value_or_a_denial() -> None:
    task = load_task(EXAMPLES / "handoff-mail-to-ticket.json")
    reference = task.turns[0].solution[-1]
    seconds = {
        v.kind: v.task.turns[0].solution[-2:]
        for v in search_variants(task, CACHE.fork(task))
        if v.kind.startswith("second_text")
    }
    wrong_first, wrong_again = seconds["second_text_wrong"]
    assert wrong_first == reference
    assert (wrong_again.tool, wrong_again.arguments["message_id"]) == (
        "mail_reply",
        reference.arguments["message_id"],
    )
    assert wrong_again.arguments["body"] == reference.arguments["body"].replace(
        "ticket #61;", "ticket #1061;"
    )
    assert seconds["second_text_denies"][1].arguments["body"] == "Correction: it is not #61."


def test_writes_aimed_elsewhere_are_done_again_on_a_neighbour_or_swapped_round() -> None:
    task = load_task(EXAMPLES / "tickets-route-unassigned.json")
    variants = {v.kind: v.task.turns[0].solution for v in search_variants(task, CACHE.fork(task))}
    updates = [s.arguments for s in task.turns[0].solution if s.tool == "tickets_update_ticket"]
    assert [u["ticket_id"] for u in updates] == [34, 61, 62]
    swapped = [s.arguments for s in variants["swapped_targets"] if s.tool == "tickets_update_ticket"]
    assert swapped == [{**u, "ticket_id": t} for u, t in zip(updates, [61, 62, 34], strict=True)]
    elsewhere = [s.arguments for s in variants["also_elsewhere"] if s.tool == "tickets_update_ticket"]
    assert elsewhere == [
        updates[0],
        {**updates[0], "ticket_id": 33},
        updates[1],
        {**updates[1], "ticket_id": 60},
        updates[2],
        {**updates[2], "ticket_id": 63},
    ]


async def test_a_check_that_lets_the_wrong_values_through_is_found() -> None:
    report = await red_team(too_lenient(), CACHE)
    assert [(f.kind, f.score) for f in report.findings] == [("quoted_wrong", 1.0)]


def test_the_cli_lists_what_still_passes_and_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "lenient.json"
    path.write_text(too_lenient().model_dump_json())
    result = CliRunner().invoke(cli, ["redteam", str(path)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "handoff-mail-to-ticket: quoted_wrong: quoted_wrong in every text that states a checked fact (score 1.0)",
        "11 change(s) tried on 1 task(s); 1 still pass",
    ]
    clean = CliRunner().invoke(cli, ["redteam", str(EXAMPLES / "handoff-mail-to-ticket.json")])
    assert (clean.exit_code, clean.output.splitlines()[-1]) == (
        0,
        "11 change(s) tried on 1 task(s); 0 still pass",
    )
