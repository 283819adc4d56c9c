"""The kinds of change before each turn of a task."""

from coworkenv.rollout.episodes.turn_changes import turn_changes
from coworkenv.task import Task
from tests.verifiers.test_guards import escalation_task


def test_each_turn_names_what_came_before_it() -> None:
    base = escalation_task().model_dump(mode="json")
    first = base["turns"][0]
    later = {"user": "And then?", "checks": [], "solution": []}
    event = {
        "service": "tickets",
        "operation": "add_comment",
        "params": {"ticket_id": 1, "body": "Any news?"},
    }
    clarification = {"question": "Which one?", "answer": "The refund.", "guess": first["solution"][-1:]}
    base["turns"] = [
        {**first, "events": [event]},  # events before the first turn set the scene: no change
        {**later, "events": [{**event, "announced": True}]},
        {**later, "events": [event, {**event, "announced": True}], "changed_mind": True},
        {**later, "solution": first["solution"], "clarification": clarification},
    ]
    task = Task.model_validate(base)
    assert turn_changes(task) == [
        ["none"],
        ["announced"],
        ["announced", "silent", "changed mind"],
        ["clarification"],
    ]


def test_records_carry_the_changes_and_events_of_each_turn() -> None:
    import anyio

    from coworkenv.rollout import OraclePolicy, SeedCache, run_episode
    from tests.rollout.test_runner import ticket_task

    task = ticket_task()
    record = anyio.run(lambda: run_episode(task, OraclePolicy(), cache=SeedCache()))
    assert record.turn_changes == turn_changes(task)
    assert record.turn_events == [[e.model_dump(mode="json") for e in t.events] for t in task.turns]
    assert record.turn_changes == [["none"], ["silent"]]


def test_a_drifting_student_loses_the_thread_in_later_turns() -> None:
    import anyio
    import pytest

    from coworkenv.rollout import SeedCache, run_episode
    from coworkenv.rollout.agents.policies import NoisyPolicy
    from tests.rollout.test_runner import ticket_task

    task, cache = ticket_task(), SeedCache()

    def turns(policy: NoisyPolicy, trial: int) -> list[bool]:
        record = anyio.run(lambda: run_episode(task, policy, trial=trial, cache=cache))
        assert record.verdict is not None
        return [t.success for t in record.verdict.turns]

    # no mistake in the first turn (p=0), nine in ten steps missed or garbled in the second
    assert [turns(NoisyPolicy(p=0.0, seed=3, drift=0.9), trial) for trial in range(4)] == [[True, False]] * 4
    assert [turns(NoisyPolicy(p=0.0, seed=3), trial) for trial in range(4)] == [[True, True]] * 4
    with pytest.raises(ValueError, match="drift at least 0"):
        NoisyPolicy(drift=-0.1)
