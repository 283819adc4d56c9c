"""The demo workspace: a believable small company, the same for the same seed."""

from coworkenv.servers.render import northwind_workspace
from coworkenv.worlds import northwind


def count(ws, table: str, where: str = "1") -> int:
    return ws.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}").fetchone()[0]


def test_the_demo_has_the_promised_size() -> None:
    ws = northwind_workspace(seed=0)
    assert ws.services == ("mail", "tickets", "calendar", "files", "directory")
    assert (count(ws, "directory_people", "internal = 1"), count(ws, "directory_people", "internal = 0")) == (
        18,
        8,
    )
    assert count(ws, "mail_messages") == 200
    assert count(ws, "tickets_tickets") == 60
    assert count(ws, "calendar_events") == 80
    assert count(ws, "files_nodes", "kind = 'file'") == 40
    assert ws.meta("user_email") == northwind(0).user == "kimberly.smith@northwind.example"
    assert ws.clock.now_text() == "2026-03-02T09:00:00+00:00"
    assert ws.audit.entries() == []
    assert ws.integrity_check() == "ok"


def test_the_same_seed_gives_the_same_workspace_and_another_seed_a_different_one() -> None:
    assert northwind_workspace(seed=0).content_hash() == northwind_workspace(seed=0).content_hash()
    assert northwind_workspace(seed=0).content_hash() != northwind_workspace(seed=1).content_hash()


def test_a_service_has_the_same_rows_whatever_other_services_are_enabled() -> None:
    everything = northwind_workspace(seed=0)
    mail_only = northwind_workspace(seed=0, services=("mail",))
    tickets_only = northwind_workspace(seed=0, services=("tickets",))
    messages = "SELECT id, thread_id, folder, from_addr, subject, body, sent_at, is_read FROM mail_messages ORDER BY id"
    assert everything.conn.execute(messages).fetchall() == mail_only.conn.execute(messages).fetchall()
    tickets = "SELECT * FROM tickets_tickets ORDER BY id"
    assert everything.conn.execute(tickets).fetchall() == tickets_only.conn.execute(tickets).fetchall()
    # attachments point at demo files only when the files service is there
    assert count(everything, "mail_attachments") > 0
    assert count(mail_only, "mail_attachments") == 0
