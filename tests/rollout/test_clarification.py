"""Clarification turns: a turn declares its request ambiguous and gives the scripted user's
answer. An agent that asks gets the answer within the turn and can succeed; one that guesses
fails, even when it guesses right, and so does one that acts on a candidate before the answer;
one that reads the candidates first and then asks succeeds; one that asks when nothing was
ambiguous is told there is nothing to add, which is recorded and earns nothing. Validation
plays the guess, each other candidate and the act done before asking (each must fail) and
counts the answer as seen."""

from pathlib import Path
from typing import Any

import pytest

from coworkenv.rollout import SeedCache
from coworkenv.rollout.agents.openai_agent import OpenAIAgent
from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.policies import NoisyPolicy, OraclePolicy
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.rollout.agents.user_simulator import SATISFIED, UserSimulator
from coworkenv.rollout.episodes.episode import MAX_ANSWERS_PER_TURN, NOTHING_TO_ADD, Episode, asks_question
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.runner import reference_footprint, run_episode, system_prompt
from coworkenv.rollout.exports.export_sft import to_sharegpt_row
from coworkenv.synth.validation.mutants import guessing_mutants
from coworkenv.synth.validation.validation import GUESSES, contract_problems, peeking, validate_task
from coworkenv.task import Candidate, Persona, SolutionStep, Task, TaskFileError, load_task, parse_task

EXAMPLE = Path(__file__).parents[2] / "tasks" / "examples" / "clarification-which-ticket.json"
QUESTION = (
    "Collin Lopez opened two tickets this morning: #61 about the missed delivery to the Rotterdam "
    "depot and #62 about the users locked out of the portal. Which one should I escalate?"
)
ANSWER = "The portal one, the users who are locked out. Leave the delivery ticket as it is."


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


@pytest.fixture
def task() -> Task:
    return load_task(EXAMPLE)


def outcome(record: EpisodeRecord) -> tuple[bool, float, float, set[str], list[str]]:
    """Success, score, the score before the gate, the failed checks and the collateral."""
    assert record.verdict is not None and record.status == "completed", record.error
    failed = {c.id for c in record.verdict.checks if not c.passed}
    return record.success, record.score, record.verdict.raw_score, failed, record.verdict.collateral


def without_clarification(task: Task, solution: list[dict[str, Any]]) -> Task:
    turn = task.turns[0].model_copy(
        update={"solution": [SolutionStep.model_validate(s) for s in solution], "clarification": None}
    )
    return task.model_copy(update={"turns": [turn]})


def texts(record: EpisodeRecord) -> list[tuple[str, str | None]]:
    return [(m["role"], m.get("content")) for m in record.messages if m["role"] != "tool"]


async def test_the_oracle_asks_gets_the_answer_within_the_turn_and_succeeds(
    task: Task, cache: SeedCache
) -> None:
    record = await run_episode(task, OraclePolicy(), cache=cache)
    assert outcome(record) == (True, 1.0, 1.0, set(), [])
    assert texts(record) == [
        ("system", system_prompt(task, cache.fork(task))),
        ("user", task.turns[0].user),
        ("assistant", None),  # directory_search_people
        ("assistant", None),  # tickets_search_tickets
        ("assistant", QUESTION),
        ("user", ANSWER),
        ("assistant", None),  # tickets_update_ticket on #62
        ("assistant", "Done."),
    ]
    assert record.turn_boundaries == [1] and record.user_replies == [7]
    assert record.messages[7] == {"role": "user", "content": ANSWER}
    assert record.agent_stats == {"clarifying_questions": 1}
    assert [(e.tool, e.arguments.get("ticket_id")) for e in record.tool_calls] == [
        ("search_people", None),
        ("search_tickets", None),
        ("update_ticket", 62),
    ]


