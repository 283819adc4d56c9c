"""notes_article_updated (knowledge_updates, knowledge_work): a customer's policy
question is answered from the knowledge base; then a colleague silently changes the
article's figure, and the next customer with the same question must get the new one."""

from __future__ import annotations

from coworkenv.task import Task, Turn

from ...builders import event, house_rules, max_id, planted_ids
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, request
from .kb_articles import (
    answer_checks,
    answer_steps,
    article_body,
    article_title,
    customer_queue,
    plan_knowledge_base,
    question_ticket,
    reply_text,
)

SERVICES = ["notes", "tickets"]


def _first_ask(ctx: FamilyContext, ticket_id: int, customer_name: str) -> Ask:
    return ctx.choice(
        [
            Ask(
                steps=(
                    f"Answer ticket #{ticket_id} from {customer_name} from our knowledge base.",
                    "Reply publicly on the ticket and name the article.",
                ),
                short=f"answer #{ticket_id} from the KB, public reply, name the article",
            ),
            Ask(
                steps=(
                    f"Find the knowledge-base article that answers {first_name(customer_name)}'s question "
                    f"in ticket #{ticket_id}.",
                    "Post the answer on the ticket as a public reply, citing the article.",
                ),
                context="It is one of our policies.",
                short=f"#{ticket_id}: public answer from the KB article, cited",
            ),
        ]
    )


def _second_ask(ctx: FamilyContext, ticket_id: int, customer_name: str) -> Ask:
    return ctx.choice(
        [
            Ask(
                steps=(
                    f"Answer the new ticket #{ticket_id} from {customer_name} the same way.",
                    "Reply publicly and name the article again.",
                ),
                context="Another customer asks the same question.",
                short=f"same again for #{ticket_id}: public reply from the KB, article named",
            ),
            Ask(
                steps=(
                    f"Reply to {first_name(customer_name)} on ticket #{ticket_id} from the knowledge base too.",
                    "Make it a public reply that names the article.",
                ),
                context="It is the same question as before.",
                short=f"#{ticket_id} asks the same: answer it publicly from the KB, cite the article",
            ),
        ]
    )


@family(
    "notes_article_updated",
    capability_id="knowledge_updates",
    services=SERVICES,
    multi_turn=True,
    worlds=True,
)
def notes_article_updated(ctx: FamilyContext) -> Task:
    """Turn 1: answer a customer's policy question publicly from the knowledge-base article
    (among neighbouring articles). Silently, the article's owner changes its figure; turn 2:
    a second customer asks the same, and the answer must give the new figure, not the one
    given before. More distractors: more neighbouring articles. Runs on every world."""
    _, ws = ctx.seeded(SERVICES, [])
    kb = plan_knowledge_base(ctx, ws, ctx.difficulty.distractors, spare=1)
    old, new = kb.value, kb.spare[0]
    first, second = ctx.rng.sample(ctx.people(internal=False), 2)
    queue = customer_queue(ctx)
    operations = kb.operations(ctx)
    operations.append(question_ticket(ctx, first, kb.target, queue, ctx.rng.uniform(1, 4)))
    results, seeded = ctx.seeded(SERVICES, operations)
    kb.article_ids = {p.title: pid for p, pid in zip(kb.order, planted_ids(results, "page_id"), strict=True)}
    first_ticket, second_ticket = results[-1]["ticket_id"], max_id(seeded, "tickets_tickets") + 1
    changed = event(
        "notes",
        "edit_page",
        minutes=45,
        announced=False,
        page_id=kb.article_id,
        editor=kb.owner.email,
        body=article_body(kb.target, new, kb.owner.email),
    )
    asked = question_ticket(ctx, second, kb.target, queue, 0)
    arrived = event("tickets", "add_ticket", minutes=30, announced=True, **asked.params)
    wrong = kb.wrong()
    turns = [
        Turn(
            user=request(ctx, _first_ask(ctx, first_ticket, first.name)),
            checks=answer_checks("answer", ctx, first_ticket, kb.target, old, wrong, kb.group.unit),
            solution=answer_steps(
                ctx, first_ticket, kb.article_id, kb.target, reply_text(ctx, first, kb.target, old)
            ),
        ),
        Turn(
            user=request(ctx, _second_ask(ctx, second_ticket, second.name)),
            events=[changed, arrived],
            checks=answer_checks(
                "updated-answer", ctx, second_ticket, kb.target, new, [old, *wrong], kb.group.unit
            ),
            solution=answer_steps(
                ctx, second_ticket, kb.article_id, kb.target, reply_text(ctx, second, kb.target, new)
            ),
        ),
    ]
    return ctx.task(
        capability_id="knowledge_updates",
        services=SERVICES,
        operations=operations,
        title=f"Answer from '{article_title(kb.target)}' before and after a colleague updates it",
        extra_capabilities=["knowledge_work"],
        context=house_rules(ctx),
        turns=turns,
    )
