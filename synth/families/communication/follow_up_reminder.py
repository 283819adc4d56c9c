"""follow_up_reminder: chase the colleagues who never answered the user's mail."""

from __future__ import annotations

from typing import Any

from coworkenv.task import Task

from ...family import FamilyContext, family
from ._shared import _ago, _first, _ids, _iso, _mail_sent, _op, _rules, _when

PROJECTS = (
    ("the Q2 support staffing plan", "Q2 staffing"),
    ("the support handbook refresh", "Handbook refresh"),
    ("the customer portal launch checklist", "Portal launch"),
    ("the 2026 training budget", "Training budget"),
    ("the yearly SLA review", "SLA review"),
)
ASKS = (
    "your team's availability in April",
    "your input on the scope section of the draft",
    "the updated headcount numbers",
    "your sign-off on the draft",
    "feedback on the escalation matrix",
    "a rough cost estimate",
    "the list of open risks on your side",
    "two names for the working group",
    "your comments on the timeline",
    "the tooling requirements of your team",
)
ANSWERS = (
    "Here you go: the details are below. Let me know if you need more.",
    "Done, I've added my comments to the draft.",
    "Sure, the numbers are in the attached sheet; nothing unusual.",
    "Thanks for the reminder, here is what I have.",
)


@family("mail_chase_unanswered", capability_id="follow_up_reminder", services=["mail"])
def mail_chase_unanswered(ctx: FamilyContext) -> Task:
    """The user mailed several colleagues about a project; some answered in the thread. The
    agent sends a polite follow-up in each unanswered thread only. Difficulty: unanswered
    threads (items) and answered ones (distractors)."""
    project, prefix = ctx.choice(PROJECTS)
    n_open, n_done = ctx.difficulty.items, ctx.difficulty.distractors
    people = ctx.rng.sample(ctx.people(internal=True), n_open + n_done)
    asks = ctx.rng.sample(list(ASKS), n_open + n_done)
    plan = [(p, a, i < n_open) for i, (p, a) in enumerate(zip(people, asks, strict=True))]
    ctx.rng.shuffle(plan)
    operations: list[dict[str, Any]] = []
    for person, ask, _ in plan:
        sent = _when(ctx, days=ctx.rng.randint(5, 9), hours=ctx.rng.randint(0, 6))
        operations.append(
            _op(
                "mail",
                "add_message",
                folder="sent",
                to=[person.email],
                subject=f"{prefix}: {ask}",
                body=f"Hi {_first(person)},\n\nfor {project} I need {ask}. Could you send it over by the end of "
                f"the week?\n\nThanks,\n{_first(ctx.user)}",
                sent_at=_iso(sent),
            )
        )
    results = ctx.plant(["mail"], operations)
    sent_ids = [r["id"] for r in results]
    answers = []
    for (person, ask, unanswered), sent_id in zip(plan, sent_ids, strict=True):
        if unanswered:
            continue
        answers.append(
            _op(
                "mail",
                "add_message",
                folder=ctx.choice(["inbox", "inbox", "archive"]),
                from_addr=person.email,
                to=[ctx.user.email],
                in_reply_to=sent_id,
                subject=f"Re: {prefix}: {ask}",
                body=f"Hi {_first(ctx.user)},\n\n{ctx.choice(ANSWERS)}\n\n{_first(person)}",
                sent_at=_ago(ctx, days=ctx.rng.randint(1, 4), hours=ctx.rng.randint(0, 6)),
                is_read=ctx.rng.random() < 0.6,
            )
        )
    operations += answers
    planted = _ids(ctx.plant(["mail"], operations))
    last = planted[-1]
    open_threads = [(p, sid) for (p, _, u), sid in zip(plan, sent_ids, strict=True) if u]
    done_threads = [sid for (_, _, u), sid in zip(plan, sent_ids, strict=True) if not u]
    checks = [
        _mail_sent(
            f"followed-up-{i}",
            f"A follow-up to {person.name} in the unanswered thread of message {sid}",
            person.email,
            thread_of=sid,
            reply=True,
        )
        for i, (person, sid) in enumerate(open_threads)
    ]
    checks.append(
        {
            "id": "answered-left-alone",
            "type": "sql",
            "role": "guard",
            "description": "No follow-up in the threads that already have an answer",
            "query": f"SELECT count(*) FROM mail_messages m WHERE m.id > {last} AND m.folder != 'drafts' "
            f"AND m.thread_id IN ({', '.join(map(str, done_threads))})",
            "expected": 0,
        }
    )
    solution: list[dict[str, Any]] = [
        {"tool": "mail_search_messages", "arguments": {"query": prefix, "folder": "sent"}},
        {"tool": "mail_search_messages", "arguments": {"query": prefix, "folder": "inbox"}},
    ]
    for person, sid in open_threads:
        solution.append({"tool": "mail_get_thread", "arguments": {"thread_id": sid}})
        solution.append(
            {
                "tool": "mail_reply",
                "arguments": {
                    "message_id": sid,
                    "body": f"Hi {_first(person)},\n\njust a friendly reminder about my mail below: could you send "
                    f"me {dict((p.email, a) for p, a, _ in plan)[person.email]} when you get a chance?\n\n"
                    f"Thanks a lot,\n{_first(ctx.user)}",
                },
            }
        )
    user = ctx.choice(
        [
            f"Last week I mailed several colleagues about {project} (the subjects start with '{prefix}:'). Please "
            "send a polite follow-up in every thread that still has no reply, and leave the answered ones alone.",
            f"Some people never answered my '{prefix}' mails from last week. Nudge each of them with a friendly "
            "reminder in the same thread; the ones who replied need nothing.",
        ]
    )
    return ctx.task(
        capability_id="follow_up_reminder",
        services=["mail"],
        operations=operations,
        title=f"Follow up on the unanswered '{prefix}' requests",
        context=_rules(ctx),
        turns=[{"user": user, "checks": checks, "solution": solution}],
    )
