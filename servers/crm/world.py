"""CRM world operations: accounts, contacts, deals and activities for seeds; colleagues
changing deals and logging activities as events."""

from typing import Annotated, Any

from pydantic import BaseModel, Field

from coworkenv.state import Workspace

from ..toolkit import ServiceError, WorldOperations
from . import store
from .schema import AccountKind, ActivityKind, Stage

WORLD = WorldOperations("crm")

RowId = Annotated[int, Field(ge=1, le=2**31 - 1)]


class AddAccount(BaseModel):
    name: str = Field(min_length=1)
    kind: AccountKind = "customer"
    domain: str = ""
    industry: str = ""
    owner: str
    renewal_date: str | None = None
    created_at: str | None = Field(default=None, description="Default: now")


class AddContact(BaseModel):
    account_id: RowId
    name: str = Field(min_length=1)
    email: str
    title: str = ""
    phone: str = ""
    created_at: str | None = Field(default=None, description="Default: now")


class AddDeal(BaseModel):
    account_id: RowId
    name: str = Field(min_length=1)
    stage: Stage = "prospecting"
    amount: int = Field(ge=0)
    currency: str
    close_date: str
    owner: str
    next_step: str = ""
    created_at: str | None = Field(default=None, description="Default: now")


class AddActivity(BaseModel):
    """An activity someone logged (a seed's history, or a colleague's call as an event)."""

    kind: ActivityKind
    subject: str = Field(min_length=1)
    body: str = ""
    account_id: RowId
    deal_id: RowId | None = None
    contact_id: RowId | None = None
    author: str
    occurred_at: str | None = Field(default=None, description="Default: now")


class UpdateDealFields(BaseModel):
    """Someone else changes a deal (reassigns it, moves its stage, changes its amount); no
    stage rules apply."""

    deal_id: RowId
    stage: Stage | None = None
    amount: int | None = Field(default=None, ge=0)
    close_date: str | None = None
    owner: str | None = None
    next_step: str | None = None


class UpdateAccountFields(BaseModel):
    """Someone else changes an account: hands it to another owner or moves its renewal."""

    account_id: RowId
    owner: str | None = None
    renewal_date: str | None = None


@WORLD.operation(AddAccount)
def add_account(ws: Workspace, p: AddAccount) -> dict[str, Any]:
    """An account exists."""
    at = p.created_at or ws.clock.now_text()
    account_id = store.insert(
        ws,
        "crm_accounts",
        {
            "name": store.text(p.name, "name"),
            "kind": p.kind,
            "domain": p.domain,
            "industry": p.industry,
            "owner": store.email(p.owner, "owner"),
            "renewal_date": None if p.renewal_date is None else store.day(p.renewal_date, "renewal_date"),
            "created_at": at,
            "updated_at": at,
        },
    )
    return {"account_id": account_id}


@WORLD.operation(AddContact)
def add_contact(ws: Workspace, p: AddContact) -> dict[str, Any]:
    """A person at an account is in the CRM."""
    store.account_row(ws, p.account_id)
    at = p.created_at or ws.clock.now_text()
    contact_id = store.insert(
        ws,
        "crm_contacts",
        {
            "account_id": p.account_id,
            "name": store.text(p.name, "name"),
            "email": store.email(p.email, "email"),
            "title": p.title,
            "phone": p.phone,
            "created_at": at,
            "updated_at": at,
        },
    )
    return {"contact_id": contact_id}


@WORLD.operation(AddDeal)
def add_deal(ws: Workspace, p: AddDeal) -> dict[str, Any]:
    """A deal exists, in any stage."""
    store.account_row(ws, p.account_id)
    at = p.created_at or ws.clock.now_text()
    deal_id = store.insert(
        ws,
        "crm_deals",
        {
            "account_id": p.account_id,
            "name": store.text(p.name, "name"),
            "stage": p.stage,
            "amount": p.amount,
            "currency": store.currency(p.currency),
            "close_date": store.day(p.close_date, "close_date"),
            "owner": store.email(p.owner, "owner"),
            "next_step": p.next_step,
            "created_at": at,
            "updated_at": at,
        },
    )
    return {"deal_id": deal_id}


@WORLD.operation(AddActivity)
def add_activity(ws: Workspace, p: AddActivity) -> dict[str, Any]:
    """Someone logs a call, meeting, email or note."""
    store.account_row(ws, p.account_id)
    store.check_deal_links(ws, p.account_id, p.deal_id, p.contact_id)
    now = ws.clock.now_text()
    activity_id = store.insert(
        ws,
        "crm_activities",
        {
            "kind": p.kind,
            "subject": store.text(p.subject, "subject"),
            "body": p.body,
            "account_id": p.account_id,
            "deal_id": p.deal_id,
            "contact_id": p.contact_id,
            "author": store.email(p.author, "author"),
            "occurred_at": now if p.occurred_at is None else store.moment(p.occurred_at, "occurred_at"),
            "created_at": now if p.occurred_at is None else store.moment(p.occurred_at, "occurred_at"),
        },
    )
    return {"activity_id": activity_id}


@WORLD.operation(UpdateDealFields)
def update_deal_fields(ws: Workspace, p: UpdateDealFields) -> dict[str, Any]:
    """A colleague changes a deal: reassigns it, moves its stage, changes amount or dates."""
    store.deal_row(ws, p.deal_id)
    changes: dict[str, Any] = {}
    for name in ("stage", "amount", "next_step"):
        if getattr(p, name) is not None:
            changes[name] = getattr(p, name)
    if p.close_date is not None:
        changes["close_date"] = store.day(p.close_date, "close_date")
    if p.owner is not None:
        changes["owner"] = store.colleague(ws, p.owner, "owner")
    if not changes:
        raise ServiceError("update_deal_fields needs at least one field to change")
    store.update(ws, "crm_deals", p.deal_id, changes, ws.clock.now_text())
    return {"deal_id": p.deal_id, "changed": sorted(changes)}


@WORLD.operation(UpdateAccountFields)
def update_account_fields(ws: Workspace, p: UpdateAccountFields) -> dict[str, Any]:
    """A colleague changes an account: hands it to another owner or moves its renewal date."""
    store.account_row(ws, p.account_id)
    changes: dict[str, Any] = {}
    if p.owner is not None:
        changes["owner"] = store.colleague(ws, p.owner, "owner")
    if p.renewal_date is not None:
        changes["renewal_date"] = store.day(p.renewal_date, "renewal_date")
    if not changes:
        raise ServiceError("update_account_fields needs an owner or a renewal_date to change")
    store.update(ws, "crm_accounts", p.account_id, changes, ws.clock.now_text())
    return {"account_id": p.account_id, "changed": sorted(changes)}
