"""mail_bulk_archive (bulk_conditional_update): archive every old mail of a newsletter and
leave the rest."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from coworkenv.checks import Check
from coworkenv.state import Workspace
from coworkenv.task import SolutionStep, Task, Turn, WorldCall

from ...builders import count_is, field_equals, guard, house_rules, operation, step, utc_text
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request

#: Newsletters any world may receive besides its own: name, domain, senders, subject line.
NEWSLETTERS = (
    ("VendorPulse", "vendorpulse.example", ("digest", "events"), "VendorPulse Weekly #{n}: {topic}"),
    ("RetailWire", "retailwire.example", ("news", "offers"), "RetailWire Daily: {topic}"),
    ("LogiTrends", "logitrends.example", ("updates", "webinars"), "LogiTrends Briefing {n}: {topic}"),
    ("CloudOps Digest", "cloudopsdigest.example", ("noreply", "community"), "CloudOps Digest #{n}: {topic}"),
    ("Freight Monitor", "freightmonitor.example", ("bulletin", "alerts"), "Freight Monitor {n}: {topic}"),
)

OTHER_SENDERS = ("news", "digest", "events", "updates", "noreply")
"""Other addresses a newsletter's domain mails from, so the request is about a domain."""


@dataclass(frozen=True)
class _Letter:
    """A newsletter: its name, its usual sender and subject line (`{n}`, `{catch}`)."""

    name: str
    sender: str
    subject: str

    @property
    def domain(self) -> str:
        return self.sender.rsplit("@", 1)[1]


def _name(subject: str) -> str:
    """The newsletter's name in its subject: '[Cloudhost] ...' or 'Law Firm Weekly #{n}: ...'."""
    bracket = re.match(r"\[([^\]]+)\]", subject)
    if bracket:
        return bracket.group(1)
    return re.split(r"\s*(?:#?\{n\}|#|:)", subject, maxsplit=1)[0].strip()


def _letters(ctx: FamilyContext) -> list[_Letter]:
    """The world's newsletters, one per domain; the generic ones only if it has fewer than two."""
    letters: dict[str, _Letter] = {}
    for letter in ctx.the_world.vocabulary.newsletters:
        found = _Letter(_name(letter.subject), letter.sender, letter.subject)
        letters.setdefault(found.domain, found)
    for name, domain, senders, subject in NEWSLETTERS:
        if len(letters) >= 2:
            break
        letters.setdefault(
            domain, _Letter(name, f"{senders[0]}@{domain}", subject.replace("{topic}", "{catch}"))
        )
    return list(letters.values())


def _day(moment: datetime) -> str:
    return f"{moment.day} {moment:%B %Y}"


