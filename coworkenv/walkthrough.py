"""A short scripted session through the real MCP servers of the demo workspace.

It plays a support lead's morning: read the newest customer mail, look the sender up,
open a ticket for it, reply, find a slot for a call, book it, and write a note. Each tool
call and its result are printed; one deliberately bad call shows the error a model reads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mcp import Client

from coworkenv.servers import build_workspace_server
from coworkenv.servers.render import northwind_workspace


def _short(value: Any, width: int = 220) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


async def scripted_session(seed: int = 0, say: Callable[[str], None] = print) -> str:
    """Run the walkthrough on a fresh demo workspace and return its final state hash."""
    ws = northwind_workspace(seed=seed)
    start_hash = ws.content_hash()
    say(f"demo workspace (seed {seed}): {', '.join(ws.services)}; clock {ws.clock.now_text()}")
    initial = ws.fork()

    async with Client(build_workspace_server(ws)) as client:

        async def call(tool: str, arguments: dict[str, Any]) -> Any:
            result = await client.call_tool(tool, arguments)
            say(f"\n> {tool} {_short(arguments, 160)}")
            if result.is_error:
                say("  error: " + " ".join(getattr(c, "text", "") for c in result.content))
                return None
            say("  " + _short(result.structured_content))
            return result.structured_content

        found = await call("mail_search_messages", {"query": "order", "folder": "inbox", "limit": 3})
        message = await call("mail_get_message", {"message_id": found["messages"][0]["id"]})
        sender = message["from_addr"]
        await call("directory_get_person", {"email": sender})
        ticket = await call(
            "tickets_create_ticket",
            {
                "title": message["subject"][:120],
                "queue": "Support",
                "description": message["body"][:500],
                "requester": sender,
                "priority": "high",
                "tags": ["from-mail"],
            },
        )
        await call(
            "mail_reply",
            {
                "message_id": message["id"],
                "body": f"Thanks, we are on it: ticket #{ticket['id']}. I will propose a short call.",
            },
        )
        day = ws.clock.now().date().isoformat()
        slots = await call(
            "calendar_find_free_slots",
            {
                "attendees": [ws.meta("user_email")],
                "duration_minutes": 30,
                "window_start": f"{day}T00:00:00Z",
                "window_end": f"{day}T23:59:00Z",
                "max_slots": 3,
            },
        )
        if slots and slots.get("slots"):
            slot = slots["slots"][0]
            await call(
                "calendar_create_event",
                {"title": f"Call about ticket #{ticket['id']}", "start": slot["start"], "end": slot["end"]},
            )
        await call(
            "files_write_file",
            {
                "path": "/teams/Support/notes/customer-calls.md",
                "content": f"- {day}: call about ticket #{ticket['id']} ({sender})\n",
                "mode": "append",
                "create_parents": True,
            },
        )
        await call("tickets_update_ticket", {"ticket_id": ticket["id"], "status": "resolved-ish"})

    changes = initial.diff(ws).summary()
    say("\nwhat changed: " + json.dumps(changes))
    say(
        f"audit log: {len(ws.audit.entries())} calls; state hash {start_hash[:12]} -> {ws.content_hash()[:12]}"
    )
    return ws.content_hash()
