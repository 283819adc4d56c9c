"""Trade documents as PDFs: invoices and purchase orders with their item tables.

fpdf2 writes them with the standard Helvetica font (nothing embedded), uncompressed page
streams and the creation date given (the workspace clock), so the same spec gives the same
bytes; the text is a real text layer, as a PDF exported from an accounting system has. A
long item table runs on over pages with its header repeated.
"""

from __future__ import annotations

from datetime import datetime

from fpdf import FPDF

from .raster import printable
from .specs import Invoice, Party, PurchaseOrder, TradeItem, format_amount, format_quantity

PRODUCER = "coworkenv"
COLUMNS = (("Description", 95, "L"), ("Qty", 20, "R"), ("Unit price", 32, "R"), ("Amount", 33, "R"))


def trade_document(spec: Invoice | PurchaseOrder, created: datetime) -> bytes:
    """The invoice or purchase order as PDF bytes (A4)."""
    if isinstance(spec, Invoice):
        title, sender, addressee, heading = "INVOICE", spec.seller, spec.buyer, "Bill to"
        facts = [("Invoice number", spec.number), ("Date", spec.issued.isoformat())]
        facts.append(("Due date", spec.due.isoformat()))
        if spec.purchase_order:
            facts.append(("Your order", spec.purchase_order))
    else:
        title, sender, addressee, heading = "PURCHASE ORDER", spec.buyer, spec.supplier, "Supplier"
        facts = [("Order number", spec.number), ("Date", spec.issued.isoformat())]
        facts.append(("Deliver by", spec.deliver_by.isoformat()))
    pdf = _new_pdf(created, f"{title.title()} {spec.number}", sender.name)
    pdf.add_page()
    _letterhead(pdf, sender, title)
    _facts(pdf, facts)
    pdf.ln(4)
    pdf.set_font("Helvetica", "B", 10)
    pdf.cell(0, 6, _text(heading), new_x="LMARGIN", new_y="NEXT")
    _party(pdf, addressee)
    pdf.ln(6)
    _items(pdf, spec.items, spec.currency)
    _totals(pdf, spec)
    notes = list(spec.notes)
    if isinstance(spec, PurchaseOrder) and spec.approved_by:
        notes.append(f"Approved by: {spec.approved_by}")
    if notes:
        pdf.ln(4)
        pdf.set_font("Helvetica", "", 9)
        for note in notes:
            pdf.multi_cell(0, 5, _text(note), new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


class _Document(FPDF):
    def footer(self) -> None:
        # Left-aligned at a fixed place: a centred "{nb}" is placed by a width that differs
        # between fpdf2 versions, and so would the bytes.
        self.set_xy(95, -15)
        self.set_font("Helvetica", "", 8)
        self.cell(40, 8, f"Page {self.page_no()} of {{nb}}")


def _new_pdf(created: datetime, title: str, author: str) -> FPDF:
    pdf = _Document(format="A4", unit="mm")
    pdf.set_compression(False)
    pdf.set_creation_date(created)
    pdf.set_producer(PRODUCER)
    pdf.set_creator(PRODUCER)
    pdf.set_title(_text(title))
    pdf.set_author(_text(author))
    pdf.set_auto_page_break(auto=True, margin=22)
    return pdf


def _text(text: str) -> str:
    """Text the standard fonts can write (Latin-1)."""
    return printable(text)


def _letterhead(pdf: FPDF, sender: Party, title: str) -> None:
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(110, 9, _text(sender.name))
    pdf.set_font("Helvetica", "B", 18)
    pdf.cell(0, 9, title, align="R", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    for line in sender.address:
        pdf.cell(0, 4.5, _text(line), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(6)


def _facts(pdf: FPDF, facts: list[tuple[str, str]]) -> None:
    for label, value in facts:
        pdf.set_font("Helvetica", "B", 10)
        pdf.cell(40, 6, _text(f"{label}:"))
        pdf.set_font("Helvetica", "", 10)
        pdf.cell(0, 6, _text(value), new_x="LMARGIN", new_y="NEXT")


def _party(pdf: FPDF, party: Party) -> None:
    pdf.set_font("Helvetica", "", 10)
    for line in [party.name, *party.address]:
        pdf.cell(0, 5, _text(line), new_x="LMARGIN", new_y="NEXT")


def _header_row(pdf: FPDF, currency: str) -> None:
    pdf.set_font("Helvetica", "B", 10)
    pdf.set_fill_color(230, 230, 230)
    for name, width, align in COLUMNS:
        label = f"{name} ({currency})" if name in ("Unit price", "Amount") else name
        pdf.cell(width, 7, label, border=1, align=align, fill=True)
    pdf.ln()


def _items(pdf: FPDF, items: list[TradeItem], currency: str) -> None:
    _header_row(pdf, currency)
    pdf.set_font("Helvetica", "", 10)
    for item in items:
        if pdf.will_page_break(6):
            pdf.add_page()
            _header_row(pdf, currency)
            pdf.set_font("Helvetica", "", 10)
        cells = (item.description, format_quantity(item.quantity), format_amount(item.unit_price))
        for (_, width, align), value in zip(COLUMNS, (*cells, format_amount(item.amount)), strict=True):
            pdf.cell(width, 6, _text(value), border=1, align=align)
        pdf.ln()


def _totals(pdf: FPDF, spec: Invoice | PurchaseOrder) -> None:
    label_width = sum(w for _, w, _ in COLUMNS[:-1])
    rows = [("Subtotal", spec.subtotal), (f"Tax {format_quantity(spec.tax_percent)}%", spec.tax)]
    rows.append((f"Total ({spec.currency})", spec.total))
    if pdf.will_page_break(6 * len(rows)):
        pdf.add_page()
    for i, (label, value) in enumerate(rows):
        pdf.set_font("Helvetica", "B" if i == len(rows) - 1 else "", 10)
        pdf.cell(label_width, 6, label, align="R")
        pdf.cell(COLUMNS[-1][1], 6, format_amount(value), border=1, align="R", new_x="LMARGIN", new_y="NEXT")
