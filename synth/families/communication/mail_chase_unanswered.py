"""mail_chase_unanswered (follow_up_reminder): chase the colleagues who never answered the
user's mail."""

from __future__ import annotations

from datetime import timedelta

from coworkenv.checks import Check
from coworkenv.task import SolutionStep, Task, Turn, WorldCall

from ...builders import (
    ago,
    guard,
    house_rules,
    mail_sent,
    operation,
    planted_ids,
    sql_check,
    step,
    text_fact,
    utc_text,
)
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request

ASKS = (
    "your team's availability in {month}",
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
REMINDERS = (
    "just a friendly reminder about my mail below: could you send me {ask} when you get a chance?",
    "a quick nudge on my mail below. I still need {ask}; could you send it over this week?",
    "following up on my note below: do you have {ask} for me yet?",
)


def _projects(ctx: FamilyContext) -> list[tuple[str, str]]:
    """(what the mails are about, the subject prefix), in the world's words and dates."""
    start = ctx.start
    quarter = (start.month - 1) // 3 + 2
    year = start.year + (quarter > 4)
    quarter = (quarter - 1) % 4 + 1
    desk = ctx.the_world.team("desk")
    return [
        (f"the Q{quarter} {year} staffing plan", f"Q{quarter} staffing"),
        (f"the {desk} handbook refresh", "Handbook refresh"),
        (f"the {start.year} training budget", "Training budget"),
        ("the yearly process review", "Process review"),
        ("the team offsite agenda", "Team offsite"),
    ]


def _ask(ctx: FamilyContext, project: str, prefix: str) -> Ask:
    short = f"chase the unanswered '{prefix}' mails in their threads"
    return ctx.choice(
        [
            Ask(
                steps=(
                    f"Send a polite follow-up in every '{prefix}' thread of mine that still has no reply.",
                    "Leave the answered ones alone.",
                ),
                context=f"Last week I mailed several colleagues about {project}; the subjects start with "
                f"'{prefix}:'.",
                short=short,
            ),
            Ask(
                steps=(
                    f"Nudge everyone who has not answered my '{prefix}' mails with a friendly reminder in the "
                    "same thread.",
                    "Skip the people who already replied.",
                ),
                context=f"Some people never got back to me about {project}.",
                short=short,
            ),
            Ask(
                steps=(
                    f"Reply in its thread to each unanswered '{prefix}' mail of mine with a short reminder.",
                    "Leave out anyone who has already answered.",
                ),
                context=f"I'm still waiting on answers about {project}.",
                short=short,
            ),
        ]
    )


@family("mail_chase_unanswered", capability_id="follow_up_reminder", services=["mail"], worlds=True)
def mail_chase_unanswered(ctx: FamilyContext) -> Task:
    """The user mailed several colleagues about a project; some answered in the thread. The
    agent sends a polite follow-up in each unanswered thread only. Difficulty: unanswered
    threads (items) and answered ones (distractors), as many as the world has colleagues."""
    project, prefix = ctx.choice(_projects(ctx))
    colleagues = ctx.people(internal=True)
    n_open = min(ctx.difficulty.items, len(colleagues) - 1)
    n_done = min(ctx.difficulty.distractors, len(colleagues) - n_open)
    people = ctx.rng.sample(colleagues, n_open + n_done)
    month_name = (ctx.start.replace(day=1) + timedelta(days=32)).strftime("%B")
    asks = [a.format(month=month_name) for a in ctx.rng.sample(list(ASKS), n_open + n_done)]
    plan = [(p, a, i < n_open) for i, (p, a) in enumerate(zip(people, asks, strict=True))]
    ctx.rng.shuffle(plan)
    operations: list[WorldCall] = []
    for person, ask, _ in plan:
        sent = ctx.start - timedelta(days=ctx.rng.randint(5, 9), hours=ctx.rng.randint(0, 6))
        operations.append(
            operation(
                "mail",
                "add_message",
                folder="sent",
                to=[person.email],
                subject=f"{prefix}: {ask}",
                body=f"{greeting(person)}\n\nfor {project} I need {ask}. Could you send it over by the end of "
                f"the week?\n\nThanks,\n{first_name(ctx.user.name)}",
                sent_at=utc_text(sent),
            )
        )
    results = ctx.plant(["mail"], operations)
    sent_ids = [r["id"] for r in results]
    answers = []
    for (person, ask, unanswered), sent_id in zip(plan, sent_ids, strict=True):
        if unanswered:
            continue
        answers.append(
            operation(
                "mail",
                "add_message",
                folder=ctx.choice(["inbox", "inbox", "archive"]),
                from_addr=person.email,
                to=[ctx.user.email],
                in_reply_to=sent_id,
                subject=f"Re: {prefix}: {ask}",
                body=f"{greeting(ctx.user)}\n\n{ctx.choice(ANSWERS)}\n\n{first_name(person.name)}",
                sent_at=ago(ctx, days=ctx.rng.randint(1, 4), hours=ctx.rng.randint(0, 6)),
                is_read=ctx.rng.random() < 0.6,
            )
        )
    operations += answers
    planted = planted_ids(ctx.plant(["mail"], operations))
    last = planted[-1]
    open_threads = [(p, a, sid) for (p, a, u), sid in zip(plan, sent_ids, strict=True) if u]
    done_threads = [sid for (_, _, u), sid in zip(plan, sent_ids, strict=True) if not u]
    checks: list[Check] = [
        mail_sent(
            f"followed-up-{i}",
            f"A follow-up to {person.name} in the unanswered thread of message {sid} that names what is "
            f"still missing ({ask})",
            [person.email],
            [text_fact(ask)],
            thread_of=sid,
            reply=True,
        )
        for i, (person, ask, sid) in enumerate(open_threads)
    ]
    checks.append(
        guard(
            sql_check(
                "answered-left-alone",
                "No follow-up in the threads that already have an answer",
                f"SELECT count(*) FROM mail_messages m WHERE m.id > {last} AND m.folder != 'drafts' "
                f"AND m.thread_id IN ({', '.join(map(str, done_threads))})",
                0,
            )
        )
    )
    solution: list[SolutionStep] = [
        step("mail_search_messages", query=prefix, folder="sent"),
        step("mail_search_messages", query=prefix, folder="inbox"),
    ]
    for person, ask, sid in open_threads:
        reminder = ctx.choice(REMINDERS).format(ask=ask)
        solution.append(step("mail_get_thread", thread_id=sid))
        solution.append(
            step(
                "mail_reply",
                message_id=sid,
                body=f"{greeting(person)}\n\n{reminder}\n\nThanks a lot,\n{first_name(ctx.user.name)}",
            )
        )
    return ctx.task(
        capability_id="follow_up_reminder",
        services=["mail"],
        operations=operations,
        title=f"Follow up on the unanswered '{prefix}' requests",
        context=house_rules(ctx),
        turns=[Turn(user=request(ctx, _ask(ctx, project, prefix)), checks=checks, solution=solution)],
    )
