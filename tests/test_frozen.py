"""A copy of a task or world with changed fields never keeps the original's cached hash."""

from coworkenv.worlds import world
from tests.verifiers.test_guards import escalation_task


def test_a_changed_copy_of_a_task_has_its_own_hash() -> None:
    task = escalation_task()
    before = task.content_hash
    renamed = task.model_copy(update={"id": "other-id"})
    assert renamed.content_hash != before
    assert renamed.content_hash == type(task).model_validate(renamed.model_dump()).content_hash
    assert task.model_copy().content_hash == before


def test_a_changed_copy_of_a_world_has_its_own_hash_and_people() -> None:
    stock = world("museum", 12, 1)
    assert stock.staff and stock.content_hash
    fewer = stock.model_copy(update={"people": stock.people[:-1]})
    assert fewer.content_hash != stock.content_hash
    assert len(fewer.people) == len(stock.people) - 1
    assert fewer.contacts == [p for p in fewer.people if not p.internal]
