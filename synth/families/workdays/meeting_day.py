"""A day around one meeting (`meeting_day`): four turns from booking to the last change.

The user books a meeting with two colleagues; one of them silently declines and the user
asks whether everyone is still coming, with a stand-in named for anyone who is not; after
the stand-in accepts (a change that asks for nothing), the user has the agenda mailed with a
budget figure; then a colleague asks to push the meeting back an
hour, and the user has it moved and the new time sent to everyone, a colleague from another
team copied after all, with the budget figure from the earlier turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.checks import Allowance, Guards
from coworkenv.state import format_time
from coworkenv.task import Candidate, Clarification, Task, Turn, WorldCall
from coworkenv.world import Person

from ...builders import (
    day_text,
    event,
    field_equals,
    given_name,
    mail_event,
    mail_sent,
    max_id,
    next_day,
    number_fact,
    operation,
    row_exists,
    step,
    text_fact,
    time_fact,
)
from ...family import FamilyContext, family
from ..calendar_planning import meeting_days, pick_group, retry, titles_near
from .day_texts import say

SERVICES = ["calendar", "mail"]
TITLES = ["Planning session", "Quarterly review", "Budget check-in", "Project sync", "Priorities workshop"]
CATCH_UPS = ["Catch-up call", "Quick sync", "Check-in call"]


@dataclass(frozen=True)
class _Slot:
    """A day, three colleagues whose hours overlap the user's, and the meeting's start."""

    day: date
    group: list[Person]
    start: datetime


def _find_slot(ctx: FamilyContext) -> _Slot | None:
    """A day, three colleagues whose hours overlap the user's, and a one-hour start inside
    the overlap with room to push it back an hour."""
    day = ctx.choice(meeting_days(ctx)[:5])
    picked = pick_group(ctx, day, 3, 120)
    if picked is None:
        return None
    group, (lo, hi) = picked
    # Whole hours of the user's clock (a zone may be half an hour off UTC), with room to push back.
    local = lo.astimezone(ZoneInfo(ctx.user.time_zone))
    first = local.replace(minute=0, second=0, microsecond=0)
    if first < local:
        first += timedelta(hours=1)
    starts = [first + timedelta(hours=h) for h in range(10) if first + timedelta(hours=h + 2) <= hi]
    if not starts:
        return None
    return _Slot(day, group, ctx.choice(starts))


def _catch_ups(
    ctx: FamilyContext, day: date, taken: set[str]
) -> tuple[str, list[tuple[WorldCall, tuple[date, Person]]]]:
    """Two of the user's own meetings with the same title on two other days, each with another
    colleague, the earlier first: "my catch-up call next week" could be either (the family
    draws which)."""
    ws = ctx.seeded(SERVICES, [])[1]
    titles = {r[0].lower() for r in ws.conn.execute("SELECT title FROM calendar_events")}
    title = ctx.choice(
        [t for t in CATCH_UPS if not any(t.lower() in n for n in titles)] or ["Catch-up call (1:1)"]
    )
    days = sorted(ctx.rng.sample([d for d in meeting_days(ctx) if d != day], 2))
    people = ctx.rng.sample([p for p in ctx.people() if p.email not in taken], 2)
    zone = ctx.user.time_zone
    out = []
    for d, person, hour in zip(days, people, (10, 15), strict=True):
        at = datetime.combine(d, time(hour), ZoneInfo(zone))
        booked = operation(
            "calendar",
            "add_event",
            organizer_email=ctx.user.email,
            title=title,
            start=at.isoformat(),
            end=(at + timedelta(minutes=30)).isoformat(),
            time_zone=zone,
            attendees=[{"email": person.email, "response": "accepted"}],
        )
        out.append((booked, (d, person)))
    return title, out


@dataclass(frozen=True)
class _Day:
    """Everything the turns of the day name: who, when, what, and the ids they will have."""

    user: Person
    first: Person
    """The colleague who stays, and later asks to push the meeting back."""
    decliner: Person
    stand_in: Person
    copied: Person
    """A colleague of another team, copied on the new time, who then asks to join."""
    day: date
    start: datetime
    title: str
    topic: str
    budget: int
    currency: str
    event_id: int
    """The meeting the agent books."""
    last_event: int
    catch_up: str
    catch_ups: list[tuple[date, Person]]
    """The day and the colleague of each of the two catch-ups, the earlier first."""
    catch_up_ids: list[int]
    cancelled: int
    """Which of the two catch-ups the user means (drawn)."""
    operations: list[WorldCall]

    @property
    def pushed(self) -> datetime:
        return self.start + timedelta(hours=1)

    @property
    def new_event(self) -> dict[str, Any]:
        """The event the agent books, as a `where` filter."""
        return {"id": {"gt": self.last_event}, "organizer_email": self.user.email, "status": "confirmed"}


def _plan_day(ctx: FamilyContext) -> _Day:
    """The morning's plan: the meeting's slot and people, a colleague to copy later, the two
    catch-ups planted, a title no nearby meeting shares, the topic and the budget."""
    slot = retry(_find_slot, ctx, "meeting day")
    user, (first, decliner, stand_in) = ctx.user, slot.group
    taken = {user.email, first.email, decliner.email, stand_in.email}
    copied = ctx.choice(
        [p for p in ctx.people() if p.email not in taken and p.team != user.team]
        or [p for p in ctx.people() if p.email not in taken]
    )
    catch_up, pair = _catch_ups(ctx, slot.day, taken | {copied.email})
    ops = [op for op, _ in pair]
    results, ws = ctx.seeded(SERVICES, ops)
    catch_up_ids = [int(r["id"]) for r in results]  # the earlier first
    # Which one goes is drawn: no fixed rule (the earlier, the later) finds it.
    right = ctx.rng.randrange(len(pair))
    near = titles_near(ws, slot.start - timedelta(hours=2), slot.start + timedelta(hours=3))
    # A search by the title must find only this meeting: no seeded title around it contains it.
    free = [t for t in TITLES if not any(t.lower() in n.lower() for n in near)]
    title = ctx.choice(free or [f"{TITLES[0]} ({user.team})"])
    topic = ctx.choice(
        [t for t in ctx.the_world.vocabulary.meeting_topics if not any(c.isdigit() for c in t)]
        or ["the plan"]
    )
    budget, currency = ctx.choice([12500, 18400, 23750, 31200]), ctx.the_world.currency
    last_event = max_id(ws, "calendar_events")
    return _Day(
        user=user,
        first=first,
        decliner=decliner,
        stand_in=stand_in,
        copied=copied,
        day=slot.day,
        start=slot.start,
        title=title,
        topic=topic,
        budget=budget,
        currency=currency,
        event_id=last_event + 1,
        last_event=last_event,
        catch_up=catch_up,
        catch_ups=[info for _, info in pair],
        catch_up_ids=catch_up_ids,
        cancelled=right,
        operations=ops,
    )


def _book_meeting(ctx: FamilyContext, d: _Day) -> Turn:
    """First thing: book the meeting with two colleagues."""
    local = d.start.astimezone(ZoneInfo(d.user.time_zone))
    invitees = [d.first, d.decliner]
    return Turn(
        user=say(
            ctx,
            "First thing this morning.",
            f"Book a one-hour '{d.title}' on {day_text(d.day)} at {local:%H:%M} my time with {d.first.name} "
            f"({d.first.email}) and {d.decliner.name} ({d.decliner.email}).",
        ),
        checks=[
            field_equals(
                "meeting-booked",
                "The meeting starts at the asked time",
                "calendar_events",
                d.new_event,
                "start_utc",
                format_time(d.start),
            ),
            *[
                row_exists(
                    f"invited-{i}",
                    f"{p.name} is invited",
                    "calendar_attendees",
                    {"event_id": {"gt": d.last_event}, "email": p.email},
                )
                for i, p in enumerate(invitees)
            ],
        ],
        solution=[
            step(
                "calendar_list_events",
                start=d.day.isoformat(),
                end=next_day(d.day),
                time_zone=d.user.time_zone,
            ),
            step(
                "calendar_create_event",
                title=d.title,
                start=d.start.isoformat(),
                end=(d.start + timedelta(hours=1)).isoformat(),
                attendees=[p.email for p in invitees],
                time_zone=d.user.time_zone,
            ),
        ],
    )


def _replace_decline(ctx: FamilyContext, d: _Day) -> Turn:
    """Mid-morning: one colleague has silently declined; the stand-in takes their place."""
    return Turn(
        user=say(
            ctx,
            "Mid-morning.",
            f"Check that everyone is still coming to the '{d.title}'.",
            f"If someone declined, invite {d.stand_in.name} ({d.stand_in.email}) in their place.",
        ),
        events=[
            event(
                "calendar",
                "respond_as_attendee",
                minutes=100,
                announced=False,
                event_id=d.event_id,
                email=d.decliner.email,
                response="declined",
            )
        ],
        checks=[
            row_exists(
                "stand-in-invited",
                f"{d.stand_in.name} is invited",
                "calendar_attendees",
                {"event_id": {"gt": d.last_event}, "email": d.stand_in.email},
            ),
        ],
        solution=[
            step(
                "calendar_list_events",
                start=d.day.isoformat(),
                end=next_day(d.day),
                query=d.title,
                time_zone=d.user.time_zone,
            ),
            step("calendar_get_event", event_id=d.event_id),
            step(
                "calendar_update_event",
                event_id=d.event_id,
                add_attendees=[d.stand_in.email],
                remove_attendees=[d.decliner.email],
            ),
        ],
    )


def _mail_agenda(ctx: FamilyContext, d: _Day) -> Turn:
    """Late morning: the agenda and the budget figure, mailed to the two attendees; over lunch
    the stand-in accepts (a change that asks for nothing)."""
    attendees = [d.first, d.stand_in]
    agenda = f"Hi both,\n\nfor the {d.title}: we will go through {d.topic}; the budget we have is "
    agenda += f"{d.currency} {d.budget:,}.\n\n{given_name(d.user)}"
    return Turn(
        user=say(
            ctx,
            "Late morning.",
            f"Mail {given_name(d.first)} and {given_name(d.stand_in)} the agenda for the meeting: {d.topic}, and "
            f"the budget we have for it, {d.currency} {d.budget:,}.",
        ),
        events=[
            event(
                "calendar",
                "respond_as_attendee",
                minutes=60,
                announced=False,
                event_id=d.event_id,
                email=d.stand_in.email,
                response="accepted",
            )
        ],
        checks=[
            mail_sent(
                f"agenda-{i}",
                f"{p.name} gets the topic and the budget",
                [p.email],
                [text_fact(d.topic.removeprefix("the ")), number_fact(d.budget)],
            )
            for i, p in enumerate(attendees)
        ],
        solution=[step("mail_send_message", to=[p.email for p in attendees], subject=d.title, body=agenda)],
    )


def _cancel_catch_up(ctx: FamilyContext, d: _Day) -> Turn:
    """Just before lunch: "cancel my catch-up" when there are two (an agent should ask which)."""
    (first_day, first_with), (second_day, second_with) = d.catch_ups
    cancel_with = d.catch_ups[d.cancelled][1]
    cancel_id, kept_id = d.catch_up_ids[d.cancelled], d.catch_up_ids[1 - d.cancelled]
    today = ctx.start.astimezone(ZoneInfo(d.user.time_zone)).date()  # today, as the user's calendar shows it
    return Turn(
        user=say(ctx, "Just before lunch.", f"Cancel my '{d.catch_up}', it is no longer needed."),
        clarification=Clarification(
            question=f"You have two '{d.catch_up}' meetings: {day_text(first_day)} with {first_with.name} "
            f"and {day_text(second_day)} with {second_with.name}. Which one should I cancel?",
            answer=f"The one with {given_name(cancel_with)}. Keep the other one.",
            after=1,
            # An agent that does not ask cancels one of the two: here the wrong one.
            guess=[step("calendar_cancel_event", event_id=kept_id)],
            candidates=[Candidate(argument="event_id", value=i) for i in d.catch_up_ids],
        ),
        checks=[
            field_equals(
                "catch-up-cancelled",
                f"The '{d.catch_up}' with {cancel_with.name} is cancelled",
                "calendar_events",
                {"id": cancel_id},
                "status",
                "cancelled",
            ),
        ],
        solution=[
            step(
                "calendar_list_events",
                start=today.isoformat(),
                end=(today + timedelta(days=14)).isoformat(),
                query=d.catch_up,
                time_zone=d.user.time_zone,
            ),
            step("calendar_cancel_event", event_id=cancel_id),
        ],
    )


def _push_back(ctx: FamilyContext, d: _Day) -> Turn:
    """Late afternoon: a colleague asks to push the meeting back an hour; the new time goes to
    everyone, and the user changes their mind and copies a colleague with the budget figure."""
    user, first, copied = d.user, d.first, d.copied
    ask = f"Hi {given_name(user)},\n\ncould we push the {d.title} back by an hour?\n\n{given_name(first)}"
    new_local = d.pushed.astimezone(ZoneInfo(user.time_zone))
    note = f"Hi all,\n\nthe {d.title} now starts at {new_local:%H:%M} ({user.time_zone}). "
    note += f"Budget for it: {d.currency} {d.budget:,}.\n\n{given_name(user)}"
    people = [first, d.stand_in]
    return Turn(
        user=say(
            ctx,
            "Late afternoon.",
            f"Push the meeting back an hour, as {given_name(first)} asked, and tell everyone the new time.",
            f"Copy {copied.name} ({copied.email}) after all, with the budget figure I gave you.",
        ),
        events=[mail_event(first.email, 240, True, subject=f"Re: {d.title}", body=ask)],
        checks=[
            field_equals(
                "meeting-pushed",
                "The meeting starts an hour later",
                "calendar_events",
                d.new_event,
                "start_utc",
                format_time(d.pushed),
            ),
            *[
                mail_sent(
                    f"new-time-{i}",
                    f"{p.name} gets the new time",
                    [p.email],
                    [time_fact(d.pushed, user.time_zone, p.time_zone)],
                )
                for i, p in enumerate(people)
            ],
            mail_sent(
                "copied",
                f"{copied.name} gets the new time and the budget",
                [copied.email],
                [time_fact(d.pushed, user.time_zone, copied.time_zone), number_fact(d.budget)],
            ),
        ],
        solution=[
            step("mail_search_messages", "a", sender=first.email, unread=True),
            step("mail_get_message", message_id={"$ref": "a.messages.0.id"}),
            step("calendar_update_event", event_id=d.event_id, start=d.pushed.isoformat()),
            step(
                "mail_send_message",
                to=[p.email for p in people],
                cc=[copied.email],
                subject=f"New time: {d.title}",
                body=note,
            ),
        ],
        changed_mind=True,
    )


def _add_copied(ctx: FamilyContext, d: _Day) -> Turn:
    """Before logging off: the copied colleague asks to join, and is added."""
    user, copied = d.user, d.copied
    joins = f"Hi {given_name(user)},\n\nthanks for copying me: I would like to join the {d.title}. Can you add me?"
    joins += f"\n\n{given_name(copied)}"
    return Turn(
        user=say(
            ctx,
            "Before I log off.",
            f"Add {given_name(copied)} to the meeting, as they asked in their answer to your mail.",
            context=f"{given_name(copied)} answered your mail about the new time.",
        ),
        events=[mail_event(copied.email, 45, True, subject=f"Re: New time: {d.title}", body=joins)],
        checks=[
            row_exists(
                "copied-invited",
                f"{copied.name} is invited",
                "calendar_attendees",
                {"event_id": d.event_id, "email": copied.email},
            ),
        ],
        solution=[
            step("mail_search_messages", "j", sender=copied.email, unread=True),
            step("mail_get_message", message_id={"$ref": "j.messages.0.id"}),
            step("calendar_get_event", event_id=d.event_id),
            step("calendar_update_event", event_id=d.event_id, add_attendees=[copied.email]),
        ],
    )


@family(
    "meeting_day",
    capability_id="state_change_adaptation",
    services=SERVICES,
    multi_turn=True,
    worlds=True,
    kind="workday",
)
def meeting_day(ctx: FamilyContext) -> Task:
    """Six turns over one day: book a meeting; notice a silent decline and invite the stand-in;
    mail the agenda with a budget figure; cancel one of two catch-ups (ask which); move the
    meeting an hour later on a colleague's ask and send the new time to everyone, copying a
    colleague of another team, with the figure from the earlier turn; add that colleague when
    they ask. Difficulty does not change it yet."""
    d = _plan_day(ctx)
    turns = [
        _book_meeting(ctx, d),
        _replace_decline(ctx, d),
        _mail_agenda(ctx, d),
        _cancel_catch_up(ctx, d),
        _push_back(ctx, d),
        _add_copied(ctx, d),
    ]
    return ctx.task(
        capability_id="state_change_adaptation",
        services=SERVICES,
        operations=d.operations,
        title=f"A day around the '{d.title}': book, replace a decline, agenda, push back",
        extra_capabilities=["scheduling_constraints"],
        turns=turns,
        # Leaving the colleague who declined on the invite is as right as taking them off (the
        # reference does): their row then stays at the end.
        guards=Guards(
            allow=[
                Allowance(
                    table="calendar_attendees",
                    where={"event_id": d.event_id, "email": d.decliner.email},
                    added=True,
                )
            ]
        ),
    )
