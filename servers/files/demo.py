"""Files part of the demo workspace: 40 text files in a believable tree.

/shared holds company policies, quarterly figures and reports, the price list and the
onboarding checklist; /teams/<team> each team's notes, runbooks, accounts and budgets;
/projects the plans of current projects. Every file was created and last changed
before the clock start, by a colleague of the team it belongs to.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING

from coworkenv.state import Workspace, format_time

from . import demo_content as text
from .paths import parent_of
from .world import AddDirectory, AddFile, add_directory, add_file

if TYPE_CHECKING:
    from ..demo import DemoCompany

EMPTY_DIRECTORIES = ("/shared/archive",)


@dataclass(frozen=True)
class _Planned:
    path: str
    team: str
    write: Callable[[text.Writer], str]
    day: date | None = None
    """The day it was written (meeting notes, reports); None: some day in the past year."""


def _plan(start: date) -> list[_Planned]:
    def days_ago(days: int) -> date:
        return start - timedelta(days=days)

    def notes(team: str, title: str, day: date) -> Callable[[text.Writer], str]:
        return lambda w: text.meeting_notes(w, team, title, day)

    def quarter(q: int) -> Callable[[text.Writer], str]:
        return lambda w: text.quarter_figures(w, q)

    def account(company: str) -> Callable[[text.Writer], str]:
        return lambda w: text.account(w, company)

    sales_accounts = ["Globex", "Initech", "Umbrella Logistics", "Stark Supplies"]
    board, weekly1, weekly2 = days_ago(14), days_ago(14), days_ago(7)
    standup1, standup2 = days_ago(6), days_ago(4)
    return [
        _Planned("/shared/policies/travel-policy.md", "Finance", text.travel_policy),
        _Planned("/shared/policies/expense-policy.md", "Finance", text.expense_policy),
        _Planned("/shared/policies/remote-work-policy.md", "Leadership", text.remote_work_policy),
        _Planned("/shared/policies/security-policy.md", "Engineering", text.security_policy),
        _Planned("/shared/policies/code-of-conduct.md", "Leadership", text.code_of_conduct),
        *(
            _Planned(
                f"/shared/reports/2025-q{q}-figures.csv",
                "Finance",
                quarter(q),
                date(2025 + q // 4, q * 3 % 12 + 1, 6),  # early in the month after the quarter
            )
            for q in (1, 2, 3, 4)
        ),
        _Planned(
            "/shared/reports/2025-annual-report.md", "Finance", text.annual_report, date(start.year, 1, 20)
        ),
        _Planned("/shared/reports/support-metrics-2026-02.csv", "Support", text.support_metrics, days_ago(1)),
        _Planned("/shared/price-list-2026.csv", "Sales", text.price_list, date(start.year - 1, 12, 15)),
        _Planned("/shared/onboarding/onboarding-checklist.md", "Finance", text.onboarding_checklist),
        _Planned("/shared/templates/meeting-notes-template.md", "Leadership", text.meeting_template),
        _Planned("/teams/leadership/okrs-2026-q1.md", "Leadership", text.okrs, date(start.year, 1, 8)),
        _Planned(
            f"/teams/leadership/meeting-notes/{board}-board-meeting.md",
            "Leadership",
            notes("Leadership", "Board meeting", board),
            board,
        ),
        _Planned("/teams/engineering/architecture-overview.md", "Engineering", text.architecture),
        _Planned("/teams/engineering/runbooks/deploy.md", "Engineering", text.runbook_deploy),
        _Planned("/teams/engineering/runbooks/incident-response.md", "Engineering", text.runbook_incident),
        *(
            _Planned(
                f"/teams/engineering/meeting-notes/{d}-standup.md",
                "Engineering",
                notes("Engineering", "Standup", d),
                d,
            )
            for d in (standup1, standup2)
        ),
        _Planned("/teams/sales/pipeline-2026-q1.csv", "Sales", text.pipeline, days_ago(3)),
        *(
            _Planned(f"/teams/sales/accounts/{c.lower().replace(' ', '-')}.md", "Sales", account(c))
            for c in sales_accounts
        ),
        _Planned(
            "/teams/sales/contracts/globex-contract-2026.md",
            "Sales",
            lambda w: text.contract(w, "Globex"),
            date(start.year - 1, 12, 10),
        ),
        _Planned("/teams/support/faq.md", "Support", text.support_faq),
        _Planned("/teams/support/sla-policy.md", "Support", text.sla_policy),
        _Planned("/teams/support/escalation-process.md", "Support", text.escalation),
        _Planned(
            "/teams/support/macros/refund-request.md", "Support", lambda w: text.macro(w, "refund request")
        ),
        _Planned(
            "/teams/support/macros/password-reset.md", "Support", lambda w: text.macro(w, "password reset")
        ),
        *(
            _Planned(
                f"/teams/support/meeting-notes/{d}-weekly.md",
                "Support",
                notes("Support", "Support weekly", d),
                d,
            )
            for d in (weekly1, weekly2)
        ),
        _Planned("/teams/finance/budget-2026.csv", "Finance", text.budget, date(start.year - 1, 11, 28)),
        _Planned("/teams/finance/vendors.csv", "Finance", text.vendors),
        _Planned("/teams/finance/invoices-outstanding.csv", "Finance", text.invoices, days_ago(2)),
        _Planned(
            "/projects/customer-portal/plan.md",
            "Engineering",
            lambda w: text.project_plan(w, "Customer portal v2", "Engineering"),
        ),
        _Planned(
            "/projects/customer-portal/status.md",
            "Engineering",
            lambda w: text.project_status(w, "Customer portal v2"),
            days_ago(3),
        ),
        _Planned(
            "/projects/billing-revamp/plan.md",
            "Finance",
            lambda w: text.project_plan(w, "Billing revamp", "Finance"),
        ),
    ]


def _times(rng: random.Random, start: datetime, day: date | None) -> tuple[datetime, datetime]:
    """When a file was created and last modified: both before `start`."""
    if day is not None:
        created = datetime.combine(day, time(9), start.tzinfo) + timedelta(minutes=rng.randint(0, 420))
        return created, created + timedelta(minutes=rng.randint(20, 240))
    created = start - timedelta(days=rng.randint(40, 400), minutes=rng.randint(0, 600))
    age_days = (start - created).days
    return created, created + timedelta(days=rng.randint(0, age_days - 2), minutes=rng.randint(0, 300))


def populate(ws: Workspace, company: DemoCompany, rng: random.Random) -> None:
    """Create the demo's directories (one of them empty) and its 40 files."""
    writer = text.Writer(company, company.faker("files"), rng)
    plan = _plan(company.start.date())
    found: set[str] = set()
    for directory in [*(parent_of(p.path) for p in plan), *EMPTY_DIRECTORIES]:
        while directory is not None and directory != "/":
            found.add(directory)
            directory = parent_of(directory)
    office = writer.member("Finance", "Office Manager")
    founded = company.start - timedelta(days=420)
    for i, directory in enumerate(sorted(found)):
        add_directory(
            ws,
            AddDirectory(
                path=directory, modified_by=office.email, created_at=format_time(founded + timedelta(hours=i))
            ),
        )
    for planned in plan:
        content = planned.write(writer)
        created, modified = _times(rng, company.start, planned.day)
        add_file(
            ws,
            AddFile(
                path=planned.path,
                content=content,
                modified_by=writer.pick(planned.team).email,
                created_at=format_time(created),
                modified_at=format_time(modified),
            ),
        )
