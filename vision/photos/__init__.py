"""Photos: a phone's photo of tiles with no markers, decoded, its tiles found, read and put in order.

What a caller imports from here (each name is loaded on first use):

- the photo itself (:func:`decode_photo`, :func:`load_photo`, :class:`BadPhoto`);
- the finder, every tile's box (:class:`TileFinder`, :class:`FoundTile`, :func:`finder_or_none`);
- the reader (:class:`PhotoReader` -> :class:`PhotoReading`, :class:`FinderMissing`);
- the reading order of the boxes (:func:`reading_order`, :func:`tile_shaped`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vision.faces import lazy_face

if TYPE_CHECKING:
    from vision.photos.finder import FoundTile, TileFinder, finder_or_none
    from vision.photos.input import BadPhoto, decode_photo, load_photo
    from vision.photos.layout import reading_order, tile_shaped
    from vision.photos.reader import FinderMissing, PhotoReader, PhotoReading

_WHERE = {
    "FoundTile": "finder", "TileFinder": "finder", "finder_or_none": "finder",
    "BadPhoto": "input", "decode_photo": "input", "load_photo": "input",
    "reading_order": "layout", "tile_shaped": "layout",
    "FinderMissing": "reader", "PhotoReader": "reader", "PhotoReading": "reader",
}  # fmt: skip

__all__ = [
    "BadPhoto",
    "FinderMissing",
    "FoundTile",
    "PhotoReader",
    "PhotoReading",
    "TileFinder",
    "decode_photo",
    "finder_or_none",
    "load_photo",
    "reading_order",
    "tile_shaped",
]

__getattr__, __dir__ = lazy_face(__name__, _WHERE, globals())
