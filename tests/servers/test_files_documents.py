"""Documents in the files service through real MCP clients: add_document plants one,
open_document shows it as image content (a PDF as page images and text layer),
extract_text reads it, the other tools tell it from a text file, a mail carries it, and
bad arguments are clear errors."""

import base64
import io
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from PIL import Image

from coworkenv.servers import apply_world_operation, build_server, create_workspace
from coworkenv.servers.files import store
from coworkenv.servers.files.evidence import delivery
from coworkenv.servers.files.evidence.transcript import KEY
from coworkenv.state import Workspace
from tests.conftest import START
from tests.servers.test_files import USER, call, error
from tests.servers.test_files_evidence import PINNED, SPECS
from tests.test_transports import free_port

NOW = "2026-03-02T09:00:00+00:00"
FINANCE = "/finance"


def plant(ws: Workspace, path: str, kind: str, **change: Any) -> dict[str, Any]:
    return apply_world_operation(
        ws, "files", "add_document", {"path": path, "document": SPECS[kind] | change, "modified_by": USER}
    )


@pytest.fixture
def ws() -> Workspace:
    """/finance/inv-0412.pdf, /finance/receipt.jpg, /reports/revenue.png and /notes.md."""
    ws = create_workspace(["files", "mail"], clock_start=START, user_email=USER)
    plant(ws, "/finance/inv-0412.pdf", "invoice")
    plant(ws, "/finance/receipt.jpg", "receipt")
    plant(ws, "/reports/revenue.png", "bar_chart")
    apply_world_operation(ws, "files", "add_file", {"path": "/notes.md", "content": "cafe notes\n"})
    return ws


async def view(ws: Workspace, args: dict[str, Any]) -> Any:
    """The whole result of one open_document call."""
    with anyio.fail_after(10):
        async with Client(build_server(ws, "files")) as client:
            return await client.call_tool("open_document", args)


def test_add_document_plants_the_rendered_file_and_says_what_it_is(ws: Workspace) -> None:
    assert plant(ws, "/forms/address.png", "form") == {
        "path": "/forms/address.png",
        "size": 83890,
        "mime_type": "image/png",
    }
    row = ws.conn.execute(
        "SELECT typeof(content), size, modified_by, created_at FROM files_nodes WHERE path = ?",
        ("/forms/address.png",),
    ).fetchone()
    assert row == ("blob", 83890, USER, NOW)


def test_a_seed_with_documents_has_its_pinned_content_hash(ws: Workspace) -> None:
    assert ws.content_hash() == "440a706ff7ddf12ed713213dd94870d3b87ac6880dbcc8d84f17064fae9be267"


async def test_open_document_shows_an_image_as_image_content_without_its_transcript(ws: Workspace) -> None:
    result = await view(ws, {"path": "/finance/receipt.jpg"})
    assert not result.is_error
    assert [block.type for block in result.content] == ["text", "image"]
    assert result.content[0].text == "/finance/receipt.jpg is a JPEG image of 484 x 568 pixels."
    image = result.content[1]
    assert image.mime_type == "image/jpeg"
    shown = base64.b64decode(image.data)
    assert KEY not in shown
    stored = ws.conn.execute(
        "SELECT content FROM files_nodes WHERE path = '/finance/receipt.jpg'"
    ).fetchone()[0]
    assert Image.open(io.BytesIO(shown)).tobytes() == Image.open(io.BytesIO(stored)).tobytes()
    assert result.structured_content == {
        "path": "/finance/receipt.jpg",
        "mime_type": "image/jpeg",
        "pages": 1,
        "first_page": 1,
        "last_page": 1,
        "images": 1,
        "next_first_page": None,
    }


async def test_open_document_shows_each_pdf_page_as_an_image_with_its_text_layer(ws: Workspace) -> None:
    result = await view(ws, {"path": "/finance/inv-0412.pdf"})
    assert [block.type for block in result.content] == ["text", "image", "text"]
    assert result.content[0].text == "/finance/inv-0412.pdf is a PDF document of 1 page; page 1 follows."
    page = Image.open(io.BytesIO(base64.b64decode(result.content[1].data)))
    assert (result.content[1].mime_type, page.format, page.size) == ("image/png", "PNG", (1132, 1600))
    assert result.content[2].text.startswith("Text layer of page 1:\nBrightline Supplies GmbH INVOICE\n")
    assert "Total (EUR) 623.02" in result.content[2].text.splitlines()


