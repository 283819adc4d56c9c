"""notes_answer_from_kb (knowledge_work): a customer's ticket asks a policy question; the
agent answers on the ticket from the knowledge-base article that applies and names it."""

from __future__ import annotations

from coworkenv.task import Task, Turn

from ...builders import house_rules, planted_ids
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, request
from .kb_articles import (
    answer_checks,
    answer_steps,
    article_title,
    customer_queue,
    plan_knowledge_base,
    question_ticket,
    reply_text,
)

SERVICES = ["notes", "tickets"]


def _ask(ctx: FamilyContext, ticket_id: int, customer_name: str) -> Ask:
    first = first_name(customer_name)
    return ctx.choice(
        [
            Ask(
                steps=(
                    f"Answer ticket #{ticket_id} from {customer_name} using our knowledge base.",
                    "Reply on the ticket so the customer sees it, and say which article the answer comes from.",
                ),
                context="It is a question about one of our policies.",
                short=f"answer #{ticket_id} from the knowledge base, public reply, cite the article",
            ),
            Ask(
                steps=(
                    f"Look up the policy {first} asks about in ticket #{ticket_id} in the knowledge base.",
                    "Post the answer as a public reply on the ticket and name the article.",
                ),
                short=f"#{ticket_id}: answer {first} from the KB article, public reply, name the article",
            ),
            Ask(
                steps=(
                    f"Reply to {customer_name}'s question in ticket #{ticket_id} with what our knowledge base says.",
                    "Mention the article you took it from.",
                    "Make the reply public so they can read it.",
                ),
                context=f"{first} is waiting for an answer.",
                short=f"public reply on #{ticket_id} from the knowledge base, with the article's title",
            ),
        ]
    )


@family("notes_answer_from_kb", capability_id="knowledge_work", services=SERVICES, worlds=True)
def notes_answer_from_kb(ctx: FamilyContext) -> Task:
    """A customer's ticket asks a policy question (a refund period, a notice period, how long
    documents are kept); the agent finds the article that applies in the knowledge base and
    replies publicly on the ticket with its figure, naming the article. Distractors: articles
    on neighbouring policies with figures of the same unit. Difficulty: how many neighbours.
    Runs on every world."""
    _, ws = ctx.seeded(SERVICES, [])
    kb = plan_knowledge_base(ctx, ws, ctx.difficulty.distractors + 1)
    customer = ctx.person(internal=False)
    operations = kb.operations(ctx)
    operations.append(question_ticket(ctx, customer, kb.target, customer_queue(ctx), ctx.rng.uniform(1, 5)))
    results = ctx.plant(SERVICES, operations)
    pages = planted_ids(results, "page_id")
    kb.article_ids = {p.title: pid for p, pid in zip(kb.order, pages, strict=True)}
    ticket_id = results[-1]["ticket_id"]
    reply = reply_text(ctx, customer, kb.target, kb.value)
    return ctx.task(
        capability_id="knowledge_work",
        services=SERVICES,
        operations=operations,
        title=f"Answer a customer from the article '{article_title(kb.target)}'",
        context=house_rules(ctx),
        turns=[
            Turn(
                user=request(ctx, _ask(ctx, ticket_id, customer.name)),
                checks=answer_checks(
                    "answer", ctx, ticket_id, kb.target, kb.value, kb.wrong(), kb.group.unit
                ),
                solution=answer_steps(ctx, ticket_id, kb.article_id, kb.target, reply),
            )
        ],
    )
