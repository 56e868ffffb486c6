"""Open a photo a player or a club owner hands us, safely: one-line errors, never a traceback.

A photo comes from a phone, a chat or a file picker, so it may be anything: not an image, a photo of
100 MB, a decompression bomb that claims 30,000 x 30,000 pixels in a few kilobytes. The size in bytes is
checked before anything is read, and the size in pixels from the file's header **before** it is
decoded (OpenCV would allocate the whole bitmap first). Phones store a photo as the sensor saw it and
say in EXIF how to turn it; OpenCV's decoder applies that orientation, so boxes are in the pixels
of the photo as the player sees it.

Only the formats phones and browsers send are read: JPEG, PNG, WebP and BMP.
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

__all__ = ["MAX_BYTES", "MAX_PIXELS", "BadPhoto", "PhotoHeader", "decode_photo", "load_photo", "load_photo_scaled",
           "photo_scale", "read_header"]

log = logging.getLogger(__name__)

#: a phone photo is 2-8 MB; anything over this is refused unread
MAX_BYTES = 20 * 1024 * 1024
#: 40 megapixels: a 12 MP photo is read, a decompression bomb is not
MAX_PIXELS = 40_000_000


class BadPhoto(ValueError):
    """A photo that cannot be read; the message is one line a player can act on."""


@dataclass(frozen=True)
class PhotoHeader:
    """What a file's header says: its format and its size in pixels (as stored, before EXIF turns)."""

    format: str
    width: int
    height: int


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2:i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # start of frame
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            return width, height
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    kind = data[12:16]
    if kind == b"VP8X" and len(data) >= 30:
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    if kind == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if kind == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    return None


def read_header(data: bytes) -> PhotoHeader:
    """The format and size in pixels from the first bytes; :class:`BadPhoto` when it is none we read."""
    size: tuple[int, int] | None = None
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        fmt, size = "PNG", struct.unpack(">II", data[16:24])
    elif data[:3] == b"\xff\xd8\xff":
        fmt, size = "JPEG", _jpeg_size(data)
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        fmt, size = "WebP", _webp_size(data)
    elif data[:2] == b"BM" and len(data) >= 26:
        width, height = struct.unpack("<ii", data[18:26])
        fmt, size = "BMP", (abs(width), abs(height))
    else:
        raise BadPhoto("not a photo: send a JPEG, PNG or WebP image")
    if size is None or min(size) <= 0:
        raise BadPhoto(f"a damaged {fmt} image: its size cannot be read")
    return PhotoHeader(fmt, int(size[0]), int(size[1]))


def decode_photo(data: bytes, name: str = "the photo", keep_side: int | None = None) -> np.ndarray:
    """Bytes of a photo -> a BGR image, upright as EXIF says. Every refusal is a :class:`BadPhoto`.

    ``keep_side``: a large photo is decoded at the smallest of a half, a quarter or an eighth of its size
    that keeps its long side at least this long (the JPEG decoder's own scaling: a 12-megapixel photo in a
    third of the time of the whole); :func:`photo_scale` gives the factor."""
    if len(data) > MAX_BYTES:
        raise BadPhoto(f"{name} is {len(data) / 2**20:.1f} MB: photos up to {MAX_BYTES // 2**20} MB are read")
    if not data:
        raise BadPhoto(f"{name} is empty")
    header = read_header(data)
    pixels = header.width * header.height
    if pixels > MAX_PIXELS:
        raise BadPhoto(f"{name} is {header.width}x{header.height} ({pixels / 1e6:.0f} megapixels): photos up to "
                       f"{MAX_PIXELS // 1_000_000} megapixels are read; send a smaller copy")
    flag = cv2.IMREAD_COLOR
    if keep_side:
        long_side = max(header.width, header.height)
        for factor, reduced in ((2, cv2.IMREAD_REDUCED_COLOR_2), (4, cv2.IMREAD_REDUCED_COLOR_4),
                                (8, cv2.IMREAD_REDUCED_COLOR_8)):
            if long_side / factor >= keep_side:
                flag = reduced
    image = cv2.imdecode(np.frombuffer(data, np.uint8), flag)  # applies the EXIF orientation
    if image is None or image.size == 0:
        raise BadPhoto(f"{name}: a damaged {header.format} image that cannot be decoded")
    return image


def photo_scale(data: bytes, image: np.ndarray) -> float:
    """Pixels of the photo per pixel of ``image`` decoded from it (1.0 unless decoded reduced)."""
    header = read_header(data)
    return max(header.width, header.height) / max(image.shape[:2])


def load_photo(path: str | Path, keep_side: int | None = None) -> np.ndarray:
    """A photo file -> a BGR image; :class:`BadPhoto` (one line, naming the file) for anything else."""
    return load_photo_scaled(path, keep_side)[0]


def load_photo_scaled(path: str | Path, keep_side: int | None = None) -> tuple[np.ndarray, float]:
    """:func:`load_photo` and the photo's pixels per pixel of the image (:func:`decode_photo`'s ``keep_side``)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if not p.is_file():
            raise BadPhoto(f"{path} is not a file")
        if size > MAX_BYTES:  # refused before a byte is read
            raise BadPhoto(f"{path} is {size / 2**20:.1f} MB: photos up to {MAX_BYTES // 2**20} MB are read")
        data = p.read_bytes()
    except FileNotFoundError:
        raise BadPhoto(f"{path}: no such file") from None
    except OSError as exc:
        raise BadPhoto(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        image = decode_photo(data, str(path), keep_side)
    except BadPhoto as exc:
        message = str(exc)
        if not message.startswith(str(path)):
            message = f"{path}: {message}"
        log.info("photo refused: %s", message)
        raise BadPhoto(message) from None
    return image, photo_scale(data, image)