async def test_a_long_pdf_is_shown_four_pages_at_a_time(ws: Workspace) -> None:
    items = [{"description": f"Part {i}", "quantity": 1, "unit_price": "1.00"} for i in range(200)]
    plant(ws, "/finance/long.pdf", "invoice", items=items)
    first = await view(ws, {"path": "/finance/long.pdf"})
    assert first.structured_content == {
        "path": "/finance/long.pdf",
        "mime_type": "application/pdf",
        "pages": 6,
        "first_page": 1,
        "last_page": 4,
        "images": 4,
        "next_first_page": 5,
    }
    assert first.content[0].text == (
        "/finance/long.pdf is a PDF document of 6 pages; pages 1-4 follow "
        "(call again with first_page=5 for the rest)."
    )
    rest = await view(ws, {"path": "/finance/long.pdf", "first_page": 5})
    assert (rest.structured_content["last_page"], rest.structured_content["next_first_page"]) == (6, None)
    assert [b.type for b in rest.content] == ["text", *["image", "text"] * 2]


async def test_an_image_larger_than_the_bounds_is_scaled_down(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delivery, "MAX_IMAGE_SIDE", 400)
    result = await view(ws, {"path": "/reports/revenue.png"})
    shown = Image.open(io.BytesIO(base64.b64decode(result.content[1].data)))
    assert (result.content[1].mime_type, shown.size) == ("image/png", (400, 260))
    monkeypatch.setattr(delivery, "MAX_IMAGE_PIXELS", 10_000)
    result = await view(ws, {"path": "/reports/revenue.png"})
    assert Image.open(io.BytesIO(base64.b64decode(result.content[1].data))).size == (124, 80)


async def test_extract_text_reads_a_pdf_text_layer_exactly(ws: Workspace) -> None:
    found = await call(ws, "extract_text", {"path": "/finance/inv-0412.pdf"})
    assert {k: v for k, v in found.items() if k != "text"} == {
        "path": "/finance/inv-0412.pdf",
        "mime_type": "application/pdf",
        "method": "text_layer",
        "pages": 1,
        "first_page": 1,
        "last_page": 1,
        "truncated": False,
    }
    assert found["text"].startswith("--- page 1 ---\nBrightline Supplies GmbH INVOICE\nHafenstrasse 12\n")
    assert "Invoice number: INV-2026-0412" in found["text"].splitlines()


async def test_extract_text_reads_an_image_as_an_ocr_does_the_same_way_every_time(ws: Workspace) -> None:
    found = await call(ws, "extract_text", {"path": "/finance/receipt.jpg"})
    assert found == {
        "path": "/finance/receipt.jpg",
        "mime_type": "image/jpeg",
        "method": "ocr",
        "pages": 1,
        "first_page": 1,
        "last_page": 1,
        "text": "CAFE LINDE\nLindenstr. 4\nBerlin\n2026-02-27 12:41\nLunch menu  14.90\nEsprcsso  2.80\n"
        "Water 0.5l  .10\nTOTAL EUR  20.80\nPaid: Card\nThank you!",
        "truncated": False,
    }
    assert await call(ws, "extract_text", {"path": "/finance/receipt.jpg"}) == found
    await call(ws, "copy_path", {"source": "/finance/receipt.jpg", "destination": "/finance/copy.jpg"})
    copy = await call(ws, "extract_text", {"path": "/finance/copy.jpg"})
    assert copy["text"] == found["text"]  # the same bytes read the same


async def test_the_other_tools_tell_a_document_from_a_text_file(ws: Workspace) -> None:
    assert await call(ws, "read_file", {"path": "/finance/receipt.jpg"}) == error(
        "read_file",
        "'/finance/receipt.jpg' is a document (PDF or image), not a text file: open_document shows it, "
        "extract_text gives its text",
    )
    info = await call(ws, "get_file_info", {"path": "/finance/inv-0412.pdf"})
    assert (info["size"], info["line_count"]) == (3870, None)
    found = await call(ws, "search_files", {"content": "Brightline"})
    assert found["total"] == 0  # documents are found by name, not by text
    by_name = await call(ws, "search_files", {"name_glob": "*.pdf"})
    assert [m["path"] for m in by_name["matches"]] == ["/finance/inv-0412.pdf"]
    assert await call(
        ws, "write_file", {"path": "/finance/receipt.jpg", "content": "x", "mode": "append"}
    ) == error(
        "write_file",
        "'/finance/receipt.jpg' is a document (PDF or image), not a text file; text cannot be appended to it",
    )
    moved = await call(ws, "move_path", {"source": "/finance/receipt.jpg", "destination": "/receipt.jpg"})
    assert moved["entries"] == 1
    assert (await view(ws, {"path": "/receipt.jpg"})).content[1].mime_type == "image/jpeg"


