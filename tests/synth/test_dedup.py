"""Near-duplicate detection: same scenario with a new id is a duplicate; new people and values are not."""

import coworkenv.synth.families  # noqa: F401  (registers the families)
from coworkenv.synth.dedup import find_duplicate, similarity
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