def _sent(row: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(str(row["sent_at"]).replace("Z", "+00:00"))


def _inbox_of(ws: Workspace, user: str, domain: str) -> list[dict[str, Any]]:
    """The user's inbox mail from `domain`, oldest first."""
    return sorted(
        (
            r
            for r in ws.rows("mail_messages", "owner = ? AND folder = 'inbox'", [user])
            if str(r["from_addr"]).lower().endswith("@" + domain)
        ),
        key=_sent,
    )


def _cutoff(ctx: FamilyContext, ws: Workspace, domain: str) -> datetime:
    """A midnight 8 to 14 days back with no mail of `domain` within a day and a half of it,
    so no reading of the date in another time zone changes which mails are older."""
    days = list(range(8, 15))
    ctx.rng.shuffle(days)
    moments = [_sent(r) for r in _inbox_of(ws, ctx.user.email, domain)]
    for d in days:
        cutoff = (ctx.start - timedelta(days=d)).replace(hour=0, minute=0, second=0, microsecond=0)
        if all(abs((m - cutoff).total_seconds()) > 36 * 3600 for m in moments):
            return cutoff
    return (ctx.start - timedelta(days=days[0])).replace(hour=0, minute=0, second=0, microsecond=0)


def _issue(ctx: FamilyContext, letter: _Letter, moment: datetime) -> WorldCall:
    catch = ctx.the_world.faker(f"{ctx.family}:{ctx.seed}:{moment.isoformat()}").catch_phrase()
    sender = letter.sender
    if ctx.rng.random() < 0.3:
        sender = f"{ctx.choice([s for s in OTHER_SENDERS if s != sender.split('@')[0]])}@{letter.domain}"
    return operation(
        "mail",
        "add_message",
        from_addr=sender,
        to=[ctx.user.email],
        subject=letter.subject.format(n=ctx.rng.randint(10, 99), catch=catch),
        body=f"This week in {letter.name}: {catch.lower()}.\n\nRead the full story on our website.\n\n"
        "Unsubscribe: reply STOP.",
        sent_at=utc_text(moment),
        is_read=ctx.rng.random() < 0.5,
    )


def _colleague_mail(ctx: FamilyContext, letter: _Letter, moment: datetime) -> WorldCall:
    colleague = ctx.person(internal=True)
    topic = ctx.choice(ctx.the_world.vocabulary.meeting_topics)
    return operation(
        "mail",
        "add_message",
        from_addr=colleague.email,
        to=[ctx.user.email],
        subject=f"Worth reading: {letter.name} about {topic}",
        body=f"{greeting(ctx.user)}\n\nthe latest {letter.name} issue (from {letter.domain}) has a good piece "
        f"about {topic}. Shall we discuss it on Friday?\n\n{first_name(colleague.name)}",
        sent_at=utc_text(moment),
        is_read=True,
    )


def _ask(ctx: FamilyContext, letter: _Letter, date_text: str) -> Ask:
    name, domain = letter.name, letter.domain
    short = f"archive the {domain} mail in my inbox from before {date_text}"
    return ctx.choice(
        [
            Ask(
                steps=(
                    f"Archive every {name} mail ({domain}) in my inbox that arrived before {date_text}.",
                    "Keep the newer ones in the inbox.",
                ),
                context=f"The {name} newsletters are piling up.",
                short=short,
            ),
            Ask(
                steps=(
                    f"Move everything in my inbox sent from @{domain} before {date_text} to the archive.",
                    "Leave everything else where it is.",
                ),
                context=f"My inbox is full of mail from {domain}.",
                short=short,
            ),
            Ask(
                steps=(f"Archive each inbox message from {domain} received before {date_text}.",),
                context="Time for an inbox clean-up.",
                short=short,
            ),
        ]
    )


@family("mail_bulk_archive", capability_id="bulk_conditional_update", services=["mail"], worlds=True)
def mail_bulk_archive(ctx: FamilyContext) -> Task:
    """Archive every inbox mail from a newsletter domain older than a date and leave the
    rest: newer issues of the same newsletter, a colleague's mail about it, another
    newsletter. The world's newsletters, and its seed mail from them, count too.
    Difficulty: matching mails (items) and mails that must stay (distractors)."""
    source, other = ctx.rng.sample(_letters(ctx), 2)
    _, seed_ws = ctx.seeded(["mail"], [])
    cutoff = _cutoff(ctx, seed_ws, source.domain)
    operations = [
        _issue(ctx, source, cutoff - timedelta(days=ctx.rng.randint(1, 20), hours=ctx.rng.randint(2, 12)))
        for _ in range(ctx.difficulty.items)
    ]
    for i in range(ctx.difficulty.distractors):
        kind = i % 3
        if kind == 0:  # a newer issue of the same newsletter
            days = ctx.rng.randint(1, (ctx.start - cutoff).days - 1)
            moment = ctx.start - timedelta(days=days, hours=ctx.rng.randint(1, 6))
            operations.append(_issue(ctx, source, moment))
        elif kind == 1:  # a colleague writes about the newsletter
            operations.append(
                _colleague_mail(ctx, source, cutoff - timedelta(days=ctx.rng.randint(1, 15), hours=2))
            )
        else:  # another newsletter, just as old
            operations.append(_issue(ctx, other, cutoff - timedelta(days=ctx.rng.randint(1, 15), hours=3)))
    ctx.rng.shuffle(operations)
    results, ws = ctx.seeded(["mail"], operations)
    mine = _inbox_of(ws, ctx.user.email, source.domain)
    match_ids = [r["id"] for r in mine if _sent(r) < cutoff]
    planted = {r["id"] for r in results}
    stay_ids = sorted((planted | {r["id"] for r in mine}) - set(match_ids))
    date_text = ctx.choice([_day(cutoff), cutoff.strftime("%Y-%m-%d"), f"{cutoff:%B} {cutoff.day}"])
    checks: list[Check] = [
        field_equals(
            f"archived-{i}",
            f"Old {source.name} mail {mid} is archived",
            "mail_messages",
            {"id": mid},
            "folder",
            "archive",
        )
        for i, mid in enumerate(match_ids)
    ]
    checks.append(
        guard(
            count_is(
                "others-stay",
                "The newer issues and the other mails stay in the inbox",
                "mail_messages",
                {"id": {"in": stay_ids}, "folder": "inbox"},
                len(stay_ids),
            )
        )
    )
    before = cutoff.strftime("%Y-%m-%d")
    solution: list[SolutionStep] = [
        step("mail_search_messages", "found", sender=source.domain, folder="inbox", before=before, limit=100)
    ]
    solution += [
        step("mail_move_message", message_id={"$ref": f"found.messages.{i}.id"}, folder="archive")
        for i in range(len(match_ids))
    ]
    return ctx.task(
        capability_id="bulk_conditional_update",
        services=["mail"],
        operations=operations,
        title=f"Archive old {source.name} newsletters",
        context=house_rules(ctx),
        turns=[Turn(user=request(ctx, _ask(ctx, source, date_text)), checks=checks, solution=solution)],
    )
