"""The acceptance side of the validation contract: right variants of a reference solution,
each of which must PASS. Harmless extra reads and marks, reply-all (where it copies no
outside address), texts rewritten in other formats that keep the facts (ISO dates in words,
24h times in 12h, "#61" as "ticket number 61", grouped thousands), a multi-field update
split into two calls, a new mail saved as a draft and then sent, an object created and then
given one of its values in a second call, a message wrapped in courtesy, a new value stated
with the old one it replaces (see `synth.validation.text_variants`), and what an assistant does
differently from the reference: a second internal note, ticket references in other forms,
independent writes reordered, candidates read before asking (see `synth.validation.assistant_variants`).
"""

from __future__ import annotations

import re

from coworkenv.rollout.episodes.reference import user_messages
from coworkenv.state import Workspace
from coworkenv.synth.validation.assistant_variants import assistant_variants
from coworkenv.synth.validation.text_variants import MONTHS, courteous_variants, old_value_variants
from coworkenv.synth.validation.variants import (
    FREE_TEXT,
    UPDATE_KEYS,
    Variant,
    prepend_steps,
    replace_step,
    step_of,
    unrelated,
)
from coworkenv.task import SolutionStep, Task
from coworkenv.verifiers import Footprint
from coworkenv.verifiers.created import normal, quotations


def acceptance_variants(task: Task, seed: Workspace, footprint: Footprint) -> list[Variant]:
    """Right variants the contract requires to pass."""
    out: list[Variant] = []
    out += _harmless_extras(task, seed, footprint)
    out += courteous_variants(task)
    out += old_value_variants(task, seed)
    quoted = quotations(user_messages(task))
    for i, turn in enumerate(task.turns):
        for j, step in enumerate(turn.solution):
            if step.expect_error:
                continue
            where = f"turns[{i}].solution[{j}] ({step.tool})"
            if step.tool == "mail_reply" and not step.arguments.get("reply_all"):
                all_step = step.model_copy(update={"arguments": {**step.arguments, "reply_all": True}})
                out.append(
                    Variant(
                        "accept",
                        "reply_all",
                        f"{where} as reply-all",
                        replace_step(task, i, j, all_step),
                        (i, j),
                    )
                )
            # Text the user quoted is kept as quoted (see `TableRules.free_text`).
            rewritten = {
                k: reformat_text(v)
                for k, v in step.arguments.items()
                if k in FREE_TEXT and isinstance(v, str) and normal(v) not in quoted
            }
            rewritten = {k: v for k, v in rewritten.items() if v != step.arguments[k]}
            if rewritten and step.tool != "files_write_file":
                new = step.model_copy(update={"arguments": {**step.arguments, **rewritten}})
                out.append(
                    Variant(
                        "accept",
                        "other_format",
                        f"{where} texts in other formats",
                        replace_step(task, i, j, new),
                        (i, j),
                    )
                )
            set_later = _create_then_set(step, f"created_{i}_{j}")
            if set_later is not None:
                column, steps = set_later
                out.append(
                    Variant(
                        "accept",
                        "create_then_set",
                        f"{where} without its {column}, set in a second call",
                        replace_step(task, i, j, *steps),
                        (i, j),
                    )
                )
            split = _split_update(step)
            if split is not None:
                out.append(
                    Variant(
                        "accept",
                        "split_update",
                        f"{where} split in two calls",
                        replace_step(task, i, j, *split),
                        (i, j),
                    )
                )
            if step.tool == "mail_send_message":
                draft = SolutionStep(
                    tool="mail_save_draft", id=f"draft_{i}_{j}", arguments=dict(step.arguments)
                )
                send = SolutionStep(
                    tool="mail_send_draft", id=step.id, arguments={"draft_id": {"$ref": f"draft_{i}_{j}.id"}}
                )
                out.append(
                    Variant(
                        "accept",
                        "draft_then_send",
                        f"{where} as a draft, then sent",
                        replace_step(task, i, j, draft, send),
                        (i, j),
                    )
                )
    return out + assistant_variants(task)