async def test_an_agent_that_guesses_fails_with_the_wrong_ticket_as_collateral(
    task: Task, cache: SeedCache
) -> None:
    footprint = await reference_footprint(task, cache)
    guess = guessing_mutants(task)[0]
    assert (guess.kind, guess.side, guess.description) == (
        "guess",
        "reject",
        "turns[0] guessed instead of asking (clarification.guess)",
    )
    record = await run_episode(guess.task, OraclePolicy(), cache=cache, footprint=footprint)
    success, score, raw, failed, collateral = outcome(record)
    assert (success, score, raw, failed) == (False, 0.0, 0.0, {"portal-urgent", "portal-in-engineering"})
    assert collateral == [
        "tickets_tickets: changed {'id': 61}: priority 'normal' -> 'urgent', queue 'Support' -> 'Engineering'"
    ]
    assert record.user_replies == [] and record.agent_stats == {}


class NeverAsks(OraclePolicy):
    """The reference solution, but it plays `clarification.guess` instead of asking."""

    async def asks(self, session: Any, task: Task, turn_index: int, progress: Any) -> bool:
        return False


async def test_guessing_right_by_luck_fails_the_asked_first_guard_and_asking_then_acting_wrongly_fails(
    task: Task, cache: SeedCache
) -> None:
    footprint = await reference_footprint(task, cache)
    clarification = task.turns[0].clarification
    assert clarification is not None
    right = clarification.model_copy(update={"guess": task.turns[0].solution[2:]})
    lucky = task.model_copy(update={"turns": [task.turns[0].model_copy(update={"clarification": right})]})
    record = await run_episode(lucky, NeverAsks(), cache=cache, footprint=footprint)
    assert outcome(record) == (False, 0.0, 1.0, {"asked-first-0"}, [])
    (guard,) = [c for c in record.verdict.checks if c.id == "asked-first-0"]  # type: ignore[union-attr]
    assert (guard.type, guard.role, guard.turn, guard.message) == (
        "asked_first",
        "guard",
        0,
        "tickets.update_ticket acted on ticket_id=62 without asking which was meant",
    )
    # Without candidates the turn has no such guard: a right guess is not told apart.
    unguarded = right.model_copy(update={"candidates": []})
    plain = lucky.model_copy(
        update={"turns": [lucky.turns[0].model_copy(update={"clarification": unguarded})]}
    )
    assert outcome(await run_episode(plain, NeverAsks(), cache=cache, footprint=footprint))[:4] == (
        True,
        1.0,
        1.0,
        set(),
    )
    # Asking, then escalating both tickets anyway: the delivery ticket is collateral.
    both = task.turns[0].model_copy(update={"solution": [*task.turns[0].solution, *clarification.guess]})
    record = await run_episode(
        task.model_copy(update={"turns": [both]}), OraclePolicy(), cache=cache, footprint=footprint
    )
    success, score, raw, failed, collateral = outcome(record)
    assert (success, score, raw, failed, len(collateral)) == (False, 0.0, 1.0, set(), 1)
    assert record.agent_stats == {"clarifying_questions": 1}


async def test_acting_on_the_right_ticket_then_asking_fails_but_reading_both_first_passes(
    task: Task, cache: SeedCache
) -> None:
    update = call("tickets_update_ticket", {"ticket_id": 62, "priority": "urgent", "queue": "Engineering"})
    early = [update, {"content": "Did you mean #62?"}, {"content": "Done."}]
    record = await scripted(task, early, cache)
    assert outcome(record) == (False, 0.0, 1.0, {"asked-first-0"}, [])
    assert record.agent_stats == {"clarifying_questions": 1}
    (guard,) = [c for c in record.verdict.checks if c.id == "asked-first-0"]  # type: ignore[union-attr]
    assert guard.message == "tickets.update_ticket acted on ticket_id=62 before the user answered"
    # A write that failed changed nothing: it is not acting.
    missing = call("tickets_update_ticket", {"ticket_id": 62, "priority": "nonsense"})
    reads = [
        call("tickets_get_ticket", {"ticket_id": 61}),
        call("tickets_get_ticket", {"ticket_id": 62}),
        missing,
        {"content": "Which of #61 and #62?"},
        update,
        {"content": "Done."},
    ]
    record = await scripted(task, reads, cache)
    assert outcome(record) == (True, 1.0, 1.0, set(), [])
    assert [(e.tool, e.is_error) for e in record.tool_calls] == [
        ("get_ticket", False),
        ("get_ticket", False),
        ("update_ticket", True),
        ("update_ticket", False),
    ]


