"""The kinds of change before each turn of a task."""

from coworkenv.rollout.turn_changes import turn_changes
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
