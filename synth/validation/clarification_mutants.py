"""Wrong variants of an ambiguous turn (`Turn.clarification`), each of which must FAIL: the
turn's `guess` played instead of asking; with `candidates`, the steps after the question
played on each other candidate instead of asking (`guess_each`), and every step done before
the question, which is then asked anyway (`act_before_answer`).

The guesses are played on the turn without its clarification, so without the guard that
fails any write to a candidate before the answer (`verifiers.asked_first`): a guess fails
only when the turn's checks tell the candidates apart, which is what they show. The guard
itself is what `act_before_answer` shows."""

from __future__ import annotations

from typing import Any

from coworkenv.synth.validation.variants import Variant, tool_kind
from coworkenv.task import Candidate, SolutionStep, Task, Turn


def right_candidate(turn: Turn) -> Candidate | None:
    """The candidate the reference acts on: the one the write steps after the question name;
    None when the turn has no candidates or when those steps name none or several."""
    clarification = turn.clarification
    if clarification is None or not clarification.candidates:
        return None
    named = [c for c in clarification.candidates if any(c.named_by(s.arguments) for s in _writes_after(turn))]
    return named[0] if len(named) == 1 else None


def clarification_problems(task: Task) -> list[str]:
    """What the contract asks of a turn with candidates: the steps after the question name
    exactly one of them, and no step before the question writes one."""
    out = []
    for i, turn in enumerate(task.turns):
        clarification = turn.clarification
        if clarification is None or not clarification.candidates or clarification.after > len(turn.solution):
            continue  # a question after the last step is a problem of its own
        if right_candidate(turn) is None:
            out.append(
                f"turns[{i}].clarification.candidates: the write steps after the question must name "
                "exactly one candidate, literally (the one the answer names)"
            )
        early = [
            j
            for j, step in enumerate(turn.solution[: clarification.after])
            if _is_write(step) and any(c.named_by(step.arguments) for c in clarification.candidates)
        ]
        if early:
            out.append(
                f"turns[{i}].solution[{early[0]}] writes a candidate before the question: only read "
                "candidates before asking"
            )
    return out


def guessing_mutants(task: Task) -> list[Variant]:
    """For each ambiguous turn, an agent that guesses: it does not ask, and plays the turn's
    `clarification.guess` instead of the steps after the question. With candidates, also the
    reference's steps after the question on each other candidate, and every step of the turn
    played before asking."""
    out = []
    for i, turn in enumerate(task.turns):
        clarification = turn.clarification
        if clarification is None:
            continue
        before = turn.solution[: clarification.after]
        out.append(
            Variant(
                "reject",
                "guess",
                f"turns[{i}] guessed instead of asking (clarification.guess)",
                _with_turn(task, i, solution=[*before, *clarification.guess], clarification=None),
            )
        )
        right = right_candidate(turn)
        if right is None:
            continue
        after = turn.solution[clarification.after :]
        for k, other in enumerate(clarification.candidates):
            if other == right:
                continue
            moved = [on_candidate(step, right, other) for step in after]
            named = f"{other.argument}={other.value!r} (candidates[{k}])"
            out.append(
                Variant(
                    "reject",
                    "guess_each",
                    f"turns[{i}] acted on {named} without asking",
                    _with_turn(task, i, solution=[*before, *moved], clarification=None),
                )
            )
        if any(_is_write(s) for s in after):
            late = clarification.model_copy(update={"after": len(turn.solution)})
            out.append(
                Variant(
                    "reject",
                    "act_before_answer",
                    f"turns[{i}] did the steps after the question before asking it",
                    _with_turn(task, i, clarification=late),
                )
            )
    return out


def _with_turn(task: Task, i: int, **update: Any) -> Task:
    turn = task.turns[i].model_copy(update=update)
    return task.model_copy(update={"turns": [*task.turns[:i], turn, *task.turns[i + 1 :]]})


def _writes_after(turn: Turn) -> list[SolutionStep]:
    clarification = turn.clarification
    assert clarification is not None
    return [s for s in turn.solution[clarification.after :] if _is_write(s)]


def _is_write(step: SolutionStep) -> bool:
    return not tool_kind(step.tool)[0] and not step.expect_error


def on_candidate(step: SolutionStep, right: Candidate, other: Candidate) -> SolutionStep:
    """The step with every mention of the right candidate in its arguments replaced by another."""
    if not right.named_by(step.arguments):
        return step
    value = step.arguments[right.argument]
    if other.argument != right.argument:
        arguments = {k: v for k, v in step.arguments.items() if k != right.argument}
        return step.model_copy(update={"arguments": {**arguments, other.argument: other.value}})
    new: Any = (
        [other.value if v == right.value else v for v in value] if isinstance(value, list) else other.value
    )
    return step.model_copy(update={"arguments": {**step.arguments, right.argument: new}})


__all__ = ["clarification_problems", "guessing_mutants", "on_candidate", "right_candidate"]
