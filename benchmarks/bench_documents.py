"""Documents and images: rendering each kind, against encoding a blank file of the same
size and format (for a PDF, a blank one-page PDF); and a 300-person world seeded with its
documents, against the same world seeded without them (target: under one second in all)."""

import io
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from fpdf import FPDF
from PIL import Image
from pydantic import TypeAdapter

from coworkenv.servers import apply_world_operation
from coworkenv.servers.files.evidence.examples import EXAMPLES
from coworkenv.servers.files.evidence.render import render
from coworkenv.servers.files.evidence.specs import DocumentSpec
from coworkenv.servers.render import render_workspace
from coworkenv.world import World
from coworkenv.worlds import PROFILES, generate_world

from .timing import report

CREATED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SPEC: TypeAdapter[Any] = TypeAdapter(DocumentSpec)
WORLD_TARGET_SECONDS = 1.0


def _median_us(fn: Callable[[], Any], repeat: int = 9) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000


def _blank(data: bytes) -> Callable[[], bytes]:
    """Encoding a blank file like `data`: the least a renderer of it must do."""
    if data.startswith(b"%PDF-"):

        def blank_pdf() -> bytes:
            pdf = FPDF()
            pdf.set_compression(False)
            pdf.set_creation_date(CREATED)
            pdf.add_page()
            return bytes(pdf.output())

        return blank_pdf
    image = Image.open(io.BytesIO(data))
    blank = Image.new(image.mode, image.size, "white")
    fmt = image.format or "PNG"

    def blank_image() -> bytes:
        buffer = io.BytesIO()
        blank.save(buffer, format=fmt)
        return buffer.getvalue()

    return blank_image


def world_documents(world: World) -> list[dict[str, Any]]:
    """The documents a 300-person world plants for its tasks: invoices and purchase orders
    from its vendors for its products, receipts of its people's expenses, charts of its
    ticket queues, an error screenshot and signed forms."""
    vendors = [o for o in world.organizations if o.kind == "vendor"] or world.organizations
    products = world.products or []
    us = {"name": world.name, "address": ["Finance department"]}
    day = world.start.date()
    out: list[dict[str, Any]] = []
    for i, vendor in enumerate(vendors[:3]):
        items = [
            {"description": p.name[:50], "quantity": 1 + (i + j) % 7, "unit_price": f"{p.price:.2f}"}
            for j, p in enumerate(products[i : i + 6] or products[:1])
        ] or [{"description": "Services", "quantity": 1, "unit_price": "100.00"}]
        seller = {"name": vendor.name, "address": [vendor.domain]}
        out.append(
            {
                "path": f"/finance/invoices/inv-{i + 1:04d}.pdf",
                "document": {
                    "kind": "invoice",
                    "number": f"INV-{i + 1:04d}",
                    "issued": (day - timedelta(days=20)).isoformat(),
                    "due": (day + timedelta(days=10)).isoformat(),
                    "seller": seller,
                    "buyer": us,
                    "items": items,
                    "currency": world.currency,
                    "tax_percent": "19",
                },
            }
        )
        out.append(
            {
                "path": f"/finance/orders/po-{i + 1:04d}.pdf",
                "document": {
                    "kind": "purchase_order",
                    "number": f"PO-{i + 1:04d}",
                    "issued": (day - timedelta(days=40)).isoformat(),
                    "deliver_by": (day - timedelta(days=25)).isoformat(),
                    "buyer": us,
                    "supplier": seller,
                    "items": items,
                    "currency": world.currency,
                },
            }
        )
    for i, person in enumerate(world.people[:6]):
        out.append(
            {
                "path": f"/finance/expenses/{person.email.split('@')[0]}/receipt-{i + 1}.jpg",
                "document": {
                    "kind": "receipt",
                    "merchant": f"Cafe {person.name.split()[-1]}"[:32],
                    "when": f"{day - timedelta(days=i + 1)} 12:{10 + i}",
                    "currency": world.currency,
                    "items": [
                        {"description": "Lunch", "amount": f"{12 + i}.90"},
                        {"description": "Coffee", "amount": "2.80"},
                    ],
                    "skew_degrees": (i % 5) - 2,
                    "noise": 0.1 * (i % 6),
                },
            }
        )
    queues = world.queues[:6]
    for kind in ("bar_chart", "line_chart"):
        out.append(
            {
                "path": f"/reports/tickets-{kind}.png",
                "document": {
                    "kind": kind,
                    "title": "Tickets per queue",
                    "categories": [q.name[:12] for q in queues],
                    "series": [{"name": "Tickets", "values": [q.tickets for q in queues]}],
                },
            }
        )
    out.append(
        {
            "path": "/support/screenshots/sync-error.png",
            "document": {
                "kind": "error_dialog",
                "application": "Portal",
                "title": "Upload failed",
                "message": ["The file could not be uploaded: the connection was reset."],
                "code": "E-5003",
            },
        }
    )
    for person in world.people[6:8]:
        out.append(
            {
                "path": f"/people/forms/{person.email.split('@')[0]}-address.png",
                "document": {
                    "kind": "form",
                    "title": "Address change",
                    "fields": [
                        {"label": "Name", "value": person.name[:42]},
                        {"label": "Email", "value": person.email[:42]},
                    ],
                    "signed_by": person.name[:40],
                    "signed_on": day.isoformat(),
                },
            }
        )
    return out


def run() -> list[dict]:
    results = []
    for kind, spec in EXAMPLES.items():
        parsed = SPEC.validate_python(spec)
        data = render(parsed, CREATED).data
        floor = _blank(data)
        label = f"render {kind} ({len(data) // 1000} kB)"
        results.append(
            report(
                label,
                _median_us(lambda parsed=parsed: render(parsed, CREATED)),
                _median_us(floor),
                "blank file",
            )
        )
    world = generate_world(PROFILES["telecom"], 300, 1)
    documents = world_documents(world)

    def seed_with_documents() -> None:
        ws = render_workspace(world)
        for document in documents:
            apply_world_operation(ws, "files", "add_document", document)

    seeded_us = _median_us(lambda: render_workspace(world), repeat=5)
    with_documents_us = _median_us(seed_with_documents, repeat=5)
    label = f"telecom:300 seed + {len(documents)} documents"
    results.append(report(label, with_documents_us, seeded_us, "telecom:300 seed alone"))
    seconds = with_documents_us / 1e6
    verdict = "met" if seconds < WORLD_TARGET_SECONDS else "MISSED"
    print(f"{label}: {seconds:.2f} s (target < {WORLD_TARGET_SECONDS:.0f} s: {verdict})")
    return results


if __name__ == "__main__":
    run()
