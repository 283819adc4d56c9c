"""Drawing images the same way on every machine: a sheet that records the text it draws,
the scan effects (skew, speckle, blur), and encoding to PNG or JPEG with the transcript.

Text is drawn with Pillow's built-in bitmap font (no font file, no FreeType: the same
pixels everywhere) at one scale and the sheet is then enlarged, as a print or a scan is.
Randomness (speckle) comes from a `random.Random` seeded by the caller.
"""

from __future__ import annotations

import io
import random
from functools import cache

from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageOps, PngImagePlugin

from .transcript import KEY, Transcript, comment_segment

CHAR_WIDTH = 6
LINE_HEIGHT = 13
INK = (24, 24, 28)
PAPER = (255, 255, 255)
JPEG_QUALITY = 82

RGB = tuple[int, int, int]


@cache
def font() -> ImageFont.ImageFont:
    """Pillow's built-in bitmap font: 6 px per character, 11 px high, Latin-1."""
    return ImageFont.load_default_imagefont()


def printable(text: str) -> str:
    """The text with what the bitmap font cannot draw (outside Latin-1, control characters) as '?'."""
    latin = text.encode("latin-1", "replace").decode("latin-1")
    return "".join(c if c.isprintable() else "?" for c in latin)


class Sheet:
    """An image to draw on at 1x, which remembers each text it drew and where.

    `transcript()` reads the texts back in reading order: top to bottom, and the texts on
    one line left to right, separated by two spaces.
    """

    def __init__(self, width: int, height: int, background: RGB = PAPER) -> None:
        self.image = Image.new("RGB", (width, height), background)
        self.draw = ImageDraw.Draw(self.image)
        self._texts: list[tuple[int, int, str]] = []

    def text(self, x: int, y: int, text: str, fill: RGB = INK) -> int:
        """Draw `text` with its top left at (x, y); the x just right of it."""
        shown = printable(text)
        self.draw.text((x, y), shown, font=font(), fill=fill)
        if shown.strip():
            self._texts.append((y, x, shown))
        return x + CHAR_WIDTH * len(shown)

    def text_right(self, right: int, y: int, text: str, fill: RGB = INK) -> None:
        """Draw `text` ending at x = `right`."""
        self.text(right - CHAR_WIDTH * len(printable(text)), y, text, fill)

    def text_centered(self, center: int, y: int, text: str, fill: RGB = INK) -> None:
        """Draw `text` centered on x = `center`."""
        self.text(center - CHAR_WIDTH * len(printable(text)) // 2, y, text, fill)

    def transcript(self) -> str:
        lines: dict[int, list[tuple[int, str]]] = {}
        for y, x, text in self._texts:
            lines.setdefault(y, []).append((x, text))
        return "\n".join("  ".join(t for _, t in sorted(parts)) for _, parts in sorted(lines.items()))


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters, broken between words."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if len(candidate) > width and current:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines or [""]


def enlarge(image: Image.Image, factor: int, *, smooth: bool) -> Image.Image:
    """The image `factor` times larger: smooth like ink on paper, or crisp like a screen."""
    size = (image.width * factor, image.height * factor)
    return image.resize(size, Image.Resampling.BICUBIC if smooth else Image.Resampling.NEAREST)


def scanned(
    sheet: Image.Image,
    rng: random.Random,
    *,
    scale: int,
    skew_degrees: float,
    noise: float,
    paper: RGB | None,
    background: RGB,
) -> Image.Image:
    """A photo or scan of the sheet (drawn at 1x), `scale` times larger, on a background,
    turned by `skew_degrees`, blurred and speckled with dust and dropouts as `noise` (0 to 1)
    says. With `paper` a colour photo of paper of that tint; without, a grayscale scan.

    The work is done on one gray channel, colour comes last: a quarter of the pixels to move."""
    gray = enlarge(sheet.convert("L"), scale, smooth=True)
    if noise > 0:
        gray = gray.filter(ImageFilter.BoxBlur(radius=(0.1 + 0.4 * noise) * scale))
    speckle = Image.frombytes("L", gray.size, rng.randbytes(gray.width * gray.height))
    dots = int(1 + 24 * noise)  # of 256: the share of pixels that get a dark speck or a dropout
    gray.paste(90, mask=speckle.point(lambda v: 255 if v < dots else 0))
    gray.paste(255, mask=speckle.point(lambda v: 255 if v > 255 - dots else 0))
    margin = max(24, gray.width // 12)
    framed = ImageOps.expand(gray, border=margin, fill=255)
    outline = ImageOps.expand(Image.new("L", gray.size, 255), border=margin, fill=0)
    if skew_degrees != 0:
        framed = framed.rotate(skew_degrees, resample=Image.Resampling.BILINEAR, fillcolor=255)
        # The paper's outline is all or nothing: a nearest-pixel turn is enough, and 7x cheaper.
        outline = outline.rotate(skew_degrees, resample=Image.Resampling.NEAREST, fillcolor=0)
    if paper is None:
        out = Image.new("L", framed.size, background[0])
        out.paste(framed, mask=outline)
        return out
    out = Image.new("RGB", framed.size, background)
    out.paste(ImageOps.colorize(framed, black=INK, white=paper), mask=outline)
    return out


def encode(image: Image.Image, fmt: str, transcript: Transcript) -> bytes:
    """The image as PNG or JPEG bytes, carrying `transcript` (see `transcript.py`)."""
    buffer = io.BytesIO()
    if fmt == "png":
        info = PngImagePlugin.PngInfo()
        info.add_text(KEY.decode(), transcript.to_json())
        image.save(buffer, format="PNG", pnginfo=info, compress_level=6)
    elif fmt == "jpeg":
        image.save(buffer, format="JPEG", quality=JPEG_QUALITY, comment=comment_segment(transcript))
    else:
        raise ValueError(f"unknown image format {fmt!r}; use 'png' or 'jpeg'")
    return buffer.getvalue()
