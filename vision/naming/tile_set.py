"""The tile set every recogniser enrolls: the kinds, their file names, the enrollment grid, the quarter turns.

Shared by the LDA classifier (:mod:`vision.naming.classifier`) and the embedding
(:mod:`vision.naming.embedding`), so that neither has to import the other for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

__all__ = ["DEFAULT_GRID", "FLUFFY_NAMES", "TILES", "GridLayout", "read_tile_directory", "rotate"]

SUITS = "mps"
HONOURS = ["E", "S", "W", "N", "P", "F", "C"]
RED_FIVES = ["5mr", "5pr", "5sr"]
TILES: list[str] = [f"{n}{s}" for s in SUITS for n in range(1, 10)] + HONOURS + RED_FIVES

# FluffyStuff/riichi-mahjong-tiles file stems -> mjai notation
FLUFFY_NAMES: dict[str, str] = {
    **{f"{name}{n}": f"{n}{s}" for name, s in (("Man", "m"), ("Pin", "p"), ("Sou", "s")) for n in range(1, 10)},
    **{f"{name}5-Dora": f"5{s}r" for name, s in (("Man", "m"), ("Pin", "p"), ("Sou", "s"))},
    "Ton": "E", "Nan": "S", "Shaa": "W", "Pei": "N", "Haku": "P", "Hatsu": "F", "Chun": "C",
}  # fmt: skip

_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff"}

# the documented grid order: one row per suit, then the honours, then the red fives
DEFAULT_GRID: list[list[str | None]] = [
    [f"{n}m" for n in range(1, 10)],
    [f"{n}p" for n in range(1, 10)],
    [f"{n}s" for n in range(1, 10)],
    [*HONOURS, None, None],
    [*RED_FIVES, None, None, None, None, None, None],
]


@dataclass
class GridLayout:
    """Where each tile lies in an enrollment photo of tiles laid in a grid.

    The image given to :meth:`TileClassifier.enroll_grid` is the grid's bounding box
    (crop or rectify the photo to it, e.g. with the table homography), split into
    ``len(rows)`` equal rows and ``max(len(row))`` equal columns; ``rows[r][c]`` names
    the tile in that cell, ``None`` for an empty cell. Each cell is shrunk by ``inset``
    (a fraction of the cell on each side) to drop gaps between tiles and the neighbours'
    edges. Default order (5 rows x 9 columns, tiles upright, left to right):

    ``1m..9m`` / ``1p..9p`` / ``1s..9s`` / ``E S W N P F C`` / ``5mr 5pr 5sr``
    """

    rows: list[list[str | None]] = field(default_factory=lambda: [list(r) for r in DEFAULT_GRID])
    inset: float = 0.04

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        return max(len(r) for r in self.rows)

    def cells(self, image: np.ndarray) -> Iterator[tuple[str, np.ndarray]]:
        """Yield (tile, crop) for every named cell of ``image``."""
        h, w = image.shape[:2]
        ch, cw = h / self.n_rows, w / self.n_cols
        for r, row in enumerate(self.rows):
            for c, tile in enumerate(row):
                if tile is None:
                    continue
                y0, y1 = round((r + self.inset) * ch), round((r + 1 - self.inset) * ch)
                x0, x1 = round((c + self.inset) * cw), round((c + 1 - self.inset) * cw)
                yield tile, image[y0:y1, x0:x1]


def read_tile_directory(path: str | Path) -> dict[str, list[np.ndarray]]:
    """Tile -> images of a directory named by notation or FluffyStuff name (``1m_2.jpg`` adds a second 1m).

    Raises ``ValueError`` when an image cannot be read or none is named as a tile."""
    found: dict[str, list[np.ndarray]] = {}
    for p in sorted(Path(path).iterdir()):
        if p.suffix.lower() not in _IMAGE_SUFFIXES:
            continue
        stem = p.stem.split("_")[0]
        tile = stem if stem in TILES else FLUFFY_NAMES.get(stem)
        if tile is None:
            continue
        img = cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
        if img is None:
            raise ValueError(f"cannot read image {p}")
        found.setdefault(tile, []).append(img)
    if not found:
        raise ValueError(f"no tile images named by notation or FluffyStuff name in {path}")
    return dict(sorted(found.items(), key=lambda kv: TILES.index(kv[0])))


def rotate(image: np.ndarray, degrees_cw: int) -> np.ndarray:
    """Rotate by a multiple of 90 degrees clockwise (exact, no resampling)."""
    k = (degrees_cw // 90) % 4
    if k == 0:
        return image
    code = {1: cv2.ROTATE_90_CLOCKWISE, 2: cv2.ROTATE_180, 3: cv2.ROTATE_90_COUNTERCLOCKWISE}[k]
    return cv2.rotate(image, code)
