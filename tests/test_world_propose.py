"""Worlds a model proposes, against a local scripted OpenAI-compatible server (the real
`openai` client over HTTP): problems go back in the same conversation, the kept world renders
the same workspace every time, and tasks in it carry it inline."""

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from coworkenv.cli import cli
from coworkenv.rollout import SeedCache
from coworkenv.rollout.agents.openai_client import Endpoint
from coworkenv.rollout.agents.scripted_llm import ScriptedLLM
from coworkenv.rollout.episodes.seeding import seed_workspace
from coworkenv.servers.render import render_workspace
from coworkenv.synth.family import build_task
from coworkenv.synth.validation.validation import validate_task
from coworkenv.world import load_world
from coworkenv.worlds import world
from coworkenv.worlds.propose import PROPOSED, WorldProposalFailed, check_world, propose_world


def clinic() -> dict[str, Any]:
    """A valid answer: a generated world dressed up as another organization."""
    data = json.loads(world("dental_clinics", 10, 0).model_dump_json())
    data.update(name="Pawsitive Vet Clinics", industry="veterinary clinic group", profile="whatever", seed=99)
    return data


def broken() -> dict[str, Any]:
    data = clinic()
    data["people"][-1]["email"] = data["people"][-2]["email"]
    data["people"][3]["manager_email"] = "nobody@pawsitive.example"
    data["headquarters_time_zone"] = "Mars/Olympus"
    return data


def answer(data: dict[str, Any]) -> dict[str, Any]:
    return {"content": "```json\n" + json.dumps(data) + "\n```"}


async def propose(script: list[Any], **kwargs: Any) -> tuple[Any, list[dict[str, Any]]]:
    with ScriptedLLM(script, model="designer") as llm:
        endpoint = Endpoint(model="designer", base_url=llm.base_url, api_key="k", backoff=0.0)
        proposal = await propose_world(
            endpoint, industry="veterinary clinic group", size=10, seed=4, **kwargs
        )
        return proposal, llm.requests


def test_every_problem_goes_back_and_the_fixed_world_is_kept() -> None:
    proposal, requests = anyio.run(lambda: propose([answer(broken()), answer(clinic())]))
    assert proposal.rounds == 2
    assert proposal.world.name == "Pawsitive Vet Clinics"
    assert (proposal.world.profile, proposal.world.seed) == (PROPOSED, 4)
    (problems,) = proposal.problems
    assert problems == [
        "headquarters_time_zone: Value error, unknown time zone 'Mars/Olympus'; use an IANA name such as 'Europe/Berlin'"
    ]
    correction = requests[1]["messages"][-1]["content"]
    assert correction.startswith("The world is not valid. Every problem found:\n- headquarters_time_zone")
    assert requests[0]["response_format"]["json_schema"]["name"] == "world"
    assert "veterinary clinic group with 10 colleagues" in requests[0]["messages"][1]["content"]


def test_consistency_problems_are_all_named() -> None:
    data = broken()
    data["headquarters_time_zone"] = "Europe/London"
    world_, problems = check_world(json.dumps(data), seed=0, size=10)
    assert world_ is None
    emails = [p["email"] for p in data["people"]]
    assert problems == [
        f"(world): Value error, emails must be unique; repeated: {emails[-1]}; "
        f"{emails[3]}: manager 'nobody@pawsitive.example' is not a colleague"
    ]


def test_what_only_rendering_sees_and_a_wrong_size_are_refused() -> None:
    data = clinic()
    data["documents"][0]["kind"] = "poem"
    _, problems = check_world(json.dumps(data), seed=0, size=10)
    assert len(problems) == 1 and problems[0].startswith(
        f"rendering the seed data failed: {data['documents'][0]['path']}: unknown document kind 'poem'"
    )
    _, problems = check_world(json.dumps(clinic()), seed=0, size=40)
    assert problems == ["asked for 40 colleagues; this world has 10"]
    _, problems = check_world("Sure! Here is a world: none", seed=0, size=10)
    assert problems[0].startswith("the answer is not one JSON object")


def test_no_valid_world_in_the_rounds_is_a_clear_failure() -> None:
    with pytest.raises(
        WorldProposalFailed, match="no valid veterinary clinic group world in 2 rounds"
    ) as err:
        anyio.run(lambda: propose([answer(broken()), {"content": "no"}], rounds=2))
    assert err.value.problems[0].startswith("the answer is not one JSON object")


