"""Directory tools (read-only): find colleagues and contacts, their teams and managers."""

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ToolError, ToolSet, workspace_of
from .schema import Person, PersonList, Team, TeamList, TeamSummary, person_from_row

TOOLS = ToolSet("directory")

#: The largest offset accepted: the schema refuses what SQLite could not hold.
MAX_OFFSET = 1_000_000


@TOOLS.tool(read_only=True)
async def search_people(
    ctx: Context,
    query: Annotated[str, Field(description="Words matched against name, email, title and company")] = "",
    team: Annotated[str | None, Field(description="Only members of this team (exact name)")] = None,
    internal: Annotated[
        bool | None, Field(description="True: colleagues only; False: external contacts only")
    ] = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
) -> PersonList:
    """Search the company directory for people by name, email, job title or company.

    Use it to find someone's email address before writing to them, or to see who is on a
    team. Every word of `query` must match. Results are sorted by name; `total` is the
    number of matches, so page with `offset` when it exceeds `limit`.
    """
    ws = workspace_of(ctx)
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


@TOOLS.tool(read_only=True)
async def get_person(
    ctx: Context,
    email: Annotated[str, Field(description="The person's email address")],
) -> Person:
    """Get one person's full directory entry (title, team, manager, time zone) by email."""
    rows = workspace_of(ctx).rows("directory_people", "lower(email) = lower(?)", [email.strip()])
    if not rows:
        raise ToolError(f"no person with email {email!r}; use search_people to find the right address")
    return person_from_row(rows[0])


@TOOLS.tool(read_only=True)
async def list_teams(ctx: Context) -> TeamList:
    """List every team with its description, lead and number of members."""
    rows = (
        workspace_of(ctx)
        .conn.execute(
            "SELECT t.name, t.description, t.lead_email, COUNT(p.email) FROM directory_teams t "
            "LEFT JOIN directory_people p ON p.team = t.name GROUP BY t.name ORDER BY t.name"
        )
        .fetchall()
    )
    return TeamList(
        teams=[TeamSummary(name=n, description=d, lead_email=lead, member_count=c) for n, d, lead, c in rows]
    )


@TOOLS.tool(read_only=True)
async def list_team(
    ctx: Context,
    team: Annotated[str, Field(description="Team name, as list_teams shows it")],
) -> Team:
    """List the members and the lead of one team: names, emails, titles and time zones.

    Use list_teams first when you do not know the exact team name."""
    ws = workspace_of(ctx)
    teams = ws.rows("directory_teams", "lower(name) = lower(?)", [team.strip()])
    if not teams:
        names = [r[0] for r in ws.conn.execute("SELECT name FROM directory_teams ORDER BY name")]
        raise ToolError(f"no team named {team!r}; teams are: {', '.join(names)}")
    row = teams[0]
    members = ws.rows("directory_people", "team = ? ORDER BY name", [row["name"]])
    return Team(
        name=row["name"],
        description=row["description"],
        lead_email=row["lead_email"],
        members=[person_from_row(m) for m in members],
    )


__all__ = ["TOOLS", "Person"]
