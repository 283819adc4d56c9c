"""Knowledge-base policy articles with figures, and the customer tickets that ask about them;
used by notes_answer_from_kb and notes_article_updated.

Articles come in groups of neighbouring policies that share a unit (days, hours, months), so
the article next to the right one gives a plausible wrong figure. They are written for any
world: appointments, invoices, accounts and documents exist in every kind of organization.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from coworkenv.checks import Check
from coworkenv.state import Workspace
from coworkenv.task import SolutionStep, WorldCall
from coworkenv.world import Person

from ...builders import ago, number_fact, operation, states, step, text_fact
from ...family import FamilyContext, SeedDoesNotFit
from ...phrasing import first_name, greeting


@dataclass(frozen=True)
class Policy:
    """One policy: its article's title (without the "Policy: " prefix), a word to search it
    by, how a customer asks about it, and its rule with the figure as `{n}`."""

    title: str
    keyword: str
    question: str
    rule: str
    note: str


@dataclass(frozen=True)
class Group:
    unit: str
    low: int
    high: int
    policies: tuple[Policy, ...]


GROUPS = (
    Group(
        "days",
        5,
        45,
        (
            Policy(
                "Refunds after a cancellation",
                "refund",
                "I cancelled with you last week. How long does it take until the refund reaches me?",
                "After a cancellation we pay the refund back within {n} days.",
                "The refund goes back the way the customer paid.",
            ),
            Policy(
                "Overpaid invoices",
                "overpaid",
                "I overpaid an invoice (I paid it twice by mistake). How soon will the extra payment come back?",
                "An overpayment is paid back within {n} days of being spotted.",
                "Finance confirms the overpayment before it is paid back.",
            ),
            Policy(
                "Disputed charges",
                "dispute",
                "I want to dispute a charge on my last invoice. How long will your review take?",
                "A disputed charge is reviewed and answered within {n} days.",
                "The charge stays on hold while it is reviewed.",
            ),
            Policy(
                "Payment terms",
                "payment",
                "What are your payment terms: how many days do I have to pay one of your invoices?",
                "Invoices are due {n} days after the invoice date.",
                "Reminders go out once an invoice is overdue.",
            ),
        ),
    ),
    Group(
        "hours",
        6,
        72,
        (
            Policy(
                "Cancelling an appointment",
                "cancel",
                "How much notice do I have to give to cancel an appointment without paying a fee?",
                "An appointment can be cancelled free of charge up to {n} hours before it starts.",
                "Later cancellations are charged in full.",
            ),
            Policy(
                "Moving an appointment",
                "move",
                "I need to move my appointment to another day. How much notice do you need for that?",
                "An appointment can be moved to another day up to {n} hours before it starts.",
                "The new time is confirmed in writing.",
            ),
            Policy(
                "Urgent requests",
                "urgent",
                "If I send you an urgent request, how quickly will someone get back to me?",
                "An urgent request gets a first answer within {n} hours.",
                "Mark the request as urgent in the subject line.",
            ),
            Policy(
                "Complaints",
                "complaint",
                "I would like to make a formal complaint. How soon will you confirm that you received it?",
                "A formal complaint is acknowledged in writing within {n} hours.",
                "The acknowledgement names the person handling the complaint.",
            ),
        ),
    ),
    Group(
        "months",
        3,
        36,
        (
            Policy(
                "Copies of old invoices",
                "copies",
                "How far back can I ask you for copies of old invoices?",
                "Copies of invoices can be requested up to {n} months after the invoice date.",
                "Copies are sent as PDF to the address on the account.",
            ),
            Policy(
                "Closing an account",
                "close",
                "If I close my account with you, how long until my data is deleted?",
                "After an account is closed, its data is deleted after {n} months.",
                "The customer gets a confirmation once the data is gone.",
            ),
            Policy(
                "Keeping customer documents",
                "documents",
                "How long do you keep the documents I sent you?",
                "We keep the documents customers send us for {n} months, then destroy them.",
                "Originals can be collected before they are destroyed.",
            ),
            Policy(
                "Price guarantees",
                "guarantee",
                "You quoted me a price. For how long is that price guaranteed?",
                "A quoted price is guaranteed for {n} months from the date of the quote.",
                "A new quote is needed after that.",
            ),
        ),
    ),
)


def article_title(policy: Policy) -> str:
    return f"Policy: {policy.title}"


def article_body(policy: Policy, value: int, owner: str) -> str:
    """The article: its rule with the figure (the only figure in it), a note, and who owns it."""
    return (
        f"# {article_title(policy)}\n\n{policy.rule.format(n=value)}\n\n## Also good to know\n\n"
        f"- {policy.note}\n- Quote this article when a customer asks.\n\nOwner: {owner}\n"
    )


def _hidden(value: int, others: list[int]) -> bool:
    """Whether `value` equals or hides inside another figure (or one inside it)."""
    return any(str(value) in str(o) or str(o) in str(value) for o in others)


def draw_figures(ctx: FamilyContext, group: Group, count: int) -> list[int]:
    """`count` figures of the group's range, none equal to or inside another."""
    figures: list[int] = []
    while len(figures) < count:
        value = ctx.rng.randint(group.low, group.high)
        if not _hidden(value, figures):
            figures.append(value)
    return figures


