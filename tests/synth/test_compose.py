"""Composing tasks into one day: ids stay unique, references follow their steps, seeds are
joined in order, guards are on only where every segment keeps them, and segments of another
world or user are refused."""

import pytest

from coworkenv.synth.compose import CompositionError, compose
from coworkenv.task import Task
from tests.verifiers.test_guards import escalation_task


def segment(**changes: object) -> Task:
    data = escalation_task().model_dump(mode="json")
    data["turns"][0]["solution"][0]["id"] = "find"
    data["turns"][0]["solution"][1]["arguments"]["message_id"] = {"$ref": "find.messages.0.id"}
    data.update(changes)
    return Task.model_validate(data)


def day(*segments: Task, openers: tuple[str, ...] = ()) -> Task:
    return compose(
        segments,
        id="day-1",
        title="A day",
        capability="state_change_adaptation",
        provenance={"generator": "procedural", "family": "composed_day", "seed": 1},
        openers=openers,
    )


def test_turns_follow_each_other_with_prefixed_ids_and_references() -> None:
    one, two = segment(), segment(guards={"recipients": ["x@y.example"]})
    composed = day(one, two, openers=("", "Next:"))
    assert [t.user for t in composed.turns] == [one.turns[0].user, "Next: " + two.turns[0].user]
    assert [c.id for c in composed.turns[1].checks] == [f"s1_{c.id}" for c in two.turns[0].checks]
    assert composed.turns[1].solution[0].id == "s1_find"
    assert composed.turns[1].solution[1].arguments["message_id"] == {"$ref": "s1_find.messages.0.id"}
    assert composed.capabilities == ["state_change_adaptation", *one.capabilities]
    assert composed.guards.recipients == ["x@y.example"]
    assert composed.provenance.family == "composed_day"


def test_seeds_are_joined_in_order_and_a_guard_is_on_only_if_every_segment_keeps_it() -> None:
    op = {"service": "tickets", "operation": "add_ticket", "params": {"title": "Later", "queue": "Support"}}
    plain = segment()
    later = segment(
        seed={**plain.seed.model_dump(mode="json"), "operations": [op]}, guards={"removals": False}
    )
    composed = day(plain, later)
    assert composed.seed.operations == [*plain.seed.operations, *later.seed.operations]
    assert (composed.guards.removals, composed.guards.collateral) == (False, True)


def test_rules_of_every_segment_reach_the_context() -> None:
    context = segment().context.model_dump()
    a = segment(context={**context, "rules": ["Refunds above 500 need approval."]})
    b = segment(context={**context, "rules": ["Refunds above 500 need approval.", "Reply within a day."]})
    assert day(a, b).context.rules == ["Refunds above 500 need approval.", "Reply within a day."]


def test_segments_of_another_user_or_world_are_refused() -> None:
    with pytest.raises(CompositionError, match=r"segment 1 \(escalate-and-report\) has another user_email"):
        day(segment(), segment(user_email="someone@else.example"))
    world_seed = {"procedural": {"name": "demo", "params": {"seed": 1}}}
    with pytest.raises(CompositionError, match="happens in another world than segment 0"):
        day(segment(), segment(seed=world_seed))
    with pytest.raises(CompositionError, match="at least one segment"):
        day()


def composed(seed: int, profile: str | None = None) -> Task:
    import coworkenv.synth.families  # noqa: F401  (registers the families)
    from coworkenv.synth.family import Difficulty, build_task
    from coworkenv.worlds import world

    return build_task(
        "composed_day", seed, Difficulty.level(seed % 3), world=world(profile) if profile else None
    )


@pytest.mark.parametrize(("seed", "profile"), [(0, None), (1, "law_firm"), (2, "logistics")])
def test_a_composed_day_meets_the_contract(seed: int, profile: str | None) -> None:
    import anyio

    from coworkenv.rollout import SeedCache
    from coworkenv.synth.family import FAMILIES
    from coworkenv.synth.validation.validation import validate_task

    task = composed(seed, profile)
    assert FAMILIES["composed_day"].kind == "workday"
    assert len(task.turns) == [5, 6, 7][seed % 3]
    assert sum(len(t.solution) for t in task.turns) >= 15
    assert len({c for c in task.capabilities}) >= 4  # segments of different capabilities
    report = anyio.run(lambda: validate_task(task, cache=SeedCache()))
    assert report.ok, report.summary()
    assert set(report.kill_rates().values()) == {1.0}
    assert set(report.acceptance_rates().values()) == {1.0}


def test_skipping_a_segment_or_undoing_an_earlier_one_fails() -> None:
    import anyio

    from coworkenv.rollout import OraclePolicy, SeedCache, run_episode

    task = composed(0)
    data = task.model_dump(mode="json")
    data["turns"][-1]["solution"] = []  # the last request left undone
    skipped = anyio.run(lambda: run_episode(Task.model_validate(data), OraclePolicy(), cache=SeedCache()))
    assert skipped.verdict is not None and not skipped.verdict.success
    last = len(task.turns) - 1
    failed = {c.id for c in skipped.verdict.checks if not c.passed}
    goals = {c.id for c in task.turns[last].checks if c.role != "guard"}
    assert failed and failed <= goals | {f"{g}@end" for g in goals} and goals & failed
