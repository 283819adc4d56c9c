"""Reading and writing CRM rows, shared by the tools and the world operations. Broken rules
raise `ServiceError` with a message that says what to do instead."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from coworkenv.state import Workspace, format_time, parse_time

from ..toolkit import ServiceError
from .schema import CLOSED, STAGES, Account, AccountSummary, Activity, Contact, Deal, DealSummary

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")

#: Columns updates may set (column names are never taken from input).
ACCOUNT_FIELDS = ("owner", "renewal_date", "kind")
CONTACT_FIELDS = ("name", "email", "title", "phone", "account_id")
DEAL_FIELDS = ("name", "stage", "amount", "currency", "close_date", "owner", "next_step")


def text(value: str, field: str) -> str:
    stripped = value.strip()
    if not stripped:
        raise ServiceError(f"{field} must not be blank")
    return stripped


def email(value: str, field: str) -> str:
    normalized = value.strip().lower()
    if not _EMAIL.match(normalized):
        raise ServiceError(f"{field} {value!r} is not an email address (like name@example.com)")
    return normalized


def day(value: str, field: str) -> str:
    """A date as YYYY-MM-DD (a time after it is dropped)."""
    try:
        return date.fromisoformat(value.strip()[:10]).isoformat()
    except ValueError:
        raise ServiceError(f"{field} {value!r} is not a date; use YYYY-MM-DD, e.g. 2026-03-31") from None


def moment(value: str, field: str) -> str:
    """A time in its canonical text (a date alone means 00:00 UTC that day)."""
    try:
        return format_time(parse_time(value.strip()))
    except ValueError:
        raise ServiceError(
            f"{field} {value!r} is not a time; use ISO 8601, e.g. 2026-03-02T14:30:00Z"
        ) from None


def currency(value: str) -> str:
    code = value.strip().upper()
    if not _CURRENCY.match(code):
        raise ServiceError(f"currency {value!r} is not a three-letter code such as EUR or USD")
    return code


def colleague(ws: Workspace, value: str, field: str) -> str:
    """A colleague's email; checked against the directory when the workspace has one."""
    address = email(value, field)
    has_directory = ws.conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'directory_people'"
    ).fetchone()
    if has_directory is None:
        return address
    row = ws.conn.execute(
        "SELECT internal FROM directory_people WHERE lower(email) = ?", (address,)
    ).fetchone()
    if row is None or not row[0]:
        raise ServiceError(
            f"{field} {address!r} is not a colleague in the directory; find the right address with "
            "the directory's search_people"
        )
    return address


def account_row(ws: Workspace, account_id: int) -> dict[str, Any]:
    rows = ws.rows("crm_accounts", "id = ?", [account_id])
    if not rows:
        raise ServiceError(f"no account with id {account_id}; search_accounts returns valid ids")
    return rows[0]


def contact_row(ws: Workspace, contact_id: int) -> dict[str, Any]:
    rows = ws.rows("crm_contacts", "id = ?", [contact_id])
    if not rows:
        raise ServiceError(f"no contact with id {contact_id}; search_contacts returns valid ids")
    return rows[0]


def deal_row(ws: Workspace, deal_id: int) -> dict[str, Any]:
    rows = ws.rows("crm_deals", "id = ?", [deal_id])
    if not rows:
        raise ServiceError(f"no deal with id {deal_id}; search_deals returns valid ids")
    return rows[0]


def check_open(row: dict[str, Any]) -> None:
    if row["stage"] in CLOSED:
        raise ServiceError(
            f"deal {row['id']} is {row['stage']} and cannot change; create a new deal for new business "
            "(create_deal) and log activities on the account"
        )


def check_active(row: dict[str, Any]) -> None:
    if row["status"] == "merged":
        raise ServiceError(
            f"contact {row['id']} was merged into contact {row['merged_into']}; use contact {row['merged_into']}"
        )


# ---------------------------------------------------------------- loading


def _account_names(ws: Workspace, ids: set[int]) -> dict[int, str]:
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    return dict(ws.conn.execute(f"SELECT id, name FROM crm_accounts WHERE id IN ({marks})", sorted(ids)))


def contacts_from_rows(ws: Workspace, rows: list[dict[str, Any]]) -> list[Contact]:
    names = _account_names(ws, {r["account_id"] for r in rows})
    return [
        Contact(**{k: r[k] for k in Contact.model_fields if k in r}, account=names[r["account_id"]])
        for r in rows
    ]


def deals_from_rows(ws: Workspace, rows: list[dict[str, Any]]) -> list[DealSummary]:
    names = _account_names(ws, {r["account_id"] for r in rows})
    return [
        DealSummary(**{k: r[k] for k in DealSummary.model_fields if k in r}, account=names[r["account_id"]])
        for r in rows
    ]


def activity_from_row(row: dict[str, Any]) -> Activity:
    return Activity(**{k: row[k] for k in Activity.model_fields})


