"""Directory tools that read: find colleagues and contacts, their teams and managers."""

from typing import Annotated

from mcp.server.mcpserver import Context
from pydantic import Field

from ..toolkit import ToolList, workspace_of
from . import store
from .schema import Person, PersonList, Team, TeamList

TOOLS = ToolList()

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
    return store.search_people(workspace_of(ctx), query, team, internal, limit, offset)


@TOOLS.tool(read_only=True)
async def get_person(
    ctx: Context,
    email: Annotated[str, Field(description="The person's email address")],
) -> Person:
    """Get one person's full directory entry (title, team, manager, time zone) by email."""
    return store.get_person(workspace_of(ctx), email)


@TOOLS.tool(read_only=True)
async def list_teams(ctx: Context) -> TeamList:
    """List every team with its description, lead and number of members."""
    return store.list_teams(workspace_of(ctx))


@TOOLS.tool(read_only=True)
async def list_team(
    ctx: Context,
    team: Annotated[str, Field(description="Team name, as list_teams shows it")],
) -> Team:
    """List the members and the lead of one team: names, emails, titles and time zones.

    Use list_teams first when you do not know the exact team name."""
    return store.get_team(workspace_of(ctx), team)