@pytest.mark.parametrize(
    "tool, args, message",
    [
        (
            "open_document",
            {"path": "/notes.md"},
            "'/notes.md' is a text file, not a document or image; read it with read_file",
        ),
        (
            "open_document",
            {"path": "/finance"},
            "'/finance' is a directory, not a file; list_directory shows what it holds",
        ),
        (
            "open_document",
            {"path": "/finance/missing.pdf"},
            "no file or directory at '/finance/missing.pdf'; list_directory on '/finance' shows what is there",
        ),
        (
            "open_document",
            {"path": "/finance/inv-0412.pdf", "first_page": 2},
            "first_page 2 is past the end of '/finance/inv-0412.pdf', which has 1 page",
        ),
        (
            "open_document",
            {"path": "/finance/receipt.jpg", "first_page": 2},
            "'/finance/receipt.jpg' is an image, a single page; leave first_page at 1",
        ),
        (
            "extract_text",
            {"path": "/finance/inv-0412.pdf", "first_page": 1, "last_page": 0},
            "invalid arguments. last_page: Input should be greater than or equal to 1 (got 0). "
            "Fix these arguments and call again.",
        ),
        (
            "open_document",
            {"path": "/finance/inv-0412.pdf", "first_page": "two"},
            "invalid arguments. first_page: Input should be a valid integer, unable to parse string as an "
            "integer (got 'two'). Fix these arguments and call again.",
        ),
    ],
)
async def test_a_bad_argument_is_an_error_saying_what_to_do(
    ws: Workspace, tool: str, args: dict[str, Any], message: str
) -> None:
    assert await call(ws, tool, args) == error(tool, message)


@pytest.mark.parametrize(
    "params, message",
    [
        (
            {"path": "/finance/receipt.png", "document": SPECS["receipt"]},
            "'/finance/receipt.png' does not end with .jpg or .jpeg, as a receipt rendered as image/jpeg should",
        ),
        (
            {"path": "/finance/inv-0412.pdf", "document": SPECS["invoice"]},
            "'/finance/inv-0412.pdf' already exists; choose another path for the document",
        ),
        (
            {"path": "/x.pdf", "document": SPECS["invoice"] | {"kind": "memo"}},
            "invalid parameters for files.add_document: document: Input tag 'memo' found using 'kind' does not "
            "match any of the expected tags: 'invoice', 'purchase_order', 'receipt', 'bar_chart', 'line_chart', "
            "'error_dialog', 'form'",
        ),
    ],
)
def test_add_document_refuses_what_it_cannot_plant_and_changes_nothing(
    ws: Workspace, params: dict[str, Any], message: str
) -> None:
    before = ws.content_hash()
    with pytest.raises(ValueError) as info:
        apply_world_operation(ws, "files", "add_document", params)
    assert str(info.value) == message
    assert ws.content_hash() == before


async def test_a_mail_carries_a_document_and_its_delivery_logs_the_bytes_hash(ws: Workspace) -> None:
    with anyio.fail_after(10):
        async with Client(build_server(ws, "mail")) as client:
            sent = await client.call_tool(
                "send_message",
                {
                    "to": ["ap@brightline.example"],
                    "subject": "Receipt",
                    "body": "Attached.",
                    "attachments": ["/finance/receipt.jpg"],
                },
            )
    assert sent.structured_content["attachments"] == [{"path": "/finance/receipt.jpg", "name": "receipt.jpg"}]
    (attachments,) = ws.conn.execute("SELECT attachments FROM mail_deliveries").fetchone()
    assert attachments == (
        '[{"path": "/finance/receipt.jpg", "name": "receipt.jpg", "content": "", "sha256": "'
        + PINNED["receipt"]
        + '"}]'
    )