async def test_asking_when_nothing_was_ambiguous_is_answered_recorded_and_earns_nothing(
    task: Task, cache: SeedCache
) -> None:
    """The same request made clear: an agent that asks anyway gets told there is nothing to
    add, the question is counted, and the score is what its actions earn."""
    clear = without_clarification(task, [s.model_dump() for s in task.turns[0].solution])
    clear = clear.model_copy(
        update={
            "turns": [
                clear.turns[0].model_copy(
                    update={"user": "Make Collin Lopez's portal ticket urgent and move it to Engineering."}
                )
            ]
        }
    )
    footprint = await reference_footprint(clear, cache)
    right = [call("tickets_search_tickets", {"requester": "collin.lopez@umbrella.example"})]
    right += [call("tickets_update_ticket", {"ticket_id": 62, "priority": "urgent", "queue": "Engineering"})]
    wrong = [right[0], call("tickets_update_ticket", {"ticket_id": 62, "priority": "high"})]
    for actions, expected in ((right, (True, 1.0, 1.0)), (wrong, (False, 0.0, 0.0))):
        plain = await scripted(clear, [*actions, {"content": "Done."}], cache, footprint)
        asking = await scripted(
            clear,
            [{"content": "Just to be sure: which ticket?"}, *actions, {"content": "Done."}],
            cache,
            footprint,
        )
        assert outcome(plain)[:3] == outcome(asking)[:3] == expected
        assert plain.agent_stats == {} and asking.agent_stats == {"needless_questions": 1}
        assert asking.user_replies == [3]
        assert asking.messages[2:4] == [
            {"role": "assistant", "content": "Just to be sure: which ticket?"},
            {"role": "user", "content": NOTHING_TO_ADD},
        ]


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


async def scripted(
    task: Task, script: list[dict[str, Any]], cache: SeedCache, footprint: Any = None
) -> EpisodeRecord:
    with ScriptedLLM(script) as llm:
        agent = OpenAIAgent(Endpoint(model="scripted", base_url=llm.base_url, api_key="k", backoff=0.01))
        return await run_episode(task, agent, cache=cache, footprint=footprint)


async def test_a_model_that_asks_reads_the_answer_in_its_next_request_and_succeeds(
    task: Task, cache: SeedCache
) -> None:
    script = [
        call("tickets_search_tickets", {"requester": "collin.lopez@umbrella.example"}),
        {"content": "Collin opened #61 and #62 this morning. Which one do you mean?"},
        call("tickets_update_ticket", {"ticket_id": 62, "priority": "urgent", "queue": "Engineering"}),
        {"content": "Done: #62 is urgent and in Engineering."},
    ]
    with ScriptedLLM(script) as llm:
        agent = OpenAIAgent(Endpoint(model="scripted", base_url=llm.base_url, api_key="k"))
        record = await run_episode(task, agent, cache=cache)
        requests = llm.requests
    assert outcome(record) == (True, 1.0, 1.0, set(), [])
    assert len(requests) == 4
    assert requests[2]["messages"][-1] == {"role": "user", "content": ANSWER}
    assert record.agent_stats == {"clarifying_questions": 1}


async def test_a_model_that_guesses_fails(task: Task, cache: SeedCache) -> None:
    script = [
        call("tickets_search_tickets", {"requester": "collin.lopez@umbrella.example"}),
        call("tickets_update_ticket", {"ticket_id": 61, "priority": "urgent", "queue": "Engineering"}),
        {"content": "Done: #61 is urgent and in Engineering."},
    ]
    record = await scripted(task, script, cache)
    assert outcome(record)[:4] == (
        False,
        0.0,
        0.0,
        {"portal-urgent", "portal-in-engineering", "asked-first-0"},
    )
    assert record.user_replies == [] and record.agent_stats == {}


