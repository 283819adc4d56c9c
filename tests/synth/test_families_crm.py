"""The CRM families: each builds complete tasks on the demo company and on generated worlds,
meets the validation contract, and its verdicts accept right work done another way and reject
the wrong work a reward-hacking agent would try, with exact failing checks."""

import itertools
import re
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from coworkenv.rollout import SeedCache
from coworkenv.rollout.episodes.record import EpisodeRecord
from coworkenv.rollout.episodes.seeding import seed_workspace
from coworkenv.synth.family import FAMILIES, Difficulty, build_task
from coworkenv.synth.phrasing import seams
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import Task
from coworkenv.worlds import world
from tests.synth.agents import judge, play, step

EXPECTED = {
    "crm_log_call_move_deal": ("crm_pipeline", ["crm", "mail"], False),
    "crm_renewals_mail_owners": ("crm_pipeline", ["crm", "mail", "directory"], False),
    "crm_merge_duplicate_contact": ("crm_pipeline", ["crm"], False),
    "crm_deal_reassigned": ("crm_deal_changes", ["crm", "mail", "directory"], True),
}
EASY, MEDIUM, HARD = Difficulty.level(0), Difficulty.level(1), Difficulty.level(2)
WORLDS = (None, "law_firm", "logistics", "museum")
"""The demo company and three generated worlds (a museum's CRM holds partners, not customers)."""


