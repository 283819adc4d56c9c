"""Bar and line charts as a report or a dashboard shows them (PNG).

Drawn with Pillow (no plotting library: the same pixels on every machine): a title, a
value axis with round ticks and grid lines, category labels, a legend, and each value
printed on its bar or point where it fits.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .raster import CHAR_WIDTH, LINE_HEIGHT, Sheet, encode, enlarge
from .specs import Chart
from .transcript import Transcript

WIDTH, HEIGHT = 400, 260
COLOURS = [(52, 101, 164), (230, 126, 34), (46, 139, 87), (155, 89, 182)]
GRID = (222, 222, 222)
AXIS = (90, 90, 90)


def chart(spec: Chart) -> bytes:
    """The chart as a PNG, 800 x 520 pixels."""
    sheet = Sheet(WIDTH, HEIGHT)
    sheet.text_centered(WIDTH // 2, 6, spec.title)
    values = [v for s in spec.series for v in s.values]
    low, high, step = _axis(min(0.0, *values), max(0.0, *values))
    left, right, top, bottom = 64, WIDTH - 12, 28, HEIGHT - 44
    if spec.unit:
        sheet.text(4, top - 12, spec.unit)

    def y_of(v: float) -> int:
        return round(bottom - (v - low) / (high - low) * (bottom - top))

    tick = low
    while tick <= high + step / 2:
        y = y_of(tick)
        sheet.draw.line((left, y, right, y), fill=GRID)
        sheet.text_right(left - 4, y - 5, _number(tick))
        tick += step
    slot = (right - left) / len(spec.categories)
    for i, category in enumerate(spec.categories):
        center = round(left + slot * (i + 0.5))
        label = category[: max(1, int(slot // CHAR_WIDTH))]
        sheet.text_centered(center, bottom + 4, label)
    if spec.kind == "bar_chart":
        _bars(sheet, spec, left, slot, y_of)
    else:
        _lines(sheet, spec, left, slot, y_of)
    sheet.draw.line((left, top, left, bottom), fill=AXIS)
    sheet.draw.line((left, y_of(0), right, y_of(0)), fill=AXIS)
    x = left
    for colour, series in zip(COLOURS, spec.series, strict=False):
        sheet.draw.rectangle((x, HEIGHT - 18, x + 8, HEIGHT - 10), fill=colour)
        x = sheet.text(x + 12, HEIGHT - 19, series.name) + 12
    image = enlarge(sheet.image, 2, smooth=False)
    return encode(image, "png", Transcript(sheet.transcript(), 0.0))


def _bars(sheet: Sheet, spec: Chart, left: int, slot: float, y_of: Callable[[float], int]) -> None:
    width = slot * 0.8 / len(spec.series)
    for s, (colour, series) in enumerate(zip(COLOURS, spec.series, strict=False)):
        for i, value in enumerate(series.values):
            x0 = round(left + slot * i + slot * 0.1 + width * s)
            x1 = max(x0 + 1, round(x0 + width) - 1)
            y0, y1 = sorted((y_of(0), y_of(value)))
            sheet.draw.rectangle((x0, y0, x1, y1), fill=colour)
            label = _number(value)
            if CHAR_WIDTH * len(label) <= width + 4:
                above = y_of(value) - LINE_HEIGHT if value >= 0 else y_of(value) + 2
                sheet.text_centered((x0 + x1) // 2, above, label)


def _lines(sheet: Sheet, spec: Chart, left: int, slot: float, y_of: Callable[[float], int]) -> None:
    for colour, series in zip(COLOURS, spec.series, strict=False):
        points = [(round(left + slot * (i + 0.5)), y_of(v)) for i, v in enumerate(series.values)]
        if len(points) > 1:
            sheet.draw.line(points, fill=colour, width=2)
        for (x, y), value in zip(points, series.values, strict=True):
            sheet.draw.ellipse((x - 3, y - 3, x + 3, y + 3), fill=colour)
            label = _number(value)
            if CHAR_WIDTH * len(label) <= slot - 2:
                sheet.text_centered(x, y - LINE_HEIGHT - 1, label)


def _axis(low: float, high: float) -> tuple[float, float, float]:
    """Round axis ends and a tick step (1, 2 or 5 times a power of ten) for about five ticks."""
    if high == low:
        high = low + 1
    raw = (high - low) / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return math.floor(low / step) * step, math.ceil(high / step) * step, step


def _number(value: float) -> str:
    """A value as the chart prints it: whole numbers with thousands separators, else one decimal."""
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}"
