"""A stored document as an agent receives it: MCP image content (and for a PDF, its page
images and its text layer), within fixed size bounds; and its text for text-only models.

Bounds: an image shown is at most `MAX_IMAGE_SIDE` pixels on its longer side and
`MAX_IMAGE_PIXELS` in all (a larger one is scaled down); one view shows at most
`MAX_PAGES_PER_VIEW` pages of a PDF; extracted text is cut at `MAX_TEXT_CHARS`.
"""

from __future__ import annotations

import base64
import io
import threading
from dataclasses import dataclass
from typing import Literal

import pypdfium2 as pdfium
from mcp_types import ImageContent, TextContent
from PIL import Image

from .ocr import recognize
from .transcript import mime_type_of, read_transcript, without_transcript

MAX_IMAGE_SIDE = 1600
"""The longer side of an image shown, in pixels."""
MAX_IMAGE_PIXELS = 2_000_000
"""The pixels of an image shown (width x height)."""
MAX_PAGES_PER_VIEW = 4
"""The pages of a PDF one view shows."""
MAX_TEXT_CHARS = 32_000
"""The characters of text one extraction returns."""


class DocumentError(ValueError):
    """A document that cannot be shown or read: its bytes are not a PDF, PNG or JPEG, or are damaged."""


@dataclass(frozen=True)
class PageText:
    """Text of a document: pages `first_page`..`last_page` of `pages` (an image is one page)."""

    text: str
    pages: int
    first_page: int
    last_page: int
    method: Literal["text_layer", "ocr"]
    truncated: bool
    mime_type: str


@dataclass(frozen=True)
class View:
    """The content blocks that show pages `first_page`..`last_page` of a document of `pages`."""

    blocks: list[TextContent | ImageContent]
    mime_type: str
    pages: int
    first_page: int
    last_page: int


def describe(data: bytes) -> str:
    """'a PDF document of 3 pages', 'a PNG image of 800 x 520 pixels'."""
    mime = _mime(data)
    if mime == "application/pdf":
        with _pdf(data) as doc:
            return f"a PDF document of {_pages(len(doc))}"
    width, height = _image(data).size
    return f"a {mime.split('/')[1].upper()} image of {width} x {height} pixels"


def view(path: str, data: bytes, first_page: int) -> View:
    """What an agent sees of the document at `path`: a line saying what it is, then the image;
    for a PDF, each page shown (from `first_page`) as an image followed by its text layer."""
    mime = _mime(data)
    if mime != "application/pdf":
        if first_page != 1:
            raise DocumentError(f"{path!r} is an image, a single page; leave first_page at 1")
        shown = _bounded(without_transcript(data), mime)
        intro = f"{path} is {describe(data)}."
        return View([TextContent(type="text", text=intro), shown], mime, 1, 1, 1)
    with _pdf(data) as doc:
        total = len(doc)
        last = _last_page(path, first_page, total)
        span = f"page {first_page} follows" if last == first_page else f"pages {first_page}-{last} follow"
        intro = f"{path} is a PDF document of {_pages(total)}; {span}"
        if last < total:
            intro += f" (call again with first_page={last + 1} for the rest)"
        blocks: list[TextContent | ImageContent] = [TextContent(type="text", text=intro + ".")]
        for number in range(first_page, last + 1):
            page = doc[number - 1]
            width, height = page.get_size()
            scale = min(MAX_IMAGE_SIDE / max(width, height), (MAX_IMAGE_PIXELS / (width * height)) ** 0.5)
            image = page.render(scale=scale).to_pil()
            blocks.append(_image_content(image, "image/png"))
            text = page.get_textpage().get_text_bounded().replace("\r\n", "\n")
            blocks.append(TextContent(type="text", text=f"Text layer of page {number}:\n{text}"))
        return View(blocks, mime, total, first_page, last)


def extract_text(path: str, data: bytes, first_page: int, last_page: int | None) -> PageText:
    """The text of the document: a PDF's text layer as it is, an image's as an OCR reads it."""
    mime = _mime(data)
    if mime != "application/pdf":
        if first_page != 1 or last_page not in (None, 1):
            raise DocumentError(f"{path!r} is an image, a single page; leave first_page and last_page out")
        transcript = read_transcript(data)
        text = recognize(transcript, data) if transcript is not None else ""
        return _cut(text, pages=1, first=1, last=1, method="ocr", mime=mime)
    with _pdf(data) as doc:
        total = len(doc)
        if last_page is not None and last_page < first_page:
            raise DocumentError(f"last_page {last_page} is before first_page {first_page}")
        _last_page(path, first_page, total)
        last = total if last_page is None else min(last_page, total)
        texts = []
        for number in range(first_page, last + 1):
            text = doc[number - 1].get_textpage().get_text_bounded().replace("\r\n", "\n")
            texts.append(f"--- page {number} ---\n{text}")
        return _cut(
            "\n".join(texts), pages=total, first=first_page, last=last, method="text_layer", mime=mime
        )


def _cut(
    text: str, *, pages: int, first: int, last: int, method: Literal["text_layer", "ocr"], mime: str
) -> PageText:
    return PageText(text[:MAX_TEXT_CHARS], pages, first, last, method, len(text) > MAX_TEXT_CHARS, mime)


def _last_page(path: str, first_page: int, total: int) -> int:
    if first_page > total:
        raise DocumentError(f"first_page {first_page} is past the end of {path!r}, which has {_pages(total)}")
    return min(total, first_page + MAX_PAGES_PER_VIEW - 1)


def _pages(count: int) -> str:
    return f"{count} page{'s' if count != 1 else ''}"


def _mime(data: bytes) -> str:
    mime = mime_type_of(data)
    if mime is None:
        raise DocumentError("the file is not a PDF, PNG or JPEG document")
    return mime


_PDFIUM = threading.Lock()
"""pdfium is not thread-safe: one PDF at a time per process (episodes may run in threads)."""


class _pdf:
    """A PDF opened with pdfium for the length of a `with` block, holding the pdfium lock."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __enter__(self) -> pdfium.PdfDocument:
        _PDFIUM.acquire()
        try:
            self.doc = pdfium.PdfDocument(self.data)
        except pdfium.PdfiumError as exc:
            _PDFIUM.release()
            raise DocumentError(f"the PDF cannot be read ({exc})") from None
        return self.doc

    def __exit__(self, *exc: object) -> None:
        try:
            self.doc.close()
        finally:
            _PDFIUM.release()


def _image(data: bytes) -> Image.Image:
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (OSError, Image.DecompressionBombError) as exc:
        raise DocumentError(f"the image cannot be read ({exc})") from None
    return image


def _bounded(data: bytes, mime: str) -> ImageContent:
    """The image as content, scaled down first when it is larger than the bounds."""
    image = _image(data)
    if max(image.size) <= MAX_IMAGE_SIDE and image.width * image.height <= MAX_IMAGE_PIXELS:
        return ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime)
    return _image_content(image, mime)


def _image_content(image: Image.Image, mime: str) -> ImageContent:
    """`image` within the bounds, encoded as `mime` (PNG or JPEG)."""
    scale = min(
        1.0, MAX_IMAGE_SIDE / max(image.size), (MAX_IMAGE_PIXELS / (image.width * image.height)) ** 0.5
    )
    if scale < 1.0:
        size = (max(1, int(image.width * scale)), max(1, int(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    if mime == "image/jpeg":
        image.convert("RGB").save(buffer, format="JPEG", quality=85)
    else:
        image.save(buffer, format="PNG")
    return ImageContent(
        type="image", data=base64.b64encode(buffer.getvalue()).decode("ascii"), mime_type=mime
    )