def test_the_episode_answers_a_reply_that_asks_once_then_nothing_to_add_then_stops(task: Task) -> None:
    ep = Episode(task)
    ep.reset()
    assert ep.reply("Let me look.") is None
    assert ep.reply("Which of the two tickets?") == ANSWER
    assert [ep.reply("Anything else?") for _ in range(MAX_ANSWERS_PER_TURN)] == [
        NOTHING_TO_ADD,
        NOTHING_TO_ADD,
        None,
    ]
    assert ep.session.stats == {"clarifying_questions": 1, "needless_questions": 2}
    assert ep.user_replies == [4, 6, 8]
    assert ep.next_turn() is None


def test_a_question_is_an_assistant_message_with_a_question_mark_and_no_tool_call() -> None:
    assert asks_question([{"role": "assistant", "content": "Which one?"}])
    assert not asks_question([{"role": "assistant", "content": "Done."}])
    assert not asks_question([{"role": "user", "content": "Which one?"}])
    assert not asks_question([{"role": "assistant", "content": "Which one?", "tool_calls": [{"id": "c"}]}])
    assert not asks_question([{"role": "assistant", "content": None}])
    assert not asks_question([])


async def test_the_noisy_student_asks_like_the_oracle_when_it_makes_no_mistake(
    task: Task, cache: SeedCache
) -> None:
    record = await run_episode(task, NoisyPolicy(p=0.0), cache=cache)
    assert outcome(record) == (True, 1.0, 1.0, set(), [])
    assert record.agent_stats == {"clarifying_questions": 1}


async def test_validation_plays_the_guess_and_it_must_fail(task: Task, cache: SeedCache) -> None:
    report = await validate_task(task, cache=cache)
    assert report.ok, report.summary()
    played = [(m.kind, m.description, m.killed) for m in report.mutants if m.kind in GUESSES]
    assert played == [
        ("guess", "turns[0] guessed instead of asking (clarification.guess)", True),
        ("guess_each", "turns[0] acted on ticket_id=61 (candidates[0]) without asking", True),
        ("act_before_answer", "turns[0] did the steps after the question before asking it", True),
    ]
    (early,) = [m for m in report.mutants if m.kind == "act_before_answer"]
    assert (
        early.detail == "asked-first-0: tickets.update_ticket acted on ticket_id=62 before the user answered"
    )
    # A "guess" that is in fact the right answer: the task does not tell guessing from asking.
    clarification = task.turns[0].clarification
    assert clarification is not None
    right = clarification.model_copy(update={"guess": task.turns[0].solution[2:]})
    same = task.model_copy(update={"turns": [task.turns[0].model_copy(update={"clarification": right})]})
    report = await validate_task(same, cache=cache)
    assert report.summary() == (
        "mutants: these wrong variants of the solution still pass: guess: turns[0] guessed instead of "
        "asking (clarification.guess) (add or sharpen the checks that tell them apart)"
    )
    unplayable = clarification.model_copy(
        update={"guess": [SolutionStep(tool="tickets_update_ticket", arguments={"ticket_id": 999})]}
    )
    broken = task.model_copy(
        update={"turns": [task.turns[0].model_copy(update={"clarification": unplayable})]}
    )
    detail = (await validate_task(broken, cache=cache)).summary()
    assert detail.startswith(
        "mutants: these wrong variants of the solution still pass: guess: turns[0] guessed instead of "
        "asking (clarification.guess) could not be played: turns[0].solution[2] (tickets_update_ticket) failed:"
    )


async def test_no_peeking_counts_the_answer_as_seen_once_asked(task: Task, cache: SeedCache) -> None:
    """A solution that takes the ticket number from the answer alone: fine after the question,
    peeking before it."""
    turn = task.turns[0]
    clarification = turn.clarification
    assert clarification is not None
    update = turn.solution[2]
    answered = clarification.model_copy(update={"answer": "Ticket 62, the portal one.", "after": 1})
    asked = task.model_copy(
        update={
            "turns": [
                turn.model_copy(update={"solution": [turn.solution[0], update], "clarification": answered})
            ]
        }
    )
    record = await run_episode(asked, OraclePolicy(), cache=cache)
    prompt = system_prompt(asked, cache.fork(asked))
    assert peeking(asked, record, prompt) == []
    late = asked.model_copy(
        update={
            "turns": [
                asked.turns[0].model_copy(update={"clarification": answered.model_copy(update={"after": 2})})
            ]
        }
    )
    record = await run_episode(late, OraclePolicy(), cache=cache)
    assert peeking(late, record, prompt) == [
        "turns[0].solution[1] (tickets_update_ticket) uses ticket_id=62 before any message or tool result showed it"
    ]


