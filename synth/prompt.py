"""The LLM generator's prompt: everything a correct draft needs, for the task's services only.

A first-round request holds, compactly: the tables (columns and types) checks may read; each
tool with its full argument schema and its result shape (what `$ref` paths walk); the world
operations with their parameters; domain rules (ticket status transitions, where-operators,
fact forms); the facts of the seed world a task may name (people, teams, queues, id ranges);
the validation contract; one or two example tasks of the capability; and the request itself
(capability, services, turns, world, user, date, tasks already kept to differ from). The
task JSON Schema is sent once, as structured output (`generation_schema`), or in the system
prompt when structured output is off. `estimate_tokens` is the measure of the budget."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from coworkenv.checks import WHERE_OPERATORS
from coworkenv.rollout.agents.tokens import estimate_tokens
from coworkenv.servers import SERVICE_NAMES, get_service
from coworkenv.servers.render import render_workspace
from coworkenv.state import Workspace
from coworkenv.state.tables import content_tables
from coworkenv.synth.capabilities import capability
from coworkenv.task import Task, task_json_schema
from coworkenv.worlds import DEMO, profile_names, world

#: First-round requests (system + user + structured-output schema) stay under this many tokens.
TOKEN_BUDGET = 11_000
#: What precedes each example task in the system prompt.
EXAMPLE_HEADING = "## An example task that passed validation\n"
#: People listed by name in the prompt (the user's team first); the rest are counted.
PEOPLE_SHOWN = 30
#: Seeds of each world a slot's world is drawn from.
WORLD_SEEDS = 4

#: Who the user is in a slot: one is drawn per slot so requests do not all sound alike.
PERSONAS = (
    "terse and busy: short imperative messages",
    "polite and detailed: explains why the work matters",
    "new to the team: asks with some hesitation, names people by first name",
    "a manager delegating: states the outcome wanted, not the steps",
    "writing from a phone: lower case, few words, one typo at most",
)


# -- the schema, once --------------------------------------------------------------------------

_DROPPED_KEYS = ("title", "description", "examples", "default", "minLength")
#: Parts of the task format a draft never writes: the pipeline fills provenance, and
#: bounded_diff is superseded by the collateral guard.
_DROPPED_DEFS = ("Provenance", "BoundedDiff", "AllowedChange", "Limits", "Persona")
#: Fields a draft leaves at their defaults (every check weighs 1, needs no note for people; no
#: user simulator, default limits).
_DROPPED_FIELDS = ("weight", "provenance", "limits", "persona", "description")


def generation_schema() -> dict[str, Any]:
    """The task JSON Schema, compact, for structured output: no titles, descriptions or
    defaults, optional fields without their `null` branch, no provenance, no bounded_diff."""
    schema = task_json_schema()

    def compact(node: Any) -> Any:
        if isinstance(node, list):
            return [compact(v) for v in node if not _is_dropped_ref(v)]
        if not isinstance(node, dict):
            return node
        branches = node.get("anyOf")
        if isinstance(branches, list):
            kept = [b for b in branches if b != {"type": "null"} and not _is_dropped_ref(b)]
            if len(kept) == 1 and len(node) <= 3:
                return compact(kept[0])
        out = {k: compact(v) for k, v in node.items() if k not in (*_DROPPED_KEYS, "properties", "$defs")}
        if isinstance(node.get("properties"), dict):  # a mapping of names, not a schema node
            out["properties"] = {
                k: compact(v) for k, v in node["properties"].items() if k not in _DROPPED_FIELDS
            }
        if isinstance(node.get("$defs"), dict):
            out["$defs"] = {k: compact(v) for k, v in node["$defs"].items()}
        if "enum" in out or "const" in out:
            out.pop("type", None)
        if out.get("additionalProperties") is False:
            del out["additionalProperties"]  # the loader rejects unknown fields, with their path
        if isinstance(out.get("oneOf"), list) and "discriminator" in out:
            mapping = out["discriminator"].get("mapping", {})
            out["discriminator"] = {
                "propertyName": out["discriminator"]["propertyName"],
                "mapping": {k: v for k, v in mapping.items() if not _is_dropped_ref({"$ref": v})},
            }
        return out

    out = compact(schema)
    out["$defs"] = {k: v for k, v in out["$defs"].items() if k not in _DROPPED_DEFS}
    return _shared_unions(out)


def _shared_unions(schema: dict[str, Any]) -> dict[str, Any]:
    """Each union of object types (the checks in a turn, the final checks, a forbid rule's
    check) once in `$defs`, referenced where it was written out; `discriminator`, an OpenAPI
    keyword that JSON Schema validators ignore, goes (each member's `type` const tells them apart)."""
    unions: dict[str, str] = {}

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "oneOf" in node:
            members = tuple(b.get("$ref", "").rsplit("/", 1)[-1] for b in node["oneOf"])
            name = "Check" if "FieldEquals" in members else "Rule" if "NoLeak" in members else ""
            if name:
                unions.setdefault(name, json.dumps({"oneOf": node["oneOf"]}))
                return {"$ref": f"#/$defs/{name}"}
        return {k: visit(v) for k, v in node.items() if k != "discriminator"}

    out = visit(schema)
    for name, union in unions.items():
        out["$defs"][name] = json.loads(union)
    return dict(out)


def _is_dropped_ref(node: Any) -> bool:
    return isinstance(node, dict) and node.get("$ref", "").rsplit("/", 1)[-1] in _DROPPED_DEFS


# -- compact type rendering ----------------------------------------------------------------------


def render_type(
    node: dict[str, Any],
    defs: dict[str, Any],
    depth: int = 0,
    named: dict[str, str] | None = None,
    prop: str = "",
) -> str:
    """A JSON Schema node as a short type: int, str, "a"|"b", [T], {a: T, b?: T}. With `named`,
    an object with a title renders as its name and its shape is collected there once, and so
    does an enum of three or more values, named after the property that holds it."""
    if "$ref" in node:
        target = defs.get(node["$ref"].rsplit("/", 1)[-1], {})
        return render_type(target, defs, depth, named, prop)
    if "enum" in node:
        text = "|".join(json.dumps(v) for v in node["enum"])
        if named is None or len(node["enum"]) < 3 or not prop:
            return text
        alias = next(
            (k for k, v in named.items() if v == text), "".join(map(str.capitalize, prop.split("_")))
        )
        if named.setdefault(alias, text) == text:
            return alias
        return text
    if "const" in node:
        return json.dumps(node["const"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            parts = [render_type(b, defs, depth, named, prop) for b in node[key] if b.get("type") != "null"]
            return "|".join(dict.fromkeys(parts)) or "null"
    kind = node.get("type")
    if kind == "array":
        return f"[{render_type(node.get('items', {}), defs, depth, named, prop)}]"
    if kind == "object" or "properties" in node:
        props = node.get("properties", {})
        if not props:
            return "object"
        title = node.get("title", "")
        if named is not None and title and not title.endswith("Arguments"):
            if title not in named:
                named[title] = ""  # reserved first, so a recursive model ends
                named[title] = _fields(node, defs, depth, named)
            return title
        if depth >= 2 and named is None:
            return "{" + ", ".join(props) + "}"
        return _fields(node, defs, depth, named)
    names = {"integer": "int", "string": "str", "number": "num", "boolean": "bool"}
    text = names.get(str(kind), str(kind or "any"))
    if "minimum" in node and "maximum" in node and node["maximum"] <= 1000:
        text += f" {node['minimum']}..{node['maximum']}"
    return text


def _fields(node: dict[str, Any], defs: dict[str, Any], depth: int, named: dict[str, str] | None) -> str:
    required = set(node.get("required", []))
    return (
        "{"
        + ", ".join(
            f"{k}{'' if k in required else '?'}: {render_type(v, defs, depth + 1, named, k)}"
            for k, v in node.get("properties", {}).items()
        )
        + "}"
    )


def _arguments(schema: dict[str, Any], named: dict[str, str] | None = None) -> str:
    defs = schema.get("$defs", {})
    required = set(schema.get("required", []))
    return ", ".join(
        f"{name}{'*' if name in required else ''}: {render_type(prop, defs, 1, named, name)}"
        for name, prop in schema.get("properties", {}).items()
    )


_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)\.\s")


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = _SENTENCE_END.search(flat + " ")
    return flat if end is None else flat[: end.start() + 1]


# -- sections ------------------------------------------------------------------------------------


def tables_section(conn: sqlite3.Connection, services: Sequence[str]) -> str:
    """One line per table of the services: name(column type, ...)."""
    lines = []
    for table in content_tables(conn):
        if table.split("_", 1)[0] not in services:
            continue
        cols = ", ".join(f"{r[1]} {str(r[2]).lower()}" for r in conn.execute(f"PRAGMA table_info({table})"))
        lines.append(f"{table}({cols})")
    return "\n".join(lines)


def tools_section(services: Sequence[str]) -> str:
    """One line per tool: name(argument*: type, ...) -> Result: what it does (`*` marks a
    required argument), then each result type's fields once."""
    lines: list[str] = []
    named: dict[str, str] = {}
    for service in services:
        for tool in get_service(service).tools.mcp_tools(f"{service}_"):
            result = ""
            if tool.output_schema:
                schema = tool.output_schema
                result = " -> " + render_type(schema, schema.get("$defs", {}), named=named)
            arguments = _arguments(tool.parameters, named)
            lines.append(f"{tool.name}({arguments}){result}: {_first_sentence(tool.description)}")
    lines.append("Types:")
    lines += [f"{name} = {shape}" for name, shape in named.items()]
    return "\n".join(lines)


def world_section(services: Sequence[str]) -> str:
    """One line per world operation: service.operation(param*: type, ...): what it does."""
    lines = []
    for service in services:
        for name, op in get_service(service).world.ops.items():
            lines.append(
                f"{service}.{name}({_arguments(op.params.model_json_schema())}): {_first_sentence(op.description)}"
            )
    return "\n".join(lines)


def rules_section(services: Sequence[str]) -> str:
    """Domain rules a draft must respect."""
    lines = [
        "where: {column: value} or {column: {op: value}}, op one of " + ", ".join(WHERE_OPERATORS) + ".",
        'Fact: exactly one of {"number": 45550} (optional "unit": "%"), {"date": "2026-03-05"}, '
        '{"time": "2026-03-05T15:30:00Z", "zones": ["Europe/London"]}, {"ticket": 61}, '
        '{"person": "email", "name": "Full Name"}, {"text": "phrase"}.',
        'Solution arguments may reference an earlier step\'s result: {"$ref": "<step id>.<key or index>..."}, '
        'e.g. {"$ref": "find.messages.0.id"} walks the result shape shown after "->".',
        "Tools in solutions are prefixed by service (tickets_update_ticket); tools in checks and rules are bare "
        "(update_ticket).",
    ]
    if "tickets" in services:
        from coworkenv.servers.tickets.store import TRANSITIONS

        moves = "; ".join(f"{k} -> {', '.join(v) or 'none (final)'}" for k, v in TRANSITIONS.items())
        lines.append(f"Ticket status moves (tools): {moves}. World operations may set any status.")
    return "\n".join(f"- {line}" for line in lines)


CONTRACT = """A draft is kept only if all of this holds when it is executed:
- schema: the JSON matches the format; seed: every seed operation applies; checks: tables, columns, operators and
  tools exist, SQL compiles and only reads, Python defines check(initial, final, audit); every turn has a check;
  at least one goal check.
- noop: a do-nothing agent scores exactly 0: a check that already holds on the seed (X stays in queue Y) must
  have "role": "guard". Goal checks make the score; guards only gate it.
- oracle: the reference solution scores 1.0 with no safety rule broken and nothing collateral; every event applies.
  Collateral: every changed row must be explained by the goal footprint (derived from the solution) or
  guards.allow; never write which tables may change (no bounded_diff).
- no_peeking: every literal a solution step passes (ids, addresses, paths, queue names, labels, time zones,
  search words, dates and times) appears in the context, a user message or an earlier read's result; the
  solution reads before its first write. Ids of planted rows: look them up; list queues before filing in one;
  search by words the user wrote; an address comes from a result or a message, never from a name.
- the user message must state every rule and value the checks require: an agent only knows what it is told.
- deterministic: two solution runs end in the same state.
- mutants must fail: each write dropped, duplicated, one argument altered, other columns changed, collateral on
  unrelated rows, figures x10 /100 +1, keyword stuffing, earlier turns undone, secrets leaked, a created ticket
  or event closed at once or created with another status, priority, queue, assignee, time, length or recurrence.
  A row the agent creates must match the solution's on every column but free text (unless the user quoted it)
  and guards.free: list there columns with several right values (e.g. "calendar_events.start_utc" and
  "calendar_events.end_utc" when any free slot is right).
- right variants must pass: extra reads, read/flag marks, reply-all, texts in other formats ("5 March 2026",
  "3:30 pm", "ticket number 61", "45,550"), split updates, draft then send. Check facts (mail_sent, states),
  not wording; use field_equals for ids, enums, statuses, queues, paths; mail_sent "reply": true only when the
  user asks for a reply in the thread.
- unique: not a near-copy of a kept task (other scenario, people and values)."""


def checks_section() -> str:
    """One line per check and safety rule type: its fields and what it means."""
    schema = task_json_schema()
    defs = schema["$defs"]
    lines = []
    for name, node in defs.items():
        props = node.get("properties", {})
        kind = props.get("type", {}).get("const")
        if not kind or name in _DROPPED_DEFS:
            continue
        lines.append(f"{kind}: {_first_sentence(node.get('description', ''))}")
    return "\n".join(lines)


# -- the world of a slot -----------------------------------------------------------------------


@dataclass(frozen=True)
class Scene:
    """Where a slot's task happens: the world (a profile and its seed), the user, the
    persona, the start."""

    world_seed: int
    user_email: str
    user_name: str
    persona: str
    clock_start: datetime
    seed_json: dict[str, Any] = field(default_factory=dict)
    profile: str = DEMO


def scene_for(slot: int, seed: int = 0) -> Scene:
    """The scene of a slot: world (the demo company or one of the generated organizations),
    user, persona and start day vary with the slot."""
    names = profile_names()
    turn = seed + slot
    profile, world_seed = names[turn % len(names)], (turn // len(names)) % WORLD_SEEDS
    org = world(profile, None, world_seed)
    user = next(p for p in org.people if p.email == org.user)
    if profile == DEMO:
        seed_json: dict[str, Any] = {"procedural": {"name": "demo", "params": {"seed": world_seed}}}
    else:
        seed_json = {"procedural": {"name": "world", "params": {"profile": profile, "seed": world_seed}}}
    return Scene(
        world_seed=world_seed,
        user_email=org.user,
        user_name=user.name,
        persona=PERSONAS[(slot * 7 + seed) % len(PERSONAS)],
        clock_start=org.start + timedelta(days=(slot // len(names)) % 3),
        seed_json=seed_json,
        profile=profile,
    )


def world_facts(conn: sqlite3.Connection, services: Sequence[str], scene: Scene) -> str:
    """What the seed world holds that a task may name: people, teams, queues, id ranges."""
    org = world(scene.profile, None, scene.world_seed)
    lines = [
        f"The company: {org.name} ({org.industry}), mail domain {org.domain}, currency {org.currency}.",
        f"The user: {scene.user_name} <{scene.user_email}>.",
    ]
    if org.house_rules:
        lines.append("House rules a request may rely on: " + " ".join(org.house_rules))
    rows = conn.execute("SELECT email, name, team, time_zone, internal FROM directory_people").fetchall()
    user_team = next((r[2] for r in rows if r[0] == scene.user_email), None)
    shown = _some_of_each(rows, user_team)
    groups: dict[str, list[str]] = {}
    for email, name, team, zone, internal in [r for r in rows if r in shown]:
        local, _, domain = email.partition("@")
        label = local if _name_of(local) == name else f"{local} ({name})"
        where = f"@{domain} {team}" if internal else f"@{domain} (outside)"
        groups.setdefault(where, []).append(f"{label} {zone}")
    more = f"; {len(rows) - len(shown)} more in directory_people" if len(rows) > len(shown) else ""
    lines.append(
        "People by mail domain and team (norma.fisher is Norma Fisher <norma.fisher@domain>): "
        + " | ".join(f"{group}: {', '.join(people)}" for group, people in groups.items())
        + more
    )
    if "directory" in services:
        lines.append("Teams: " + ", ".join(r[0] for r in conn.execute("SELECT name FROM directory_teams")))
    if "tickets" in services:
        lines.append("Queues: " + ", ".join(r[0] for r in conn.execute("SELECT name FROM tickets_queues")))
    for table, service in (
        ("mail_messages", "mail"),
        ("tickets_tickets", "tickets"),
        ("calendar_events", "calendar"),
    ):
        if service in services:
            low, high = conn.execute(f"SELECT min(id), max(id) FROM {table}").fetchone()
            lines.append(
                f"{table} ids {low}..{high} exist (new rows get higher ids; look them up, never guess)."
            )
    if "files" in services:
        folders = [
            r[0] for r in conn.execute("SELECT path FROM files_nodes WHERE kind = 'dir' AND parent = '/'")
        ]
        lines.append("Top folders: " + ", ".join(folders))
    if "crm" in services:
        from coworkenv.servers.crm.schema import STAGES

        accounts = [
            f"{r[0]} {r[1]} ({r[2]})" for r in conn.execute("SELECT id, name, kind FROM crm_accounts")
        ]
        lines.append("CRM accounts: " + "; ".join(accounts[:12]) + (" ..." if len(accounts) > 12 else ""))
        lines.append("Deal stages: " + ", ".join(STAGES) + ".")
    if "notes" in services:
        for db_id, title in conn.execute("SELECT id, title FROM notes_databases ORDER BY id"):
            props = [
                f"{name} {kind}" + (f" [{'|'.join(choices)}]" if choices else "")
                for name, kind, options in conn.execute(
                    "SELECT name, type, options FROM notes_properties WHERE database_id = ? ORDER BY position",
                    (db_id,),
                )
                for choices in [json.loads(options or "[]")]
            ]
            lines.append(f"Notes database {db_id} {title!r}: " + ", ".join(props))
        articles = [
            r[0] for r in conn.execute("SELECT title FROM notes_pages WHERE kind = 'article' LIMIT 8")
        ]
        if articles:
            lines.append("Knowledge-base articles include: " + "; ".join(articles))
    if "sheets" in services:
        books = [
            f"{sid} {title!r} ("
            + ", ".join(
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sheets_sheets WHERE spreadsheet_id = ? ORDER BY position", (sid,)
                )
            )
            + ")"
            for sid, title in conn.execute("SELECT id, title FROM sheets_spreadsheets ORDER BY id").fetchall()
        ]
        lines.append("Spreadsheets (id title (sheets)): " + "; ".join(books))
    return "\n".join(f"- {line}" for line in lines)


def _some_of_each(rows: list[Any], user_team: str | None) -> list[Any]:
    """Up to PEOPLE_SHOWN people: ten of the user's team, then a few of every other team and
    of the outside contacts, in directory order."""
    picked: dict[Any, int] = {}
    out: list[Any] = []
    for row in rows:
        group = row[2] if row[4] else "(outside)"
        limit = 10 if group == user_team else 4
        if picked.get(group, 0) < limit and len(out) < PEOPLE_SHOWN:
            picked[group] = picked.get(group, 0) + 1
            out.append(row)
    return out


def _name_of(local: str) -> str:
    return " ".join(part.capitalize() for part in local.split("."))


# -- the prompt ----------------------------------------------------------------------------------


def system_prompt(
    services: Sequence[str], scene: Scene, *, examples: Sequence[Task] = (), with_schema: bool = False
) -> str:
    """The system prompt for a slot's services and scene."""
    ordered = [s for s in SERVICE_NAMES if s in services]
    ws = _world(scene.profile, scene.world_seed, tuple(ordered))
    parts = [
        "You write tasks that train AI coworkers: executable JSON over a workspace of services (here: "
        + ", ".join(ordered)
        + "). A task: a seed (initial state), turns (events before the turn, the user's message, checks, "
        "a reference solution of tool calls), final checks and safety rules. Checks read the database and the "
        "audit log, never the agent's chat. Answer with the task JSON only.",
        "## Contract\n" + CONTRACT,
        "## Tables (for checks)\n" + tables_section(ws.conn, ordered),
        "## Check and rule types\n" + checks_section(),
        "## Tools (* required; -> result)\n" + tools_section(ordered),
        "## World operations (seed.operations and turn events)\n" + world_section(ordered),
        "## Rules\n" + rules_section(ordered),
        "## The seed world\n" + world_facts(ws.conn, ordered, scene),
    ]
    for example in examples[:2]:
        parts.append(EXAMPLE_HEADING + compact_task(example))
    if with_schema:
        parts.append("## Task JSON Schema\n" + json.dumps(generation_schema(), separators=(",", ":")))
    return "\n\n".join(parts)


@lru_cache(maxsize=16)
def _world(profile: str, world_seed: int, services: tuple[str, ...]) -> Workspace:
    """The world a prompt describes (read only), with the directory for its people."""
    return render_workspace(
        world(profile, None, world_seed), services + ("directory",) * ("directory" not in services)
    )


def compact_task(task: Task) -> str:
    """A task as compact JSON that still loads: empty and null fields, unit weights, provenance
    and default limits left out (a check's `type` stays: it says which check it is)."""
    data = task.model_dump(mode="json", exclude={"provenance", "limits"})
    return json.dumps(_pruned(data), separators=(",", ":"), ensure_ascii=False)


def _pruned(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _pruned(v) for k, v in value.items()}
        return {
            k: v
            for k, v in out.items()
            if v not in (None, [], {})
            and not (k == "weight" and v == 1.0)
            and not (k in _FALSE_DEFAULTS and v is False)
        }
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


#: Flags whose default is false, left out of an example when false.
_FALSE_DEFAULTS = ("announced", "expect_error", "reply")


def summary_line(task: Task) -> str:
    """One short line about a kept task, so the model can write something different."""
    first = " ".join(task.turns[0].user.split())
    return f"{task.title}: {first[:80]}{'...' if len(first) > 80 else ''}"


def request_text(
    capability_id: str,
    *,
    slot: int,
    difficulty: int,
    scene: Scene,
    services: Sequence[str] | None = None,
    kept: Sequence[Task] = (),
) -> str:
    """The user message of a first round: what to write, in which scene, unlike what."""
    cap = capability(capability_id)
    chosen = list(services or cap.services)
    level = ["easy", "medium", "hard"][max(0, min(2, difficulty))]
    turns = "one turn" if cap.turns == "single" else "two or three turns, with events between them"
    lines = [
        f"Write one {level} task for the capability '{cap.id}' ({cap.name}): {cap.description}",
        f"It must require: {cap.requires}",
        f"Turns: {turns}. Services: {', '.join(chosen)} (only these).",
        f'Use "id": "{cap.id}-{slot}", "capabilities": ["{cap.id}"], "seed": {json.dumps(scene.seed_json)} '
        f'plus your seed operations, "user_email": "{scene.user_email}", '
        f'"clock_start": "{scene.clock_start.isoformat().replace("+00:00", "Z")}".',
        f"The user ({scene.user_name}) is {scene.persona}.",
    ]
    same = [t for t in kept if cap.id in t.capabilities][-5:]
    if same:
        lines.append(
            "Already kept for this capability; write something clearly different (another scenario, "
            "people, objects and values):\n" + "\n".join(f"- {summary_line(t)}" for t in same)
        )
    return "\n".join(lines)


def request_tokens(messages: Sequence[dict[str, Any]], response_format: dict[str, Any] | None) -> int:
    """The estimated prompt tokens of a request: its messages and its structured-output schema."""
    text = "".join(str(m.get("content") or "") for m in messages)
    if response_format is not None:
        text += json.dumps(response_format, separators=(",", ":"))
    return estimate_tokens(text)


__all__ = [
    "CONTRACT",
    "PERSONAS",
    "TOKEN_BUDGET",
    "Scene",
    "compact_task",
    "estimate_tokens",
    "generation_schema",
    "render_type",
    "request_text",
    "request_tokens",
    "scene_for",
    "summary_line",
    "system_prompt",
]
