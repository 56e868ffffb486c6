"""Naming a tile: the tile set, the two readers that name a crop, their enrollment and their files.

What a caller imports from here (each name is loaded on first use):

- the tile set (:data:`TILES`, :class:`GridLayout`, :func:`read_tile_directory`);
- the readers: :class:`EmbeddingClassifier` (the learnt embedding, the one to use for a set enrolled
  from artwork or a few crops: it reads an unseen artwork best) and :class:`TileClassifier` (LDA over
  hand-made features, the fast one for a camera enrolled from itself);
- enrollment from the table camera (:func:`enroll_from_frames`, :func:`separability`); a saved model
  is read back by the reader that wrote it (``TileClassifier.load`` reads either).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vision.faces import lazy_face

if TYPE_CHECKING:
    from vision.naming.classifier import TileClassifier
    from vision.naming.embedding import EmbeddingClassifier
    from vision.naming.enrollment import EnrollmentError, enroll_from_frames, separability
    from vision.naming.tile_set import TILES, GridLayout, read_tile_directory

_WHERE = {
    "TileClassifier": "classifier",
    "EmbeddingClassifier": "embedding",
    "EnrollmentError": "enrollment", "enroll_from_frames": "enrollment", "separability": "enrollment",
    "TILES": "tile_set", "GridLayout": "tile_set", "read_tile_directory": "tile_set",
}  # fmt: skip

__all__ = [
    "TILES",
    "EmbeddingClassifier",
    "EnrollmentError",
    "GridLayout",
    "TileClassifier",
    "enroll_from_frames",
    "read_tile_directory",
    "separability",
]

__getattr__, __dir__ = lazy_face(__name__, _WHERE, globals())
