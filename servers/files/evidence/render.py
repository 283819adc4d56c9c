"""Rendering a document spec into its file: invoices and purchase orders (PDF), receipt
photos (JPEG or PNG), bar and line charts, error-dialog screenshots and filled-in forms (PNG).

`render(spec, created)` turns a spec (`specs.py`) into file bytes: the same spec and time
give the same bytes, on every machine, so a seed that plants a document hashes the same.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import datetime

from . import charts, pdf, scans, screens
from .specs import (
    Chart,
    DocumentSpec,
    ErrorDialog,
    Form,
    Invoice,
    PurchaseOrder,
    Receipt,
)

EXTENSIONS = {"application/pdf": ".pdf", "image/png": ".png", "image/jpeg": ".jpg"}


@dataclass(frozen=True)
class Rendered:
    """A rendered document: its bytes and their MIME type."""

    data: bytes
    mime_type: str

    @property
    def extension(self) -> str:
        """The file name ending that goes with the MIME type (.pdf, .png, .jpg)."""
        return EXTENSIONS[self.mime_type]


def render(spec: DocumentSpec, created: datetime) -> Rendered:
    """The document's file; `created` is the PDF creation date (images carry no time)."""
    match spec:
        case Invoice() | PurchaseOrder():
            return Rendered(pdf.trade_document(spec, created), "application/pdf")
        case Receipt():
            mime = "image/jpeg" if spec.format == "jpeg" else "image/png"
            return Rendered(scans.receipt(spec, _rng(spec)), mime)
        case Form():
            return Rendered(scans.form(spec, _rng(spec)), "image/png")
        case Chart():
            return Rendered(charts.chart(spec), "image/png")
        case ErrorDialog():
            return Rendered(screens.error_dialog(spec), "image/png")
    raise TypeError(f"not a document spec: {type(spec).__name__}")


def _rng(spec: DocumentSpec) -> random.Random:
    """The randomness of a scan (speckle), drawn from the spec itself: same spec, same specks."""
    digest = hashlib.sha256(spec.model_dump_json().encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))
