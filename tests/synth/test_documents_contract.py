"""A task whose evidence is a document meets the whole validation contract: its seed plants a
receipt photo, the reference solution opens it, copies it and mails it as an attachment, and
every stage (diff, collateral, leak index, mutants, acceptance) reads the document's bytes
without tripping on them."""

from coworkenv.servers.files.evidence.examples import EXAMPLES
from coworkenv.synth.validation.validation import validate_task
from coworkenv.task import Task

TASK = Task.model_validate(
    {
        "id": "files-forward-receipt",
        "title": "Copy a receipt photo to the expenses folder and mail it to finance",
        "capabilities": ["document_editing"],
        "services": ["files", "mail", "directory"],
        "clock_start": "2026-03-02T09:00:00Z",
        "user_email": "kimberly.smith@northwind.example",
        "seed": {
            "procedural": {"name": "demo", "params": {"seed": 0}},
            "operations": [
                {
                    "service": "files",
                    "operation": "add_document",
                    "params": {
                        "path": "/inbox/receipt.jpg",
                        "document": EXAMPLES["receipt"],
                        "modified_by": "kimberly.smith@northwind.example",
                        "created_at": "2026-02-27T13:00:00Z",
                    },
                },
            ],
        },
        "context": {
            "role": "You are an AI assistant for Kimberly Smith.",
            "company": "Northwind",
            "user_name": "Kimberly Smith",
        },
        "turns": [
            {
                "user": "Please copy /inbox/receipt.jpg to /shared/expenses/receipt.jpg and mail finance (walter.pratt@northwind.example) the total of that receipt, with the receipt attached.",
                "checks": [
                    {
                        "id": "copied",
                        "type": "row_exists",
                        "description": "the copy exists",
                        "table": "files_nodes",
                        "where": {"path": "/shared/expenses/receipt.jpg"},
                    },
                    {
                        "id": "mailed",
                        "type": "mail_sent",
                        "description": "Walter gets the total",
                        "to": ["walter.pratt@northwind.example"],
                        "facts": [{"number": "20.80"}],
                    },
                ],
                "solution": [
                    {"tool": "files_open_document", "arguments": {"path": "/inbox/receipt.jpg"}},
                    {
                        "tool": "files_create_directory",
                        "arguments": {"path": "/shared/expenses", "parents": True, "exist_ok": True},
                    },
                    {
                        "tool": "files_copy_path",
                        "arguments": {
                            "source": "/inbox/receipt.jpg",
                            "destination": "/shared/expenses/receipt.jpg",
                        },
                    },
                    {
                        "tool": "mail_send_message",
                        "arguments": {
                            "to": ["walter.pratt@northwind.example"],
                            "subject": "Receipt",
                            "body": "The lunch receipt comes to EUR 20.80; attached.",
                            "attachments": ["/shared/expenses/receipt.jpg"],
                        },
                    },
                ],
            }
        ],
    }
)


async def test_a_task_planting_a_document_passes_every_stage_of_the_contract() -> None:
    report = await validate_task(TASK)
    assert [(s.name, s.passed, s.skipped) for s in report.stages] == [
        ("seed", True, False),
        ("checks", True, False),
        ("noop", True, False),
        ("oracle", True, False),
        ("no_peeking", True, False),
        ("deterministic", True, False),
        ("mutants", True, False),
        ("acceptance", True, False),
    ]