async def test_a_saved_workspace_shows_a_document_over_stdio(tmp_path: Path) -> None:
    ws = create_workspace(["files"], clock_start=START)
    plant(ws, "/reports/revenue.png", "bar_chart")
    saved = ws.save(tmp_path / "ws.db")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "coworkenv", "serve", "--service", "files", "--db", str(saved)]
    )
    with anyio.fail_after(30):
        async with Client(stdio_client(params)) as client:
            result = await client.call_tool("open_document", {"path": "/reports/revenue.png"})
            text = await client.call_tool("extract_text", {"path": "/reports/revenue.png"})
    assert [(b.type, getattr(b, "mime_type", None)) for b in result.content] == [
        ("text", None),
        ("image", "image/png"),
    ]
    assert Image.open(io.BytesIO(base64.b64decode(result.content[1].data))).size == (800, 520)
    assert text.structured_content["text"].startswith("Revenue by quarter 2025\n")


def test_add_example_documents_plants_one_of_each_kind(ws: Workspace) -> None:
    assert apply_world_operation(ws, "files", "add_example_documents", {"folder": "/demo"}) == {
        "paths": [
            "/demo/invoice.pdf",
            "/demo/purchase-order.pdf",
            "/demo/receipt.jpg",
            "/demo/bar-chart.png",
            "/demo/line-chart.png",
            "/demo/error-dialog.png",
            "/demo/form.png",
        ]
    }


async def test_serve_demo_with_documents_shows_them_over_stdio() -> None:
    args = ["-m", "coworkenv", "serve", "--service", "files", "--demo", "--documents"]
    params = StdioServerParameters(command=sys.executable, args=args)
    with anyio.fail_after(60):
        async with Client(stdio_client(params)) as client:
            listed = await client.call_tool("list_directory", {"path": "/examples/documents"})
            pdf = await client.call_tool("open_document", {"path": "/examples/documents/invoice.pdf"})
    assert [e["name"] for e in listed.structured_content["entries"]] == [
        "bar-chart.png",
        "error-dialog.png",
        "form.png",
        "invoice.pdf",
        "line-chart.png",
        "purchase-order.pdf",
        "receipt.jpg",
    ]
    assert [(b.type, getattr(b, "mime_type", None)) for b in pdf.content] == [
        ("text", None),
        ("image", "image/png"),
        ("text", None),
    ]


async def test_the_combined_server_shows_a_document_over_streamable_http(tmp_path: Path) -> None:
    ws = create_workspace(["files"], clock_start=START)
    plant(ws, "/finance/inv-0412.pdf", "invoice")
    saved = ws.save(tmp_path / "ws.db")
    port = free_port()
    args = ["-m", "coworkenv", "serve", "--transport", "http", "--port", str(port), "--db", str(saved)]
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with anyio.fail_after(60):
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                        break
                except OSError:
                    assert proc.poll() is None, "the server exited"
                    await anyio.sleep(0.05)
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                result = await client.call_tool("files_open_document", {"path": "/finance/inv-0412.pdf"})
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert [(b.type, getattr(b, "mime_type", None)) for b in result.content] == [
        ("text", None),
        ("image", "image/png"),
        ("text", None),
    ]
    assert result.structured_content["pages"] == 1
    assert "Total (EUR) 623.02" in result.content[2].text.splitlines()


async def test_a_damaged_document_is_an_error_saying_so_not_a_crash(ws: Workspace) -> None:
    store.add_document(ws, "/finance/broken.pdf", b"%PDF-1.7\nnot really a PDF", at=NOW, by=None)
    store.add_document(ws, "/finance/unknown.bin", b"\x00\x01binary", at=NOW, by=None)
    status, message = await call(ws, "open_document", {"path": "/finance/broken.pdf"})
    assert (status, message.split(" (")[0]) == (
        "error",
        "Error executing tool open_document: the PDF cannot be read",
    )
    assert await call(ws, "extract_text", {"path": "/finance/unknown.bin"}) == error(
        "extract_text", "the file is not a PDF, PNG or JPEG document"
    )
    # the lock on the PDF reader is free again: a good PDF still opens
    assert (await view(ws, {"path": "/finance/inv-0412.pdf"})).structured_content["pages"] == 1
