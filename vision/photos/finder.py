"""Find every tile in a real photo (no markers, no slots): a small network, run by OpenCV's dnn.

Interface (what the photo reader and the camera use)::

    from vision.photos.finder import TileFinder, FoundTile
    finder = TileFinder.load()            # the packaged vision/models/tile_finder.onnx, through cv2.dnn
    tiles = finder.find(image_bgr)        # -> list[FoundTile], best score first
    # FoundTile(box=(x0, y0, x1, y1),     # ints, pixels of the image given (axis-aligned, around a turned tile)
    #           score=0.93,               # 0..1, how sure the finder is that a tile lies there
    #           face_up=True,             # False: the tile shows its back
    #           angle=0.0)                # degrees; 0.0 where the finder gives no turn

An empty, tiny or unreadable image gives ``[]``; it never raises for the content of an image.

How: the photo is shrunk so its long side is ``input_size`` px (416 by default: tiles of a phone photo of
a hand or a table are then 15-150 px), padded to a multiple of 32 and run through a CenterNet-style
network (``training/train_finder.py``): per 4x4-pixel cell, how likely a tile's centre lies there (face
up, face down), the box's width and height, and the centre's offset in the cell. Peaks of the heat map
(local maxima over ``score_threshold``) become boxes, and boxes overlapping a better one by more than
``nms_iou`` are dropped (cv2.dnn.NMSBoxes), as is a box lying mostly inside a surer one (:data:`INSIDE`).
A camera that sees the whole table at 1080p, where a tile is
~30 px, gives a larger ``input_size`` (1280), so that a tile stays over ~15 px at the network.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.photos.layout import TILE_PROPORTIONS, tile_shaped

__all__ = ["FINDER_PATH", "LOAD_ERRORS", "BoxMatch", "FoundTile", "TileFinder", "box_iou", "finder_or_none",
           "match_boxes"]

log = logging.getLogger(__name__)

FINDER_PATH = Path(__file__).resolve().parents[1] / "models" / "tile_finder.onnx"
STRIDE = 4
#: the network's input is a multiple of this (its deepest stage halves five times)
ALIGN = 32


@dataclass(frozen=True)
class FoundTile:
    """One tile the finder saw: its box in pixels of the original image, how sure, face or back."""

    box: tuple[int, int, int, int]
    score: float
    face_up: bool
    angle: float = 0.0


class TileFinder:
    """Every tile of a photo as a box with a face/back flag (module docstring)."""

    def __init__(self, path: str | Path = FINDER_PATH, input_size: int = 416, score_threshold: float = 0.3,
                 nms_iou: float = 0.5) -> None:  # fmt: skip
        if not Path(path).is_file():
            raise FileNotFoundError(f"tile finder model {path} is missing: reinstall tablesvc "
                                    "(it ships in the package) or run training/train_finder.py")  # fmt: skip
        self.net = cv2.dnn.readNetFromONNX(str(path))
        self.net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
        self.net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
        #: an OpenCV ``Net`` is not safe to share: two threads between ``setInput`` and ``forward`` swap or
        #: corrupt each other's outputs (and its memory); one forward pass at a time, its output copied out
        self._net_lock = threading.Lock()
        self.input_size = input_size
        self.score_threshold = score_threshold
        self.nms_iou = nms_iou

    @classmethod
    def load(cls, **kwargs: float) -> TileFinder:
        """The packaged network (``vision/models/tile_finder.onnx``)."""
        return cls(FINDER_PATH, **kwargs)  # type: ignore[arg-type]

    @staticmethod
    def _as_bgr(image: object) -> np.ndarray | None:
        """Any array a caller may hand over -> 3-channel uint8, or None where there is nothing to read."""
        if image is None:
            return None
        if not isinstance(image, np.ndarray):
            raise TypeError(f"the tile finder reads an image array (numpy, as cv2.imread gives), not "
                            f"{type(image).__name__}")  # fmt: skip
        img = image
        if img.ndim not in (2, 3) or img.size == 0 or min(img.shape[:2]) < 8:
            return None
        if img.dtype == np.uint16:  # a 16-bit PNG or a raw camera frame
            img = (img >> 8).astype(np.uint8)
        elif img.dtype != np.uint8:
            if not np.issubdtype(img.dtype, np.number):
                return None
            f = np.nan_to_num(img.astype(np.float32))
            top = float(f.max()) if f.size else 0.0
            img = np.clip(f * 255.0 if top <= 1.0 else f, 0, 255).astype(np.uint8)
        if img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
        elif img.shape[2] == 4:
            img = cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
        elif img.shape[2] == 1:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
        elif img.shape[2] != 3:
            return None
        return img

    def maps(self, image_bgr: np.ndarray, input_size: int | None = None) -> tuple[np.ndarray, float]:
        """The network's raw output (6, gh, gw: heat logits face up / down, log w, log h, dx, dy; stride 4)
        for a BGR uint8 image, and the scale image -> input."""
        size = input_size or self.input_size
        h, w = image_bgr.shape[:2]
        scale = size / max(h, w)
        nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
        small = cv2.resize(image_bgr, (nw, nh), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
        pw, ph = -(-nw // ALIGN) * ALIGN, -(-nh // ALIGN) * ALIGN
        padded = cv2.copyMakeBorder(small, 0, ph - nh, 0, pw - nw, cv2.BORDER_CONSTANT, value=(127, 127, 127))
        blob = cv2.dnn.blobFromImage(padded, scalefactor=1 / 63.75, mean=(127.5, 127.5, 127.5), swapRB=False)
        with self._net_lock:
            self.net.setInput(blob)
            out = self.net.forward()[0].copy()
        return out, scale

    def find(self, image_bgr: object, input_size: int | None = None) -> list[FoundTile]:
        """Every tile of ``image_bgr`` (BGR, BGRA or grey), best score first; ``[]`` for an empty image.

        A picture scaled out of its proportions (a screenshot or an app's crop squeezed into a square) shows
        tiles many times wider or taller than a tile is; the network, trained on real proportions, then finds
        few of them. Where the tiles found are so out of shape (median height/width beyond
        :data:`~vision.photos.layout.TILE_PROPORTIONS`), or where in a picture over twice as long as wide they
        cover less than :data:`COVERED` of its length (a strip stretched along its length, its tiles too thin
        at the network's input to be found), the picture is squeezed back by the factor, among
        :data:`RESHAPE_FACTORS`, at which the finder is surest, and the boxes mapped back to the picture as
        given. Any other picture is read once."""
        img = self._as_bgr(image_bgr)
        if img is None:
            return []
        tiles = self._find(img, input_size)
        ratio = _median_ratio(tiles)
        h, w = img.shape[:2]
        if max(h, w) > 2 * min(h, w) and (ratio is None or tile_shaped(ratio, 1)):
            # a strip: a row of a hand cropped from a photo, its tiles touching along its length, or a picture
            # stretched along its length, its tiles too thin at the network's input to be found (a few are)
            if _covered(tiles, h > w, max(h, w)) < COVERED:
                return self._reshaped(img, input_size, tiles, tall=h > w)
            return tiles
        if ratio is None or tile_shaped(ratio, 1):
            return tiles
        return self._reshaped(img, input_size, tiles, tall=ratio > TILE_PROPORTIONS[1])

    def _reshaped(self, img: np.ndarray, input_size: int | None, plain: list[FoundTile],
                  tall: bool) -> list[FoundTile]:  # fmt: skip
        """The tiles of ``img`` read with the picture squeezed back along the axis its tiles are stretched
        in, at the factor whose tiles are most and surest (``plain``: as read unchanged)."""
        h, w = img.shape[:2]
        best, best_mass = plain, _mass(plain)
        for f in RESHAPE_FACTORS:
            nw, nh = (w, max(8, round(h / f))) if tall else (max(8, round(w / f)), h)
            small = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA)
            kx, ky = w / nw, h / nh
            got = [FoundTile((round(t.box[0] * kx), round(t.box[1] * ky), round(t.box[2] * kx),
                              round(t.box[3] * ky)), t.score, t.face_up, t.angle)
                   for t in self._find(small, input_size)]  # fmt: skip
            mass = _mass(got, (kx, ky))
            if mass > best_mass:
                best, best_mass = got, mass
        return best

    def _find(self, img: np.ndarray, input_size: int | None) -> list[FoundTile]:
        maps, scale = self.maps(img, input_size)
        heat = 1.0 / (1.0 + np.exp(-np.clip(maps[:2], -30, 30)))
        best = heat.max(axis=0)
        peaks = (best >= cv2.dilate(best, np.ones((3, 3), np.uint8))) & (best >= self.score_threshold)
        ys, xs = np.nonzero(peaks)
        if not len(ys):
            return []
        scores = best[ys, xs]
        bw = np.exp(np.clip(maps[2, ys, xs], -3, 6)) * STRIDE
        bh = np.exp(np.clip(maps[3, ys, xs], -3, 6)) * STRIDE
        cx = (xs + maps[4, ys, xs]) * STRIDE
        cy = (ys + maps[5, ys, xs]) * STRIDE
        h, w = img.shape[:2]
        x0 = np.clip((cx - bw / 2) / scale, 0, w)
        y0 = np.clip((cy - bh / 2) / scale, 0, h)
        x1 = np.clip((cx + bw / 2) / scale, 0, w)
        y1 = np.clip((cy + bh / 2) / scale, 0, h)
        rects = [[float(a), float(b), float(c - a), float(d - b)] for a, b, c, d in zip(x0, y0, x1, y1, strict=True)]
        keep = cv2.dnn.NMSBoxes(rects, scores.astype(float).tolist(), self.score_threshold, self.nms_iou)
        face = heat[0, ys, xs] >= heat[1, ys, xs]
        out: list[FoundTile] = []
        for i in sorted(np.asarray(keep).reshape(-1), key=lambda k: -scores[k]):
            box = (round(float(x0[i])), round(float(y0[i])), round(float(x1[i])), round(float(y1[i])))
            if box[2] - box[0] < 2 or box[3] - box[1] < 2 or _inside_surer(box, out):
                continue
            out.append(FoundTile(box, float(scores[i]), bool(face[i])))
        return out


#: share of a strip's length the tiles found must cover for it to be read as it is (a row of a hand cropped
#: from a photo: 0.85-0.96; a hand photo stretched 6-8 times along its length: 0.1-0.5)
COVERED = 0.8
#: the factors tried to stretch such a picture back (a screenshot squeezed into a square can be 16 times)
RESHAPE_FACTORS = (1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 11.0, 16.0)


#: a box lying inside a surer one by more than this share of its own area is a part of that tile (its face
#: print, its top seen from above), not a tile of its own: IoU alone misses a small box within a large one
INSIDE = 0.6


def _inside_surer(box: tuple[int, int, int, int], surer: Sequence[FoundTile]) -> bool:
    area = max(1, (box[2] - box[0]) * (box[3] - box[1]))
    for t in surer:
        ix = min(box[2], t.box[2]) - max(box[0], t.box[0])
        iy = min(box[3], t.box[3]) - max(box[1], t.box[1])
        if ix > 0 and iy > 0 and ix * iy > INSIDE * area:
            return True
    return False


def _median_ratio(tiles: Sequence[FoundTile]) -> float | None:
    """Median height/width of the face-up tiles' boxes, or None with fewer than 3 of them."""
    r = [(t.box[3] - t.box[1]) / max(1, t.box[2] - t.box[0]) for t in tiles if t.face_up]
    return float(np.median(r)) if len(r) >= 3 else None


def _covered(tiles: Sequence[FoundTile], tall: bool, length: int) -> float:
    """Share of a picture's length (its height where ``tall``) that the face-up tiles' boxes span."""
    spans = np.zeros(max(1, length), bool)
    for t in tiles:
        if t.face_up:
            start, end = (t.box[1], t.box[3]) if tall else (t.box[0], t.box[2])
            spans[max(0, start):max(0, end)] = True
    return float(spans.mean())


def _mass(tiles: Sequence[FoundTile], k: tuple[float, float] = (1.0, 1.0)) -> float:
    """How much a reading holds: the summed scores of the face-up tiles whose box, in the picture the finder
    was given (``k``: its scale to the original), has a tile's proportions."""
    total = 0.0
    for t in tiles:
        if t.face_up and tile_shaped((t.box[3] - t.box[1]) / k[1], (t.box[2] - t.box[0]) / k[0]):
            total += t.score
    return total


#: what loading the packaged model raises where it is missing, unreadable or not a model OpenCV can run
LOAD_ERRORS = (NotImplementedError, OSError, ValueError, cv2.error)


def finder_or_none(purpose: str = "a tile pushed off its slot is not read until it is put back") -> TileFinder | None:
    """The packaged finder, or None (logged, with what is lost: ``purpose``) where its model cannot be read:
    the table camera reads tiles in their slots without it."""
    try:
        return TileFinder.load()
    except LOAD_ERRORS as exc:
        log.warning("tile finder not available (%s): %s", exc, purpose)
        return None


# ------------------------------------------------------------------------------------------- measuring
def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box of ``a`` (n, 4) with every box of ``b`` (m, 4), x0 y0 x1 y1."""
    a = np.asarray(a, np.float64).reshape(-1, 4)
    b = np.asarray(b, np.float64).reshape(-1, 4)
    ix = (np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])).clip(0)
    iy = (np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])).clip(0)
    inter = ix * iy
    area_a = ((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]))[:, None]
    area_b = ((b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]))[None, :]
    return inter / np.maximum(area_a + area_b - inter, 1e-9)


@dataclass(frozen=True)
class BoxMatch:
    """Labelled boxes against found boxes: ``pairs`` (label index, found index), each used once."""

    pairs: tuple[tuple[int, int], ...]
    unmatched_found: tuple[int, ...]

    @property
    def found(self) -> int:
        return len(self.pairs)

    @property
    def extra(self) -> int:
        return len(self.unmatched_found)


def match_boxes(labels: Sequence | np.ndarray, found: Sequence | np.ndarray, min_iou: float = 0.5) -> BoxMatch:
    """Greedy one-to-one matching by IoU (highest first): a label is found when a box overlaps it with IoU
    >= ``min_iou``; each box is used once; boxes left over are extra."""
    la = np.asarray(labels, np.float64).reshape(-1, 4)
    fo = np.asarray(found, np.float64).reshape(-1, 4)
    if not len(la) or not len(fo):
        return BoxMatch((), tuple(range(len(fo))))
    iou = box_iou(la, fo)
    li, fi = np.nonzero(iou >= min_iou)
    order = np.argsort(-iou[li, fi], kind="stable")
    used_l, used_f, pairs = set(), set(), []
    for k in order:
        a, b = int(li[k]), int(fi[k])
        if a in used_l or b in used_f:
            continue
        used_l.add(a)
        used_f.add(b)
        pairs.append((a, b))
    return BoxMatch(tuple(sorted(pairs)), tuple(i for i in range(len(fo)) if i not in used_f))