@dataclass
class KnowledgeBase:
    """The articles planted for a task: the one that answers, its neighbours, and where."""

    group: Group
    target: Policy
    figures: dict[str, int]
    """Each planted policy's figure, by title."""
    order: list[Policy]
    """The planted policies, in planting order."""
    owner: Person
    kb_page: int
    article_ids: dict[str, int] = field(default_factory=dict)
    spare: list[int] = field(default_factory=list)
    """Further figures for the target, none equal to or inside a planted one (a later value)."""

    @property
    def value(self) -> int:
        return self.figures[self.target.title]

    @property
    def article_id(self) -> int:
        return self.article_ids[self.target.title]

    def wrong(self) -> list[int]:
        return [v for title, v in self.figures.items() if title != self.target.title]

    def operations(self, ctx: FamilyContext) -> list[WorldCall]:
        ops = []
        for policy in self.order:
            ops.append(
                operation(
                    "notes",
                    "add_page",
                    title=article_title(policy),
                    body=article_body(policy, self.figures[policy.title], self.owner.email),
                    parent_id=self.kb_page,
                    kind="article",
                    author=self.owner.email,
                    created_at=ago(ctx, days=ctx.rng.randint(40, 90)),
                    updated_at=ago(ctx, days=ctx.rng.randint(3, 30)),
                )
            )
        return ops


def kb_page(ws: Workspace) -> int:
    """The knowledge base's top page in the seeded workspace."""
    found = ws.conn.execute(
        "SELECT id FROM notes_pages WHERE title = 'Knowledge base' AND parent_id IS NULL"
    ).fetchone()
    if found is None:
        raise SeedDoesNotFit("the world's notes have no knowledge base page")
    return int(found[0])


def plan_knowledge_base(ctx: FamilyContext, ws: Workspace, neighbours: int, spare: int = 0) -> KnowledgeBase:
    """The target policy and up to `neighbours` of its group, with figures; `spare` more
    figures are drawn for the target's later values (see `KnowledgeBase.figures`)."""
    group: Group = ctx.choice(GROUPS)
    target: Policy = ctx.choice(group.policies)
    others = [p for p in group.policies if p != target]
    ctx.rng.shuffle(others)
    chosen = others[: max(1, min(neighbours, len(others)))]
    values = draw_figures(ctx, group, 1 + len(chosen) + spare)
    figures = {p.title: v for p, v in zip([target, *chosen], values, strict=False)}
    order = [target, *chosen]
    ctx.rng.shuffle(order)
    owner = ctx.person(internal=True)
    return KnowledgeBase(group, target, figures, order, owner, kb_page(ws), spare=values[1 + len(chosen) :])


def customer_queue(ctx: FamilyContext) -> str:
    """The queue customers file into (the user's team's first)."""
    world = ctx.the_world
    queues = [q for q in world.queues if q.requested_by == "customers"] or list(world.queues)
    desk = world.team("desk")
    return next((q for q in queues if desk in q.teams), queues[0]).name


def question_ticket(
    ctx: FamilyContext, customer: Person, policy: Policy, queue: str, hours: float
) -> WorldCall:
    """The customer's ticket asking about `policy`, filed `hours` ago."""
    subject = ctx.choice(
        [
            "Question about your policy",
            f"Quick question: {policy.title.lower()}",
            "A question before I go ahead",
        ]
    )
    body = f"Hello,\n\n{policy.question}\n\nKind regards,\n{customer.name}\n{customer.company}"
    return operation(
        "tickets",
        "add_ticket",
        title=subject,
        description=body,
        queue=queue,
        requester=customer.email,
        created_at=ago(ctx, hours=hours),
    )


def reply_text(ctx: FamilyContext, customer: Person, policy: Policy, value: int) -> str:
    """The answer a colleague would post: the rule with its figure, and the article it is from."""
    opening = ctx.choice(["thank you for your question.", "thanks for getting in touch.", "good question."])
    return (
        f"{greeting(customer)}\n\n{opening[:1].upper() + opening[1:]} {policy.rule.format(n=value)} "
        f'This comes from our knowledge-base article "{article_title(policy)}".\n\n'
        f"Best regards,\n{first_name(ctx.user.name)}"
    )


def answer_checks(
    prefix: str, ctx: FamilyContext, ticket_id: int, policy: Policy, value: int, wrong: list[int], unit: str
) -> list[Check]:
    """A public comment of the user on the ticket gives the figure (none of the wrong ones)
    and names the article."""
    where: dict[str, Any] = {"ticket_id": ticket_id, "visibility": "public", "author": ctx.user.email}
    return [
        states(
            f"{prefix}-figure",
            f"A public reply on ticket #{ticket_id} gives {value} {unit}, from '{article_title(policy)}' "
            "(not a neighbouring article's figure)",
            "tickets_comments",
            where,
            ["body"],
            [number_fact(value)],
            absent=[number_fact(w) for w in wrong],
        ),
        states(
            f"{prefix}-cites",
            f"That reply names the article '{article_title(policy)}'",
            "tickets_comments",
            where,
            ["body"],
            [text_fact(policy.title)],
        ),
    ]


def answer_steps(
    ctx: FamilyContext, ticket_id: int, article_id: int, policy: Policy, body: str
) -> list[SolutionStep]:
    """Read the ticket, find and read the article, reply on the ticket."""
    return [
        step("tickets_get_ticket", ticket_id=ticket_id),
        step("notes_search_pages", query=policy.keyword, kind="article"),
        step("notes_get_page", page_id=article_id),
        step("tickets_add_comment", ticket_id=ticket_id, body=body, visibility="public"),
    ]
