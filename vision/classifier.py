"""Tile classification: which of the 34 kinds (plus red fives) an upright tile crop shows, or unknown.

Method (chosen by measurement, see docs/vision.md and ``python bench/classifier_compare.py``):
each enrolled image is normalised to 36x48, distorted into a few dozen camera-like
copies (rotation, scale, perspective, blur, noise, light), and each copy is described
by HOG of the grey image plus a coarse, white-balanced chroma layout (the colour
block is what tells a red five from a plain five). A crop is classified by cosine
nearest neighbour over all enrolled copies; the best and the runner-up *kind* give a
similarity and a margin, and an answer below either threshold is reported as
``None`` (unknown), never as a guess.

Tile designs differ between sets, so a set is enrolled: from a dict of images,
from a directory of images named by notation (or by FluffyStuff names), or from
one photo of the tiles laid in a grid (:class:`GridLayout`). ``save``/``load``
keep an enrolled model so a club enrolls once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import cv2
import numpy as np

from .features import Augmenter, combined_features, normalise

__all__ = ["FLUFFY_NAMES", "TILES", "GridLayout", "TileClassifier"]

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


@dataclass
class TileClassifier:
    """Enroll a tile set, then classify upright tile crops of any size.

    ``min_similarity`` and ``min_margin`` are the rejection thresholds (cosine similarity
    of the best kind, and its lead over the runner-up kind); they were set on
    measurements (docs/vision.md) so that flowers, seasons, tile backs and noise come
    out ``None``. ``augment_per_image`` distorted copies are enrolled for each image so
    that one clean image per kind is enough.
    """

    min_similarity: float = 0.50
    min_margin: float = 0.04
    augment_per_image: int = 40
    colour_weight: float = 0.6
    seed: int = 0
    _raw: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32), repr=False)
    _feats: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32), repr=False)
    _centre: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32), repr=False)
    _labels: list[str] = field(default_factory=list, repr=False)
    _class_index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32), repr=False)
    _kinds: list[str] = field(default_factory=list, repr=False)

    # ------------------------------------------------------------------ enrollment

    @property
    def tiles(self) -> list[str]:
        """The kinds enrolled so far (sorted in TILES order, unknown names last)."""
        return list(self._kinds)

    def _describe(self, canon: np.ndarray) -> np.ndarray:
        return combined_features(canon, self.colour_weight)

    def enroll(self, images_by_tile: Mapping[str, Sequence[np.ndarray] | np.ndarray]) -> None:
        """Add exemplars: ``{'1m': image or [images], ...}``. Any size/format (BGR, BGRA, grey).

        Each image is enrolled as itself plus ``augment_per_image`` distorted copies.
        Calling again adds to what is enrolled (more photos of a kind make it more robust).
        """
        aug = Augmenter(seed=self.seed + len(self._labels), jpeg_quality_min=60, resample_h=(36, 60))
        new_feats: list[np.ndarray] = []
        new_labels: list[str] = []
        for tile, imgs in images_by_tile.items():
            if tile not in TILES:
                raise ValueError(f"unknown tile name {tile!r}: expected mjai notation such as '1m', '5mr', 'E'")
            seq = [imgs] if isinstance(imgs, np.ndarray) else list(imgs)
            for img in seq:
                new_feats.append(self._describe(normalise(img)))
                new_labels.append(tile)
                for _ in range(self.augment_per_image):
                    new_feats.append(self._describe(aug(img)))
                    new_labels.append(tile)
        if not new_feats:
            return
        stacked = np.stack(new_feats).astype(np.float32)
        self._raw = stacked if self._raw.size == 0 else np.vstack([self._raw, stacked])
        self._labels.extend(new_labels)
        self._reindex()

    def _reindex(self) -> None:
        order = {t: i for i, t in enumerate(TILES)}
        self._kinds = sorted(set(self._labels), key=lambda t: order.get(t, len(order)))
        pos = {t: i for i, t in enumerate(self._kinds)}
        self._class_index = np.array([pos[t] for t in self._labels], np.int32)
        # centre on the mean of the per-kind means: what every tile shares (body outline, rim,
        # light face) says nothing about the kind but inflates every cosine, unknowns' included
        kind_means = np.stack([self._raw[self._class_index == i].mean(axis=0) for i in range(len(self._kinds))])
        self._centre = kind_means.mean(axis=0).astype(np.float32)
        self._feats = np.stack([self._centred(v) for v in self._raw]) if len(self._raw) else self._raw

    def _centred(self, v: np.ndarray) -> np.ndarray:
        c = v - self._centre
        return (c / (np.linalg.norm(c) + 1e-9)).astype(np.float32)

    def enroll_directory(self, path: str | Path) -> list[str]:
        """Enroll every image in ``path`` named by notation (``1m.png``, ``5mr.png``, ``E.png``)
        or by FluffyStuff name (``Man1.png``, ``Pin5-Dora.png``, ``Ton.png``).

        Other files (``Back.png``, ``README.md``) are skipped; a name may carry a suffix
        after an underscore (``1m_2.jpg``) to enroll several photos of one kind.
        Returns the tiles enrolled.
        """
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
        self.enroll(found)
        return sorted(found, key=TILES.index)

    def enroll_grid(self, image: np.ndarray, layout: GridLayout | None = None) -> list[str]:
        """Enroll from one image of the tiles laid in a grid (see :class:`GridLayout` for the order)."""
        layout = layout or GridLayout()
        found: dict[str, list[np.ndarray]] = {}
        for tile, crop in layout.cells(image):
            found.setdefault(tile, []).append(crop)
        self.enroll(found)
        return list(found)

    # ------------------------------------------------------------------ classification

    def scores(self, image: np.ndarray) -> tuple[str, float, float]:
        """(best kind, its similarity, the runner-up kind's similarity), without rejection.

        Exposed for calibration and benchmarks; use :meth:`classify` for answers.
        """
        if not self._labels:
            raise RuntimeError("nothing enrolled: call enroll(), enroll_directory() or enroll_grid() first")
        q = self._centred(self._describe(normalise(image)))
        sims = self._feats @ q
        per_kind = np.full(len(self._kinds), -1.0, np.float32)
        np.maximum.at(per_kind, self._class_index, sims)
        if len(per_kind) == 1:
            return self._kinds[0], float(per_kind[0]), -1.0
        top2 = np.argpartition(-per_kind, 1)[:2]
        a, b = (top2[0], top2[1]) if per_kind[top2[0]] >= per_kind[top2[1]] else (top2[1], top2[0])
        return self._kinds[a], float(per_kind[a]), float(per_kind[b])

    def classify(self, image: np.ndarray) -> tuple[str | None, float]:
        """Upright tile crop (any size, BGR/BGRA/grey) -> (tile or None, confidence in [0, 1]).

        The confidence is the best kind's similarity; the answer is ``None`` when that
        similarity is under ``min_similarity`` or its lead over the runner-up kind is
        under ``min_margin`` (two kinds fit equally well: a guess, so not given).
        """
        tile, s1, s2 = self.scores(image)
        conf = float(np.clip(s1, 0.0, 1.0))
        if s1 < self.min_similarity or s1 - s2 < self.min_margin:
            return None, conf
        return tile, conf

    def classify_any_orientation(
        self, image: np.ndarray, rotations: Sequence[int] = (0, 180, 90, 270)
    ) -> tuple[str | None, float, int]:
        """Try the crop turned by each of ``rotations`` (degrees clockwise) and keep the best.

        Returns (tile or None, confidence, rotation that makes the crop upright). The
        opposite player's tiles reach the camera upside down, sideways ones at 90/270.
        A kind that looks the same turned (1p, 8s...) may report either rotation.
        """
        best: tuple[str | None, float, int, float] = (None, -1.0, 0, -1.0)
        for rot in rotations:
            turned = _rotate(image, rot)
            tile, s1, s2 = self.scores(turned)
            ok = s1 >= self.min_similarity and s1 - s2 >= self.min_margin
            if s1 > best[1]:
                best = (tile if ok else None, s1, rot, s2)
        tile, s1, rot, _ = best
        return tile, float(np.clip(s1, 0.0, 1.0)), rot

    # ------------------------------------------------------------------ persistence

    def save(self, path: str | Path) -> None:
        """Write the enrolled model to ``path`` (.npz: features, labels and parameters as JSON)."""
        params = {k: v for k, v in asdict(self).items() if not k.startswith("_")}
        np.savez_compressed(
            Path(path),
            feats=self._raw,
            labels=np.array(json.dumps(self._labels)),
            params=np.array(json.dumps(params)),
        )

    @classmethod
    def load(cls, path: str | Path) -> TileClassifier:
        """Read a model written by :meth:`save`; answers are identical to the saved classifier's."""
        with np.load(Path(path), allow_pickle=False) as z:
            clf = cls(**json.loads(str(z["params"])))
            clf._raw = z["feats"].astype(np.float32)
            clf._labels = list(json.loads(str(z["labels"])))
        clf._reindex()
        return clf


def _rotate(image: np.ndarray, degrees_cw: int) -> np.ndarray:
    """Rotate by a multiple of 90 degrees clockwise (exact, no resampling)."""
    k = (degrees_cw // 90) % 4
    if k == 0:
        return image
    code = {1: cv2.ROTATE_90_CLOCKWISE, 2: cv2.ROTATE_180, 3: cv2.ROTATE_90_COUNTERCLOCKWISE}[k]
    return cv2.rotate(image, code)
