"""CRM tools that write: contacts, deals, account fields, activities, merging duplicates."""

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ServiceError, ToolList, current_user, workspace_of
from . import store
from .schema import Account, Activity, ActivityKind, Contact, Deal, MergeResult, Stage
from .tools_read import AccountId, ContactId, DealId

TOOLS = ToolList()

Amount = Annotated[int, Field(ge=0, le=10**12, description="Whole units of the deal's currency")]


@TOOLS.tool(read_only=False)
async def update_account(
    ctx: Context,
    account_id: AccountId,
    owner: Annotated[str | None, Field(description="New owner: a colleague's email")] = None,
    renewal_date: Annotated[str | None, Field(description="New renewal date, YYYY-MM-DD")] = None,
) -> Account:
    """Change an account's owner or renewal date; only the fields you give change."""
    ws = workspace_of(ctx)
    store.account_row(ws, account_id)
    changes: dict[str, Any] = {}
    if owner is not None:
        changes["owner"] = store.colleague(ws, owner, "owner")
    if renewal_date is not None:
        changes["renewal_date"] = store.day(renewal_date, "renewal_date")
    if not changes:
        raise ServiceError("nothing to change: give owner or renewal_date")
    store.update(ws, "crm_accounts", account_id, changes, ws.clock.now_text())
    return store.load_account(ws, account_id)


@TOOLS.tool(read_only=False)
async def create_contact(
    ctx: Context,
    account_id: AccountId,
    name: Annotated[str, Field(min_length=1, max_length=200)],
    email: Annotated[str, Field(min_length=3, max_length=200)],
    title: Annotated[str, Field(max_length=200)] = "",
    phone: Annotated[str, Field(max_length=50)] = "",
) -> Contact:
    """Add a person to an account's contacts. Search first (search_contacts): an address
    already listed at the account is refused, so duplicates are not made."""
    ws = workspace_of(ctx)
    store.account_row(ws, account_id)
    address = store.email(email, "email")
    same = ws.rows(
        "crm_contacts", "account_id = ? AND lower(email) = ? AND status = 'active'", [account_id, address]
    )
    if same:
        raise ServiceError(
            f"contact {same[0]['id']} at this account already has email {address}; update it with update_contact"
        )
    now = ws.clock.now_text()
    contact_id = store.insert(
        ws,
        "crm_contacts",
        {
            "account_id": account_id,
            "name": store.text(name, "name"),
            "email": address,
            "title": title.strip(),
            "phone": phone.strip(),
            "created_at": now,
            "updated_at": now,
        },
    )
    return store.load_contact(ws, contact_id)


@TOOLS.tool(read_only=False)
async def update_contact(
    ctx: Context,
    contact_id: ContactId,
    name: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
    email: Annotated[str | None, Field(min_length=3, max_length=200)] = None,
    title: Annotated[str | None, Field(max_length=200)] = None,
    phone: Annotated[str | None, Field(max_length=50)] = None,
) -> Contact:
    """Change a contact's name, email, title or phone; only the fields you give change.
    Merged contacts cannot change: update the contact they were merged into."""
    ws = workspace_of(ctx)
    store.check_active(store.contact_row(ws, contact_id))
    changes: dict[str, Any] = {}
    if name is not None:
        changes["name"] = store.text(name, "name")
    if email is not None:
        changes["email"] = store.email(email, "email")
    if title is not None:
        changes["title"] = title.strip()
    if phone is not None:
        changes["phone"] = phone.strip()
    if not changes:
        raise ServiceError("nothing to change: give name, email, title or phone")
    store.update(ws, "crm_contacts", contact_id, changes, ws.clock.now_text())
    return store.load_contact(ws, contact_id)


@TOOLS.tool(read_only=False, destructive=True)
async def merge_contacts(
    ctx: Context,
    keep_contact_id: Annotated[ContactId, Field(description="The contact to keep")],
    duplicate_contact_id: Annotated[ContactId, Field(description="The duplicate to merge into the one kept")],
) -> MergeResult:
    """Merge a duplicate contact into another contact of the same account without losing
    history: the duplicate's activities move to the contact kept, the kept contact takes
    the duplicate's phone and title where it has none, and the duplicate is marked merged
    (it stays readable with search_contacts include_merged)."""
    ws = workspace_of(ctx)
    moved = store.merge_contacts(ws, keep_contact_id, duplicate_contact_id, ws.clock.now_text())
    return MergeResult(
        kept=store.load_contact(ws, keep_contact_id),
        merged=store.load_contact(ws, duplicate_contact_id),
        activities_moved=moved,
    )


