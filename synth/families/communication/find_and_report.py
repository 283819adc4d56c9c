"""find_and_report: answer a colleague's question with figures from a report, or with the
state of a customer's tickets."""

from __future__ import annotations

from typing import Any

from coworkenv.checks import Check
from coworkenv.task import Task, Turn, WorldCall

from ...builders import ago, house_rules, mail_sent, number_fact, operation, planted_ids, step, ticket_fact
from ...family import FamilyContext, family
from ...phrasing import Ask, first_name, greeting, request
from .report_figures import Figures, figure_mail_checks, figure_reply_steps, figure_request, plan_figures

MANAGER_TITLES = ("CEO", "COO", "Head of Sales", "Finance Director", "Engineering Manager")


def _figure_ask(ctx: FamilyContext, figures: Figures, asker: Any, in_thread: bool) -> Ask:
    """The user's request to answer `asker`'s mail; only an in-thread one mentions the thread."""
    first, metric, period = first_name(asker.name), figures.target.metric.name, figures.target.period
    if in_thread:
        return ctx.choice(
            [
                Ask(
                    steps=(
                        f"Look up the figures {first} asked me for by mail.",
                        f"Reply to {first} in that thread.",
                    ),
                    context="They should be in one of our reports.",
                    short=f"reply to {first}'s figures question in the thread",
                ),
                Ask(
                    steps=(
                        f"Find the final {period} {metric} figures in our files.",
                        f"Answer {first} in the same thread as the request.",
                    ),
                    context=f"{asker.name} asked me for them by mail.",
                    short=f"answer {first}'s {metric} question in the same thread",
                ),
            ]
        )
    return ctx.choice(
        [
            Ask(
                steps=(f"Answer {asker.name}'s mail from this morning.",),
                context="The numbers are in one of our reports.",
                short=f"answer {first}'s mail about the {metric}",
            ),
            Ask(
                steps=(f"Get {first} the right figures from our files.",),
                context=f"The question is about the {metric}.",
                short=f"send {first} the {metric} figures",
            ),
            Ask(
                steps=(f"Send {first} the final {period} {metric} figures they asked for.",),
                context=f"{first} mailed me about it earlier today.",
                short=f"send {first} the {period} {metric}",
            ),
        ]
    )


@family("mail_answer_figure", capability_id="find_and_report", services=["mail", "files"], worlds=True)
def mail_answer_figure(ctx: FamilyContext) -> Task:
    """A colleague asks by mail for figures from a report; the agent finds the final report
    among look-alikes (the draft, other periods, other metrics) and replies in the thread.
    The reports belong to the world's teams and are in its currency. Difficulty: how many
    figures are asked for, how many look-alike files."""
    asker = ctx.person(internal=True)
    figures = plan_figures(ctx, ctx.difficulty.items, ctx.difficulty.distractors)
    subject, body = figure_request(ctx, figures, asker)
    operations = figures.file_ops(ctx)
    operations.append(
        operation(
            "mail",
            "deliver_inbound",
            from_addr=asker.email,
            subject=subject,
            body=body,
            sent_at=ago(ctx, hours=1),
        )
    )
    request_id = ctx.plant(["mail", "files"], operations)[-1]["id"]
    reply = f"{greeting(asker)}\n\n{figures.answer_text()}\n\nBest,\n{first_name(ctx.user.name)}"
    in_thread = ctx.rng.random() < 0.4
    return ctx.task(
        capability_id="find_and_report",
        services=["mail", "files"],
        operations=operations,
        title=f"Reply with the {figures.target.period} {figures.target.metric.name} from the final report",
        context=house_rules(ctx),
        turns=[
            Turn(
                user=request(ctx, _figure_ask(ctx, figures, asker, in_thread)),
                checks=figure_mail_checks("reply-figure", figures, asker.email, request_id, in_thread),
                solution=figure_reply_steps(figures, request_id, reply, first_name(asker.name)),
            )
        ],
    )


# -- ticket_status_report ---------------------------------------------------------------------

CUSTOMERS = (
    ("Vandelay Industries", "vandelay.example"),
    ("Hooli Retail", "hooli.example"),
    ("Wonka Confections", "wonka.example"),
    ("Acme Freight", "acmefreight.example"),
    ("Tyrell Farms", "tyrell.example"),
    ("Soylent Foods", "soylent.example"),
    ("Cyberdyne Parts", "cyberdyne.example"),
    ("Massive Dynamic", "massivedynamic.example"),
)
CONTACT_NAMES = (
    "Ava Brennan",
    "Liam Okafor",
    "Maya Lindqvist",
    "Noah Castillo",
    "Zoe Hartmann",
    "Ethan Moreau",
    "Isla Petrov",
    "Lucas Ferreira",
)
NEW_QUEUES = (
    ("Returns", "Returned goods, replacements and RMA numbers."),
    ("Partner Onboarding", "New reseller and partner accounts being set up."),
    ("Warranty", "Warranty claims for faulty parts."),
)
TICKET_TITLES = (
    "Order {n} has not arrived",
    "Wrong part delivered in order {n}",
    "Refund for order {n}",
    "Invoice question for order {n}",
    "Damaged boxes in shipment {n}",
    "Change delivery address for order {n}",
    "Portal access for a new buyer",
    "Missing mounting kits in order {n}",
)


