"""Near-duplicate detection: same scenario with a new id is a duplicate; new people and values are not."""

from hypothesis import given, settings
from hypothesis import strategies as st

from coworkenv.synth.dedup import KeptTasks, SimilarSets, _jaccard, find_duplicate, similarity
from coworkenv.synth.family import Difficulty, build_task


def test_a_renamed_copy_is_a_duplicate_and_another_seed_is_not() -> None:
    task = build_task("tickets_escalate", 0, Difficulty.level(1))
    renamed = task.model_copy(update={"id": "copy"})
    other = build_task("tickets_escalate", 1, Difficulty.level(1))
    assert similarity(task, renamed) == 1.0
    assert find_duplicate(renamed, [task]) is task
    assert similarity(task, other) < 0.9
    assert find_duplicate(other, [task]) is None


def test_the_planted_seed_counts_not_only_the_user_message() -> None:
    a = build_task("mail_to_ticket", 0, Difficulty.level(0))
    b = build_task("mail_to_ticket", 2, Difficulty.level(0))
    same_request = a.model_copy(
        update={"turns": [b.turns[0].model_copy(update={"user": a.turns[0].user}), *b.turns[1:]]}
    )
    assert same_request.turns[0].user == a.turns[0].user
    assert find_duplicate(b, [a]) is None
    # the same request over a different planted seed is still a different task
    assert find_duplicate(same_request.model_copy(update={"seed": b.seed}), [a]) is None


def test_kept_tasks_find_the_first_duplicate_in_order_as_a_plain_list_does() -> None:
    tasks = [build_task("tickets_escalate", n, Difficulty.level(1)) for n in range(3)]
    kept = KeptTasks(tasks[:2])
    kept.append(tasks[0].model_copy(update={"id": "later-copy"}))
    assert len(kept) == 3 and kept[1] is tasks[1] and list(kept[1:]) == [tasks[1], kept[2]]
    assert (
        kept.duplicate_of(tasks[0].model_copy(update={"id": "again"})) is tasks[0]
    )  # the first, not the copy
    assert find_duplicate(tasks[1], kept) is tasks[1]
    assert kept.duplicate_of(tasks[2]) is None and find_duplicate(tasks[2], list(kept)) is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.frozensets(st.sampled_from([f"w{i}" for i in range(14)]), max_size=12), max_size=25),
    st.frozensets(st.sampled_from([f"w{i}" for i in range(14)]), max_size=12),
    st.sampled_from([0.9, 0.75, 0.5, 1.0, 0.3]),
)
def test_the_index_finds_the_first_similar_set_as_comparing_with_each_does(
    kept: list[frozenset[str]], new: frozenset[str], threshold: float
) -> None:
    index = SimilarSets(threshold)
    for items in kept:
        index.add(items)
    expected = next((i for i, items in enumerate(kept) if _jaccard(new, items) >= threshold), None)
    assert index.first_similar(new) == expected


def test_kept_tasks_at_another_threshold_find_what_comparing_with_each_finds() -> None:
    tasks = [
        build_task(family, n, Difficulty.level(1))
        for family in ("tickets_escalate", "mail_label_by_sender")
        for n in range(3)
    ]
    kept = KeptTasks(tasks[1:])
    for threshold in (0.2, 0.4, 0.6, 0.8, 1.0):
        expected = next((t for t in tasks[1:] if similarity(tasks[0], t) >= threshold), None)
        assert kept.duplicate_of(tasks[0], threshold) is expected
    assert kept.duplicate_of(tasks[0], 0.2) is not None and kept.duplicate_of(tasks[0], 1.0) is None
