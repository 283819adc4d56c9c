"""The directory's people and teams: the queries its tools read them with.

A name or address that matches nothing raises `ServiceError`, saying where to find a valid one.
"""

from coworkenv.state import Workspace

from ..toolkit import ServiceError
from .schema import Person, PersonList, Team, TeamList, TeamSummary, person_from_row


def search_people(
    ws: Workspace, query: str, team: str | None, internal: bool | None, limit: int, offset: int
) -> PersonList:
    """People matching every word of `query` (and `team`, `internal` when given), sorted by name."""
    where: list[str] = []
    params: list[str | int] = []
    for word in query.split():
        where.append("(name LIKE ? OR email LIKE ? OR title LIKE ? OR company LIKE ?)")
        params += [f"%{word}%"] * 4
    if team is not None:
        where.append("team = ?")
        params.append(team)
    if internal is not None:
        where.append("internal = ?")
        params.append(int(internal))
    clause = " AND ".join(where) or "1"
    total = ws.conn.execute(f"SELECT COUNT(*) FROM directory_people WHERE {clause}", params).fetchone()[0]
    rows = ws.rows(
        "directory_people", f"{clause} ORDER BY name, email LIMIT ? OFFSET ?", [*params, limit, offset]
    )
    return PersonList(total=total, people=[person_from_row(r) for r in rows])


def get_person(ws: Workspace, email: str) -> Person:
    """The person with this email (any case)."""
    rows = ws.rows("directory_people", "lower(email) = lower(?)", [email.strip()])
    if not rows:
        raise ServiceError(f"no person with email {email!r}; use search_people to find the right address")
    return person_from_row(rows[0])


def list_teams(ws: Workspace) -> TeamList:
    """Every team with its number of members, by name."""
    rows = ws.conn.execute(
        "SELECT t.name, t.description, t.lead_email, COUNT(p.email) FROM directory_teams t "
        "LEFT JOIN directory_people p ON p.team = t.name GROUP BY t.name ORDER BY t.name"
    ).fetchall()
    return TeamList(
        teams=[TeamSummary(name=n, description=d, lead_email=lead, member_count=c) for n, d, lead, c in rows]
    )


def get_team(ws: Workspace, name: str) -> Team:
    """The team with this name (any case), with its members by name."""
    teams = ws.rows("directory_teams", "lower(name) = lower(?)", [name.strip()])
    if not teams:
        names = [r[0] for r in ws.conn.execute("SELECT name FROM directory_teams ORDER BY name")]
        raise ServiceError(f"no team named {name!r}; teams are: {', '.join(names)}")
    row = teams[0]
    members = ws.rows("directory_people", "team = ? ORDER BY name", [row["name"]])
    return Team(
        name=row["name"],
        description=row["description"],
        lead_email=row["lead_email"],
        members=[person_from_row(m) for m in members],
    )