def _contacts(ctx: FamilyContext, n: int) -> list[tuple[str, str, str]]:
    """(company, contact name, email) of customers that are not in the demo."""
    companies = ctx.rng.sample(list(CUSTOMERS), n)
    names = ctx.rng.sample(list(CONTACT_NAMES), n)
    out = []
    for (company, domain), name in zip(companies, names, strict=True):
        first, last = name.lower().split()
        out.append((company, name, f"{first}.{last}@{domain}"))
    return out


#: In a world other than the demo company, the new queue a manager may ask about (the first
#: whose name the world does not use yet).
WORLD_NEW_QUEUES = (
    ("Escalations", "Requests escalated for a second look."),
    ("Second Look", "Requests sent back for a second look."),
)


def _world_new_queue(ctx: FamilyContext) -> tuple[str, str]:
    taken = {q.name for q in ctx.the_world.queues}
    return next(q for q in WORLD_NEW_QUEUES if q[0] not in taken)


def _front(ctx: FamilyContext) -> str:
    """The queue customers file into: Support in the demo company."""
    if ctx.on_demo:
        return "Support"
    return next(q.name for q in ctx.the_world.queues if q.requested_by == "customers")


def _ticket_title(ctx: FamilyContext) -> str:
    if ctx.on_demo:
        return str(ctx.choice(TICKET_TITLES)).format(n=f"NW-{ctx.rng.randint(10000, 99999)}")
    world = ctx.the_world
    topic = ctx.choice(next(q for q in world.queues if q.name == _front(ctx)).topics)
    return str(topic.title).format(
        order=f"{world.reference_prefix}-{ctx.rng.randint(10000, 99999)}",
        invoice=f"INV-{world.start.year}-{ctx.rng.randint(1000, 9999)}",
        amount=f"{ctx.rng.randint(200, 9000)}.00 {world.currency}",
        city=ctx.choice(["Springfield", "Riverton", "Lakeside", "Hillcrest"]),
        date=f"{ctx.rng.randint(1, 27)} February",
    )


def _manager(ctx: FamilyContext) -> Any:
    """Who asks: one of the demo's managers, or a team lead of the world."""
    if ctx.on_demo:
        return ctx.choice([p for p in ctx.people(internal=True) if p.title in MANAGER_TITLES])
    leads = {t.lead for t in ctx.the_world.teams}
    return ctx.choice([p for p in ctx.people(internal=True) if p.email in leads])


def _ticket(ctx: FamilyContext, queue: str, requester: str, status: str, days: int) -> WorldCall:
    title = _ticket_title(ctx).rstrip(".")
    created = ago(ctx, days=days, hours=ctx.rng.randint(0, 8))
    return operation(
        "tickets",
        "add_ticket",
        title=title,
        description=f"{title}. Please have a look.",
        status=status,
        queue=queue,
        requester=requester,
        created_at=created,
    )


def _status_ask(ctx: FamilyContext, manager: Any, short: str, in_thread: bool) -> Ask:
    """The user's request to answer the manager; only an in-thread one mentions the thread."""
    first = first_name(manager.name)
    if in_thread:
        return ctx.choice(
            [
                Ask(
                    steps=(
                        f"Look up what {first} asked me by mail about the open tickets.",
                        f"Reply to {first} in that thread.",
                    ),
                    context="It should all be in the ticket system.",
                    short=f"reply to {first}'s open tickets question in the thread",
                ),
                Ask(
                    steps=(
                        f"Check how many tickets are open {short} and which is the oldest.",
                        "Answer in the same thread as the question.",
                    ),
                    context=f"{manager.name} wants a status check.",
                    short=f"answer {first} in the thread: open tickets {short}",
                ),
            ]
        )
    return ctx.choice(
        [
            Ask(
                steps=(f"Answer {manager.name}'s mail about the open tickets {short}.",),
                short=f"answer {first}'s mail about the open tickets {short}",
            ),
            Ask(
                steps=(f"Send {first} the count of open tickets {short} and the oldest one.",),
                context=f"{first} asked me by mail.",
                short=f"tell {first} how many tickets are open {short} and which is the oldest",
            ),
            Ask(
                steps=(f"Get back to {first} on the open tickets {short}.",),
                context=f"{first} needs the numbers for a call.",
                short=f"get {first} the open ticket count {short} and the oldest one",
            ),
        ]
    )


