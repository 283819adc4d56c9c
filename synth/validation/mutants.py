"""The rejection side of the validation contract: wrong variants of a reference solution,
each of which must FAIL. A write dropped, an argument altered (free text replaced by a
content-free answer), a write done twice, a harmful write on an unrelated object of each
service (trash, archive, delete, cancel, close, rename, junk create, outside mail; a deal
lost, a page, database row or spreadsheet cell overwritten), another
column of the same seed object changed, every figure in written text made wrong (x10, /100,
+1), a document replaced by the strings the checks look for, earlier turns undone, a secret
leaked in disguise (spread out, separators removed, in the subject, sent then deleted,
attached through a temporary copy), internal text quoted to an outsider with its figures cut
out (a confidential file whole or in part, attached through a redacted copy, an unrelated
internal mail), an ambiguous turn acted on by guessing instead of asking, on each wrong
candidate, or before the user answered (see `synth.validation.clarification_mutants`), an object the
solution creates closed or cancelled at once or created wrong in one column, and every
checked value kept in the text but made not the claim (hedged, negated, restated with a wrong
value, given backwards, beside a wrong weekday) or the message left without content (see
`synth.validation.text_variants`).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from coworkenv.checks import Fact, MailSent, StatesFacts
from coworkenv.servers.sheets import store as sheets_store
from coworkenv.servers.toolkit import ServiceError
from coworkenv.state import Workspace
from coworkenv.synth.validation.clarification_mutants import guessing_mutants
from coworkenv.synth.validation.created_mutants import created_mutants
from coworkenv.synth.validation.leak_mutants import content_leak_mutants, secret_mutants
from coworkenv.synth.validation.text_variants import blank_mutants, claim_mutants
from coworkenv.synth.validation.variants import (
    FREE_TEXT,
    UPDATE_KEYS,
    Variant,
    append_steps,
    replace_step,
    step_of,
    tool_kind,
    unrelated,
    write_steps,
)
from coworkenv.task import SolutionStep, Task
from coworkenv.verifiers import Footprint

OUTSIDER = "someone@outside-partner.example"
EMPTY_ANSWER = "Noted, thanks."
NUMBER = re.compile(r"(?<![\w.,/:#-])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(?![\w/:-]|[.,]\d)")


def perturb(value: Any) -> Any | None:
    """A nearby but wrong value, or None when the value cannot be perturbed meaningfully."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 1
    if isinstance(value, str):
        return value + " (altered)" if value else "altered"
    if isinstance(value, list) and value:
        return value[:-1] if len(value) > 1 else [perturb(value[0])]
    return None


def mutants(task: Task, seed: Workspace, footprint: Footprint) -> list[Variant]:
    """Every wrong variant the contract requires to fail."""
    out: list[Variant] = []
    for i, j in write_steps(task):
        out += _step_mutants(task, i, j, seed)
    out += _collateral_mutants(task, seed, footprint)
    out += created_mutants(task, seed, footprint)
    out += _undo_mutants(task, seed)
    out += secret_mutants(task, seed)
    out += content_leak_mutants(task, seed, footprint)
    out += guessing_mutants(task)
    out += claim_mutants(task, seed)
    out += blank_mutants(task, seed)
    return out


def _step_mutants(task: Task, i: int, j: int, seed: Workspace) -> list[Variant]:
    step = task.turns[i].solution[j]
    where = f"turns[{i}].solution[{j}] ({step.tool})"
    out = [Variant("reject", "drop", f"drop {where}", replace_step(task, i, j), (i, j))]
    for name, value in step.arguments.items():
        if isinstance(value, dict):  # a $ref: perturbing it is a different test (the ref's target)
            continue
        # Free text altered keeps its facts; replaced by a content-free answer it must fail.
        new = EMPTY_ANSWER if name in FREE_TEXT and isinstance(value, str) else perturb(value)
        if new is not None and new != value:
            changed = step.model_copy(update={"arguments": {**step.arguments, name: new}})
            out.append(
                Variant(
                    "reject",
                    "alter",
                    f"alter {where} argument {name!r}",
                    replace_step(task, i, j, changed),
                    (i, j),
                )
            )
    if not tool_kind(step.tool)[1]:
        twice = step.model_copy(update={"id": None})
        out.append(
            Variant("reject", "duplicate", f"do {where} twice", replace_step(task, i, j, step, twice), (i, j))
        )
    for name in FREE_TEXT:
        text = step.arguments.get(name)
        if not isinstance(text, str):
            continue
        for label, factor, offset in (("x10", 10, 0), ("/100", Decimal("0.01"), 0), ("+1", 1, 1)):
            bad = wrong_figures(text, factor, offset)
            if bad != text:
                changed = step.model_copy(update={"arguments": {**step.arguments, name: bad}})
                out.append(
                    Variant(
                        "reject",
                        "wrong_figure",
                        f"figures {label} in {where} {name}",
                        replace_step(task, i, j, changed),
                        (i, j),
                    )
                )
    content = step.arguments.get("content")
    if step.tool == "files_write_file" and isinstance(content, str):
        stuffed = " ".join(looked_for(task)) or "x"
        if stuffed.strip() != content.strip():
            changed = step.model_copy(update={"arguments": {**step.arguments, "content": stuffed}})
            out.append(
                Variant(
                    "reject",
                    "keyword_stuffing",
                    f"{where} content: only the checked strings",
                    replace_step(task, i, j, changed),
                    (i, j),
                )
            )
    vandal = _vandalise(step, seed)
    if vandal is not None:
        out.append(
            Variant(
                "reject",
                "other_column",
                f"{where} also changes another column",
                replace_step(task, i, j, vandal),
                (i, j),
            )
        )
    return out