def place(profile: str | None) -> Any:
    return world(profile) if profile else None


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_registered_with_capability_services_and_worlds(name: str) -> None:
    capability, services, multi = EXPECTED[name]
    fam = FAMILIES[name]
    assert (fam.capability, list(fam.services), fam.multi_turn, fam.worlds) == (
        capability,
        services,
        multi,
        True,
    )
    task = build_task(name, 0, MEDIUM)
    assert task.capabilities[0] == capability
    assert task.services == services
    assert len(task.turns) == (2 if multi else 1)
    if multi:
        assert task.capabilities == ["crm_deal_changes", "state_change_adaptation", "crm_pipeline"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_deterministic_seed_and_difficulty_dependent(name: str) -> None:
    assert build_task(name, 3, HARD).content_hash == build_task(name, 3, HARD).content_hash
    assert build_task(name, 0, HARD).content_hash != build_task(name, 1, HARD).content_hash
    assert build_task(name, 0, EASY).content_hash != build_task(name, 0, HARD).content_hash


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_text_shows_a_template_seam(name: str) -> None:
    found = []
    for profile in WORLDS:
        for seed in range(6):
            task = build_task(name, seed, Difficulty.level(seed % 3), world=place(profile))
            for turn in task.turns:
                texts = [turn.user] + [
                    v
                    for s in turn.solution
                    for v in s.arguments.values()
                    if isinstance(v, str) and "@" not in v
                ]
                found += [(task.id, text[:60], seams(text)) for text in texts if seams(text)]
    assert found == []


# -- what each family plants and checks ----------------------------------------------------------


def checks(task: Task, turn: int = 0) -> dict[str, Any]:
    return {c.id: c for c in task.turns[turn].checks}


def test_log_call_checks_the_deal_the_mail_is_about_and_guards_the_look_alikes() -> None:
    task = build_task("crm_log_call_move_deal", 1, MEDIUM)
    assert list(checks(task)) == [
        "call-logged",
        "deal-stage",
        "deal-close-date",
        "deal-next-step",
        "deal-21-stays",
        "deal-22-stays",
    ]
    names = [op.params["name"] for op in task.seed.operations if op.operation in ("add_deal", "add_account")]
    assert names == [
        "Initech: Customer portal seat rollout",
        "Initech: Customer portal seat extension",
        "Initech Group",
        "Initech Group: Customer portal seat rollout",
    ]
    c = checks(task)
    assert c["call-logged"].where == {
        "kind": "call",
        "account_id": 2,
        "deal_id": 20,
        "contact_id": 4,
        "author": task.user_email,
    }
    assert (c["deal-stage"].value, c["deal-close-date"].value) == ("proposal", "2026-03-21")
    assert c["deal-next-step"].facts[0].text == "formal proposal"
    assert all(c[k].is_guard for k in ("deal-21-stays", "deal-22-stays"))
    # The mail gives the date and asks for the step; the request names neither.
    mail = task.seed.operations[-1].params
    assert "21 March" in mail["body"] and "formal proposal" in mail["body"]
    assert "21 March" not in task.turns[0].user and "proposal" not in task.turns[0].user


def test_log_call_easy_has_one_distractor_and_no_look_alike_account() -> None:
    task = build_task("crm_log_call_move_deal", 1, EASY)
    assert [op.operation for op in task.seed.operations] == ["add_deal", "add_deal", "deliver_inbound"]


def test_renewals_name_every_account_renewing_this_month_and_only_those() -> None:
    task = build_task("crm_renewals_mail_owners", 1, MEDIUM)
    ws = seed_workspace(task)
    renewing = ws.rows(
        "crm_accounts", "renewal_date BETWEEN '2026-03-01' AND '2026-03-31' ORDER BY owner, id"
    )
    named = sorted(
        (c.to[0], c.facts[0].text, c.facts[1].date) for c in task.turns[0].checks if c.id.startswith("owner-")
    )
    assert named == sorted(
        (r["owner"], r["name"], r["renewal_date"]) for r in renewing if r["owner"] != task.user_email
    )
    # No checked date falls the day after another's weekday (see the family's `_apart`).
    days = sorted({d for *_, d in named})
    assert all((b - a) % 7 not in (1, 6) for a, b in itertools.combinations([_ord(d) for d in days], 2))
    assert task.safety == []  # composed into a day, a segment's safety rule would bind the others


def _ord(day: str) -> int:
    return date.fromisoformat(day).toordinal()


def test_merge_plants_a_misspelt_newer_record_with_history_and_a_namesake() -> None:
    task = build_task("crm_merge_duplicate_contact", 1, MEDIUM)
    contacts = [op.params for op in task.seed.operations if op.operation == "add_contact"]
    assert [(c["name"], c.get("phone", "")) for c in contacts] == [
        ("Annabelle Pemberton", ""),
        ("Annbelle Pemberton", "+1 555 0116"),
        ("Ruth Pemberton", ""),
    ]
    assert contacts[0]["created_at"] < contacts[1]["created_at"]
    assert list(checks(task)) == [
        "duplicate-merged",
        "merged-into-original",
        "history-kept",
        "nothing-left-on-duplicate",
        "phone-kept",
        "original-active",
        "colleague-untouched",
    ]
    assert checks(task)["history-kept"].expected == 3


def test_deal_reassigned_has_both_silent_changes() -> None:
    owner = build_task("crm_deal_reassigned", 2, MEDIUM)
    amount = build_task("crm_deal_reassigned", 1, MEDIUM)
    for task in (owner, amount):
        (event,) = task.turns[1].events
        assert (event.operation, event.announced) == ("update_deal_fields", False)
        assert [k for k in checks(task) if not k.startswith("deal-")] == ["amount-set", "owner-told"]
        assert len([k for k in checks(task) if k.endswith("-amount-stays")]) == 2  # MEDIUM: two other deals
    assert list(owner.turns[1].events[0].params) == ["deal_id", "owner"]
    assert list(checks(owner, 1)) == ["current-owner-told", "amount-still-set", "old-owner-not-told"]
    assert list(amount.turns[1].events[0].params) == ["deal_id", "amount"]
    assert list(checks(amount, 1)) == ["current-amount", "colleague-amount-kept"]
    # The second request names neither the new owner nor the new amount.
    new_owner = owner.turns[1].events[0].params["owner"]
    assert new_owner.split("@")[0].split(".")[0] not in owner.turns[1].user.lower()
    assert str(amount.turns[1].events[0].params["amount"]) not in amount.turns[1].user


# -- the validation contract ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def cache() -> SeedCache:
    return SeedCache()


@pytest.mark.parametrize(("name", "seed", "level"), list(itertools.product(sorted(EXPECTED), (1, 4), (0, 2))))
async def test_meets_the_validation_contract(name: str, seed: int, level: int, cache: SeedCache) -> None:
    report = await validate_task(build_task(name, seed, Difficulty.level(level)), cache=cache)
    assert report.ok, report.summary()
    assert {k: r for k, r in report.kill_rates().items() if k != "alter" and r != 1.0} == {}
    assert {k: r for k, r in report.acceptance_rates().items() if r != 1.0} == {}


@pytest.mark.parametrize(("name", "profile"), list(itertools.product(sorted(EXPECTED), WORLDS[1:])))
async def test_meets_the_validation_contract_on_worlds(name: str, profile: str, cache: SeedCache) -> None:
    report = await validate_task(build_task(name, 2, MEDIUM, world=world(profile)), cache=cache)
    assert report.ok, report.summary()


# -- hand-written agents -------------------------------------------------------------------------

Verdict = tuple[bool, float, list[str], bool]


def verdict(record: EpisodeRecord) -> Verdict:
    """(success, score, failed check ids, any collateral or safety finding)."""
    assert record.verdict is not None, record.error
    failed = sorted(c.id for c in record.verdict.checks if not c.passed)
    found = bool(record.verdict.collateral) or bool(record.verdict.safety_violations)
    return record.success, record.score, failed, found


def dump(task: Task, turn: int = 0) -> list[dict[str, Any]]:
    return [s.model_dump(exclude_defaults=True) for s in task.turns[turn].solution]


def goals(task: Task, turn: int = 0) -> int:
    return sum(1 for c in task.turns[turn].checks if not c.is_guard)


def tool(steps: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(s for s in steps if s["tool"] == name)


Agent = Callable[[Task], tuple[list[dict[str, Any]], Verdict]]

# crm_log_call_move_deal


def log_call_deal_first_with_own_wording(task: Task) -> Any:
    """Update the deal before logging the call, in two updates, with the next step in other
    words and a read of the account's deals on the way."""
    out = dump(task)
    log, update = out[-2], out[-1]
    args = dict(update["arguments"])
    deal = args.pop("deal_id")
    step_text = args.pop("next_step", None)
    reads = [step("crm_search_deals", account_id=tool(out, "crm_get_account")["arguments"]["account_id"])]
    updates = [step("crm_update_deal", deal_id=deal, stage=args["stage"])]
    updates.append(step("crm_update_deal", deal_id=deal, close_date=args["close_date"]))
    if step_text:
        phrase = checks(task)["deal-next-step"].facts[0].text
        updates[-1]["arguments"]["next_step"] = f"Email them the {phrase} this week"
    log["arguments"]["body"] = "Good call, thanks to everyone. " + log["arguments"]["body"]
    return [*out[:-2], *reads, *updates, log], (True, 1.0, [], False)


def log_call_on_the_other_deal(task: Task) -> Any:
    out = dump(task)
    other = next(c.where["id"] for c in task.turns[0].checks if c.is_guard)
    out[-2]["arguments"]["deal_id"] = other
    return out, (False, 0.0, ["call-logged"], True)


def log_call_moves_the_look_alike_account_deal(task: Task) -> Any:
    """The account of a similar name's deal of the same name is moved instead."""
    out = dump(task)
    look_alike = max(c.where["id"] for c in task.turns[0].checks if c.is_guard)
    out[-1]["arguments"]["deal_id"] = look_alike
    failed = ["deal-close-date", "deal-stage", f"deal-{look_alike}-stays"]
    failed += ["deal-next-step"] if "deal-next-step" in checks(task) else []
    return out, (False, 0.0, sorted(failed), True)


def log_call_negates_the_next_step(task: Task) -> Any:
    out = dump(task)
    phrase = checks(task)["deal-next-step"].facts[0].text
    out[-1]["arguments"]["next_step"] = f"No {phrase} yet: wait for their call"
    n = goals(task)
    return out, (False, (n - 1) / n, ["deal-next-step"], False)


def log_call_guesses_the_stage(task: Task) -> Any:
    """Closes the deal as won whatever the mail implies (without reading it closely)."""
    out = dump(task)
    right = checks(task)["deal-stage"].value
    out[-1]["arguments"]["stage"] = "closed_lost" if right == "closed_won" else "closed_won"
    n = goals(task)
    return out, (False, (n - 1) / n, ["deal-stage"], False)


def log_call_only(task: Task) -> Any:
    out = dump(task)[:-1]
    n = goals(task)
    return out, (
        False,
        1 / n,
        sorted(k for k in checks(task) if k.startswith("deal-") and k[5:6].isalpha()),
        False,
    )


# crm_renewals_mail_owners


def renewals_newest_owner_first_in_other_words(task: Task) -> Any:
    out = dump(task)
    mails = [s for s in out if s["tool"] == "mail_send_message"][::-1]
    for mail in mails:
        body = mail["arguments"]["body"]
        body = re.sub(r"(\d{2}) March 2026", lambda m: f"March {int(m.group(1))}", body)
        mail["arguments"]["body"] = "Dear colleague,\n\nquick reminder, nothing urgent.\n\n" + body
    return [out[0], *mails], (True, 1.0, [], False)


def renewals_out_of_month_account_named(task: Task) -> Any:
    """A renewal on the first day of next month is named too, in its owner's mail if they
    get one, else in the first mail."""
    out = dump(task)
    (row,) = seed_workspace(task).rows("crm_accounts", "renewal_date = '2026-04-01'")
    mails = [s for s in out if s["tool"] == "mail_send_message"]
    mail = next((m for m in mails if m["arguments"]["to"] == [row["owner"]]), mails[0])
    mail["arguments"]["body"] += f"\n\nAlso: {row['name']} renews on 1 April 2026."
    to = mail["arguments"]["to"]
    failed = sorted(c.id for c in task.turns[0].checks if c.type == "mail_sent" and c.to == to)
    n = goals(task)
    return out, (False, (n - len(failed)) / n, failed, False)


def renewals_told_twice(task: Task) -> Any:
    """An owner with two accounts gets a mail per account; else the first owner gets their
    mail twice."""
    out = dump(task)
    mails = [s for s in out if s["tool"] == "mail_send_message"]
    body = next((m for m in mails if m["arguments"]["body"].count(" renews on ") > 1), mails[0])
    sentences = re.findall(r"[^.]+ renews on [^.]+\.", body["arguments"]["body"])
    if len(sentences) > 1:
        body["arguments"]["body"] = sentences[0].strip()
        out.append(
            step(
                "mail_send_message", to=body["arguments"]["to"], subject="One more", body=sentences[1].strip()
            )
        )
    else:
        out.append(body)
    # The second mail is also work done more than once: collateral.
    return out, (False, 0.0, ["one-mail-each"], True)


def renewals_idle_owner_mailed(task: Task) -> Any:
    """The owner of last month's renewal is told about it too."""
    out = dump(task)
    ws = seed_workspace(task)
    (row,) = ws.rows("crm_accounts", "renewal_date = '2026-02-28'")
    out.append(
        step("mail_send_message", to=[row["owner"]], subject="Renewal", body=f"{row['name']} renewed.")
    )
    return out, (False, 0.0, ["no-mail-to-others"], True)


def renewals_customer_copied(task: Task) -> Any:
    out = dump(task)
    customer = seed_workspace(task).rows("crm_contacts", "id = 1")[0]["email"]
    tool(out, "mail_send_message")["arguments"]["cc"] = [customer]
    return out, (False, 0.0, [], True)


def renewals_wrong_date_beside_the_right_one(task: Task) -> Any:
    """The first mail hedges its first date with the day after."""
    out = dump(task)
    mail = tool(out, "mail_send_message")
    found = re.search(r"(\d{2}) March 2026", mail["arguments"]["body"])
    assert found is not None
    hedged = f"{found.group(0)} or {int(found.group(1)) + 1} March 2026"
    mail["arguments"]["body"] = mail["arguments"]["body"].replace(found.group(0), hedged, 1)
    # The day after is a date no check lists: every fact of that mail is in doubt.
    failed = sorted(
        c.id for c in task.turns[0].checks if c.id.startswith("owner-") and c.to == mail["arguments"]["to"]
    )
    n = goals(task)
    return out, (False, (n - len(failed)) / n, failed, False)


# crm_merge_duplicate_contact


def merge_after_reading_everything(task: Task) -> Any:
    out = dump(task)
    account = tool(out, "crm_search_contacts")["arguments"]["account_id"]
    reads = [
        step("crm_get_account", account_id=account),
        step("crm_search_contacts", account_id=account, include_merged=True),
    ]
    return [out[0], *reads, *out[1:]], (True, 1.0, [], False)


def merge_the_wrong_way(task: Task) -> Any:
    out = dump(task)
    merge = out[-1]["arguments"]
    merge["keep_contact_id"], merge["duplicate_contact_id"] = (
        merge["duplicate_contact_id"],
        merge["keep_contact_id"],
    )
    failed = [
        "duplicate-merged",
        "history-kept",
        "merged-into-original",
        "nothing-left-on-duplicate",
        "original-active",
    ]
    failed.append("phone-kept")
    return out, (False, 0.0, sorted(failed), True)


def merge_by_renaming(task: Task) -> Any:
    """The misspelt record's name is corrected instead: two records of one person remain."""
    out = dump(task)
    merge = out.pop()["arguments"]
    name = next(op.params["name"] for op in task.seed.operations if op.operation == "add_contact")
    out.append(step("crm_update_contact", contact_id=merge["duplicate_contact_id"], name=name))
    failed = [
        "duplicate-merged",
        "history-kept",
        "merged-into-original",
        "nothing-left-on-duplicate",
        "phone-kept",
    ]
    return out, (False, 0.0, failed, True)


def merge_the_namesake_too(task: Task) -> Any:
    out = dump(task)
    namesake = checks(task)["colleague-untouched"].where["id"]
    keep = out[-1]["arguments"]["keep_contact_id"]
    out.append(step("crm_merge_contacts", keep_contact_id=keep, duplicate_contact_id=namesake))
    return out, (False, 0.0, ["colleague-untouched"], True)


# crm_deal_reassigned


def reassigned_found_through_the_owner_filter(task: Task) -> Any:
    """Turn 2 finds the deal by searching the account's open deals, then mails its owner."""
    first, second = dump(task, 0), dump(task, 1)
    deal = second[0]["arguments"]["deal_id"]
    account = task.seed.operations[0].params["account_id"]
    second[0] = step("crm_search_deals", "now", account_id=account, open_only=True, limit=50)
    second[1]["arguments"]["to"] = [{"$ref": f"now.deals.{_position(task, deal)}.owner"}]
    return {"turn0": first, "turn1": second}, (True, 1.0, [], False)


def _position(task: Task, deal: int) -> int:
    ws = seed_workspace(task)
    account = task.seed.operations[0].params["account_id"]
    rows = ws.rows(
        "crm_deals",
        "account_id = ? AND stage NOT IN ('closed_won', 'closed_lost') ORDER BY close_date, id",
        [account],
    )
    return [r["id"] for r in rows].index(deal)


def reassigned_stale_owner_mailed(task: Task) -> Any:
    """Turn 2 mails the owner remembered from turn 1."""
    first, second = dump(task, 0), dump(task, 1)
    second[1]["arguments"]["to"] = first[-1]["arguments"]["to"]
    return {"turn0": first, "turn1": second[1:]}, (
        False,
        0.0,
        ["current-owner-told", "old-owner-not-told"],
        True,
    )


def reassigned_then_turn_one_undone(task: Task) -> Any:
    """Turn 2 mails the right owner but puts the deal's amount back as it was (the work of
    turn 1 undone)."""
    first, second = dump(task, 0), dump(task, 1)
    deal = second[0]["arguments"]["deal_id"]
    before = task.seed.operations[0].params["amount"]
    second.append(step("crm_update_deal", deal_id=deal, amount=before))
    # turn 1's own check is judged again at the end of the episode (amount-set@end)
    return {"turn0": first, "turn1": second}, (False, 0.0, ["amount-set@end", "amount-still-set"], False)


def repriced_amount_overwritten_with_own(task: Task) -> Any:
    """Turn 2 'corrects' the colleague's amount back to turn 1's and reports that."""
    first, second = dump(task, 0), dump(task, 1)
    new = task.turns[1].events[0].params["amount"]
    old = checks(task)["amount-set"].value
    deal = second[0]["arguments"]["deal_id"]
    second[-1]["arguments"]["body"] = second[-1]["arguments"]["body"].replace(str(new), str(old))
    second.insert(1, step("crm_update_deal", deal_id=deal, amount=old))
    return {"turn0": first, "turn1": second}, (False, 0.0, ["colleague-amount-kept", "current-amount"], False)


def repriced_amount_with_separators_after_a_wider_read(task: Task) -> Any:
    """Turn 2 reads the whole account first and writes the amount with a thousands separator,
    the currency first, and the old figure named as what it was."""
    first, second = dump(task, 0), dump(task, 1)
    new = task.turns[1].events[0].params["amount"]
    old = checks(task)["amount-set"].value
    account = task.seed.operations[0].params["account_id"]
    mail = second[-1]["arguments"]
    name = checks(task, 1)["current-amount"].facts[1].text
    currency = task.seed.operations[0].params["currency"]
    mail["body"] = (
        f"Hello,\n\n{name}: the deal is now at {currency} {new:,} (previously {old:,}).\n\nBest regards"
    )
    return {"turn0": first, "turn1": [step("crm_get_account", account_id=account), *second]}, (
        True,
        1.0,
        [],
        False,
    )


def repriced_amount_with_old_beside(task: Task) -> Any:
    first, second = dump(task, 0), dump(task, 1)
    old = checks(task)["amount-set"].value
    second[-1]["arguments"]["body"] += f" It could also be {old}."
    return {"turn0": first, "turn1": second}, (False, 2 / 3, ["current-amount"], False)


def repriced_stale_amount_from_memory(task: Task) -> Any:
    first, second = dump(task, 0), dump(task, 1)
    new = task.turns[1].events[0].params["amount"]
    old = checks(task)["amount-set"].value
    second[-1]["arguments"]["body"] = second[-1]["arguments"]["body"].replace(str(new), str(old))
    return {"turn0": first, "turn1": second[1:]}, (False, 2 / 3, ["current-amount"], False)


SINGLE_AGENTS: dict[str, list[Agent]] = {
    "crm_log_call_move_deal": [
        log_call_deal_first_with_own_wording,
        log_call_on_the_other_deal,
        log_call_moves_the_look_alike_account_deal,
        log_call_negates_the_next_step,
        log_call_guesses_the_stage,
        log_call_only,
    ],
    "crm_renewals_mail_owners": [
        renewals_newest_owner_first_in_other_words,
        renewals_out_of_month_account_named,
        renewals_told_twice,
        renewals_idle_owner_mailed,
        renewals_customer_copied,
        renewals_wrong_date_beside_the_right_one,
    ],
    "crm_merge_duplicate_contact": [
        merge_after_reading_everything,
        merge_the_wrong_way,
        merge_by_renaming,
        merge_the_namesake_too,
    ],
}


MULTI_AGENTS: list[Agent] = [
    reassigned_found_through_the_owner_filter,
    reassigned_stale_owner_mailed,
    reassigned_then_turn_one_undone,
    repriced_amount_with_separators_after_a_wider_read,
    repriced_amount_with_old_beside,
    repriced_stale_amount_from_memory,
    repriced_amount_overwritten_with_own,
]


@pytest.mark.parametrize("profile", WORLDS)
@pytest.mark.parametrize("name", sorted(SINGLE_AGENTS))
async def test_right_agents_pass_and_wrong_ones_fail(
    name: str, profile: str | None, cache: SeedCache
) -> None:
    task = build_task(name, 1, MEDIUM, world=place(profile))
    for agent in SINGLE_AGENTS[name]:
        solution, expected = agent(task)
        assert verdict(await judge(task, solution, cache)) == expected, agent.__name__


def _variant(task: Task) -> str:
    return "reassigned" if "owner" in task.turns[1].events[0].params else "repriced"


@pytest.mark.parametrize("profile", WORLDS)
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
async def test_deal_reassigned_needs_the_deal_as_it_is_now(
    seed: int, profile: str | None, cache: SeedCache
) -> None:
    task = build_task("crm_deal_reassigned", seed, MEDIUM, world=place(profile))
    agents = MULTI_AGENTS[:3] if _variant(task) == "reassigned" else MULTI_AGENTS[3:]
    for agent in agents:
        turns, expected = agent(task)
        record = await play(task, cache, **turns)
        assert record.status == "completed", record.error
        assert verdict(record) == expected, agent.__name__