def test_a_clarification_needs_a_question_and_a_guess(task: Task) -> None:
    data = task.model_dump(mode="json")
    data["turns"][0]["clarification"]["question"] = "Tell me which ticket."
    with pytest.raises(TaskFileError) as raised:
        parse_task(data)
    assert str(raised.value) == (
        "<task>: $.turns[0].clarification.question: Value error, a clarifying question contains a '?'; "
        "got 'Tell me which ticket.'"
    )
    data["turns"][0]["clarification"]["question"] = "Which one?"
    data["turns"][0]["clarification"]["guess"] = []
    with pytest.raises(
        TaskFileError, match=r"\$\.turns\[0\]\.clarification\.guess: List should have at least 1 item"
    ):
        parse_task(data)


def test_a_task_without_a_clarification_hashes_as_before_the_field_existed() -> None:
    """Content hashes key records and caches: a task that does not use the field keeps its hash
    (this one was computed before clarifications existed)."""
    task = load_task(EXAMPLE.parent / "multi-turn-announced-priority.json")
    assert task.model_dump(mode="json")["turns"][0]["clarification"] is None
    assert task.content_hash == "f8ac2f31ddf014d6eb2279a77f815770a7531d526022c2e74338e4f4baba6d55"


def test_the_user_simulator_knows_the_scripted_answer(task: Task) -> None:
    persona = task.model_copy(update={"persona": Persona(description="Kimberly, the Support Lead")})
    simulator = UserSimulator(Endpoint(model="u", base_url="http://127.0.0.1:9/v1", api_key="k"))
    prompt = simulator.system_prompt(persona, 0)
    assert f"- what you meant by your request: {ANSWER}" in prompt


async def test_the_sft_demonstration_shows_the_question_and_the_answer(task: Task, cache: SeedCache) -> None:
    record = await run_episode(task, OraclePolicy(), cache=cache)
    row = to_sharegpt_row(record)
    spoken = [(c["from"], c["value"]) for c in row["conversations"] if c["from"] in ("human", "gpt")]
    assert spoken == [("human", task.turns[0].user), ("gpt", QUESTION), ("human", ANSWER), ("gpt", "Done.")]


async def test_the_noisy_student_sometimes_guesses_instead_of_asking(task: Task, cache: SeedCache) -> None:
    record = await run_episode(task, NoisyPolicy(p=0.3, seed=9), cache=cache)
    assert outcome(record)[:4] == (
        False,
        0.0,
        0.0,
        {"portal-urgent", "portal-in-engineering", "asked-first-0"},
    )
    assert record.agent_stats == {} and record.user_replies == []
    assert [(e.tool, e.arguments.get("ticket_id")) for e in record.tool_calls] == [
        ("search_people", None),  # the ticket search was dropped, then it guessed
        ("update_ticket", 61),
    ]


async def test_with_a_persona_the_scripted_answer_comes_first_and_the_simulated_user_answers_the_rest(
    task: Task, cache: SeedCache
) -> None:
    with_persona = task.model_copy(update={"persona": Persona(description="Kimberly, the Support Lead")})
    agent_script = [
        call("tickets_search_tickets", {"requester": "collin.lopez@umbrella.example"}),
        {"content": "Which of the two tickets do you mean?"},
        {"content": "Should I also tell Collin?"},
        call("tickets_update_ticket", {"ticket_id": 62, "priority": "urgent", "queue": "Engineering"}),
        {"content": "Done."},
    ]
    user_script = [{"content": "No need, thanks."}, {"content": SATISFIED}]
    with ScriptedLLM(agent_script) as agent_llm, ScriptedLLM(user_script) as user_llm:
        agent = OpenAIAgent(Endpoint(model="a", base_url=agent_llm.base_url, api_key="k"))
        simulator = UserSimulator(Endpoint(model="u", base_url=user_llm.base_url, api_key="k"))
        record = await run_episode(with_persona, agent, cache=cache, user_simulator=simulator)
        user_requests = user_llm.requests
    assert outcome(record) == (True, 1.0, 1.0, set(), [])
    assert [record.messages[i]["content"] for i in record.user_replies] == [ANSWER, "No need, thanks."]
    assert record.agent_stats == {"clarifying_questions": 1}
    assert len(user_requests) == 2
    assert ANSWER in user_requests[0]["messages"][0]["content"]


