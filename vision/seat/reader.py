"""One seat camera frame -> the standing row as seen: each tile's place along the row and its name.

Per frame:

1. **the strip**: the row's face plane (:class:`~vision.seat.calibration.SeatCalibration`) warped
   to an upright strip at ``px_per_mm`` (a 15-tile strip is 780x70 px: the rest of the frame is
   never touched);
2. **the finder**: a tile's body is bright and colourless against felt, rack, skin and shadow, so
   the columns where a good share of pixels are such are occupied (a face's glyph never covers its
   whole height; felt, rack and a gap cover all of it); a stretch of columns with a little body only,
   narrower than a face's artwork (0.7 of a tile), is a glyph reaching the face's edges, not a gap: a dense
   face (FluffyStuff's 8p) leaves only its ivory margins, a few pixels of each column (none in some), over
   16 mm. A single tile standing apart at the right end
   is the drawn one; the rest is one row, cut into as many tiles as its length holds (26 mm each). A
   row whose length is no whole number of tiles, or with a gap of half a tile or more (a hand over
   the row, a tile lifted), makes the frame not *whole*: its tiles are read but the consensus does
   not count it;
3. **naming, changed tiles only**: each tile's crop is reduced to a small normalised signature (in colour); a
   crop whose signature matches one of the last frame's tiles (anywhere in the row: a row shifts
   when a tile leaves it) takes that tile's name without being read again. Only new crops go to
   the club's reader (the embedding or the LDA classifier, enrolled from this camera or packaged),
   all in one batch. An unsure crop is unknown (None), never a guess.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

import cv2
import numpy as np

from vision.seat.calibration import MIN_FACE_PX, TILE_H_MM, TILE_W_MM, SeatCalibration

__all__ = ["ENROLL_ROWS", "SeatFrame", "SeatReader", "SeenTile", "enroll_from_rows"]

#: the rows a seat camera is enrolled from, left to right: the 37 kinds (red fives last) in three rows
ENROLL_ROWS: tuple[tuple[str, ...], ...] = (
    ("1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "1p", "2p", "3p", "4p"),
    ("5p", "6p", "7p", "8p", "9p", "1s", "2s", "3s", "4s", "5s", "6s", "7s", "8s"),
    ("9s", "E", "S", "W", "N", "P", "F", "C", "5mr", "5pr", "5sr"),
)

log = logging.getLogger(__name__)


class Namer(Protocol):
    """The club's reader: the embedding or the LDA classifier (both have these)."""

    def scores_many(self, images: Sequence[np.ndarray]) -> list[tuple[str, float, float]]: ...
    def decide(self, tile: str, s1: float, s2: float) -> tuple[str | None, float]: ...


@dataclass(frozen=True)
class SeenTile:
    """One standing tile in a frame: its name (None: unsure), the reader's confidence, and where its
    face lies along the strip (mm from the strip's left end)."""

    tile: str | None
    confidence: float
    x_mm: tuple[float, float]
    #: the reader's best kind where it is not sure of one (similar enough to a kind of the set, not leading
    #: the runner-up enough): what several frames may agree on (:mod:`vision.seat.consensus`); None where
    #: ``tile`` is given or the crop is like no kind
    guess: str | None = None


@dataclass(frozen=True)
class SeatFrame:
    """What one frame shows: the row left to right (the drawn tile apart), whether every run of tiles
    was whole, how many crops were read by the network (the rest matched the last frame) and ms spent."""

    row: tuple[SeenTile, ...]
    drawn: SeenTile | None
    whole: bool
    read: int = 0
    ms: float = 0.0

    @property
    def count(self) -> int:
        return len(self.row) + (self.drawn is not None)


def _percentile_u8(image: np.ndarray, q: float, channel: int) -> float:
    """``np.percentile`` (linear) of one channel of a uint8 image, what it gives to the bit: read off the channel's
    histogram where the ranks about the percentile's all hold one level (the percentile is that level, whatever
    the interpolation between them), else from ``np.percentile`` itself. A strip's percentile is taken on every
    frame, and sorting its 55,000 pixels costs ten times the histogram."""
    n = image.shape[0] * image.shape[1]
    at = (n - 1) * q / 100.0
    hist = cv2.calcHist([image], [channel], None, [256], [0, 256]).ravel()
    levels = np.searchsorted(np.cumsum(hist), [max(0.0, np.floor(at) - 1), min(n - 1.0, np.floor(at) + 2)], "right")
    if levels[0] == levels[1]:  # the ranks floor(at) - 1 .. floor(at) + 2 all hold one level
        return float(levels[0])
    return float(np.percentile(image[..., channel], q))


