"""Documents rendered from facts: the same spec gives the same bytes (pinned by hash), each
kind renders as its format with what it says readable back, the transcript stays out of
what an agent is shown, and the OCR's mistakes are deterministic and as frequent as the
scan is noisy. `SPECS` (the package's examples) is shared with test_files_documents."""

import difflib
import hashlib
import io
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from PIL import Image
from pydantic import TypeAdapter, ValidationError

from coworkenv.servers.files.evidence import delivery
from coworkenv.servers.files.evidence.examples import EXAMPLES
from coworkenv.servers.files.evidence.ocr import error_rates, recognize
from coworkenv.servers.files.evidence.render import render
from coworkenv.servers.files.evidence.specs import DocumentSpec, Invoice, Receipt
from coworkenv.servers.files.evidence.transcript import (
    KEY,
    Transcript,
    mime_type_of,
    read_transcript,
    without_transcript,
)

CREATED = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SPEC = TypeAdapter(DocumentSpec)

SPECS = EXAMPLES

#: SHA-256 of each spec's file, rendered at `CREATED`: a change to how documents are drawn
#: (a renderer, a library's output) shows up here as a reviewed diff.
PINNED = {
    "invoice": "94dd8b4d308ac93f38fce4a5b908d3d062679780736b61af30a47c301c5a0004",
    "purchase_order": "368b37748f2c518db5507db76d7bce922c11fa92e1f151c14829d0234644ae3d",
    "receipt": "9b6169b91a1803640d9e8af57e2e75769ed18c9c0fe528d06032098551f123ff",
    "bar_chart": "030858a09644f9ee84c0bd3db0956ff221674e0b78b9c5074dee5ceff9fa7bd4",
    "line_chart": "5993ef829e3991ac794924629c5e3936f00dbae04037bb94419ca61ebc335ec2",
    "error_dialog": "c24a03ae6da36430956dacf3e158d26c7ef6b5bc3a4ba37854900713034c16b1",
    "form": "4ef8533f9abf036fcf4e7cb0dfd9ec2d569bb72aac289ed03b1c5f884f3458f6",
}


def rendered(kind: str, **change: Any) -> bytes:
    return render(SPEC.validate_python(SPECS[kind] | change), CREATED).data


@pytest.mark.parametrize("kind", list(SPECS))
def test_a_document_renders_to_its_pinned_bytes(kind: str) -> None:
    assert hashlib.sha256(rendered(kind)).hexdigest() == PINNED[kind]


@pytest.mark.parametrize("kind", list(SPECS))
def test_the_same_spec_renders_the_same_bytes_and_another_fact_other_bytes(kind: str) -> None:
    assert rendered(kind) == rendered(kind)
    other = {"number": "INV-2026-0413"} if kind == "invoice" else {"title": "Another title"}
    if kind in ("purchase_order", "receipt"):
        other = {"issued": "2026-02-02"} if kind == "purchase_order" else {"when": "2026-02-28 09:10"}
    assert rendered(kind, **other) != rendered(kind)


@pytest.mark.parametrize(
    "kind, mime, size",
    [
        ("receipt", "image/jpeg", (484, 568)),
        ("bar_chart", "image/png", (800, 520)),
        ("line_chart", "image/png", (800, 520)),
        ("error_dialog", "image/png", (840, 344)),
        ("form", "image/png", (938, 588)),
    ],
)
def test_an_image_has_its_format_and_size(kind: str, mime: str, size: tuple[int, int]) -> None:
    data = rendered(kind)
    assert mime_type_of(data) == mime
    assert Image.open(io.BytesIO(data)).size == size


def test_a_pdf_creation_date_is_the_time_given_not_the_wall_clock() -> None:
    data = rendered("invoice")
    assert data.startswith(b"%PDF-")
    assert b"/CreationDate (D:20260302090000Z" in data
    assert b"/Producer (coworkenv)" in data
    later = render(SPEC.validate_python(SPECS["invoice"]), datetime(2026, 3, 3, tzinfo=UTC)).data
    assert later != data


def test_an_invoice_pdf_text_layer_holds_its_facts_and_totals() -> None:
    found = delivery.extract_text("/inv.pdf", rendered("invoice"), 1, None)
    assert (found.method, found.pages, found.first_page, found.last_page) == ("text_layer", 1, 1, 1)
    lines = found.text.splitlines()
    for line in [
        "Invoice number: INV-2026-0412",
        "Due date: 2026-03-22",
        "Your order: PO-7731",
        "Cable set, 5 m 12 18.40 220.80",
        "Wall bracket 2.5 7.10 17.75",
        "Subtotal 523.55",
        "Tax 19% 99.47",
        "Total (EUR) 623.02",
    ]:
        assert line in lines


def test_the_totals_of_a_trade_document_are_computed_from_its_items() -> None:
    invoice = Invoice.model_validate(SPECS["invoice"])
    assert (invoice.subtotal, invoice.tax, invoice.total) == (
        Decimal("523.55"),
        Decimal("99.47"),
        Decimal("623.02"),
    )
    assert Receipt.model_validate(SPECS["receipt"]).total == Decimal("20.80")


def test_a_long_invoice_runs_over_pages_with_the_header_repeated() -> None:
    items = [{"description": f"Part {i}", "quantity": 1, "unit_price": "1.00"} for i in range(130)]
    data = rendered("invoice", items=items)
    found = delivery.extract_text("/inv.pdf", data, 1, None)
    assert found.pages == 4
    assert found.text.count("Description Qty Unit price (EUR) Amount (EUR)") == 4
    assert "Page 4 of 4" in found.text
    assert "Total (EUR) 154.70" in found.text.splitlines()


