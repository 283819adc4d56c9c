"""Screenshots: an application's error dialog on a desktop (PNG)."""

from __future__ import annotations

from .raster import CHAR_WIDTH, LINE_HEIGHT, Sheet, encode, enlarge, wrap
from .specs import ErrorDialog
from .transcript import Transcript

WIDTH = 420
DESKTOP = (58, 110, 165)
WINDOW = (240, 240, 240)
TITLE_BAR = (32, 64, 128)
WHITE = (255, 255, 255)
ERROR_RED = (200, 40, 40)


def error_dialog(spec: ErrorDialog) -> bytes:
    """The dialog on a desktop, as a crisp PNG screenshot (840 pixels wide)."""
    text_left = 72
    columns = (WIDTH - text_left - 28) // CHAR_WIDTH
    message = [line for paragraph in spec.message for line in wrap(paragraph, columns)]
    height = 40 + 24 + LINE_HEIGHT * (len(message) + (2 if spec.code else 0)) + 56
    sheet = Sheet(WIDTH, height, DESKTOP)
    window = (12, 12, WIDTH - 12, height - 12)
    sheet.draw.rectangle(window, fill=WINDOW, outline=(20, 20, 20))
    sheet.draw.rectangle((window[0], window[1], window[2], window[1] + 20), fill=TITLE_BAR)
    sheet.text(window[0] + 8, window[1] + 5, f"{spec.application} - {spec.title}", WHITE)
    close = window[2] - 16
    sheet.draw.line((close, window[1] + 6, close + 8, window[1] + 14), fill=WHITE, width=2)
    sheet.draw.line((close, window[1] + 14, close + 8, window[1] + 6), fill=WHITE, width=2)
    icon = (28, window[1] + 36, 56, window[1] + 64)
    sheet.draw.ellipse(icon, fill=ERROR_RED)
    sheet.draw.line((icon[0] + 8, icon[1] + 8, icon[2] - 8, icon[3] - 8), fill=WHITE, width=3)
    sheet.draw.line((icon[0] + 8, icon[3] - 8, icon[2] - 8, icon[1] + 8), fill=WHITE, width=3)
    y = window[1] + 36
    for line in message:
        sheet.text(text_left, y, line)
        y += LINE_HEIGHT
    if spec.code:
        y += LINE_HEIGHT
        sheet.text(text_left, y, f"Error code: {spec.code}", (90, 90, 90))
    x = window[2] - 12
    for label in reversed(spec.buttons):
        button_width = max(60, CHAR_WIDTH * len(label) + 16)
        box = (x - button_width, window[3] - 30, x, window[3] - 10)
        sheet.draw.rectangle(box, fill=(225, 225, 225), outline=(120, 120, 120))
        sheet.text_centered((box[0] + box[2]) // 2, box[1] + 5, label)
        x -= button_width + 8
    return encode(enlarge(sheet.image, 2, smooth=False), "png", Transcript(sheet.transcript(), 0.0))
