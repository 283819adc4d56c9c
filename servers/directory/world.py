"""Directory world operations: add teams and people (seeds), change a person (events)."""

from typing import Any

from pydantic import BaseModel

from coworkenv.state import Workspace

from ..toolkit import ServiceError, WorldOperations

WORLD = WorldOperations("directory")


class AddTeam(BaseModel):
    name: str
    description: str = ""
    lead_email: str | None = None


class AddPerson(BaseModel):
    email: str
    name: str
    title: str = ""
    team: str | None = None
    manager_email: str | None = None
    time_zone: str = "UTC"
    internal: bool = True
    company: str = ""
    phone: str = ""


class UpdatePerson(BaseModel):
    email: str
    title: str | None = None
    team: str | None = None
    manager_email: str | None = None
    time_zone: str | None = None


@WORLD.operation(AddTeam)
def add_team(ws: Workspace, p: AddTeam) -> dict[str, Any]:
    """A team is created."""
    ws.conn.execute(
        "INSERT INTO directory_teams (name, description, lead_email) VALUES (?, ?, ?)",
        (p.name, p.description, p.lead_email),
    )
    return {"name": p.name}


@WORLD.operation(AddPerson)
def add_person(ws: Workspace, p: AddPerson) -> dict[str, Any]:
    """A person joins the directory."""
    row = {**p.model_dump(), "internal": int(p.internal)}
    names = ", ".join(row)
    ws.conn.execute(
        f"INSERT INTO directory_people ({names}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
    )
    return {"email": p.email}


@WORLD.operation(UpdatePerson)
def update_person(ws: Workspace, p: UpdatePerson) -> dict[str, Any]:
    """A person's title, team, manager or time zone changes."""
    changes = p.model_dump(exclude={"email"}, exclude_none=True)
    if not changes:
        raise ServiceError("update_person needs at least one field to change")
    sets = ", ".join(f"{k} = ?" for k in changes)
    cur = ws.conn.execute(f"UPDATE directory_people SET {sets} WHERE email = ?", (*changes.values(), p.email))
    if cur.rowcount == 0:
        raise ServiceError(f"no person with email {p.email!r}")
    return {"email": p.email, "changed": sorted(changes)}