SIGNATURE = (12, 16)  # w, h of a crop's signature


def _signature(crop: np.ndarray) -> np.ndarray:
    """A crop's small normalised picture, in colour: a red five and its plain five differ in colour only."""
    colour = crop if crop.ndim == 3 else cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR)
    small = cv2.resize(colour, SIGNATURE, interpolation=cv2.INTER_AREA).astype(np.float32).ravel()
    small -= small.mean()
    return small / (float(np.linalg.norm(small)) + 1e-6)


class SeatReader:
    """Reads a seat camera's frames with ``namer`` (the club's reader) and the camera's calibration.

    ``match_below``: a crop whose signature is this near (Euclidean, unit vectors) to one of the last
    frame's tiles, and no tile of another name is within twice that, keeps that tile's name, if it was
    read with at least ``keep_above``; ``sure_above``: a
    name the reader gives below this confidence is unknown. ``occupied``: the share of a column's pixels
    that must be tile body. ``glyph_w``: a stretch of columns with a little body (a fifth of ``occupied``,
    within ``faint_reach`` mm) narrower than this share of a tile is a glyph across a face, not a gap: the
    widest such glyph (a FluffyStuff 8p's pins) is 0.62 of a tile, and a real gap (felt, rack, skin) has no
    body at all, the drawn tile's (at least 6 mm) included.
    """

    def __init__(self, namer: Namer, calibration: SeatCalibration, px_per_mm: float = 2.0,
                 match_below: float = 0.15, keep_above: float = 0.9, sure_above: float = 0.0,
                 occupied: float = 0.15, glyph_w: float = 0.7, faint_reach: float = 1.0) -> None:
        self.namer = namer
        self.calibration = calibration
        self.px_per_mm = px_per_mm
        self.match_below = match_below
        self.sure_above = sure_above
        self.keep_above = keep_above
        self.occupied = occupied
        self.glyph_w = glyph_w
        self.faint_reach = faint_reach
        self._size = (round(calibration.strip_mm * px_per_mm), round(TILE_H_MM * px_per_mm))
        self._warp: tuple[tuple[int, int], np.ndarray] | None = None
        self._last: list[tuple[np.ndarray, str | None, float]] = []
        #: best kinds are given only by a camera that shows the faces large enough: from a coarser one, a kind the
        #: reader finds nearest frame after frame may still be wrong (a FluffyStuff 1p taken for a 6m at 31 px)
        self.guesses = calibration.face_px >= MIN_FACE_PX
        if not self.guesses:
            log.warning("the seat camera shows the tiles' faces %.0f px high (under %.0f): many will stay unknown; "
                        "mount it lower (under 50 degrees above the table) or set it to 1280x720",
                        calibration.face_px, MIN_FACE_PX)

    # ---------------------------------------------------------------- the strip
    def strip(self, frame: np.ndarray) -> np.ndarray:
        """The row's face plane, upright, ``px_per_mm``."""
        size = (frame.shape[1], frame.shape[0])
        if self._warp is None or self._warp[0] != size:
            w, h = self._size
            dst = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
            m = cv2.getPerspectiveTransform(self.calibration.quad_for(size).astype(np.float32), dst)
            self._warp = (size, m)
        return cv2.warpPerspective(frame, self._warp[1], self._size, flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_REPLICATE)

    def runs(self, strip: np.ndarray) -> list[tuple[int, int]]:
        """Runs of occupied columns (start, end) in strip pixels."""
        # white balance on the brightest pixels (the tiles' bodies): a warm or cold room leaves them colourless
        white = np.array([_percentile_u8(strip, 95.0, c) for c in range(3)], np.float32) + 1.0
        balanced = cv2.multiply(strip, np.array([*(float(white.max()) / white), 0.0]), dtype=cv2.CV_8U)
        hsv = cv2.cvtColor(balanced, cv2.COLOR_BGR2HSV)
        v = hsv[..., 2]
        bright = _percentile_u8(hsv, 95.0, 2)
        body = (hsv[..., 1] < 80) & (v > 0.6 * bright)
        col = body.mean(axis=0)
        occupied = col >= self.occupied
        # a glyph that reaches the face's edges (an honour's strokes, a red five's sticks, a dense face's pins)
        # leaves only a little body in its columns; felt, rack and the gap before the drawn tile leave none at all
        faint = col >= self.occupied / 5
        if self.faint_reach:  # a column of a dense face may show its margins in a pixel or two, or none
            r = max(1, round(self.faint_reach * self.px_per_mm))
            faint = np.convolve(faint, np.ones(2 * r + 1), "same") > 0
        tile_px = TILE_W_MM * self.px_per_mm
        # close gaps narrower than 3 mm (a dark glyph spanning a column), and faint ones narrower than glyph_w of
        # a tile (a glyph across the face's height); drop runs under half a tile
        gap = max(1, round(3 * self.px_per_mm))
        idx = np.flatnonzero(occupied)
        # each occupied column joins the one before it across the columns between (none where they touch) when
        # those are few enough, or all faint and fewer than a glyph's width
        between = idx[1:] - idx[:-1] - 1
        not_faint = np.concatenate(([0], np.cumsum(~faint.astype(bool))))
        all_faint = not_faint[idx[1:]] == not_faint[idx[:-1] + 1]
        apart = np.flatnonzero(~((between <= gap) | ((between < self.glyph_w * tile_px) & all_faint)))
        starts = [*idx[:1], *idx[1:][apart]]
        ends = [*(idx[:-1][apart] + 1), *(idx[-1:] + 1)]
        out = [[int(a), int(b)] for a, b in zip(starts, ends, strict=True)]
        # a piece too short to be a tile, within a third of a tile of the run beside it, is part of that run's
        # end face (a glyph across its whole height split it off); the drawn tile, a whole face long and
        # further apart, stays apart
        merged: list[list[int]] = []
        for a, b in out:
            short = b - a < tile_px / 2 or (merged and merged[-1][1] - merged[-1][0] < tile_px / 2)
            if merged and short and a - merged[-1][1] < tile_px / 3:
                merged[-1][1] = b
            else:
                merged.append([a, b])
        return [(a, b) for a, b in merged if b - a >= tile_px / 2]

    def places(self, runs: Sequence[tuple[int, int]], drawn_apart: bool = True,
               ) -> tuple[list[tuple[int, int]], tuple[int, int] | None, bool]:
        """The tiles' places (strip px, left to right, the drawn one last), the drawn one's place or None, and
        whether the row is whole.

        The last run is the drawn tile when it is one tile long and stands at least 6 mm apart. The rest is
        one row from its first run's start to its last run's end, cut into as many tiles as it holds: gaps
        inside it narrower than half a tile are glyphs that reach a face's edges; a wider one (a hand over the
        row, a tile lifted) or a span that is no whole number of tiles makes the frame not whole.
        """
        tile_px = TILE_W_MM * self.px_per_mm
        runs = list(runs)
        drawn_at = None
        if drawn_apart and len(runs) >= 2:
            a, b = runs[-1]
            if abs((b - a) / tile_px - 1) < 0.3 and a - runs[-2][1] >= 6 * self.px_per_mm:
                drawn_at = runs.pop()
        if not runs:
            return ([drawn_at] if drawn_at else []), drawn_at, drawn_at is not None
        start, end = runs[0][0], runs[-1][1]
        n = (end - start) / tile_px
        k = max(1, round(n))
        whole = abs(n - k) <= 0.3 and all(c - b < tile_px / 2 for (_, b), (c, _) in pairwise(runs))
        step = (end - start) / k
        places = [(round(start + j * step), round(start + (j + 1) * step)) for j in range(k)]
        if drawn_at is not None:
            places.append(drawn_at)
        return places, drawn_at, whole

    # ---------------------------------------------------------------- a frame
    def read(self, frame: np.ndarray) -> SeatFrame:
        """The row in ``frame`` (BGR), named; see the module's docstring."""
        t0 = time.process_time()
        strip = self.strip(frame)
        places, drawn_at, whole = self.places(self.runs(strip))
        crops = [cv2.resize(strip[:, a:b], (52, 70), interpolation=cv2.INTER_LINEAR) for a, b in places]
        sigs = [_signature(c) for c in crops]
        names: list[tuple[str | None, float]] = [(None, 0.0)] * len(crops)
        guesses: list[str | None] = [None] * len(crops)
        todo: list[int] = []
        last = self._last
        bank = np.stack([s for s, _, _ in last]) if last else None
        for i, s in enumerate(sigs):
            if bank is not None:
                d = np.linalg.norm(bank - s, axis=1)
                j = int(np.argmin(d))
                # the match must also be unambiguous: another kind as near (a 2m beside a 3m differ only in a
                # numeral) sends the crop to the reader
                rivals = [d[k] for k in range(len(last)) if last[k][1] != last[j][1]]
                if d[j] < self.match_below and (not rivals or min(rivals) >= d[j] + self.match_below):
                    names[i] = (last[j][1], last[j][2])
                    continue
            todo.append(i)
        if todo:
            for i, got in zip(todo, self.namer.scores_many([crops[i] for i in todo]), strict=True):
                tile, conf = self.namer.decide(*got)
                names[i] = (tile if conf >= self.sure_above else None, conf)
                if self.guesses and names[i][0] is None and got[1] >= getattr(self.namer, "min_similarity", 2.0):
                    guesses[i] = got[0]
        # only sure names are kept for the next frame: an unsure tile is read again, so that frames agreeing
        # on it are frames that each read it
        self._last = [(s, n, c) for s, (n, c) in zip(sigs, names, strict=True)
                      if n is not None and c >= self.keep_above]
        seen = [SeenTile(n, c, (a / self.px_per_mm, b / self.px_per_mm), g)
                for (n, c), (a, b), g in zip(names, places, guesses, strict=True)]
        drawn = seen.pop() if drawn_at is not None else None
        return SeatFrame(tuple(seen), drawn, whole, len(todo), (time.process_time() - t0) * 1000)

    def crops(self, frame: np.ndarray, drawn_apart: bool = True) -> list[np.ndarray]:
        """The tiles' crops of ``frame`` left to right (the drawn one last), as the reader names them;
        without ``drawn_apart`` the whole row is one (an enrollment row has no drawn tile)."""
        strip = self.strip(frame)
        places, _, _ = self.places(self.runs(strip), drawn_apart)
        return [cv2.resize(strip[:, a:b], (52, 70), interpolation=cv2.INTER_LINEAR) for a, b in places]

