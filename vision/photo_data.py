"""Real tile photos for training and measuring the recogniser: ``../shared/data`` read, never copied.

Two sources, both mapped to the project's tile notation (``1m`` .. ``C``; ``None`` for a flower or
season, which a recogniser must call unknown):

- ``tiles-photos-roboflow`` (CC BY 4.0, "Chinese Mahjong Detection" by riichimahjongdetection,
  Roboflow Universe): 640x640 photos of many sets with a YOLO box per tile, ``train`` / ``valid``
  split by photo. :func:`roboflow_crops` cuts each box out (a little margin, a sideways box turned
  upright) and keeps the photo's name, so that a measure can enroll from some photos and read others.
- ``tiles-photos-camerash`` (MIT): 240x320 photos of single tiles. :func:`camerash_photos` reads them
  and :func:`camerash_split` halves them by a hash of the file name: one half may be trained on, the
  other is kept for measuring only.

Used by ``vision/train`` (training) and ``bench/vision.py`` (figures); the product never reads them.
"""

from __future__ import annotations

import csv
import zlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .features import photo_label_to_tile

__all__ = ["DATA", "PhotoCrop", "camerash_photos", "camerash_split", "roboflow_crops", "roboflow_names"]

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ROBOFLOW = DATA / "tiles-photos-roboflow"
CAMERASH = DATA / "tiles-photos-camerash"


@dataclass(frozen=True)
class PhotoCrop:
    """One real tile: ``tile`` in notation (None: flower/season), the BGR crop, the photo it came from."""

    tile: str | None
    image: np.ndarray
    photo: str


def roboflow_names(root: Path = ROBOFLOW) -> list[str | None]:
    """Class index -> tile (``classes.txt``; its ``other`` = flower or season -> None)."""
    names = (root / "classes.txt").read_text().split()
    return [None if n == "other" else n for n in names]


def roboflow_crops(split: str, root: Path = ROBOFLOW, margin: float = 0.06, min_side: int = 12) -> list[PhotoCrop]:
    """Every labelled tile of ``split`` (``train`` or ``valid``) as an upright-ish crop.

    The publisher stretched each photo to 640x640, so a box's aspect ratio says little; a box at
    least 1.25 times wider than tall is taken as a sideways tile and turned a quarter (which way is
    unknown: the recogniser is trained to read a tile upside down as well). Boxes under
    ``min_side`` px are skipped (a few specks in the labels).
    """
    if split not in ("train", "valid"):
        raise ValueError(f"split must be 'train' or 'valid', not {split!r}")
    names = roboflow_names(root)
    out: list[PhotoCrop] = []
    for img_path in sorted((root / "images" / split).iterdir()):
        label_path = root / "labels" / split / (img_path.stem + ".txt")
        if not label_path.is_file():
            continue
        img = cv2.imread(str(img_path), cv2.IMREAD_COLOR)
        if img is None:
            continue
        h, w = img.shape[:2]
        for line in label_path.read_text().splitlines():
            parts = line.split()
            if len(parts) != 5:
                continue
            cls = int(parts[0])
            cx, cy, bw, bh = (float(v) for v in parts[1:])
            bw_px, bh_px = bw * w, bh * h
            if min(bw_px, bh_px) < min_side:
                continue
            mx, my = bw_px * margin, bh_px * margin
            x0, x1 = int(max(0, cx * w - bw_px / 2 - mx)), int(min(w, cx * w + bw_px / 2 + mx))
            y0, y1 = int(max(0, cy * h - bh_px / 2 - my)), int(min(h, cy * h + bh_px / 2 + my))
            crop = img[y0:y1, x0:x1]
            if crop.size == 0:
                continue
            if bw_px > 1.25 * bh_px:
                crop = cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE)
            out.append(PhotoCrop(names[cls], np.ascontiguousarray(crop), img_path.name))
    return out


def camerash_photos(root: Path = CAMERASH) -> list[PhotoCrop]:
    """Every Camerash photo (one tile each), labelled in notation (flowers/seasons None)."""
    out: list[PhotoCrop] = []
    with (root / "data.csv").open() as f:
        for row in csv.DictReader(f):
            img = cv2.imread(str(root / "tiles-resized" / row["image-name"]), cv2.IMREAD_COLOR)
            if img is not None:
                out.append(PhotoCrop(photo_label_to_tile(row["label-name"]), img, row["image-name"]))
    return out


def camerash_split(photos: list[PhotoCrop]) -> tuple[list[PhotoCrop], list[PhotoCrop]]:
    """(train half, measure half) by a CRC of the file name: fixed, the same on every machine."""
    train = [p for p in photos if zlib.crc32(p.photo.encode()) % 2 == 0]
    test = [p for p in photos if zlib.crc32(p.photo.encode()) % 2 == 1]
    return train, test
