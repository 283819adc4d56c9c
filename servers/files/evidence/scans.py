"""Paper photographed or scanned: till receipts and filled-in forms."""

from __future__ import annotations

import random

from .raster import CHAR_WIDTH, LINE_HEIGHT, Sheet, encode, scanned, wrap
from .specs import Form, Receipt, format_amount
from .transcript import Transcript

RECEIPT_COLUMNS = 32
RECEIPT_PAPER = (250, 247, 238)
DESK = (92, 84, 76)
SCANNER_LID = (226, 226, 226)
HANDWRITING = (28, 46, 120)


def receipt(spec: Receipt, rng: random.Random) -> bytes:
    """A till receipt photographed on a desk: JPEG or PNG, skewed and noisy as `spec` says."""
    margin = 8
    width = RECEIPT_COLUMNS * CHAR_WIDTH + 2 * margin
    rows = 6 + len(spec.address) + len(spec.items) + 7
    sheet = Sheet(width, rows * LINE_HEIGHT + 2 * margin)
    y = margin
    center = width // 2
    sheet.text_centered(center, y, spec.merchant.upper())
    y += LINE_HEIGHT
    for line in spec.address:
        sheet.text_centered(center, y, line)
        y += LINE_HEIGHT
    y += LINE_HEIGHT // 2
    sheet.text(margin, y, spec.when)
    y += LINE_HEIGHT
    y = _rule(sheet, margin, width, y)
    right = width - margin
    for item in spec.items:
        sheet.text(margin, y, item.description)
        sheet.text_right(right, y, format_amount(item.amount))
        y += LINE_HEIGHT
    y = _rule(sheet, margin, width, y)
    sheet.text(margin, y, f"TOTAL {spec.currency}")
    sheet.text_right(right, y, format_amount(spec.total))
    y += LINE_HEIGHT
    sheet.text(margin, y, f"Paid: {spec.payment}")
    y += LINE_HEIGHT * 2
    sheet.text_centered(center, y, "Thank you!")
    photo = scanned(
        sheet.image,
        rng,
        scale=2,
        skew_degrees=spec.skew_degrees,
        noise=spec.noise,
        paper=RECEIPT_PAPER,
        background=DESK,
    )
    return encode(photo, spec.format, Transcript(sheet.transcript(), spec.noise))


def form(spec: Form, rng: random.Random) -> bytes:
    """A filled-in form from a flatbed scanner in grayscale (PNG): printed labels, written-in values."""
    margin = 16
    box_left = margin + 19 * CHAR_WIDTH
    width = box_left + 42 * CHAR_WIDTH + 4 + margin
    rows = 4 + 2 * len(spec.fields) + 5
    sheet = Sheet(width, rows * LINE_HEIGHT + 2 * margin)
    y = margin
    for line in wrap(spec.title.upper(), (width - 2 * margin) // CHAR_WIDTH):
        sheet.text_centered(width // 2, y, line)
        y += LINE_HEIGHT
    y += LINE_HEIGHT
    for field in spec.fields:
        sheet.text(margin, y + 2, f"{field.label}:")
        sheet.draw.rectangle((box_left - 3, y - 1, width - margin, y + LINE_HEIGHT + 2), outline=(60, 60, 60))
        sheet.text(box_left, y + 2, field.value, HANDWRITING)
        y += 2 * LINE_HEIGHT
    y += LINE_HEIGHT
    sheet.draw.line((margin + 60, y + LINE_HEIGHT, width - margin, y + LINE_HEIGHT), fill=(60, 60, 60))
    sheet.text(margin, y + 2, "Signed:")
    if spec.signed_by:
        sheet.text(margin + 64, y, spec.signed_by, HANDWRITING)
    y += 2 * LINE_HEIGHT
    sheet.text(margin, y, "Date:")
    if spec.signed_on:
        sheet.text(margin + 64, y, spec.signed_on.isoformat(), HANDWRITING)
    scan = scanned(
        sheet.image,
        rng,
        scale=2,
        skew_degrees=spec.skew_degrees,
        noise=spec.noise,
        paper=None,
        background=SCANNER_LID,
    )
    return encode(scan, "png", Transcript(sheet.transcript(), spec.noise))


def _rule(sheet: Sheet, margin: int, width: int, y: int) -> int:
    """A dashed line across the receipt; the y below it."""
    for x in range(margin, width - margin, 6):
        sheet.draw.line((x, y + 5, x + 3, y + 5), fill=(40, 40, 40))
    return y + LINE_HEIGHT