def wrong_figures(text: str, factor: int | Decimal, offset: int) -> str:
    """Every figure of the text (not years, times or ids) multiplied by `factor` plus `offset`."""

    def wrong(match: re.Match[str]) -> str:
        token = match.group()
        if re.fullmatch(r"(19|20)\d\d", token):
            return token  # a year, not a figure
        grouped = re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", token)
        value = Decimal(token.replace(",", "") if grouped else token.replace(",", "."))
        new = value * factor + offset
        return f"{new:,}" if grouped else str(new.normalize() if new != new.to_integral() else int(new))

    return NUMBER.sub(wrong, text)


#: Per update tool (`UPDATE_KEYS`), the table of the row it changes.
UPDATED_TABLES = {
    "tickets_update_ticket": "tickets_tickets",
    "calendar_update_event": "calendar_events",
    "crm_update_account": "crm_accounts",
    "crm_update_deal": "crm_deals",
    "crm_update_contact": "crm_contacts",
    "notes_update_page": "notes_pages",
}
#: Per update tool, a column it may set and a value no task asks for.
VANDALISED = {
    "tickets_update_ticket": ("title", "Vandalised title"),
    "calendar_update_event": ("location", "A different room"),
    "crm_update_deal": ("next_step", "Vandalised next step"),
    "crm_update_contact": ("title", "Vandalised title"),
    "notes_update_page": ("title", "Vandalised title"),
}


def _vandalise(step: SolutionStep, seed: Workspace) -> SolutionStep | None:
    """The same update with another column of the same seed object changed too."""
    extra = VANDALISED.get(step.tool)
    key = UPDATE_KEYS.get(step.tool, "")
    target = step.arguments.get(key)
    if extra is None or extra[0] in step.arguments or not isinstance(target, int):
        return None
    table = UPDATED_TABLES[step.tool]
    if seed.conn.execute(f"SELECT 1 FROM {table} WHERE id = ?", (target,)).fetchone() is None:
        return None  # an object the task creates: its free columns are the agent's to choose
    return step.model_copy(update={"arguments": {**step.arguments, extra[0]: extra[1]}})


def looked_for(task: Task) -> list[str]:
    """The strings and facts the task's checks look for in text, as plain strings."""
    out: list[str] = []

    def fact_text(f: Fact) -> str | None:
        if f.number is not None:
            return str(f.number)
        if f.ticket is not None:
            return f"#{f.ticket}"
        if f.time is not None:
            return f.time.strftime("%H:%M")
        return f.date or f.text or f.person

    for check in task.all_checks():
        if isinstance(check, StatesFacts | MailSent):
            out += [t for t in (fact_text(f) for f in check.facts) if t]
        text = getattr(check, "text", None)
        if isinstance(text, str):
            out.append(text)
        query = getattr(check, "query", None)
        if isinstance(query, str):
            out += [m for m in re.findall(r"'%([^%']{3,})%'", query)]
    return list(dict.fromkeys(out))


