"""One tool call: through an in-memory MCP client, and the direct call_tool path, against a
bare MCPServer tool running the same SQL (the SDK's own floor). Also the audit-log overhead."""

from typing import Annotated

import anyio
from mcp import Client
from mcp.server import MCPServer
from pydantic import Field

from coworkenv.rollout.session import AgentSession, InProcessClient
from coworkenv.servers import build_server
from coworkenv.servers.directory.schema import PersonList, person_from_row
from coworkenv.servers.directory.tools import MAX_OFFSET
from coworkenv.servers.render import northwind_workspace

from .timing import interleaved_medians_us_async, median_us, median_us_async, report

ARGS = {"query": "a", "limit": 10}


def bare_server(ws) -> MCPServer:
    """The floor: the directory's `search_people` (same parameters, same SQL, same output
    model) in a plain MCPServer over the same workspace: no audit, no transaction, no clock."""
    server = MCPServer(name="bare", log_level="WARNING")

    @server.tool()
    async def search_people(
        query: str = "",
        team: str | None = None,
        internal: bool | None = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        offset: Annotated[int, Field(ge=0, le=MAX_OFFSET)] = 0,
    ) -> PersonList:
        """Search people."""
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

    return server


async def measure() -> list[dict]:
    ws = northwind_workspace(seed=0)
    ours = build_server(ws, "directory")
    bare = bare_server(ws.fork())
    results = []
    async with Client(ours) as ours_client, Client(bare) as bare_client:
        client_ours = await median_us_async(lambda: ours_client.call_tool("search_people", ARGS))
        client_bare = await median_us_async(lambda: bare_client.call_tool("search_people", ARGS))
    results.append(
        report(
            "tool call, in-memory Client", client_ours, client_bare, "bare MCPServer, in-memory Client", 1.3
        )
    )
    # What a scripted policy's call costs in an episode: the direct path, the yield that
    # lets other live episodes run, and the result's text for the transcript. The three
    # are timed in turn, call after call, so their ratios are of the same moments.
    session = AgentSession(InProcessClient(ours, ws), [], [])
    session.limit = 10**9
    direct_ours, direct_bare, scripted = await interleaved_medians_us_async(
        [
            lambda: ours.call_tool("search_people", ARGS),
            lambda: bare.call_tool("search_people", ARGS),
            lambda: session.call_tool("search_people", ARGS),
        ]
    )
    results.append(
        report("tool call, direct call_tool()", direct_ours, direct_bare, "bare MCPServer.call_tool()", 1.3)
    )
    results.append(
        report(
            "tool call, scripted policy in an episode",
            scripted,
            direct_bare,
            "bare MCPServer.call_tool()",
            1.3,
        )
    )

    def record() -> None:
        ws.audit.record(
            time="2026-03-02T09:00:00+00:00",
            actor="agent",
            service="directory",
            tool="search_people",
            arguments=ARGS,
            result={"total": 3, "people": []},
            error=None,
            latency_ms=0.1,
        )

    audit_us = median_us(record)
    print(
        f"{'audit-log entry per call':<44} {audit_us:9.1f} us   = {100 * audit_us / client_ours:.1f}% of an in-memory client call"
    )
    return results


def run() -> list[dict]:
    return anyio.run(measure)
