"""Text read off an image the way an OCR engine reads it: mostly right, with the usual
confusions (0/O, 1/l, 5/S, 8/B...) and dropped characters, more of them the noisier the scan.

The mistakes are drawn from the image's own bytes, so one file always reads the same, and
two copies of a file read the same; their rate follows the scan's noise (`error_rates`).
"""

from __future__ import annotations

import hashlib
import random

from .transcript import Transcript

CONFUSIONS = {
    "0": "O",
    "O": "0",
    "o": "0",
    "1": "l",
    "l": "1",
    "I": "1",
    "5": "S",
    "S": "5",
    "8": "B",
    "B": "8",
    "2": "Z",
    "6": "G",
    "g": "9",
    "e": "c",
    "rn": "m",
    ".": ",",
    ",": ".",
}
"""What a character is misread as; only these characters are ever confused."""


def error_rates(noise: float) -> tuple[float, float]:
    """(chance a confusable character is misread, chance any other visible character is
    dropped) for a scan of this noise (0 clean to 1 barely legible)."""
    return 0.004 + 0.16 * noise, 0.001 + 0.04 * noise


def recognize(transcript: Transcript, data: bytes) -> str:
    """The transcript as an OCR reads the image `data` it belongs to."""
    confuse, drop = error_rates(transcript.noise)
    rng = random.Random(hashlib.sha256(data).digest())
    text = transcript.text
    out: list[str] = []
    i = 0
    while i < len(text):
        draw = rng.random()
        pair = text[i : i + 2]
        if pair in CONFUSIONS and draw < confuse:
            out.append(CONFUSIONS[pair])
            i += 2
            continue
        char = text[i]
        if char in CONFUSIONS:
            out.append(CONFUSIONS[char] if draw < confuse else char)
        elif char.isspace() or draw >= drop:
            out.append(char)
        i += 1
    return "".join(out)
