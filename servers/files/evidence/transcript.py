"""The text an image shows, kept inside the image file for the text extraction tool.

A rendered image carries what it reads as (its transcript) and how noisy its scan is, in a
PNG `tEXt` chunk or a JPEG comment under the key `coworkenv:transcript`. The text extraction
tool reads it (and makes the mistakes an OCR makes on that much noise); `without_transcript`
cuts it out of the bytes an agent is shown, so the facts reach a vision model through the
pixels alone.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

KEY = b"coworkenv:transcript"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
JPEG_START = b"\xff\xd8"


@dataclass(frozen=True)
class Transcript:
    """What an image reads as, line by line, and its scan noise (0 clean to 1 barely legible)."""

    text: str
    noise: float

    def to_json(self) -> str:
        return json.dumps({"text": self.text, "noise": round(self.noise, 4)}, ensure_ascii=True)

    @classmethod
    def from_json(cls, data: bytes) -> Transcript:
        parsed = json.loads(data)
        return cls(text=str(parsed["text"]), noise=float(parsed["noise"]))


def mime_type_of(data: bytes) -> str | None:
    """`image/png`, `image/jpeg` or `application/pdf` by the file's first bytes; None otherwise."""
    if data.startswith(PNG_SIGNATURE):
        return "image/png"
    if data.startswith(JPEG_START):
        return "image/jpeg"
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    return None


def read_transcript(data: bytes) -> Transcript | None:
    """The transcript kept in a PNG or JPEG file, or None when it has none."""
    for kind, body, _, _ in _segments(data):
        if kind in (b"tEXt", b"\xfe") and body.startswith(KEY + b"\x00"):
            return Transcript.from_json(body[len(KEY) + 1 :])
    return None


def without_transcript(data: bytes) -> bytes:
    """The same PNG or JPEG file with its transcript cut out (any other file: unchanged)."""
    kept = bytearray()
    position = 0
    for kind, body, start, end in _segments(data):
        if kind in (b"tEXt", b"\xfe") and body.startswith(KEY + b"\x00"):
            kept += data[position:start]
            position = end
    if position == 0:
        return data
    return bytes(kept + data[position:])


def _segments(data: bytes) -> list[tuple[bytes, bytes, int, int]]:
    """(kind, body, start, end) of each PNG chunk, or of each JPEG marker segment before the
    image data. A JPEG comment is kind b'\\xfe'."""
    out: list[tuple[bytes, bytes, int, int]] = []
    if data.startswith(PNG_SIGNATURE):
        position = len(PNG_SIGNATURE)
        while position + 8 <= len(data):
            (length,) = struct.unpack(">I", data[position : position + 4])
            kind = data[position + 4 : position + 8]
            end = position + 12 + length
            out.append((kind, data[position + 8 : position + 8 + length], position, end))
            if kind == b"IEND":
                break
            position = end
    elif data.startswith(JPEG_START):
        position = 2
        while position + 4 <= len(data) and data[position] == 0xFF:
            marker = data[position + 1 : position + 2]
            if marker == b"\xda":  # start of scan: the image data follows
                break
            (length,) = struct.unpack(">H", data[position + 2 : position + 4])
            end = position + 2 + length
            out.append((marker, data[position + 4 : end], position, end))
            position = end
    return out


def comment_segment(transcript: Transcript) -> bytes:
    """The body of a JPEG comment (or PNG text chunk) holding `transcript`."""
    return KEY + b"\x00" + transcript.to_json().encode("ascii")