def test_a_proposed_world_renders_the_same_workspace_and_tasks_carry_it() -> None:
    proposal, _ = anyio.run(lambda: propose([answer(clinic())]))
    proposed = proposal.world
    assert render_workspace(proposed).content_hash() == render_workspace(proposed).content_hash()
    task = build_task("tickets_escalate", 3, world=proposed)
    assert task.id == f"tickets_escalate-proposed-{proposed.content_hash[:8]}-3"
    assert task.seed.procedural.params["world"]["name"] == "Pawsitive Vet Clinics"
    seeded = seed_workspace(task)
    assert {r["email"] for r in seeded.rows("directory_people")} >= {p.email for p in proposed.staff}
    report = anyio.run(lambda: validate_task(task, cache=SeedCache()))
    assert report.ok, report.summary()


def test_an_inline_world_must_match_its_profile_size_and_seed() -> None:
    proposal, _ = anyio.run(lambda: propose([answer(clinic())]))
    data = json.loads(build_task("tickets_escalate", 3, world=proposal.world).model_dump_json())
    data["seed"]["procedural"]["params"]["seed"] = 5
    from coworkenv.task import Task

    with pytest.raises(
        ValueError, match="profile, size and seed must be the inline world's: 'proposed', 10 and 4"
    ):
        Task.model_validate(data)


def test_world_propose_writes_the_world(tmp_path: Path) -> None:
    out = tmp_path / "vet.json"
    with ScriptedLLM([answer(broken()), answer(clinic())], model="designer") as llm:
        args = ["world", "propose", str(out), "--industry", "veterinary clinic group", "--size", "10"]
        result = CliRunner().invoke(
            cli, [*args, "--endpoint", f"world=designer@{llm.base_url}"], env={"OPENAI_API_KEY": "k"}
        )
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        "wrote Pawsitive Vet Clinics (veterinary clinic group, 10 colleagues, hash "
    )
    assert result.output.rstrip().endswith("valid after 2 round(s)")
    assert load_world(out).profile == PROPOSED
    with ScriptedLLM([{"content": "no"}], model="designer") as llm:
        failed = CliRunner().invoke(
            cli,
            ["world", "propose", str(tmp_path / "x.json"), "--industry", "zoo",
             "--endpoint", f"world=designer@{llm.base_url}", "--rounds", "1"],
        )  # fmt: skip
    assert failed.exit_code == 1 and "no valid zoo world in 1 rounds" in failed.output


def test_a_task_in_an_edited_world_carries_it() -> None:
    stock = world("museum", 12, 1)
    edited = stock.model_copy(update={"name": "The Edited Museum"})
    assert "world" not in build_task("tickets_escalate", 3, world=stock).seed.procedural.params
    task = build_task("tickets_escalate", 3, world=edited)
    assert task.seed.procedural.params["world"]["name"] == "The Edited Museum"
    assert task.id == f"tickets_escalate-museum-{edited.content_hash[:8]}-3"
    assert seed_workspace(task).rows("directory_people")  # seeded from the inline world


def test_synth_proposes_worlds_first_keeps_them_and_reuses_them(tmp_path: Path) -> None:
    from coworkenv.synth.pipeline import kept_tasks, read_drafts

    out = tmp_path / "out"
    args = ["synth", "--count", "2", "--capabilities", "triage_routing", "--mix", "single=1", "--worlds", "1"]
    with ScriptedLLM([answer(broken()), answer(clinic())], model="designer") as llm:
        result = CliRunner().invoke(
            cli,
            [*args, "--propose-worlds", "1", "--endpoint", f"world=designer@{llm.base_url}",
             "--concurrency", "1", "--out", str(out)],
            env={"OPENAI_API_KEY": "k"},
        )  # fmt: skip
        asked = len(llm.requests)
    assert result.exit_code == 0, result.output
    assert asked == 2  # the broken answer and its correction
    proposed = out / "worlds" / "proposed-0.json"
    assert load_world(proposed).name == "Pawsitive Vet Clinics"
    assert [r.request.world for r in read_drafts(out) if r.request] == [str(proposed.resolve()), "northwind"]
    in_world = next(t for t in kept_tasks(out) if t.seed.procedural.name == "world")
    assert in_world.seed.procedural.params["world"]["name"] == "Pawsitive Vet Clinics"
    with ScriptedLLM([], model="designer") as llm:
        again = CliRunner().invoke(
            cli,
            [*args[:2], "3", *args[3:], "--propose-worlds", "1",
             "--endpoint", f"world=designer@{llm.base_url}", "--concurrency", "1", "--out", str(out)],
            env={"OPENAI_API_KEY": "k"},
        )  # fmt: skip
        assert again.exit_code == 0, again.output
        assert llm.requests == []  # the kept world is reused
    no_model = CliRunner().invoke(cli, ["synth", "--propose-worlds", "1", "--out", str(tmp_path / "x")])
    assert (
        no_model.exit_code == 2 and "--propose-worlds needs --endpoint world=MODEL[@URL]" in no_model.output
    )