def load_contact(ws: Workspace, contact_id: int) -> Contact:
    return contacts_from_rows(ws, [contact_row(ws, contact_id)])[0]


def load_deal(ws: Workspace, deal_id: int) -> Deal:
    row = deal_row(ws, deal_id)
    activities = ws.rows("crm_activities", "deal_id = ? ORDER BY occurred_at DESC, id DESC", [deal_id])
    summary = deals_from_rows(ws, [row])[0]
    return Deal(
        **summary.model_dump(),
        created_at=row["created_at"],
        activities=[activity_from_row(a) for a in activities],
    )


def summaries_from_rows(ws: Workspace, rows: list[dict[str, Any]]) -> list[AccountSummary]:
    ids = [r["id"] for r in rows]
    open_counts: dict[int, int] = {}
    if ids:
        marks = ", ".join("?" * len(ids))
        open_counts = dict(
            ws.conn.execute(
                f"SELECT account_id, COUNT(*) FROM crm_deals WHERE account_id IN ({marks}) "
                "AND stage NOT IN ('closed_won', 'closed_lost') GROUP BY account_id",
                ids,
            )
        )
    return [
        AccountSummary(
            **{k: r[k] for k in AccountSummary.model_fields if k in r}, open_deals=open_counts.get(r["id"], 0)
        )
        for r in rows
    ]


def load_account(ws: Workspace, account_id: int) -> Account:
    row = account_row(ws, account_id)
    summary = summaries_from_rows(ws, [row])[0]
    contacts = ws.rows("crm_contacts", "account_id = ? AND status = 'active' ORDER BY name, id", [account_id])
    deals = ws.rows("crm_deals", "account_id = ? ORDER BY close_date, id", [account_id])
    activities = ws.rows(
        "crm_activities", "account_id = ? ORDER BY occurred_at DESC, id DESC LIMIT 10", [account_id]
    )
    return Account(
        **summary.model_dump(),
        contacts=contacts_from_rows(ws, contacts),
        deals=deals_from_rows(ws, deals),
        recent_activities=[activity_from_row(a) for a in activities],
    )


# ---------------------------------------------------------------- writing


def insert(ws: Workspace, table: str, fields: dict[str, Any]) -> int:
    names = ", ".join(fields)
    cur = ws.conn.execute(
        f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(fields))})", tuple(fields.values())
    )
    return int(cur.lastrowid or 0)


def update(ws: Workspace, table: str, row_id: int, changes: dict[str, Any], now: str) -> None:
    if not changes:
        return
    sets = ", ".join(f"{k} = ?" for k in changes)
    ws.conn.execute(
        f"UPDATE {table} SET {sets}, updated_at = ? WHERE id = ?", (*changes.values(), now, row_id)
    )


def check_stage(value: str) -> str:
    if value not in STAGES:
        raise ServiceError(f"stage {value!r} is not one of: {', '.join(STAGES)}")
    return value


def check_deal_links(ws: Workspace, account_id: int, deal_id: int | None, contact_id: int | None) -> None:
    """An activity's deal and contact must belong to its account."""
    if deal_id is not None:
        deal = deal_row(ws, deal_id)
        if deal["account_id"] != account_id:
            raise ServiceError(
                f"deal {deal_id} belongs to account {deal['account_id']}, not {account_id}; "
                "leave account_id out to log on the deal's account"
            )
    if contact_id is not None:
        contact = contact_row(ws, contact_id)
        check_active(contact)
        if contact["account_id"] != account_id:
            raise ServiceError(
                f"contact {contact_id} belongs to account {contact['account_id']}, not {account_id}"
            )


def merge_contacts(ws: Workspace, keep_id: int, duplicate_id: int, now: str) -> int:
    """Merge `duplicate_id` into `keep_id`: its activities move to the contact kept, the
    kept contact takes the duplicate's phone and title where it has none, and the
    duplicate is marked merged. Returns how many activities moved."""
    if keep_id == duplicate_id:
        raise ServiceError("a contact cannot be merged into itself; give two different contact ids")
    keep, duplicate = contact_row(ws, keep_id), contact_row(ws, duplicate_id)
    check_active(keep)
    check_active(duplicate)
    if keep["account_id"] != duplicate["account_id"]:
        raise ServiceError(
            f"contacts {keep_id} and {duplicate_id} belong to different accounts; only duplicates "
            "at the same account can be merged (move one with update_contact first if that is right)"
        )
    moved = ws.conn.execute(
        "UPDATE crm_activities SET contact_id = ? WHERE contact_id = ?", (keep_id, duplicate_id)
    ).rowcount
    fills = {k: duplicate[k] for k in ("phone", "title") if not keep[k] and duplicate[k]}
    update(ws, "crm_contacts", keep_id, fills, now)
    update(ws, "crm_contacts", duplicate_id, {"status": "merged", "merged_into": keep_id}, now)
    return int(moved)
