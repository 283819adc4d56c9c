"""The families' builders return the task file's own models, exactly as a task file would
hold them, and refuse what would make a wrong one."""

from datetime import UTC, date, datetime

import pytest
from pydantic import ValidationError

from coworkenv.checks import Fact, FieldEquals, MailSent, PythonCheck, StatesFacts
from coworkenv.synth.builders import (
    ago,
    core_name,
    date_fact,
    event,
    field_equals,
    given_name,
    guard,
    mail_event,
    mail_sent,
    number_fact,
    operation,
    python_check,
    start_shifted,
    states,
    step,
    text_fact,
    time_fact,
    utc_text,
)
from coworkenv.synth.family import FamilyContext
from coworkenv.task import Event, SolutionStep, WorldCall


def test_world_operations_events_and_steps_are_the_task_models() -> None:
    assert operation("tickets", "add_ticket", title="Printer", queue="IT") == WorldCall(
        service="tickets", operation="add_ticket", params={"title": "Printer", "queue": "IT"}
    )
    assert mail_event("ana@x.example", 90, False, subject="Hi", body="Hello") == Event(
        service="mail",
        operation="deliver_inbound",
        announced=False,
        advance_minutes=90,
        params={"from_addr": "ana@x.example", "subject": "Hi", "body": "Hello"},
    )
    assert event("calendar", "move_event", minutes=120, announced=True, event_id=7).params == {"event_id": 7}
    assert step("mail_get_message", "m", message_id=3) == SolutionStep(
        tool="mail_get_message", arguments={"message_id": 3}, id="m"
    )
    assert step("tickets_update_ticket", ticket_id=4, status="closed", expect_error=True).expect_error


def test_a_world_operation_names_a_real_service() -> None:
    with pytest.raises(ValidationError, match="service"):
        operation("payroll", "add_row")


def test_checks_are_the_check_models_with_the_id_and_description_first() -> None:
    assert field_equals(
        "closed", "#4 is closed", "tickets_tickets", {"id": 4}, "status", "closed"
    ) == FieldEquals(
        id="closed",
        description="#4 is closed",
        table="tickets_tickets",
        where={"id": 4},
        column="status",
        value="closed",
    )
    noted = states(
        "noted", "The note gives it", "tickets_comments", {"ticket_id": 4}, ["body"], [number_fact(120)]
    )
    assert noted == StatesFacts(
        id="noted",
        description="The note gives it",
        table="tickets_comments",
        where={"ticket_id": 4},
        columns=["body"],
        facts=[Fact(number=120)],
    )
    sent = mail_sent("told", "Ana hears", ["ana@x.example"], [text_fact("NW-1")], thread_of=9, reply=True)
    assert sent == MailSent(
        id="told",
        description="Ana hears",
        to=["ana@x.example"],
        facts=[Fact(text="NW-1")],
        thread_of=9,
        reply=True,
    )


def test_a_guard_is_the_same_check_that_earns_nothing() -> None:
    kept = field_equals("kept", "#5 stays open", "tickets_tickets", {"id": 5}, "status", "open")
    assert guard(kept).role == "guard" and guard(kept).is_guard
    assert guard(kept).model_dump(exclude={"role"}) == kept.model_dump(exclude={"role"})
    assert kept.role is None  # the original is unchanged


def test_a_mail_check_takes_a_list_of_addresses_not_one_text() -> None:
    with pytest.raises(
        TypeError, match=r"mail_sent\('told'\): `to` is a list of addresses; got the text 'ana@x'"
    ):
        mail_sent("told", "", "ana@x")  # type: ignore[arg-type]


def test_a_reply_check_needs_the_thread_it_belongs_in() -> None:
    with pytest.raises(ValidationError, match="reply: true needs thread_of"):
        mail_sent("told", "", ["ana@x.example"], reply=True)


def test_facts() -> None:
    assert number_fact(15, percent=True) == Fact(number=15, unit="%")
    assert date_fact(date(2026, 3, 5)) == date_fact("2026-03-05") == Fact(date="2026-03-05")
    at = datetime(2026, 3, 5, 14, 30, tzinfo=UTC)
    assert time_fact(at, "Europe/Paris", "Europe/Paris", "UTC").zones == ["Europe/Paris", "UTC"]
    assert time_fact(at).time == at


def test_a_python_check_carries_its_constants_as_json() -> None:
    check = python_check(
        "fits", "It fits", "import json", {"b": 2, "a": [1]}, "def check(i, f, a):\n    return True"
    )
    assert isinstance(check, PythonCheck)
    assert check.code == (
        'import json\nP = json.loads("{\\"a\\": [1], \\"b\\": 2}")\n\ndef check(i, f, a):\n    return True'
    )


def test_times_relative_to_the_start_of_the_task() -> None:
    ctx = FamilyContext("tickets_escalate", 0)
    assert ctx.start == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    assert ago(ctx, days=1, hours=2) == "2026-03-01T07:00:00Z" == utc_text(datetime(2026, 3, 1, 7))
    assert start_shifted(ctx, minutes=-30) == "2026-03-02T08:30:00+00:00"


def test_names_without_titles() -> None:
    class Someone:
        name, email = "Dr. Ana Ruiz MD", "ana@x.example"

    assert (core_name(Someone()), given_name(Someone())) == ("Ana Ruiz", "Ana")
