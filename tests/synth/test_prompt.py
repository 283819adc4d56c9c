"""The LLM generator's first-round request: complete (tables with columns, tools with argument
schemas and results, world operations, rules, the seed world, the contract, an example, the
scene) and within the token budget, with the task schema sent once."""

import json

import pytest

from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.synth.capabilities import load_capabilities
from coworkenv.synth.generators import DraftRequest, LLMGenerator
from coworkenv.synth.prompt import TOKEN_BUDGET, generation_schema, request_tokens, scene_for
from coworkenv.task import parse_task


def first_request(capability: str, slot: int = 0) -> tuple[list[dict], dict | None]:
    gen = LLMGenerator(Endpoint(model="m", base_url="http://127.0.0.1:1/v1", api_key="k"))
    return gen.first_messages(DraftRequest(slot=slot, capability=capability)), gen.response_format()


@pytest.mark.parametrize("capability", list(load_capabilities()))
def test_every_first_round_request_fits_the_token_budget_with_an_example(capability: str) -> None:
    from coworkenv.synth.family import FAMILIES, Difficulty, build_task

    names = sorted(n for n, f in FAMILIES.items() if f.capability == capability)
    kept = [build_task(names[i % len(names)], 10 + i, Difficulty.level(2)) for i in range(6)]
    gen = LLMGenerator(Endpoint(model="m", base_url="http://127.0.0.1:1/v1", api_key="k"))
    for slot in (0, 2, 9, 18, 27):  # the demo company and four generated worlds
        for already in ([], kept):
            messages = gen.first_messages(DraftRequest(slot=slot, capability=capability), already)
            assert request_tokens(messages, gen.response_format()) <= TOKEN_BUDGET
            assert 1 <= messages[0]["content"].count("## An example task that passed validation") <= 2


def test_the_schema_is_sent_once_as_structured_output() -> None:
    messages, response_format = first_request("triage_routing")
    assert response_format is not None
    assert response_format["json_schema"]["schema"] == generation_schema()
    assert '"$defs"' not in messages[0]["content"]
    gen = LLMGenerator(
        Endpoint(model="m", base_url="http://127.0.0.1:1/v1", api_key="k"), structured_output=False
    )
    system = gen.first_messages(DraftRequest(slot=0, capability="triage_routing"))[0]["content"]
    assert gen.response_format() is None and '"$defs"' in system


def test_the_compact_schema_still_describes_valid_tasks() -> None:
    schema = generation_schema()
    assert schema["required"] == ["id", "title", "services", "clock_start", "turns"]
    assert "provenance" not in schema["properties"] and "BoundedDiff" not in schema["$defs"]
    assert set(schema["$defs"]["FieldEquals"]["properties"]) == {
        "id",
        "role",
        "type",
        "table",
        "where",
        "column",
        "value",
    }


def test_the_prompt_holds_what_a_correct_draft_needs() -> None:
    (system, user), _ = first_request("triage_routing")
    text = system["content"]
    assert (
        "tickets_tickets(id integer, title text, description text, status text, priority text, queue text"
        in text
    )
    assert "tickets_update_ticket(ticket_id*: int, status: NextStatuses, priority: Priority," in text
    assert "-> Ticket: Change a ticket: only the fields you give change" in text
    assert 'Priority = "low"|"normal"|"high"|"urgent"' in text
    assert "tickets.customer_comment(ticket_id*: int, body*: str, reopen: bool)" in text
    assert "Ticket status moves (tools): open -> in_progress, pending, resolved, closed;" in text
    assert "Queues: " in text and "tickets_tickets ids 1.." in text
    assert "mutants must fail" in text and "right variants must pass" in text and "no_peeking" in text
    assert "## An example task that passed validation" in text
    example = text.split("## An example task that passed validation\n", 1)[1].split("\n\n## ", 1)[0]
    assert "triage_routing" in parse_task(example).capabilities
    assert '"capabilities": ["triage_routing"]' in user["content"]


def test_slots_vary_the_world_user_persona_and_date() -> None:
    scenes = [scene_for(slot) for slot in range(40)]
    assert len({s.profile for s in scenes}) == 31
    assert len({s.user_email for s in scenes}) == 40
    assert len({s.persona for s in scenes}) == 5
    assert len({s.clock_start for s in scenes}) == 2
    assert scenes[0].seed_json == {"procedural": {"name": "demo", "params": {"seed": 0}}}
    assert scenes[2].seed_json == {
        "procedural": {"name": "world", "params": {"profile": "airline_ground_ops", "seed": 0}}
    }
    requests = {first_request("triage_routing", slot)[0][1]["content"] for slot in range(4)}
    assert len(requests) == 4
    (system, user), _ = first_request("triage_routing", 2)
    assert "The company: SkyBridge Airways (airline ground operations)" in system["content"]
    assert "Compensation above USD 1,000 needs a manager's approval." in system["content"]
    assert '"user_email": "logan.cooper@skybridgeairways.example"' in user["content"]


def test_tasks_already_kept_are_shown_with_the_instruction_to_differ() -> None:
    from tests.verifiers.test_guards import escalation_task

    kept = escalation_task(id="find-1", capabilities=["find_and_report"])
    gen = LLMGenerator(Endpoint(model="m", base_url="http://127.0.0.1:1/v1", api_key="k"))
    user = gen.first_messages(DraftRequest(slot=3, capability="find_and_report"), [kept])[1]["content"]
    assert "Already kept for this capability; write something clearly different" in user
    assert "- Report a figure and escalate a ticket: Answer Ana's mail about February refunds" in user
    assert json.dumps(kept.id) not in user


def test_every_procedural_task_validates_against_the_compact_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from coworkenv.synth.family import FAMILIES, Difficulty, build_task
    from coworkenv.synth.prompt import compact_task

    schema = generation_schema()
    for name in sorted(FAMILIES):
        jsonschema.validate(json.loads(compact_task(build_task(name, 0, Difficulty.level(1)))), schema)


def test_the_prompt_of_the_new_services_names_their_objects_tables_and_tools() -> None:
    from coworkenv.synth.prompt import system_prompt

    text = system_prompt(["mail", "crm", "notes", "sheets"], scene_for(2))
    assert text.startswith(
        "You write tasks that train AI coworkers: executable JSON over a workspace of services "
        "(here: mail, crm, notes, sheets)."
    )
    assert "crm_deals(id integer, account_id integer, name text, stage text, amount integer" in text
    assert "- CRM accounts: 1 SwiftServe Ground Handling (vendor); 2 AeroCater (vendor);" in text
    assert (
        "- Deal stages: prospecting, qualification, proposal, negotiation, closed_won, closed_lost." in text
    )
    assert (
        "- Notes database 1 'Projects': Status select [Not started|In progress|Blocked|Done], Owner person, "
        in text
    )
    assert (
        "- Spreadsheets (id title (sheets)): 1 'Price list' (Prices, Settings); 2 'Invoice ledger 2026'"
        in text
    )
    for tool in ("crm_update_deal(", "notes_query_database(", "sheets_write_range("):
        assert f"\n{tool}" in text
    assert "tickets_tickets(" not in text and "Queues: " not in text
