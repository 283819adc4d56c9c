"""The smallest complete family (escalate an outage ticket): copy it to write a new one.

It shows the contract every family meets: goal checks of what the user asked, no hand-written
list of what may change (the collateral guard derives it from the solution), and a solution
that looks up every id and address before it uses one."""

from __future__ import annotations

from coworkenv.task import Task

from ..family import FamilyContext, family


@family("tickets_escalate", capability_id="triage_routing", services=["tickets", "directory"])
def tickets_escalate(ctx: FamilyContext) -> Task:
    """A customer reports an outage in a new ticket; the agent makes it urgent, moves it to
    Engineering and assigns it to the team's SRE. Distractor tickets from the same customer
    must stay as they are."""
    customer = ctx.person(internal=False)
    sre = next(p for p in ctx.company.staff if p.title == "SRE")
    system = ctx.choice(["checkout", "login page", "invoice export", "order API", "mobile app"])
    operations = [
        {
            "service": "tickets",
            "operation": "add_ticket",
            "params": {
                "title": f"{system.capitalize()} is down",
                "description": f"Since this morning our team cannot use the {system}. Please help urgently.",
                "queue": "Support",
                "requester": customer.email,
                "status": "open",
            },
        }
    ]
    for i in range(ctx.difficulty.distractors):
        operations.append(
            {
                "service": "tickets",
                "operation": "add_ticket",
                "params": {
                    "title": ctx.choice(["Question about", "Update on", "Small issue with"])
                    + f" order {1000 + i}",
                    "queue": "Support",
                    "requester": customer.email,
                    "status": "open",
                },
            }
        )
    results = ctx.plant(["tickets", "directory"], operations)
    ticket_id = results[0]["ticket_id"]
    request = ctx.choice(
        [
            f"{customer.name} says the {system} is down. Find their ticket, make it urgent, move it to the "
            f"Engineering queue and assign it to our SRE.",
            f"Outage alert: the {system} ticket from {customer.name} needs to go to Engineering as urgent, "
            f"assigned to the SRE. Please handle it.",
        ]
    )
    return ctx.task(
        capability_id="triage_routing",
        services=["tickets", "directory"],
        operations=operations,
        title=f"Escalate the {system} outage ticket",
        turns=[
            {
                "user": request,
                "checks": [
                    {
                        "id": "urgent",
                        "type": "field_equals",
                        "table": "tickets_tickets",
                        "where": {"id": ticket_id},
                        "column": "priority",
                        "value": "urgent",
                    },
                    {
                        "id": "queue",
                        "type": "field_equals",
                        "table": "tickets_tickets",
                        "where": {"id": ticket_id},
                        "column": "queue",
                        "value": "Engineering",
                    },
                    {
                        "id": "assignee",
                        "type": "field_equals",
                        "table": "tickets_tickets",
                        "where": {"id": ticket_id},
                        "column": "assignee",
                        "value": sre.email,
                    },
                ],
                "solution": [
                    {"tool": "directory_search_people", "arguments": {"query": "SRE"}, "id": "sre"},
                    {
                        "tool": "directory_search_people",
                        "arguments": {"query": customer.name},
                        "id": "customer",
                    },
                    {
                        "tool": "tickets_search_tickets",
                        "arguments": {"query": system, "requester": {"$ref": "customer.people.0.email"}},
                        "id": "found",
                    },
                    {
                        "tool": "tickets_update_ticket",
                        "arguments": {
                            "ticket_id": {"$ref": "found.tickets.0.id"},
                            "priority": "urgent",
                            "queue": "Engineering",
                            "assignee": {"$ref": "sre.people.0.email"},
                        },
                    },
                ],
            }
        ],
    )