@family("ticket_status_report", capability_id="find_and_report", services=["tickets", "mail"], worlds=True)
def ticket_status_report(ctx: FamilyContext) -> Task:
    """A manager asks by mail how many open tickets a customer (or a new queue) has and which
    is the oldest; the agent replies with the count and the ticket number. Distractors: the
    customer's resolved or closed tickets (older than the open ones) and other customers'
    open tickets. Difficulty: how many open tickets, how many distractors. Runs on every world
    (the queue customers file into stands for Support)."""
    manager = _manager(ctx)
    by_queue = ctx.rng.random() < 0.35
    contacts = _contacts(ctx, 4)
    company, _, customer = contacts[0]
    front = _front(ctx)
    queue, queue_note = (front, "")
    if by_queue:
        queue, queue_note = ctx.choice(NEW_QUEUES) if ctx.on_demo else _world_new_queue(ctx)
    n_open = ctx.difficulty.items + 1
    open_days = ctx.rng.sample(range(2, 30), n_open)
    oldest_days = max(open_days)
    ops: list[tuple[WorldCall, bool]] = []  # (operation, counts as open)
    for days in open_days:
        requester = ctx.choice(contacts)[2] if by_queue else customer
        ops.append((_ticket(ctx, queue, requester, "open", days), True))
    for i in range(ctx.difficulty.distractors):
        if i % 2 == 0:  # the same customer (or queue), no longer open, and older
            status = ctx.choice(["resolved", "closed"])
            requester = ctx.choice(contacts)[2] if by_queue else customer
            ops.append((_ticket(ctx, queue, requester, status, oldest_days + ctx.rng.randint(1, 12)), False))
        else:  # someone else's open ticket, also older
            other_queue = front if by_queue else queue
            requester = ctx.choice(contacts[1:])[2]
            ops.append(
                (_ticket(ctx, other_queue, requester, "open", oldest_days + ctx.rng.randint(1, 12)), False)
            )
    ctx.rng.shuffle(ops)
    operations = [operation("tickets", "add_queue", name=queue, description=queue_note)] if by_queue else []
    operations += [op for op, _ in ops]
    what = f"in the {queue} queue" if by_queue else f"for {company} ({customer})"
    short = f"in the {queue} queue" if by_queue else f"for {company}"
    subject = ctx.choice([f"Open tickets {short}", "Quick status check"])
    body = ctx.choice(
        [
            f"Hi {first_name(ctx.user.name)},\n\nHow many open tickets do we have {what} right now, and which one is "
            f"the oldest? Just the count and the ticket number is fine.\n\nThanks,\n{first_name(manager.name)}",
            f"Hi {first_name(ctx.user.name)},\n\nBefore my call later: could you tell me how many tickets are still open "
            f"{what}, and the number of the oldest open one?\n\n{first_name(manager.name)}",
        ]
    )
    operations.append(
        operation(
            "mail",
            "deliver_inbound",
            from_addr=manager.email,
            subject=subject,
            body=body,
            sent_at=ago(ctx, hours=1),
        )
    )
    results = ctx.plant(["tickets", "mail"], operations)
    request_id = results[-1]["id"]
    ticket_ids = planted_ids(results, "ticket_id")
    opened = {
        tid: op.params["created_at"] for tid, (op, is_open) in zip(ticket_ids, ops, strict=True) if is_open
    }
    oldest = min(opened, key=lambda tid: opened[tid])
    older = [tid for tid in ticket_ids if tid not in opened]  # closed, or someone else's: older still
    in_thread = ctx.rng.random() < 0.5
    checks: list[Check] = [
        mail_sent(
            "reply-count",
            f"A mail to {manager.email} gives the number of open tickets, {n_open}",
            [manager.email],
            [number_fact(n_open)],
            thread_of=request_id,
            reply=in_thread,
        ),
        mail_sent(
            "reply-oldest",
            f"A mail to {manager.email} names the oldest open ticket, #{oldest}, and no older closed or "
            "unrelated one",
            [manager.email],
            [ticket_fact(oldest)],
            thread_of=request_id,
            reply=in_thread,
            absent=[ticket_fact(tid) for tid in older],
        ),
    ]
    search: dict[str, Any] = {"queue": queue} if by_queue else {"requester": customer}
    reply = (
        f"Hi {first_name(manager.name)},\n\nWe have {n_open} open tickets {short} right now. The oldest open one is "
        f"#{oldest}, opened on {opened[oldest][:10]}.\n\nBest,\n{first_name(ctx.user.name)}"
    )
    user = request(ctx, _status_ask(ctx, manager, short, in_thread))
    return ctx.task(
        capability_id="find_and_report",
        services=["tickets", "mail"],
        operations=operations,
        title=f"Report the open tickets of {company if not by_queue else 'the ' + queue + ' queue'}",
        context=house_rules(ctx),
        turns=[
            Turn(
                user=user,
                checks=checks,
                solution=[
                    step("mail_search_messages", query=first_name(manager.name), folder="inbox"),
                    step("mail_get_message", message_id=request_id),
                    step("tickets_search_tickets", "found", **search, status="open", sort="oldest"),
                    step("mail_reply", message_id=request_id, body=reply),
                ],
            )
        ],
    )
