"""Tile or not: whether a finder's box holds a tile, or something behind the table the finder took for one.

The finder (:mod:`vision.photos.finder`) learnt one publisher's photos; on a photo of the room it puts weak
boxes on printed pages, coins, a camera, a chair leg. Its score alone does not tell them from the weak
boxes of a real tile half hidden, and the embedding's nearest kind does not either (coins look like the
circles suit to it). The verifier looks at each box with more than one eye and gives the chance it is a tile:

- the crop's **embedding** (the packaged tile network's 128-d vector, :mod:`vision.naming.embedding`): tiles
  of every set lie in one region of it, a coin or a letter elsewhere, however near its nearest kind;
- the **finder's evidence**: its score for the box, the photo's median score and how many boxes it found
  (a photo of tiles has many sure boxes, a photo of the room a scatter of weak ones);
- the crop's **shape and colour**: the box's proportions, its size against the photo's other boxes, the
  share of white, colourless body (a tile's face is one), colour and edge density.

A logistic regression on these (:data:`VERIFIER_PATH`, a few kilobytes; ``training/tile_or_not.py`` trains it
on the *training* photos' tile boxes and their boxes on no tile, and on the clutter photos kept for training;
what is measured, roboflow ``valid`` and the clutter kept apart, is never trained on). The reader drops a box
where the boxes of its photo are not tiles as a whole (their median chance under the file's gate): dropped, not
named. A photo of tiles keeps its weak boxes (a tile half hidden, a
squeezed one); a photo of the room loses its confident-looking ones (a row of coins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

__all__ = ["VERIFIER_PATH", "TileVerifier", "box_features"]

VERIFIER_PATH = Path(__file__).resolve().parents[1] / "models" / "tile_or_not.npz"
#: the shape/colour/finder features after the embedding, in order (the model file names them too)
EXTRA = ("score", "median", "score_minus_median", "log_boxes", "log_aspect", "log_rel_area", "white", "saturation",
         "edges", "not_tile")


def _look(crop: np.ndarray) -> tuple[float, float, float]:
    """(share of white colourless body, mean saturation, edge density) of an upright crop."""
    if crop.size == 0:
        return 0.0, 0.0, 0.0
    small = cv2.resize(crop, (32, 44), interpolation=cv2.INTER_AREA)
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    s = hsv[..., 1].astype(np.float32) / 255.0
    v = hsv[..., 2].astype(np.float32) / 255.0
    top = float(np.percentile(v, 95)) + 1e-3
    white = float(np.mean((s < 0.25) & (v > 0.7 * top)))
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    edges = float(np.mean(cv2.Canny(grey, 60, 150) > 0))
    return white, float(s.mean()), edges


def box_features(crops: Sequence[np.ndarray], embeddings: np.ndarray, boxes: Sequence[tuple[int, int, int, int]],
                 scores: Sequence[float], not_tile: np.ndarray) -> np.ndarray:  # fmt: skip
    """One row of features per box of one photo: its upright crop, its embedding, its box, the finder's score
    and its similarity to the nearest "not a tile" prototype (module docstring)."""
    n = len(boxes)
    if not n:
        return np.zeros((0, 128 + len(EXTRA)), np.float32)
    sc = np.asarray(scores, np.float32)
    b = np.asarray(boxes, np.float32).reshape(-1, 4)
    w = np.maximum(b[:, 2] - b[:, 0], 1.0)
    h = np.maximum(b[:, 3] - b[:, 1], 1.0)
    area = w * h
    median = float(np.median(sc))
    rows = np.zeros((n, len(EXTRA)), np.float32)
    rows[:, 0] = sc
    rows[:, 1] = median
    rows[:, 2] = sc - median
    rows[:, 3] = np.log1p(n)
    rows[:, 4] = np.log(h / w)
    rows[:, 5] = np.log(area / float(np.median(area)))
    for i, crop in enumerate(crops):
        rows[i, 6:9] = _look(crop)
    rows[:, 9] = np.asarray(not_tile, np.float32)
    return np.concatenate([np.asarray(embeddings, np.float32).reshape(n, -1), rows], axis=1)


@dataclass(frozen=True)
class TileVerifier:
    """A logistic regression over :func:`box_features` (standardised) and the gate that keeps a photo's boxes: their
    median chance at least ``photo`` (a photo of tiles keeps its weak boxes, tiles half hidden; a photo of the room
    loses even its confident-looking ones). Chosen by ``training/tile_or_not.py`` out of fold on training
    pictures; a gate on each box's own chance as well kept no fewer boxes on no tile there."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    photo: float

    @classmethod
    def load(cls, path: str | Path = VERIFIER_PATH) -> TileVerifier:
        with np.load(path) as z:
            return cls(z["mean"].astype(np.float32), z["scale"].astype(np.float32), z["weights"].astype(np.float32),
                       float(z["bias"]), float(z["photo"]))  # fmt: skip

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, mean=self.mean.astype(np.float32), scale=self.scale.astype(np.float32),
                            weights=self.weights.astype(np.float32), bias=np.float32(self.bias),
                            photo=np.float32(self.photo), extra=np.array(EXTRA))  # fmt: skip

    def chance(self, features: np.ndarray) -> np.ndarray:
        """The chance (0..1) that each row's box holds a tile."""
        if not len(features):
            return np.zeros(0, np.float32)
        z = ((features - self.mean) / self.scale) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def is_tile(self, features: np.ndarray) -> np.ndarray:
        """Whether each box of one photo (its rows of :func:`box_features`) is kept as a tile."""
        chance = self.chance(features)
        if not len(chance):
            return np.zeros(0, bool)
        return np.full(len(chance), float(np.median(chance)) >= self.photo)


@lru_cache(maxsize=1)
def packaged_verifier() -> TileVerifier | None:
    """The packaged verifier, or None where its file is missing (the reader then keeps the finder's rule)."""
    return TileVerifier.load() if VERIFIER_PATH.is_file() else None
