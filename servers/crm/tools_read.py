"""CRM tools that read: accounts, contacts and deals."""

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ToolList, workspace_of
from . import store
from .schema import Account, AccountKind, AccountList, ContactList, Deal, DealList, Stage

TOOLS = ToolList()

#: The largest offset accepted: the schema refuses what SQLite could not hold.
MAX_OFFSET = 1_000_000

AccountId = Annotated[
    int, Field(ge=1, le=2**31 - 1, description="The account's id, as search_accounts shows it")
]
DealId = Annotated[int, Field(ge=1, le=2**31 - 1, description="The deal's id, as search_deals shows it")]
ContactId = Annotated[
    int, Field(ge=1, le=2**31 - 1, description="The contact's id, as search_contacts shows it")
]
Limit = Annotated[int, Field(ge=1, le=100)]
Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET)]
Day = Annotated[str, Field(description="A date, YYYY-MM-DD")]


def _words(query: str, columns: tuple[str, ...]) -> tuple[list[str], list[str]]:
    where, params = [], []
    for word in query.split():
        where.append("(" + " OR ".join(f"{c} LIKE ?" for c in columns) + ")")
        params += [f"%{word}%"] * len(columns)
    return where, params


@TOOLS.tool(read_only=True)
async def search_accounts(
    ctx: Context,
    query: Annotated[str, Field(description="Words matched against name, domain and industry")] = "",
    kind: Annotated[AccountKind | None, Field(description="Only accounts of this kind")] = None,
    owner: Annotated[str | None, Field(description="Only accounts this colleague owns (email)")] = None,
    renewal_from: Annotated[
        str | None, Field(description="Only renewals on or after this date, YYYY-MM-DD")
    ] = None,
    renewal_to: Annotated[
        str | None, Field(description="Only renewals on or before this date, YYYY-MM-DD")
    ] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> AccountList:
    """Search the CRM's accounts (the customer, prospect, partner and vendor organizations).

    Every word of `query` must match. Filter by owner or by renewal date to find, say, the
    accounts renewing this month. Sorted by name; `total` counts every match. Use
    get_account for an account's contacts, deals and latest activities."""
    ws = workspace_of(ctx)
    where, params = _words(query, ("name", "domain", "industry"))
    if kind is not None:
        where.append("kind = ?")
        params.append(kind)
    if owner is not None:
        where.append("lower(owner) = lower(?)")
        params.append(owner.strip())
    if renewal_from is not None:
        where.append("renewal_date >= ?")
        params.append(store.day(renewal_from, "renewal_from"))
    if renewal_to is not None:
        where.append("renewal_date <= ?")
        params.append(store.day(renewal_to, "renewal_to"))
    clause = " AND ".join(where) or "1"
    total = ws.conn.execute(f"SELECT COUNT(*) FROM crm_accounts WHERE {clause}", params).fetchone()[0]
    rows = ws.rows("crm_accounts", f"{clause} ORDER BY name, id LIMIT ? OFFSET ?", [*params, limit, offset])
    return AccountList(total=total, accounts=store.summaries_from_rows(ws, rows))


@TOOLS.tool(read_only=True)
async def get_account(ctx: Context, account_id: AccountId) -> Account:
    """Get one account in full: owner, renewal date, its active contacts, all its deals and
    its 10 latest activities (calls, meetings, emails, notes)."""
    return store.load_account(workspace_of(ctx), account_id)


@TOOLS.tool(read_only=True)
async def search_contacts(
    ctx: Context,
    query: Annotated[str, Field(description="Words matched against name, email and title")] = "",
    account_id: Annotated[
        int | None, Field(ge=1, le=2**31 - 1, description="Only this account's contacts")
    ] = None,
    include_merged: Annotated[bool, Field(description="Also list contacts merged into another")] = False,
    limit: Limit = 20,
    offset: Offset = 0,
) -> ContactList:
    """Search the contacts (people at accounts) by name, email or title. Every word of
    `query` must match. Merged duplicates are left out unless `include_merged`. Sorted by
    name; `total` counts every match."""
    ws = workspace_of(ctx)
    where, params = _words(query, ("name", "email", "title"))
    if account_id is not None:
        where.append("account_id = ?")
        params.append(str(account_id))
    if not include_merged:
        where.append("status = 'active'")
    clause = " AND ".join(where) or "1"
    total = ws.conn.execute(f"SELECT COUNT(*) FROM crm_contacts WHERE {clause}", params).fetchone()[0]
    rows = ws.rows("crm_contacts", f"{clause} ORDER BY name, id LIMIT ? OFFSET ?", [*params, limit, offset])
    return ContactList(total=total, contacts=store.contacts_from_rows(ws, rows))


@TOOLS.tool(read_only=True)
async def search_deals(
    ctx: Context,
    query: Annotated[str, Field(description="Words matched against the deal's name and next step")] = "",
    account_id: Annotated[
        int | None, Field(ge=1, le=2**31 - 1, description="Only this account's deals")
    ] = None,
    stage: Annotated[Stage | None, Field(description="Only deals in this stage")] = None,
    owner: Annotated[str | None, Field(description="Only deals this colleague owns (email)")] = None,
    open_only: Annotated[bool, Field(description="Leave out closed_won and closed_lost deals")] = False,
    closing_before: Annotated[
        str | None, Field(description="Only deals expected to close on or before, YYYY-MM-DD")
    ] = None,
    limit: Limit = 20,
    offset: Offset = 0,
) -> DealList:
    """Search deals (opportunities) by name, account, stage, owner or expected close date.
    Sorted by close date; `total` counts every match. Use get_deal for a deal's activities."""
    ws = workspace_of(ctx)
    where, params = _words(query, ("name", "next_step"))
    if account_id is not None:
        where.append("account_id = ?")
        params.append(str(account_id))
    if stage is not None:
        where.append("stage = ?")
        params.append(stage)
    if owner is not None:
        where.append("lower(owner) = lower(?)")
        params.append(owner.strip())
    if open_only:
        where.append("stage NOT IN ('closed_won', 'closed_lost')")
    if closing_before is not None:
        where.append("close_date <= ?")
        params.append(store.day(closing_before, "closing_before"))
    clause = " AND ".join(where) or "1"
    total = ws.conn.execute(f"SELECT COUNT(*) FROM crm_deals WHERE {clause}", params).fetchone()[0]
    rows = ws.rows(
        "crm_deals", f"{clause} ORDER BY close_date, id LIMIT ? OFFSET ?", [*params, limit, offset]
    )
    return DealList(total=total, deals=store.deals_from_rows(ws, rows))


@TOOLS.tool(read_only=True)
async def get_deal(ctx: Context, deal_id: DealId) -> Deal:
    """Get one deal in full with every activity logged on it, newest first."""
    return store.load_deal(workspace_of(ctx), deal_id)


__all__ = ["TOOLS", "AccountId", "ContactId", "Day", "DealId"]