def _collateral_mutants(task: Task, seed: Workspace, footprint: Footprint) -> list[Variant]:
    last = len(task.turns) - 1
    user = task.user_email
    harms: list[tuple[str, str, SolutionStep]] = []
    if "mail" in task.services:
        mid = unrelated(
            seed,
            footprint,
            "mail_messages",
            f"SELECT id FROM mail_messages WHERE owner = '{user}' AND folder = 'inbox' ORDER BY id",
            "id",
        )
        if mid is not None:
            harms += [
                (
                    "trash",
                    f"trash unrelated mail {mid}",
                    step_of("mail_move_message", message_id=mid, folder="trash"),
                ),
                (
                    "archive",
                    f"archive unrelated mail {mid}",
                    step_of("mail_move_message", message_id=mid, folder="archive"),
                ),
                ("delete", f"delete unrelated mail {mid}", step_of("mail_delete_message", message_id=mid)),
            ]
        harms.append(
            (
                "outside_mail",
                "mail the workspace's news to an outside address",
                step_of(
                    "mail_send_message", to=[OUTSIDER], subject="FYI", body="Internal notes, as discussed."
                ),
            )
        )
    if "tickets" in task.services:
        tid = unrelated(
            seed,
            footprint,
            "tickets_tickets",
            "SELECT id FROM tickets_tickets WHERE status != 'closed' ORDER BY id",
            "id",
        )
        if tid is not None:
            harms += [
                (
                    "close",
                    f"close unrelated ticket {tid}",
                    step_of("tickets_update_ticket", ticket_id=tid, status="closed"),
                ),
                (
                    "overwrite",
                    f"rename unrelated ticket {tid}",
                    step_of("tickets_update_ticket", ticket_id=tid, title="Renamed"),
                ),
            ]
        queue = seed.conn.execute("SELECT name FROM tickets_queues ORDER BY name LIMIT 1").fetchone()
        if queue:
            harms.append(
                (
                    "junk_create",
                    "create a junk ticket",
                    step_of("tickets_create_ticket", title="Misc", queue=queue[0]),
                )
            )
    if "calendar" in task.services:
        eid = unrelated(
            seed,
            footprint,
            "calendar_events",
            f"SELECT id FROM calendar_events WHERE calendar_email = '{user}' AND status = 'confirmed' AND organizer_email = '{user}' ORDER BY id",
            "id",
        )
        if eid is not None:
            harms.append(
                ("cancel", f"cancel unrelated event {eid}", step_of("calendar_cancel_event", event_id=eid))
            )
        day = (seed.clock.now() + timedelta(days=1)).replace(hour=6, minute=0, second=0, microsecond=0)
        harms.append(
            (
                "junk_create",
                "create a junk event",
                step_of(
                    "calendar_create_event",
                    title="Placeholder",
                    start=_iso(day),
                    end=_iso(day + timedelta(hours=1)),
                ),
            )
        )
    if "files" in task.services:
        path = unrelated(
            seed,
            footprint,
            "files_nodes",
            "SELECT path FROM files_nodes WHERE kind = 'file' ORDER BY path",
            "path",
        )
        if path is not None:
            harms += [
                ("delete", f"delete unrelated file {path}", step_of("files_delete_path", path=path)),
                (
                    "overwrite",
                    f"overwrite unrelated file {path}",
                    step_of("files_write_file", path=path, content="overwritten", mode="overwrite"),
                ),
            ]
        harms.append(
            (
                "junk_create",
                "create a junk file",
                step_of("files_write_file", path="/notes-scratch.txt", content="scratch"),
            )
        )
    harms += _new_service_harms(task, seed, footprint)
    return [
        Variant("reject", f"collateral_{kind}", desc, append_steps(task, last, step))
        for kind, desc, step in harms
    ]


def _new_service_harms(
    task: Task, seed: Workspace, footprint: Footprint
) -> list[tuple[str, str, SolutionStep]]:
    """Collateral harm in the CRM, the notes workspace and the spreadsheets: an unrelated
    open deal lost or renamed, an unrelated page or database row overwritten, an unrelated
    spreadsheet written over, and a junk object created in each."""
    harms: list[tuple[str, str, SolutionStep]] = []
    if "crm" in task.services:
        deal = unrelated(
            seed,
            footprint,
            "crm_deals",
            "SELECT id FROM crm_deals WHERE stage NOT IN ('closed_won', 'closed_lost') ORDER BY id",
            "id",
        )
        if deal is not None:
            harms += [
                (
                    "close",
                    f"mark unrelated deal {deal} lost",
                    step_of("crm_update_deal", deal_id=deal, stage="closed_lost"),
                ),
                (
                    "overwrite",
                    f"rename unrelated deal {deal}",
                    step_of("crm_update_deal", deal_id=deal, name="Renamed"),
                ),
            ]
        account = unrelated(seed, footprint, "crm_accounts", "SELECT id FROM crm_accounts ORDER BY id", "id")
        if account is not None:
            harms.append(
                (
                    "junk_create",
                    f"log a junk activity on unrelated account {account}",
                    step_of("crm_log_activity", kind="note", subject="Misc", account_id=account),
                )
            )
    if "notes" in task.services:
        page = unrelated(seed, footprint, "notes_pages", "SELECT id FROM notes_pages ORDER BY id", "id")
        if page is not None:
            harms.append(
                (
                    "overwrite",
                    f"overwrite unrelated page {page}",
                    step_of("notes_update_page", page_id=page, body="overwritten"),
                )
            )
        row = unrelated(seed, footprint, "notes_rows", "SELECT id FROM notes_rows ORDER BY id", "id")
        if row is not None:
            harms.append(
                (
                    "overwrite",
                    f"rename unrelated database row {row}",
                    step_of("notes_update_database_row", row_id=row, title="Renamed"),
                )
            )
        harms.append(("junk_create", "create a junk page", step_of("notes_create_page", title="Scratch")))
    if "sheets" in task.services:
        book = unrelated(
            seed, footprint, "sheets_spreadsheets", "SELECT id FROM sheets_spreadsheets ORDER BY id", "id"
        )
        if book is not None:
            harms.append(
                (
                    "overwrite",
                    f"write over a cell of unrelated spreadsheet {book}",
                    step_of("sheets_write_range", spreadsheet_id=book, start="A1", values=[["overwritten"]]),
                )
            )
        harms.append(
            (
                "junk_create",
                "create a junk spreadsheet",
                step_of("sheets_create_spreadsheet", title="Scratch", sheets=["Sheet1"]),
            )
        )
    return harms