def test_an_image_keeps_what_it_reads_as_and_the_agent_copy_drops_it() -> None:
    data = rendered("receipt")
    assert read_transcript(data) == Transcript(
        "CAFE LINDE\nLindenstr. 4\nBerlin\n2026-02-27 12:41\nLunch menu  14.90\nEspresso  2.80\n"
        "Water 0.5l  3.10\nTOTAL EUR  20.80\nPaid: Card\nThank you!",
        0.4,
    )
    shown = without_transcript(data)
    assert KEY not in shown and read_transcript(shown) is None
    assert len(shown) < len(data)
    assert Image.open(io.BytesIO(shown)).tobytes() == Image.open(io.BytesIO(data)).tobytes()
    png = rendered("error_dialog")
    assert KEY in png and KEY not in without_transcript(png)
    assert Image.open(io.BytesIO(without_transcript(png))).tobytes() == Image.open(io.BytesIO(png)).tobytes()
    assert read_transcript(png) == Transcript(
        "Ledger Desktop - Sync failed\nThe connection to the accounting server was reset\n"
        "while uploading batch 2231.\nError code: LDG-5003\nRetry  Cancel",
        0.0,
    )


def test_a_chart_prints_its_title_axis_legend_and_values() -> None:
    transcript = read_transcript(rendered("bar_chart"))
    assert transcript is not None
    lines = transcript.text.splitlines()
    assert lines[0] == "Revenue by quarter 2025"
    assert "1,610" in transcript.text and "1,020" in transcript.text
    assert lines[-1] == "EMEA  Americas"
    line = read_transcript(rendered("line_chart"))
    assert line is not None and "42.5" in line.text


def _error_rate(truth: str, read: str) -> float:
    """The share of characters of `truth` not read right, line by line."""
    matched = 0
    for want, got in zip(truth.splitlines(), read.splitlines(), strict=True):
        blocks = difflib.SequenceMatcher(None, want, got, autojunk=False).get_matching_blocks()
        matched += sum(block.size for block in blocks)
    return 1 - matched / len(truth.replace("\n", ""))


LONG_TEXT = "\n".join(
    f"Invoice {1000 + i} Total EUR {i * 37.5:,.2f} paid 2026-0{1 + i % 9}-1{i % 10} by Sebastian Olsen"
    for i in range(200)
)


@pytest.mark.parametrize("noise, low, high", [(0.0, 0.0, 0.006), (0.4, 0.025, 0.045), (1.0, 0.07, 0.10)])
def test_ocr_mistakes_grow_with_noise_within_bounds(noise: float, low: float, high: float) -> None:
    read = recognize(Transcript(LONG_TEXT, noise), b"one file")
    assert low <= _error_rate(LONG_TEXT, read) <= high
    assert error_rates(noise) == (0.004 + 0.16 * noise, 0.001 + 0.04 * noise)


def test_ocr_reads_one_file_the_same_every_time_and_another_file_differently() -> None:
    transcript = Transcript(LONG_TEXT, 0.5)
    first = recognize(transcript, b"one file")
    assert recognize(transcript, b"one file") == first
    assert recognize(transcript, b"another file") != first
    assert first != LONG_TEXT


def test_ocr_confuses_only_look_alike_characters_and_drops_others() -> None:
    read = recognize(Transcript("0" * 2000, 1.0), b"x")
    assert set(read) == {"0", "O"}
    assert len(read) == 2000  # a confusable character is misread, never dropped
    dropped = recognize(Transcript("x" * 2000, 1.0), b"x")
    assert set(dropped) == {"x"} and 1900 < len(dropped) < 2000


@pytest.mark.parametrize(
    "change, message",
    [
        ({"due": "2026-02-01"}, "due 2026-02-01 is before issued 2026-02-20"),
        ({"items": []}, "items\n  List should have at least 1 item"),
        ({"currency": "euro"}, "String should match pattern '^[A-Z]{3}$'"),
    ],
)
def test_a_spec_with_wrong_facts_is_refused_saying_what_is_wrong(change: dict, message: str) -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(SPECS["invoice"] | change)
    assert message in str(info.value)


def test_a_chart_needs_one_value_per_category() -> None:
    series = [{"name": "EMEA", "values": [1, 2, 3]}]
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(SPECS["bar_chart"] | {"series": series})
    assert "series 'EMEA' has 3 values for 4 categories" in str(info.value)


def test_text_the_fonts_cannot_draw_is_shown_as_question_marks() -> None:
    data = rendered("receipt", merchant="Café Ærø 東京")
    transcript = read_transcript(data)
    assert transcript is not None and transcript.text.startswith("CAFÉ ÆRØ ??\n")


@pytest.mark.parametrize(
    "kind, change, message",
    [
        ("receipt", {"items": [{"description": "x" * 22, "amount": "1.00"}]}, "at most 21 characters"),
        (
            "receipt",
            {"items": [{"description": "Tea", "amount": "100000.00"}]},
            "less than or equal to 99999.99",
        ),
        ("form", {"fields": [{"label": "Name", "value": "y" * 43}]}, "at most 42 characters"),
        ("bar_chart", {"title": "t" * 61}, "at most 60 characters"),
        ("error_dialog", {"application": "a" * 25}, "at most 24 characters"),
    ],
)
def test_a_fact_longer_than_its_place_on_the_page_is_refused_not_cut(
    kind: str, change: dict, message: str
) -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(SPECS[kind] | change)
    assert message in str(info.value)