def enroll_from_rows(namer: object, calibration: SeatCalibration, rows: Sequence[tuple[np.ndarray, Sequence[str]]],
                     check: bool = True, warn: Callable[[str], None] | None = None) -> dict[str, int]:
    """Enroll ``namer`` from the seat camera itself: frames of rows whose tiles are known (left to right,
    e.g. each kind shown once over three rows). Returns the crops enrolled per kind.

    Nothing is enrolled when a frame's row does not hold as many tiles as named (ValueError), or, with
    ``check``, when the packaged tile sets see clearly that a frame shows another row than it is given as
    (:class:`~vision.seat.enrollment.RowOrderError`, :mod:`vision.seat.enrollment`): the messages say which
    frame and what to do. A frame the packaged sets can confirm too little of is enrolled, and ``warn``
    (default: the log) is told what to check."""
    from vision.naming.embedding import EmbeddingClassifier
    from vision.seat.enrollment import RowOrderError, check_rows, packaged_namer

    reader = SeatReader(namer, calibration)  # type: ignore[arg-type]
    crops_of: list[list[np.ndarray]] = []
    for n, (frame, names) in enumerate(rows):
        crops = reader.crops(frame, drawn_apart=False)
        if len(crops) != len(names):
            raise ValueError(f"enrollment frame {n + 1}: {len(crops)} tiles stand in the row but {len(names)} are "
                             "named; stand the named tiles in a row, apart from nothing else, and try again")
        crops_of.append(crops)
    looks = None
    if check:
        packaged = packaged_namer()
        embedded = None
        if isinstance(packaged, EmbeddingClassifier) and packaged.same_network(namer):
            # one network pass serves both: the check reads the crops' looks, the enrollment enrolls them
            looks = packaged.looks_of([c for crops in crops_of for c in crops],
                                      turned=packaged.half_turn or namer.half_turn)  # type: ignore[attr-defined]
            embedded = packaged.embed_looks(looks)
        checks = check_rows(crops_of, [list(names) for _, names in rows], packaged, embedded)
        refused = [c.message for c in checks if c.refused]
        if refused:
            given = list(dict.fromkeys(tuple(names) for _, names in rows))
            order = ", ".join(f"row {r + 1}: {' '.join(row)}" for r, row in enumerate(given))
            raise RowOrderError("; ".join(refused) + ". Nothing was enrolled: give one frame per row in this "
                                f"order ({order}), each row standing left to right as the camera sees it, and "
                                "try again")
        for c in checks:
            (warn or log.warning)(c.message)
    found: dict[str, list[np.ndarray]] = {}
    at: dict[str, list[int]] = {}  # where each enrolled crop lies among the crops, frame after frame
    named = [pair for crops, (_, names) in zip(crops_of, rows, strict=True) for pair in zip(names, crops, strict=True)]
    for i, (name, crop) in enumerate(named):
        found.setdefault(name, []).append(crop)
        at.setdefault(name, []).append(i)
    if looks is not None:
        namer.enroll(found, looks=looks[:, [i for idx in at.values() for i in idx]])  # type: ignore[attr-defined]
    else:
        namer.enroll(found)  # type: ignore[attr-defined]
    return {k: len(v) for k, v in found.items()}