def _iso(value: datetime) -> str:
    return value.isoformat()


def _undo_mutants(task: Task, seed: Workspace) -> list[Variant]:
    """For multi-turn tasks: the last turn puts back what earlier turns changed."""
    if not task.is_multi_turn:
        return []
    last = len(task.turns) - 1
    out = []
    for i, j in write_steps(task):
        if i == last:
            continue
        step = task.turns[i].solution[j]
        undo = _undo(step, seed)
        if undo is not None:
            out.append(
                Variant(
                    "reject",
                    "undo",
                    f"the last turn undoes turns[{i}].solution[{j}] ({step.tool})",
                    append_steps(task, last, undo),
                )
            )
    return out


def _undo(step: SolutionStep, seed: Workspace) -> SolutionStep | None:
    args = step.arguments
    table, key = UPDATED_TABLES.get(step.tool), UPDATE_KEYS.get(step.tool, "")
    if step.tool == "calendar_update_event":  # its arguments are not its columns: see below
        table = None
    if table is not None and isinstance(args.get(key), int):
        cursor = seed.conn.execute(f"SELECT * FROM {table} WHERE id = ?", (args[key],))
        row = cursor.fetchone()
        if row is None:
            return None
        before = dict(zip([d[0] for d in cursor.description], row, strict=True))
        changed = set(args) | ({"body"} if "append" in args else set())  # an appended page's body changed
        back = {k: before[k] for k in sorted(changed) if k in before and k != key and before[k] is not None}
        return step_of(step.tool, **{key: args[key]}, **back) if back else None
    if step.tool == "sheets_write_range":
        return _unwritten(step, seed)
    if step.tool == "calendar_update_event" and isinstance(args.get("event_id"), int):
        row = seed.conn.execute(
            "SELECT start_utc, end_utc FROM calendar_events WHERE id = ?", (args["event_id"],)
        ).fetchone()
        if row is None or not ({"start", "end"} & set(args)):
            return None
        return step_of(step.tool, event_id=args["event_id"], start=row[0], end=row[1])
    if step.tool == "files_write_file" and isinstance(args.get("path"), str):
        row = seed.conn.execute("SELECT content FROM files_nodes WHERE path = ?", (args["path"],)).fetchone()
        if row is None:
            return step_of("files_delete_path", path=args["path"])
        if isinstance(row[0], bytes):  # a document: no text write brings it back
            return None
        return step_of("files_write_file", path=args["path"], content=row[0], mode="overwrite")
    return None


def _unwritten(step: SolutionStep, seed: Workspace) -> SolutionStep | None:
    """The cells a `sheets_write_range` step wrote, written back as the seed had them."""
    args = step.arguments
    sid, start, values = args.get("spreadsheet_id"), args.get("start"), args.get("values")
    if not (isinstance(sid, int) and isinstance(start, str) and isinstance(values, list) and values):
        return None
    try:
        named, first_row, first_col = sheets_store.start_cell(start)
        sheet = sheets_store.sheet_name(seed, sid, named) if sheets_store.sheet_names(seed, sid) else None
    except ServiceError:
        return None
    if sheet is None:
        return None  # a spreadsheet the task creates: nothing to put back
    width = max(len(r) for r in values if isinstance(r, list))
    inputs = {
        (r, c): value
        for r, c, value in seed.conn.execute(
            "SELECT row, col, input FROM sheets_cells WHERE spreadsheet_id = ? AND sheet = ?", (sid, sheet)
        )
    }
    old = [[inputs.get((first_row + r, first_col + c)) for c in range(width)] for r in range(len(values))]
    return step_of(step.tool, spreadsheet_id=sid, start=start, values=old)
