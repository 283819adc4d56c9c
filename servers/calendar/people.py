"""People on calendars: email addresses, whether the directory knows them, their time zones."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

from coworkenv.state import Workspace

from ..toolkit import ServiceError, current_user
from .times import zone

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def me(ws: Workspace) -> str:
    """The user the agent acts for, as a normalized email."""
    return current_user(ws).strip().lower()


def normalize_email(email: str) -> str:
    """Emails are compared in lower case, without surrounding space; a malformed one is an error."""
    value = email.strip().lower()
    if not _EMAIL.match(value):
        raise ServiceError(f"{email!r} is not an email address; use the form name@company.example")
    return value


def known_person(ws: Workspace, email: str) -> str:
    """A normalized email that the directory knows (any address is accepted without a directory,
    and the user always)."""
    value = normalize_email(email)
    if "directory" in ws.services and value != me(ws):
        found = ws.conn.execute("SELECT 1 FROM directory_people WHERE lower(email) = ?", (value,)).fetchone()
        if found is None:
            raise ServiceError(
                f"no person with email {email!r} in the directory; use the directory's search_people "
                "to find the right address"
            )
    return value


def unique_people(ws: Workspace, emails: list[str]) -> list[str]:
    """Known, normalized emails in the order given, without repeats."""
    result: list[str] = []
    for email in emails:
        value = known_person(ws, email)
        if value not in result:
            result.append(value)
    return result


def person_zone(ws: Workspace, email: str) -> ZoneInfo:
    """A person's time zone from the directory; UTC when unknown or without a directory."""
    if "directory" in ws.services:
        row = ws.conn.execute(
            "SELECT time_zone FROM directory_people WHERE lower(email) = ?", (email,)
        ).fetchone()
        if row is not None:
            return zone(row[0])
    return zone("UTC")


def request_zone(ws: Workspace, time_zone: str | None) -> ZoneInfo:
    """The zone named in a request, or else the user's own."""
    return zone(time_zone) if time_zone is not None else person_zone(ws, me(ws))


def has_calendar(ws: Workspace, email: str) -> bool:
    """Whether `email` is someone the workspace knows: in the directory or on any event."""
    if "directory" in ws.services:
        found = ws.conn.execute("SELECT 1 FROM directory_people WHERE lower(email) = ?", (email,)).fetchone()
        if found is not None:
            return True
    found = ws.conn.execute(
        "SELECT 1 FROM calendar_events WHERE calendar_email = ? OR organizer_email = ? "
        "UNION SELECT 1 FROM calendar_attendees WHERE email = ?",
        (email, email, email),
    ).fetchone()
    return found is not None
