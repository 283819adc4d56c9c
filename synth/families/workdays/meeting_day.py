"""A day around one meeting (`meeting_day`): four turns from booking to the last change.

The user books a meeting with two colleagues; one of them silently declines and the user
asks whether everyone is still coming, with a stand-in named for anyone who is not; after
the stand-in accepts (a change that asks for nothing), the user has the agenda mailed with a
budget figure; then a colleague asks to push the meeting back an
hour, and the user has it moved and the new time sent to everyone, a colleague from another
team copied after all, with the budget figure from the earlier turn.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from coworkenv.state import format_time
from coworkenv.task import Task

from ...family import FamilyContext, family
from ..coordination._shared import (
    _check,
    _day_text,
    _first,
    _mail_sent,
    _max_id,
    _meeting_days,
    _next_day,
    _pick_group,
    _retry,
    _step,
    _time,
    _titles_near,
    _workspace,
)
from ._day import Json, changed_mind, say

SERVICES = ["calendar", "mail"]
TITLES = ["Planning session", "Quarterly review", "Budget check-in", "Project sync", "Priorities workshop"]


def _plan(ctx: FamilyContext) -> Json | None:
    """A day, three colleagues whose hours overlap the user's, and a one-hour start inside
    the overlap with room to push it back an hour."""
    day = ctx.choice(_meeting_days(ctx)[:5])
    picked = _pick_group(ctx, day, 3, 120)
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
    return {"day": day, "group": group, "start": ctx.choice(starts)}


CATCH_UPS = ["Catch-up call", "Quick sync", "Check-in call"]


def _catch_ups(ctx: FamilyContext, day: date, taken: set[str]) -> tuple[str, list[tuple[Json, Any]]]:
    """Two of the user's own meetings with the same title on two other days, each with another
    colleague, the earlier first: "my catch-up call next week" could be either (the family
    draws which)."""
    ws = ctx.seeded(SERVICES, [])[1]
    titles = {r[0].lower() for r in ws.conn.execute("SELECT title FROM calendar_events")}
    title = ctx.choice(
        [t for t in CATCH_UPS if not any(t.lower() in n for n in titles)] or ["Catch-up call (1:1)"]
    )
    days = sorted(ctx.rng.sample([d for d in _meeting_days(ctx) if d != day], 2))
    people = ctx.rng.sample([p for p in ctx.people() if p.email not in taken], 2)
    zone = ctx.user.time_zone
    out = []
    for d, person, hour in zip(days, people, (10, 15), strict=True):
        at = datetime.combine(d, time(hour), ZoneInfo(zone))
        params = {
            "organizer_email": ctx.user.email,
            "title": title,
            "start": at.isoformat(),
            "end": (at + timedelta(minutes=30)).isoformat(),
            "time_zone": zone,
            "attendees": [{"email": person.email, "response": "accepted"}],
        }
        out.append(({"service": "calendar", "operation": "add_event", "params": params}, (d, person)))
    return title, out


def _field(check_id: str, description: str, where: Json, value: str) -> Json:
    return _check(
        check_id,
        "field_equals",
        description,
        table="calendar_events",
        where=where,
        column="start_utc",
        value=value,
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
    """Four turns over one day: book a meeting; notice a silent decline and invite the stand-in;
    mail the agenda with a budget figure; move the meeting an hour later on a colleague's ask
    and send the new time to everyone, copying a colleague of another team, with the figure
    from the earlier turn. Difficulty does not change it yet."""
    plan = _retry(_plan, ctx, "meeting day")
    user, (first, decliner, stand_in) = ctx.user, plan["group"]
    day, start = plan["day"], plan["start"]
    pushed = start + timedelta(hours=1)
    taken = {user.email, first.email, decliner.email, stand_in.email}
    copied = ctx.choice(
        [p for p in ctx.people() if p.email not in taken and p.team != user.team]
        or [p for p in ctx.people() if p.email not in taken]
    )
    catch_up, pair = _catch_ups(ctx, day, taken | {copied.email})
    ops = [op for op, _ in pair]
    ws, results = _workspace(ctx, SERVICES, ops)
    catch_up_ids = [int(r["id"]) for r in results]  # the earlier first
    # Which one goes is drawn: no fixed rule (the earlier, the later) finds it.
    right = ctx.rng.randrange(len(pair))
    cancel_id, kept_id = catch_up_ids[right], catch_up_ids[1 - right]
    near = _titles_near(ws, start - timedelta(hours=2), start + timedelta(hours=3))
    # A search by the title must find only this meeting: no seeded title around it contains it.
    free = [t for t in TITLES if not any(t.lower() in n.lower() for n in near)]
    title = ctx.choice(free or [f"{TITLES[0]} ({user.team})"])
    topic = ctx.choice(
        [t for t in ctx.the_world.vocabulary.meeting_topics if not any(c.isdigit() for c in t)]
        or ["the plan"]
    )
    budget, currency = ctx.choice([12500, 18400, 23750, 31200]), ctx.the_world.currency
    last_event = _max_id(ws, "calendar_events")
    event_id = last_event + 1
    new_event = {"id": {"gt": last_event}, "organizer_email": user.email, "status": "confirmed"}
    local = start.astimezone(ZoneInfo(user.time_zone))

    turn1 = {
        "user": say(
            ctx,
            "First thing this morning.",
            f"Book a one-hour '{title}' on {_day_text(day)} at {local:%H:%M} my time with {first.name} "
            f"({first.email}) and {decliner.name} ({decliner.email}).",
        ),
        "checks": [
            _field("meeting-booked", "The meeting starts at the asked time", new_event, format_time(start)),
            *[
                _check(
                    f"invited-{i}",
                    "row_exists",
                    f"{p.name} is invited",
                    table="calendar_attendees",
                    where={"event_id": {"gt": last_event}, "email": p.email},
                )
                for i, p in enumerate([first, decliner])
            ],
        ],
        "solution": [
            _step(
                "calendar_list_events", start=day.isoformat(), end=_next_day(day), time_zone=user.time_zone
            ),
            _step(
                "calendar_create_event",
                title=title,
                start=start.isoformat(),
                end=(start + timedelta(hours=1)).isoformat(),
                attendees=[first.email, decliner.email],
                time_zone=user.time_zone,
            ),
        ],
    }
    decline = {"event_id": event_id, "email": decliner.email, "response": "declined"}
    turn2 = {
        "user": say(
            ctx,
            "Mid-morning.",
            f"Check that everyone is still coming to the '{title}'.",
            f"If someone declined, invite {stand_in.name} ({stand_in.email}) in their place.",
        ),
        "events": [
            {
                "service": "calendar",
                "operation": "respond_as_attendee",
                "announced": False,
                "advance_minutes": 100,
                "params": decline,
            }
        ],
        "checks": [
            _check(
                "stand-in-invited",
                "row_exists",
                f"{stand_in.name} is invited",
                table="calendar_attendees",
                where={"event_id": {"gt": last_event}, "email": stand_in.email},
            ),
        ],
        "solution": [
            _step(
                "calendar_list_events",
                start=day.isoformat(),
                end=_next_day(day),
                query=title,
                time_zone=user.time_zone,
            ),
            _step("calendar_get_event", event_id=event_id),
            _step(
                "calendar_update_event",
                event_id=event_id,
                add_attendees=[stand_in.email],
                remove_attendees=[decliner.email],
            ),
        ],
    }
    agenda = f"Hi both,\n\nfor the {title}: we will go through {topic}; the budget we have is {currency} {budget:,}."
    agenda += f"\n\n{_first(user)}"
    turn3 = {
        "user": say(
            ctx,
            "Late morning.",
            f"Mail {_first(first)} and {_first(stand_in)} the agenda for the meeting: {topic}, and the budget "
            f"we have for it, {currency} {budget:,}.",
        ),
        # Over lunch the stand-in accepts: a change that asks for nothing.
        "events": [
            {
                "service": "calendar",
                "operation": "respond_as_attendee",
                "announced": False,
                "advance_minutes": 60,
                "params": {"event_id": event_id, "email": stand_in.email, "response": "accepted"},
            }
        ],
        "checks": [
            _mail_sent(
                f"agenda-{i}",
                f"{p.name} gets the topic and the budget",
                [p.email],
                [{"text": topic.removeprefix("the ")}, {"number": budget}],
            )
            for i, p in enumerate([first, stand_in])
        ],
        "solution": [
            _step("mail_send_message", to=[first.email, stand_in.email], subject=title, body=agenda)
        ],
    }
    (first_day, first_with), (second_day, second_with) = (info for _, info in pair)
    cancel_with = pair[right][1][1]
    turn_cancel = {
        "user": say(ctx, "Just before lunch.", f"Cancel my '{catch_up}', it is no longer needed."),
        "clarification": {
            "question": f"You have two '{catch_up}' meetings: {_day_text(first_day)} with {first_with.name} "
            f"and {_day_text(second_day)} with {second_with.name}. Which one should I cancel?",
            "answer": f"The one with {_first(cancel_with)}. Keep the other one.",
            "after": 1,
            # An agent that does not ask cancels one of the two: here the wrong one.
            "guess": [_step("calendar_cancel_event", event_id=kept_id)],
            "candidates": [{"argument": "event_id", "value": i} for i in catch_up_ids],
        },
        "checks": [
            _check(
                "catch-up-cancelled",
                "field_equals",
                f"The '{catch_up}' with {cancel_with.name} is cancelled",
                table="calendar_events",
                where={"id": cancel_id},
                column="status",
                value="cancelled",
            ),
        ],
        "solution": [
            _step(
                "calendar_list_events",
                start=ctx.start.astimezone(ZoneInfo(user.time_zone)).date().isoformat(),  # today, as shown
                end=(ctx.start.astimezone(ZoneInfo(user.time_zone)).date() + timedelta(days=14)).isoformat(),
                query=catch_up,
                time_zone=user.time_zone,
            ),
            _step("calendar_cancel_event", event_id=cancel_id),
        ],
    }
    ask = f"Hi {_first(user)},\n\ncould we push the {title} back by an hour?\n\n{_first(first)}"
    new_local = pushed.astimezone(ZoneInfo(user.time_zone))
    note = f"Hi all,\n\nthe {title} now starts at {new_local:%H:%M} ({user.time_zone}). "
    note += f"Budget for it: {currency} {budget:,}.\n\n{_first(user)}"
    people = [first, stand_in]
    turn4 = {
        "user": say(
            ctx,
            "Late afternoon.",
            f"Push the meeting back an hour, as {_first(first)} asked, and tell everyone the new time.",
            f"Copy {copied.name} ({copied.email}) after all, with the budget figure I gave you.",
        ),
        "events": [
            {
                "service": "mail",
                "operation": "deliver_inbound",
                "announced": True,
                "advance_minutes": 240,
                "params": {"from_addr": first.email, "subject": f"Re: {title}", "body": ask},
            }
        ],
        "checks": [
            _field("meeting-pushed", "The meeting starts an hour later", new_event, format_time(pushed)),
            *[
                _mail_sent(
                    f"new-time-{i}",
                    f"{p.name} gets the new time",
                    [p.email],
                    [_time(pushed, user.time_zone, p.time_zone)],
                )
                for i, p in enumerate(people)
            ],
            _mail_sent(
                "copied",
                f"{copied.name} gets the new time and the budget",
                [copied.email],
                [_time(pushed, user.time_zone, copied.time_zone), {"number": budget}],
            ),
        ],
        "solution": [
            _step("mail_search_messages", "a", sender=first.email, unread=True),
            _step("mail_get_message", message_id={"$ref": "a.messages.0.id"}),
            _step("calendar_update_event", event_id=event_id, start=pushed.isoformat()),
            _step(
                "mail_send_message",
                to=[p.email for p in people],
                cc=[copied.email],
                subject=f"New time: {title}",
                body=note,
            ),
        ],
    }
    joins = f"Hi {_first(user)},\n\nthanks for copying me: I would like to join the {title}. Can you add me?"
    joins += f"\n\n{_first(copied)}"
    turn_join = {
        "user": say(
            ctx,
            "Before I log off.",
            f"Add {_first(copied)} to the meeting, as they asked in their answer to your mail.",
            context=f"{_first(copied)} answered your mail about the new time.",
        ),
        "events": [
            {
                "service": "mail",
                "operation": "deliver_inbound",
                "announced": True,
                "advance_minutes": 45,
                "params": {"from_addr": copied.email, "subject": f"Re: New time: {title}", "body": joins},
            }
        ],
        "checks": [
            _check(
                "copied-invited",
                "row_exists",
                f"{copied.name} is invited",
                table="calendar_attendees",
                where={"event_id": event_id, "email": copied.email},
            ),
        ],
        "solution": [
            _step("mail_search_messages", "j", sender=copied.email, unread=True),
            _step("mail_get_message", message_id={"$ref": "j.messages.0.id"}),
            _step("calendar_get_event", event_id=event_id),
            _step("calendar_update_event", event_id=event_id, add_attendees=[copied.email]),
        ],
    }
    return ctx.task(
        capability_id="state_change_adaptation",
        services=SERVICES,
        operations=ops,
        title=f"A day around the '{title}': book, replace a decline, agenda, push back",
        extra_capabilities=["scheduling_constraints"],
        turns=[turn1, turn2, turn3, turn_cancel, changed_mind(turn4), turn_join],
        # Leaving the colleague who declined on the invite is as right as taking them off (the
        # reference does): their row then stays at the end.
        guards={
            "allow": [
                {
                    "table": "calendar_attendees",
                    "where": {"event_id": event_id, "email": decliner.email},
                    "added": True,
                }
            ]
        },
    )
