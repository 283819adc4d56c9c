"""bulk_conditional_update: archive every old mail of a newsletter and leave the rest."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from coworkenv.task import Task

from ...family import FamilyContext, family
from ._shared import NEWS_TOPICS, NEWSLETTERS, _first, _iso, _newsletter, _op, _rules


def _day(moment: datetime) -> str:
    return f"{moment.day} {moment:%B %Y}"


@family("mail_bulk_archive", capability_id="bulk_conditional_update", services=["mail"])
def mail_bulk_archive(ctx: FamilyContext) -> Task:
    """Archive every inbox mail from a newsletter domain older than a date and leave the
    rest: newer issues of the same newsletter, a colleague's mail about it, another
    newsletter. Difficulty: matching mails (items) and mails that must stay (distractors)."""
    source, other = ctx.rng.sample(list(NEWSLETTERS), 2)
    name, domain = source[0], source[1]
    cutoff = (ctx.start - timedelta(days=ctx.rng.randint(8, 14))).replace(hour=0, minute=0, second=0)
    match_ops = [
        _newsletter(
            ctx, source, cutoff - timedelta(days=ctx.rng.randint(1, 20), hours=ctx.rng.randint(1, 12))
        )
        for _ in range(ctx.difficulty.items)
    ]
    stay_ops = []
    for i in range(ctx.difficulty.distractors):
        kind = i % 3
        if kind == 0:  # a newer issue of the same newsletter
            days = ctx.rng.randint(1, (ctx.start - cutoff).days - 1)
            stay_ops.append(
                _newsletter(ctx, source, ctx.start - timedelta(days=days, hours=ctx.rng.randint(1, 6)))
            )
        elif kind == 1:  # a colleague writes about the newsletter
            colleague = ctx.person(internal=True)
            moment = cutoff - timedelta(days=ctx.rng.randint(1, 15), hours=2)
            stay_ops.append(
                _op(
                    "mail",
                    "add_message",
                    from_addr=colleague.email,
                    to=[ctx.user.email],
                    subject=f"Worth reading: {name} on {ctx.choice(NEWS_TOPICS)}",
                    body=f"Hi {_first(ctx.user)},\n\nthe latest {name} issue (from {domain}) has a good piece "
                    f"on our market. Shall we discuss it on Friday?\n\n{_first(colleague)}",
                    sent_at=_iso(moment),
                    is_read=True,
                )
            )
        else:  # another newsletter, just as old
            stay_ops.append(_newsletter(ctx, other, cutoff - timedelta(days=ctx.rng.randint(1, 15), hours=3)))
    ordered = [(op, True) for op in match_ops] + [(op, False) for op in stay_ops]
    ctx.rng.shuffle(ordered)
    operations = [op for op, _ in ordered]
    results = ctx.plant(["mail"], operations)
    match_ids = [r["id"] for r, (_, m) in zip(results, ordered, strict=True) if m]
    stay_ids = [r["id"] for r, (_, m) in zip(results, ordered, strict=True) if not m]
    date_text = ctx.choice([_day(cutoff), cutoff.strftime("%Y-%m-%d"), f"{cutoff:%B} {cutoff.day}"])
    user = ctx.choice(
        [
            f"Please archive all the {name} newsletters ({domain}) in my inbox that arrived before {date_text}. "
            "Keep the newer ones in the inbox.",
            f"My inbox is full of mail from {domain}. Move everything from that domain received before "
            f"{date_text} to the archive, and leave everything else alone.",
            f"Clean-up time: archive every inbox message sent from @{domain} before {date_text}.",
        ]
    )
    checks: list[dict[str, Any]] = [
        {
            "id": f"archived-{i}",
            "type": "field_equals",
            "description": f"Old {name} mail {mid} is archived",
            "table": "mail_messages",
            "where": {"id": mid},
            "column": "folder",
            "value": "archive",
        }
        for i, mid in enumerate(match_ids)
    ]
    checks.append(
        {
            "id": "others-stay",
            "type": "count",
            "role": "guard",
            "description": "The newer issues and the other mails stay in the inbox",
            "table": "mail_messages",
            "where": {"id": {"in": stay_ids}, "folder": "inbox"},
            "op": "eq",
            "value": len(stay_ids),
        }
    )
    solution: list[dict[str, Any]] = [
        {
            "tool": "mail_search_messages",
            "arguments": {"sender": domain, "folder": "inbox", "before": cutoff.strftime("%Y-%m-%d")},
            "id": "found",
        }
    ]
    solution += [
        {
            "tool": "mail_move_message",
            "arguments": {"message_id": {"$ref": f"found.messages.{i}.id"}, "folder": "archive"},
        }
        for i in range(len(match_ids))
    ]
    return ctx.task(
        capability_id="bulk_conditional_update",
        services=["mail"],
        operations=operations,
        title=f"Archive old {name} newsletters",
        context=_rules(ctx),
        turns=[{"user": user, "checks": checks, "solution": solution}],
    )