def _harmless_extras(task: Task, seed: Workspace, footprint: Footprint) -> list[Variant]:
    reads: list[SolutionStep] = []
    marks: list[SolutionStep] = []
    if "mail" in task.services:
        reads.append(step_of("mail_search_messages", limit=5))
        mid = unrelated(
            seed,
            footprint,
            "mail_messages",
            f"SELECT id FROM mail_messages WHERE owner = '{task.user_email}' AND folder = 'inbox' ORDER BY id",
            "id",
        )
        if mid is not None:
            marks += [
                step_of("mail_mark_message", message_id=mid, status="read"),
                step_of("mail_mark_message", message_id=mid, status="flagged"),
            ]
    if "tickets" in task.services:
        reads.append(step_of("tickets_search_tickets", limit=5))
    if "files" in task.services:
        reads.append(step_of("files_list_directory", path="/"))
    if "directory" in task.services:
        reads.append(step_of("directory_list_teams"))
    if "crm" in task.services:
        reads.append(step_of("crm_search_accounts", limit=5))
    if "notes" in task.services:
        reads.append(step_of("notes_search_pages", limit=5))
    if "sheets" in task.services:
        reads.append(step_of("sheets_list_spreadsheets", limit=5))
    out = []
    if reads:
        out.append(Variant("accept", "extra_reads", "extra reads first", prepend_steps(task, 0, *reads)))
    if marks:
        out.append(
            Variant(
                "accept",
                "harmless_marks",
                "an unrelated mail marked read and flagged",
                prepend_steps(task, 0, *marks),
            )
        )
    return out


SET_LATER = {
    "tickets_create_ticket": ("tickets_update_ticket", "ticket_id", ("priority", "assignee", "due_at")),
    "calendar_create_event": ("calendar_update_event", "event_id", ("location", "description")),
}
"""Per create tool: the update tool, its key argument, and the arguments it may set later."""


def _create_then_set(step: SolutionStep, name: str) -> tuple[str, list[SolutionStep]] | None:
    """The object created without one of its values (the first given of `SET_LATER`'s),
    then that value set by an update call: the same object in the end."""
    spec = SET_LATER.get(step.tool)
    if spec is None:
        return None
    update, key, columns = spec
    given = [c for c in columns if step.arguments.get(c) not in (None, "", "normal")]
    if not given:
        return None
    column = given[0]
    named = SolutionStep(
        tool=step.tool,
        id=step.id or name,
        arguments={k: v for k, v in step.arguments.items() if k != column},
    )
    later = step_of(update, **{key: {"$ref": f"{named.id}.id"}, column: step.arguments[column]})
    return column, [named, later]


def _split_update(step: SolutionStep) -> tuple[SolutionStep, SolutionStep] | None:
    key = UPDATE_KEYS.get(step.tool)
    if key is None:
        return None
    fields = [
        k
        for k in step.arguments
        if k != key and not (step.tool == "calendar_update_event" and k in ("start", "end", "time_zone"))
    ]
    if len(fields) < 2:
        return None
    first = {k: v for k, v in step.arguments.items() if k not in fields[1:]}
    second = {k: v for k, v in step.arguments.items() if k == key or k in fields[1:]}
    return SolutionStep(tool=step.tool, arguments=first), SolutionStep(
        tool=step.tool, id=step.id, arguments=second
    )


_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b(?!T)")
_HHMM = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])(?!\s*(?:am|pm|a\.m|p\.m))", re.I)
_TICKET = re.compile(r"(?:\b[Tt]icket\s+)?#(\d+)\b")
_BIG = re.compile(r"(?<![\w.,/:-])(\d{5,})(?![\w/:-]|[.,]\d)")


def reformat_text(text: str) -> str:
    """The same facts in other formats: ISO dates as "5 March 2026", 24h times as "3:30 pm",
    "#61" as "ticket number 61", 45550 as "45,550"."""
    text = _ISO_DAY.sub(lambda m: f"{int(m.group(3))} {MONTHS[int(m.group(2)) - 1]} {m.group(1)}", text)

    def twelve(m: re.Match[str]) -> str:
        hour, minute = int(m.group(1)), m.group(2)
        suffix = "am" if hour < 12 else "pm"
        return f"{(hour % 12) or 12}:{minute} {suffix}"

    text = _HHMM.sub(twelve, text)
    text = _TICKET.sub(lambda m: f"ticket number {m.group(1)}", text)
    return _BIG.sub(lambda m: f"{int(m.group(1)):,}", text)
