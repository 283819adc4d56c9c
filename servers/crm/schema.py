"""CRM tables (accounts, their contacts, deals and logged activities) and the models its tools return.

An account is an outside organization; its owner is the colleague (directory email) who
manages it. A deal moves through `STAGES`; the two closed stages are final. A contact merged
into another keeps its row (status merged, `merged_into` the contact kept) and its
activities move to the contact kept, so no history is lost.
"""

from typing import Literal

from pydantic import BaseModel, Field

from coworkenv.state import ServiceSchema, TableRules

Stage = Literal["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"]
STAGES: tuple[str, ...] = (
    "prospecting",
    "qualification",
    "proposal",
    "negotiation",
    "closed_won",
    "closed_lost",
)
CLOSED: tuple[str, ...] = ("closed_won", "closed_lost")
AccountKind = Literal["customer", "prospect", "partner", "vendor"]
ActivityKind = Literal["call", "meeting", "email", "note"]

SCHEMA = ServiceSchema(
    name="crm",
    sql="""
CREATE TABLE crm_accounts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('customer', 'prospect', 'partner', 'vendor')),
    domain TEXT NOT NULL DEFAULT '',
    industry TEXT NOT NULL DEFAULT '',
    owner TEXT NOT NULL,
    renewal_date TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE crm_contacts (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES crm_accounts(id),
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    phone TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'merged')),
    merged_into INTEGER REFERENCES crm_contacts(id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX crm_contacts_account ON crm_contacts(account_id);
CREATE INDEX crm_contacts_email ON crm_contacts(email);
CREATE TABLE crm_deals (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES crm_accounts(id),
    name TEXT NOT NULL,
    stage TEXT NOT NULL CHECK (stage IN ('prospecting', 'qualification', 'proposal', 'negotiation', 'closed_won', 'closed_lost')),
    amount INTEGER NOT NULL CHECK (amount >= 0),
    currency TEXT NOT NULL,
    close_date TEXT NOT NULL,
    owner TEXT NOT NULL,
    next_step TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX crm_deals_account ON crm_deals(account_id);
CREATE TABLE crm_activities (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('call', 'meeting', 'email', 'note')),
    subject TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    account_id INTEGER NOT NULL REFERENCES crm_accounts(id),
    deal_id INTEGER REFERENCES crm_deals(id),
    contact_id INTEGER REFERENCES crm_contacts(id),
    author TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX crm_activities_account ON crm_activities(account_id, occurred_at);
CREATE INDEX crm_activities_deal ON crm_activities(deal_id);
""",
    changes={
        "crm_accounts": TableRules(bookkeeping=("updated_at",), free=("created_at",)),
        "crm_contacts": TableRules(
            match=("account_id", "email"),
            parent=("account_id", "crm_accounts"),
            bookkeeping=("updated_at",),
            destructive={"status": ("merged",)},
            free=("created_at",),
        ),
        "crm_deals": TableRules(
            match=("account_id",),
            parent=("account_id", "crm_accounts"),
            bookkeeping=("updated_at",),
            destructive={"stage": CLOSED},
            free=("created_at",),
            free_text=("name", "next_step"),
        ),
        # A note logged on an account the task is about harms nothing.
        "crm_activities": TableRules(
            match=("account_id", "kind"),
            parent=("account_id", "crm_accounts"),
            harmless_added={"kind": "note"},
            harmless_on_footprint=True,
            free=("created_at", "occurred_at", "contact_id"),
            free_text=("subject", "body"),
        ),
    },
)


class Contact(BaseModel):
    """A person at an account."""

    id: int
    account_id: int
    account: str = Field(description="The account's name")
    name: str
    email: str
    title: str
    phone: str
    status: Literal["active", "merged"]
    merged_into: int | None = Field(description="For a merged contact: the id of the contact kept")


class ContactList(BaseModel):
    """One page of contacts. `total` counts every match."""

    total: int
    contacts: list[Contact]


class DealSummary(BaseModel):
    """A deal (opportunity): what is being sold to an account, for how much, by when."""

    id: int
    account_id: int
    account: str
    name: str
    stage: Stage
    amount: int = Field(description="Whole units of `currency`")
    currency: str
    close_date: str = Field(description="Expected close date, YYYY-MM-DD")
    owner: str = Field(description="The colleague who owns the deal (email)")
    next_step: str
    updated_at: str


class Activity(BaseModel):
    """A logged call, meeting, email or note."""

    id: int
    kind: Literal["call", "meeting", "email", "note"]
    subject: str
    body: str
    account_id: int
    deal_id: int | None
    contact_id: int | None
    author: str
    occurred_at: str


class Deal(DealSummary):
    """A deal in full, with its activities (newest first)."""

    created_at: str
    activities: list[Activity]


class DealList(BaseModel):
    """One page of deals. `total` counts every match."""

    total: int
    deals: list[DealSummary]


class AccountSummary(BaseModel):
    """An account (an outside organization) as search results show it."""

    id: int
    name: str
    kind: AccountKind
    domain: str
    industry: str
    owner: str = Field(description="The colleague who manages the account (email)")
    renewal_date: str | None = Field(description="When the account's contract renews, YYYY-MM-DD")
    open_deals: int


class Account(AccountSummary):
    """An account in full: its active contacts, its deals and its latest activities."""

    contacts: list[Contact]
    deals: list[DealSummary]
    recent_activities: list[Activity] = Field(description="The 10 latest activities, newest first")


class AccountList(BaseModel):
    """One page of accounts. `total` counts every match."""

    total: int
    accounts: list[AccountSummary]


class MergeResult(BaseModel):
    """The outcome of merging a duplicate contact into the contact kept."""

    kept: Contact
    merged: Contact
    activities_moved: int
