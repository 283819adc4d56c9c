"""Files part of a world's seed: its documents in its folder layout.

The world lists every document (path, kind, owning team, subject, day); `documents`
writes each kind. Every file was created and last changed before the clock start, by a
member of the team it belongs to. `northwind_documents` is the demo company's tree:
/shared holds company policies, quarterly figures and reports, the price list and the
onboarding checklist; /teams/<team> each team's notes, runbooks, accounts and budgets;
/projects the plans of current projects.
"""

from __future__ import annotations

import random
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING

from coworkenv.state import Workspace, format_time

from . import documents as text
from .paths import parent_of
from .world import AddDirectory, AddFile, add_directory, add_file

if TYPE_CHECKING:
    from coworkenv.world import Document, World

EMPTY_DIRECTORIES = ("/shared/archive",)


def northwind_documents(start: date) -> list[dict[str, object]]:
    """The Northwind tree, as `Document` fields."""

    def days_ago(days: int) -> date:
        return start - timedelta(days=days)

    def doc(path: str, team: str, kind: str, subject: str = "", day: date | None = None) -> dict[str, object]:
        return {"path": path, "team": team, "kind": kind, "subject": subject, "day": day}

    sales_accounts = ["Globex", "Initech", "Umbrella Logistics", "Stark Supplies"]
    board, weekly1, weekly2 = days_ago(14), days_ago(14), days_ago(7)
    standup1, standup2 = days_ago(6), days_ago(4)
    return [
        doc("/shared/policies/travel-policy.md", "Finance", "travel_policy"),
        doc("/shared/policies/expense-policy.md", "Finance", "expense_policy"),
        doc("/shared/policies/remote-work-policy.md", "Leadership", "remote_work_policy"),
        doc("/shared/policies/security-policy.md", "Engineering", "security_policy"),
        doc("/shared/policies/code-of-conduct.md", "Leadership", "code_of_conduct"),
        *(
            # early in the month after the quarter
            doc(
                f"/shared/reports/2025-q{q}-figures.csv",
                "Finance",
                "quarter_figures",
                str(q),
                date(2025 + q // 4, q * 3 % 12 + 1, 6),
            )
            for q in (1, 2, 3, 4)
        ),
        doc("/shared/reports/2025-annual-report.md", "Finance", "annual_report", day=date(start.year, 1, 20)),
        doc("/shared/reports/support-metrics-2026-02.csv", "Support", "support_metrics", day=days_ago(1)),
        doc("/shared/price-list-2026.csv", "Sales", "price_list", day=date(start.year - 1, 12, 15)),
        doc("/shared/onboarding/onboarding-checklist.md", "Finance", "onboarding_checklist"),
        doc("/shared/templates/meeting-notes-template.md", "Leadership", "meeting_template"),
        doc("/teams/leadership/okrs-2026-q1.md", "Leadership", "okrs", day=date(start.year, 1, 8)),
        doc(
            f"/teams/leadership/meeting-notes/{board}-board-meeting.md",
            "Leadership",
            "meeting_notes",
            "Board meeting",
            board,
        ),
        doc("/teams/engineering/architecture-overview.md", "Engineering", "architecture"),
        doc("/teams/engineering/runbooks/deploy.md", "Engineering", "runbook_deploy"),
        doc("/teams/engineering/runbooks/incident-response.md", "Engineering", "runbook_incident"),
        *(
            doc(
                f"/teams/engineering/meeting-notes/{d}-standup.md",
                "Engineering",
                "meeting_notes",
                "Standup",
                d,
            )
            for d in (standup1, standup2)
        ),
        doc("/teams/sales/pipeline-2026-q1.csv", "Sales", "pipeline", day=days_ago(3)),
        *(
            doc(f"/teams/sales/accounts/{c.lower().replace(' ', '-')}.md", "Sales", "account", c)
            for c in sales_accounts
        ),
        doc(
            "/teams/sales/contracts/globex-contract-2026.md",
            "Sales",
            "contract",
            "Globex",
            date(start.year - 1, 12, 10),
        ),
        doc("/teams/support/faq.md", "Support", "support_faq"),
        doc("/teams/support/sla-policy.md", "Support", "sla_policy"),
        doc("/teams/support/escalation-process.md", "Support", "escalation"),
        doc("/teams/support/macros/refund-request.md", "Support", "macro", "refund request"),
        doc("/teams/support/macros/password-reset.md", "Support", "macro", "password reset"),
        *(
            doc(
                f"/teams/support/meeting-notes/{d}-weekly.md", "Support", "meeting_notes", "Support weekly", d
            )
            for d in (weekly1, weekly2)
        ),
        doc("/teams/finance/budget-2026.csv", "Finance", "budget", day=date(start.year - 1, 11, 28)),
        doc("/teams/finance/vendors.csv", "Finance", "vendors"),
        doc("/teams/finance/invoices-outstanding.csv", "Finance", "invoices", day=days_ago(2)),
        doc("/projects/customer-portal/plan.md", "Engineering", "project_plan", "Customer portal v2"),
        doc(
            "/projects/customer-portal/status.md",
            "Engineering",
            "project_status",
            "Customer portal v2",
            days_ago(3),
        ),
        doc("/projects/billing-revamp/plan.md", "Finance", "project_plan", "Billing revamp"),
    ]


def _times(rng: random.Random, start: datetime, day: date | None) -> tuple[datetime, datetime]:
    """When a file was created and last modified: both before `start`."""
    if day is not None:
        created = datetime.combine(day, time(9), start.tzinfo) + timedelta(minutes=rng.randint(0, 420))
        return created, created + timedelta(minutes=rng.randint(20, 240))
    created = start - timedelta(days=rng.randint(40, 400), minutes=rng.randint(0, 600))
    age_days = (start - created).days
    return created, created + timedelta(days=rng.randint(0, age_days - 2), minutes=rng.randint(0, 300))


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Create the world's directories (the empty ones too) and its documents."""
    writer = text.Writer(world, world.faker("files"), rng)
    found: set[str] = set()
    for directory in [*(parent_of(d.path) for d in world.documents), *world.empty_folders]:
        while directory is not None and directory != "/":
            found.add(directory)
            directory = parent_of(directory)
    office = writer.member(world.team("finance"), "Office Manager")
    founded = world.start - timedelta(days=420)
    for i, directory in enumerate(sorted(found)):
        add_directory(
            ws,
            AddDirectory(
                path=directory, modified_by=office.email, created_at=format_time(founded + timedelta(hours=i))
            ),
        )
    for doc in world.documents:
        content = _write(writer, doc)
        created, modified = _times(rng, world.start, doc.day)
        add_file(
            ws,
            AddFile(
                path=doc.path,
                content=content,
                modified_by=writer.pick(doc.team).email,
                created_at=format_time(created),
                modified_at=format_time(modified),
            ),
        )


def _write(writer: text.Writer, doc: Document) -> str:
    write = text.WRITERS.get(doc.kind)
    if write is None:
        raise ValueError(
            f"{doc.path}: unknown document kind {doc.kind!r}; known: {', '.join(sorted(text.WRITERS))}"
        )
    return write(writer, doc)