def test_a_question_after_the_last_step_is_a_contract_problem(task: Task) -> None:
    clarification = task.turns[0].clarification
    assert clarification is not None
    late = clarification.model_copy(update={"after": 4})
    broken = task.model_copy(update={"turns": [task.turns[0].model_copy(update={"clarification": late})]})
    assert contract_problems(broken) == [
        "turns[0].clarification.after is 4 but the turn has 3 solution steps: the question comes after "
        "at most 3 steps"
    ]
    assert contract_problems(task) == []


def test_candidates_are_written_only_when_set_so_older_files_keep_their_hash(task: Task) -> None:
    data = task.model_dump(mode="json")
    assert data["turns"][0]["clarification"]["candidates"] == [
        {"argument": "ticket_id", "value": 61},
        {"argument": "ticket_id", "value": 62},
    ]
    del data["turns"][0]["clarification"]["candidates"]
    older = parse_task(data)
    assert "candidates" not in older.model_dump(mode="json")["turns"][0]["clarification"]
    # the example's hash before the field existed
    assert older.content_hash == "b885c9f14545652bbf9e9293ee0fd57bab00ab55a95aa5afc3d6d0f35028fa13"
    assert task.content_hash != older.content_hash


def test_candidates_are_two_or_more_distinct_objects_named_by_an_argument(task: Task) -> None:
    data = task.model_dump(mode="json")
    data["turns"][0]["clarification"]["candidates"] = [{"argument": "ticket_id", "value": 61}]
    with pytest.raises(TaskFileError) as raised:
        parse_task(data)
    assert str(raised.value) == (
        "<task>: $.turns[0].clarification.candidates: Value error, an ambiguous request has two "
        "candidates or more; got one"
    )
    data["turns"][0]["clarification"]["candidates"] *= 2
    with pytest.raises(TaskFileError, match="a candidate is listed twice"):
        parse_task(data)
    one = Candidate(argument="ticket_id", value=61)
    assert [
        one.named_by(a) for a in ({"ticket_id": 61}, {"ticket_id": [60, 61]}, {"ticket_id": "61"}, {})
    ] == [
        True,
        True,
        False,
        False,
    ]


def test_the_steps_after_the_question_name_exactly_one_candidate_and_none_is_written_before(
    task: Task,
) -> None:
    turn = task.turns[0]
    clarification = turn.clarification
    assert clarification is not None
    third = clarification.model_copy(
        update={"candidates": [*clarification.candidates, Candidate(argument="ticket_id", value=63)]}
    )
    assert (
        contract_problems(
            task.model_copy(update={"turns": [turn.model_copy(update={"clarification": third})]})
        )
        == []
    )
    unnamed = clarification.model_copy(
        update={"candidates": [Candidate(argument="ticket_id", value=v) for v in (60, 61)]}
    )
    early = clarification.model_copy(update={"after": 3})
    late = turn.model_copy(update={"solution": [*turn.solution, turn.solution[2]], "clarification": early})
    problems = [
        contract_problems(task.model_copy(update={"turns": [t]}))
        for t in (turn.model_copy(update={"clarification": unnamed}), late)
    ]
    assert problems == [
        [
            "turns[0].clarification.candidates: the write steps after the question must name exactly one "
            "candidate, literally (the one the answer names)"
        ],
        ["turns[0].solution[2] writes a candidate before the question: only read candidates before asking"],
    ]