@TOOLS.tool(read_only=False)
async def create_deal(
    ctx: Context,
    account_id: AccountId,
    name: Annotated[str, Field(min_length=1, max_length=200)],
    amount: Amount,
    close_date: Annotated[str, Field(description="Expected close date, YYYY-MM-DD")],
    stage: Stage = "prospecting",
    currency: Annotated[
        str | None, Field(description="Three-letter code; default: the account's other deals', else EUR")
    ] = None,
    owner: Annotated[str | None, Field(description="A colleague's email; default: you")] = None,
    next_step: Annotated[str, Field(max_length=500)] = "",
) -> Deal:
    """Open a new deal (opportunity) on an account. Returns the deal with its new id."""
    ws = workspace_of(ctx)
    store.account_row(ws, account_id)
    if currency is None:
        row = ws.conn.execute(
            "SELECT currency FROM crm_deals WHERE account_id = ? ORDER BY id LIMIT 1", (account_id,)
        ).fetchone()
        currency = row[0] if row else "EUR"
    now = ws.clock.now_text()
    deal_id = store.insert(
        ws,
        "crm_deals",
        {
            "account_id": account_id,
            "name": store.text(name, "name"),
            "stage": stage,
            "amount": amount,
            "currency": store.currency(currency),
            "close_date": store.day(close_date, "close_date"),
            "owner": store.colleague(ws, owner or current_user(ws), "owner"),
            "next_step": next_step.strip(),
            "created_at": now,
            "updated_at": now,
        },
    )
    return store.load_deal(ws, deal_id)


@TOOLS.tool(read_only=False)
async def update_deal(
    ctx: Context,
    deal_id: DealId,
    stage: Annotated[Stage | None, Field(description="Move the deal to this stage")] = None,
    amount: Amount | None = None,
    close_date: Annotated[str | None, Field(description="New expected close date, YYYY-MM-DD")] = None,
    owner: Annotated[str | None, Field(description="New owner: a colleague's email")] = None,
    next_step: Annotated[str | None, Field(max_length=500)] = None,
    name: Annotated[str | None, Field(min_length=1, max_length=200)] = None,
) -> Deal:
    """Change a deal: move its stage (prospecting, qualification, proposal, negotiation,
    closed_won, closed_lost), amount, close date, owner, next step or name; only the fields
    you give change. Closed deals (closed_won, closed_lost) are final and cannot change."""
    ws = workspace_of(ctx)
    store.check_open(store.deal_row(ws, deal_id))
    changes: dict[str, Any] = {}
    if stage is not None:
        changes["stage"] = store.check_stage(stage)
    if amount is not None:
        changes["amount"] = amount
    if close_date is not None:
        changes["close_date"] = store.day(close_date, "close_date")
    if owner is not None:
        changes["owner"] = store.colleague(ws, owner, "owner")
    if next_step is not None:
        changes["next_step"] = next_step.strip()
    if name is not None:
        changes["name"] = store.text(name, "name")
    if not changes:
        raise ServiceError("nothing to change: give stage, amount, close_date, owner, next_step or name")
    store.update(ws, "crm_deals", deal_id, changes, ws.clock.now_text())
    return store.load_deal(ws, deal_id)


@TOOLS.tool(read_only=False)
async def log_activity(
    ctx: Context,
    kind: Annotated[ActivityKind, Field(description="call, meeting, email or note")],
    subject: Annotated[str, Field(min_length=1, max_length=200)],
    body: Annotated[str, Field(max_length=20_000, description="What was said or agreed")] = "",
    account_id: Annotated[
        int | None,
        Field(ge=1, le=2**31 - 1, description="The account; may be left out when deal_id is given"),
    ] = None,
    deal_id: Annotated[
        int | None, Field(ge=1, le=2**31 - 1, description="The deal it concerns, if any")
    ] = None,
    contact_id: Annotated[
        int | None, Field(ge=1, le=2**31 - 1, description="The contact spoken to, if any")
    ] = None,
    occurred_at: Annotated[str | None, Field(description="When it happened, ISO 8601; default: now")] = None,
) -> Activity:
    """Log a call, meeting, email or note on an account (and a deal and contact of it), as
    the user you work for. Give the account, or a deal and it is logged on the deal's account."""
    ws = workspace_of(ctx)
    if account_id is None:
        if deal_id is None:
            raise ServiceError("give account_id or deal_id: an activity belongs to an account")
        account_id = store.deal_row(ws, deal_id)["account_id"]
    store.account_row(ws, account_id)
    store.check_deal_links(ws, account_id, deal_id, contact_id)
    now = ws.clock.now_text()
    when = now if occurred_at is None else store.moment(occurred_at, "occurred_at")
    activity_id = store.insert(
        ws,
        "crm_activities",
        {
            "kind": kind,
            "subject": store.text(subject, "subject"),
            "body": body.strip(),
            "account_id": account_id,
            "deal_id": deal_id,
            "contact_id": contact_id,
            "author": current_user(ws),
            "occurred_at": when,
            "created_at": now,
        },
    )
    return store.activity_from_row(ws.rows("crm_activities", "id = ?", [activity_id])[0])
