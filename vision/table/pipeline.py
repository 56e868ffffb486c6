"""Frame -> per-zone readings: detection, then classification of only what changed.

Most frames of a game show a table on which nothing moved. As Frigate gates
its object detector with motion detection, :class:`FramePipeline` first
compares a 1/4-size thumbnail of the frame with the last frame it read: when no
more than a couple of its pixels changed by ``motion_threshold`` grey levels
(a new tile changes ~80 of them, a 9m swapped for a 2m a dozen; sensor noise,
averaged over 4x4 pixels, none), the last reading is repeated at the cost of
the thumbnail (~2 ms), provided that reading was complete (every face-up tile
named, nothing occluded).

:class:`FramePipeline` runs :class:`~vision.table.detection.TileDetector` on a frame
and classifies each face-up tile's upright crop. Classification is the
expensive part (~1 ms a tile), and from one frame to the next almost
nothing changes, so answers are cached per slot (zone, seat, index, sideways)
with a 12x16 colour thumbnail of the crop: when no pixel of the new thumbnail
differs from the cached one by more than ``cache_tolerance`` levels, the
cached answer is reused. (A mean difference is not enough: a 5s and a 6s, or
a 9m and a 2m, differ in a few pixels only, and a 5s and a red 5s only in
colour; the same tile in a new frame's noise moves no thumbnail pixel by
more than ~5 levels, another tile moves some by 35 or more.) A slot that
holds no face-up tile in a frame loses its entry (a called tile, the table
cleared for the next hand). A new tile is named only when ``confirm_frames``
frames in a row agree on it (each frame has its own noise, so a misreading
must repeat to count); unsure answers are not cached, so a tile read unknown
once is tried again in the next frame (the tracker waits for a zone to be
fully known). A face-down, occluded or unsure tile reads ``None``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.naming.classifier import TileClassifier
from vision.table.calibration import Calibration
from vision.table.detection import DetectedTile, TileDetector
from vision.table.geometry import TableGeometry, TileRect, local_to_table, table_to_local

if TYPE_CHECKING:
    from vision.photos.finder import TileFinder

__all__ = ["FramePipeline", "MeldReading", "ReadTile", "SeatReading", "ZoneReadings"]

_MOTION_SIZE = (480, 270)  # 1/4 of a 1080p frame: a tile covers ~8x10 of its pixels, sensor noise averages out


@dataclass(frozen=True)
class ReadTile:
    """One tile of a zone: its name (None = face down, occluded or not sure) and how it lies."""

    tile: str | None
    sideways: bool = False
    face_up: bool = True
    occluded: bool = False
    confidence: float = 0.0
    stacked: bool = False
    apart: bool = False  # set apart after a hand: a tsumo's winning tile

    @property
    def known(self) -> bool:
        return self.tile is not None


@dataclass(frozen=True)
class MeldReading:
    """One meld as laid out, tiles left to right as its owner sees them (added-kan tile after the called one)."""

    tiles: tuple[ReadTile, ...]


@dataclass(frozen=True)
class SeatReading:
    pond: tuple[ReadTile, ...] = ()
    melds: tuple[MeldReading, ...] = ()
    hand: tuple[ReadTile, ...] = ()


@dataclass(frozen=True)
class ZoneReadings:
    """What one frame shows, per zone; ``tiles`` keeps every detection, ``ms`` the processing time."""

    seats: tuple[SeatReading, SeatReading, SeatReading, SeatReading]
    dora: tuple[ReadTile, ...] = ()
    tiles: tuple[DetectedTile, ...] = field(default=(), repr=False)
    ms: float = 0.0
    classified: int = 0  # crops that went through the classifier (not answered from the cache)
    still: bool = False  # nothing moved since the last complete reading, which this repeats
    ura: tuple[ReadTile, ...] = ()  # ura indicators turned over at a riichi win, in dora order


@dataclass
class _Cached:
    thumb: np.ndarray
    tile: str
    confidence: float
    votes: int  # frames in a row that named ``tile`` for this crop


class FramePipeline:
    """``process(frame) -> ZoneReadings`` for one calibrated camera.

    ``confirm_frames`` (2 for a stream) is how many frames must agree on a new tile before it
    is named; 1 reads a single image on its own (``tablesvc vision check``, benchmarks).
    """

    def __init__(
        self,
        calibration: Calibration,
        geometry: TableGeometry | None,
        classifier: TileClassifier,
        *,
        cache_tolerance: float = 20.0,
        mask_px_per_mm: float = 1.0,
        motion_threshold: int = 12,
        motion_pixels: int = 3,
        confirm_frames: int = 2,
        shift_search_mm: float = 1.2,
        shift_search_below: float = 0.8,
        shift_search_lead_below: float = 0.1,
        finder: TileFinder | None = None,
    ) -> None:
        self.geometry = geometry or TableGeometry()
        self.detector = TileDetector(calibration, self.geometry, px_per_mm=mask_px_per_mm)
        self.classifier = classifier
        self.cache_tolerance = cache_tolerance
        self._cache: dict[tuple[str, int, int, bool, bool], _Cached] = {}
        self.confirm_frames = max(1, confirm_frames)
        self.shift_search_mm = shift_search_mm
        self.shift_search_below = shift_search_below
        self.shift_search_lead_below = shift_search_lead_below
        self.motion_threshold = motion_threshold
        self.motion_pixels = motion_pixels
        self._last: ZoneReadings | None = None
        self._last_thumb: np.ndarray | None = None
        self.finder = finder  # reads a pond tile pushed off its slot (``_loose_tiles``); None: such a tile waits
        self.finder_calls = 0
        self._loose_rects: dict[tuple[int, int], TileRect] = {}  # (seat, pond index) -> where a loose tile was cut

    def process(self, frame: np.ndarray) -> ZoneReadings:
        t0 = time.perf_counter()
        thumb = cv2.resize(frame, _MOTION_SIZE, interpolation=cv2.INTER_AREA)
        last, last_thumb = self._last, self._last_thumb
        if last is not None and last_thumb is not None and self._still(thumb, last_thumb):
            # nothing moved on the table: the last complete reading stands (Frigate's motion gate)
            return replace(last, ms=(time.perf_counter() - t0) * 1000, classified=0, still=True)
        tiles = self.detector.detect(frame)
        if not any(t.occluded for t in tiles):  # a hand over the table hides slots; it does not empty them
            self._forget_empty_slots(tiles)
        classified = self._classify(tiles)
        for seat in range(4):
            cuts: frozenset[int] = frozenset()
            while (bad := _mixed_kan(tiles, seat)) is not None and bad not in cuts:
                # a fourth tile joined on a touching edge is not of the first three's kind: no kan, the
                # next meld starts there (and lies a gap further left): walk this seat's melds again
                cuts |= {bad}
                redone = self.detector.melds(seat, cuts)
                tiles = [t for t in tiles if not (t.zone == "meld" and t.seat == seat)] + redone
                classified += self._classify(redone)
        for seat in range(4):
            tiles, n = self._crosswise_by_face(tiles, seat)
            classified += n
        if self.finder is not None and not any(t.occluded for t in tiles):
            loose = self._loose_tiles(frame, tiles)
            classified += self._classify(loose)
            tiles += loose
        seats, dora, ura = _assemble(tiles)
        ms = (time.perf_counter() - t0) * 1000
        readings = ZoneReadings(seats, dora, tuple(tiles), ms, classified, ura=ura)
        # only a reading with every face-up tile named and nothing occluded may stand for later still frames
        settled = all(t.tile is not None and not t.occluded for t in tiles if t.face_up or t.occluded)
        # compared with the frame that was read, not the previous one, so a slow drift is caught too
        self._last, self._last_thumb = (readings, thumb) if settled else (None, None)
        return readings

    def _crosswise_by_face(self, tiles: list[DetectedTile], seat: int) -> tuple[list[DetectedTile], int]:
        """A pond tile the strips left in doubt (``upright_guess``: a riichi tile pushed against the row
        before it reads upright by them) is read both ways: the pond is walked again with it crosswise,
        and that walk is kept when its face reads better cut crosswise (an upright cut of a crosswise
        tile shows part of a turned face, a crosswise cut of an upright tile half its neighbour)."""
        classified = 0
        crosswise: frozenset[int] = frozenset()
        while True:
            pond = sorted((t for t in tiles if t.zone == "pond" and t.seat == seat), key=lambda t: t.index)
            doubt = next((t for t in pond if t.upright_guess and t.index not in crosswise and t.face_up), None)
            if doubt is None:
                return tiles, classified
            crosswise |= {doubt.index}
            redone = self.detector.pond(seat, crosswise)
            turned = next((t for t in redone if t.index == doubt.index), None)
            if turned is None or not turned.sideways or turned.crop is None:
                continue
            upright = self._read_crop(doubt)
            read = self._read_crop(turned)
            classified += 2
            if read[0] is None or (upright[0] is not None and upright[1] >= read[1]):
                crosswise -= {doubt.index}
                doubt.upright_guess = False  # asked: it is upright
                continue
            classified += self._classify(redone)
            tiles = [t for t in tiles if not (t.zone == "pond" and t.seat == seat)] + redone

    def _loose_tiles(self, frame: np.ndarray, tiles: list[DetectedTile]) -> list[DetectedTile]:
        """Pond tiles pushed off their slots, found by the tile finder where the slot walk left tile body.

        The walk stops at the first empty slot, so a discard put down half a tile beside its slot is
        not read, and the tracker would wait for it. :meth:`TileDetector.loose_pond_tile` tells, for the
        cost of a few look-ups, where body lies beyond a pond's last tile; only then is the finder run,
        on the frame cut around that place. A face-up tile it finds there (its centre in the place, not
        on a tile already read) is cut where it lies, at the quarter turn of the seat and the few degrees
        either way that reads it best, and read as the pond's next discard.
        """
        g, det, finder = self.geometry, self.detector, self.finder
        assert finder is not None
        out: list[DetectedTile] = []
        kept_rects, self._loose_rects = self._loose_rects, {}  # only the places found again are kept
        to_image = np.linalg.inv(det.calibration.homography)
        for seat in range(4):
            pond = [t for t in tiles if t.zone == "pond" and t.seat == seat]
            place = det.loose_pond_tile(seat, pond)
            if place is None:
                continue
            u0, u1, v0, v1 = place
            m = g.tile_w  # the finder sees the whole tile and some felt round it
            corners = local_to_table(seat, [[u0 - m, v0 - m], [u1 + m, v0 - m], [u1 + m, v1 + m], [u0 - m, v1 + m]])
            px = cv2.perspectiveTransform(np.asarray(corners, np.float64).reshape(-1, 1, 2), to_image).reshape(-1, 2)
            x0, y0 = np.floor(px.min(axis=0)).astype(int).clip(0)
            x1, y1 = np.ceil(px.max(axis=0)).astype(int)
            x1, y1 = min(int(x1), frame.shape[1]), min(int(y1), frame.shape[0])
            if x1 - x0 < 16 or y1 - y0 < 16:
                continue
            self.finder_calls += 1
            found = finder.find(frame[y0:y1, x0:x1], input_size=_finder_size(x1 - x0, y1 - y0))
            for f in found:
                if not f.face_up:
                    continue
                c = np.array([[[x0 + (f.box[0] + f.box[2]) / 2, y0 + (f.box[1] + f.box[3]) / 2]]], np.float64)
                ((tx, ty),) = cv2.perspectiveTransform(c, det.calibration.homography).reshape(-1, 2)
                ((lu, lv),) = table_to_local(seat, [[tx, ty]])
                if not (u0 - 4 <= lu <= u1 and v0 - 4 <= lv <= v1):
                    continue
                if any(t.center_mm is not None and abs(t.center_mm[0] - tx) < g.tile_w / 2
                       and abs(t.center_mm[1] - ty) < g.tile_w / 2 for t in tiles):  # fmt: skip
                    continue  # a tile the walk read
                kept = kept_rects.get((seat, len(pond)))
                if kept is not None and abs(kept.cx - tx) < 3.0 and abs(kept.cy - ty) < 3.0:
                    # the place found in an earlier frame: the same cut, so the cache and the votes carry over
                    out.append(det.loose_tile(seat, "pond", len(pond), kept))
                    self._loose_rects[(seat, len(pond))] = kept
                    break
                best: tuple[float, DetectedTile] | None = None
                for turn in (0.0, -4.0, 4.0, -8.0, 8.0):
                    rect = TileRect(float(lu), float(lv), g.tile_w, g.tile_h, turn).local_to(seat)
                    t = det.loose_tile(seat, "pond", len(pond), rect)
                    if t.crop is None:
                        break
                    sim = self.classifier.scores(t.crop)[1]
                    if best is None or sim > best[0]:
                        best = (sim, t)
                if best is not None and best[1].rect is not None:
                    out.append(best[1])
                    self._loose_rects[(seat, len(pond))] = best[1].rect
                    break
        return out

    def _read_crop(self, t: DetectedTile) -> tuple[str | None, float]:
        """Classify a tile's crop; unless the answer is clear, also crops cut around it.

        The crop is cut along the slot, and a tile lies up to a couple of millimetres beside its
        slot: a misaligned crop reads less sure, sometimes as a neighbouring kind (9m as 6m). When
        the best similarity is under ``shift_search_below`` or its lead over the runner-up under
        ``shift_search_lead_below``, the crops shifted by ``shift_search_mm`` on a 3x3 grid are read
        too, and the one nearest to a kind (highest similarity: the best-aligned) gives the answer.

        The two gates were set on 6,451 tiles of the bench's rendered frames (both sets): with them
        3-12 % of the tiles are searched and every answer the search fixed is still fixed; with the
        similarity alone under 0.95, as before, 31-69 % were (eight more crops each: most of a cold
        frame's time).
        """
        clf = self.classifier
        best = clf.scores(t.crop)
        # a classifier with its own similarity scale says where "unsure" starts (the embedding's)
        below = getattr(clf, "unsure_below", self.shift_search_below)
        lead_below = getattr(clf, "unsure_lead_below", self.shift_search_lead_below)
        if self.shift_search_mm > 0 and t.rect is not None and (best[1] < below or best[1] - best[2] < lead_below):
            d, r = self.shift_search_mm, t.rect
            crops = [self.detector.crop(TileRect(r.cx + dx, r.cy + dy, r.width, r.height, r.angle))
                     for dx in (-d, 0.0, d) for dy in (-d, 0.0, d) if dx or dy]  # fmt: skip
            many = getattr(clf, "scores_many", None)  # one network pass for the eight
            for got in many(crops) if many is not None else [clf.scores(c) for c in crops]:
                if got[1] > best[1]:
                    best = got
        return clf.decide(*best)

    def _still(self, thumb: np.ndarray, last: np.ndarray) -> bool:
        """True when fewer than ``motion_pixels`` pixels of the 1/4 thumbnail changed by ``motion_threshold``."""
        if thumb.shape != last.shape:
            return False
        # a pixel's change is its largest channel's: the maximum of the planes (OpenCV, not a numpy reduction
        # along the short colour axis, which costs twenty times as much)
        first, *others = cv2.split(cv2.absdiff(thumb, last))
        diff = first
        for plane in others:
            diff = cv2.max(diff, plane)
        moved = cv2.threshold(diff, self.motion_threshold, 255, cv2.THRESH_BINARY)[1]  # 255 where diff > threshold
        return cv2.countNonZero(moved) < self.motion_pixels

    def _forget_empty_slots(self, tiles: list[DetectedTile]) -> None:
        """Drop the cached answers of slots that hold no face-up tile now (a called tile, a cleared table)."""
        present = {_slot(t) for t in tiles if t.face_up}
        present |= {("pond", seat, index, False, False) for seat, index in self._loose_rects}  # read after this
        for key in [k for k in self._cache if k not in present]:
            del self._cache[key]

    def _classify(self, tiles: list[DetectedTile]) -> int:
        """Name every face-up tile; returns the crops that went through the classifier.

        A slot's answer is given once ``confirm_frames`` frames in a row named the same tile for
        the same crop (until then the tile reads ``None``), and then kept while the crop stays
        the same: a misreading caused by one frame's noise must agree with the next frame's.
        """
        classified = 0
        for t in tiles:
            if not t.face_up or t.crop is None:
                continue
            key = _slot(t)
            thumb = cv2.resize(t.crop, (12, 16), interpolation=cv2.INTER_AREA).astype(np.int16)  # in colour: 5s/5sr
            hit = self._cache.get(key)
            if hit is not None and int(np.abs(hit.thumb - thumb).max()) > self.cache_tolerance:
                hit = None  # another tile lies in the slot now
            if hit is not None and hit.votes >= self.confirm_frames:
                t.tile, t.confidence = hit.tile, hit.confidence
                continue
            tile, conf = self._read_crop(t)
            classified += 1
            t.confidence = conf
            if tile is None:  # unsure: not kept, the next frame's pixels get their own try
                self._cache.pop(key, None)
                continue
            votes = hit.votes + 1 if hit is not None and hit.tile == tile else 1
            self._cache[key] = _Cached(hit.thumb if hit is not None and votes > 1 else thumb, tile, conf, votes)
            if votes >= self.confirm_frames:
                t.tile = tile
        return classified

    def reset_cache(self) -> None:
        """Forget every cached answer and the last reading (the next frame is read from scratch)."""
        self._cache.clear()
        self._loose_rects.clear()
        self._last = self._last_thumb = None


def _finder_size(w: int, h: int) -> int:
    """The finder's input size for a cut of a frame: two thirds of its pixels, the scale at which it reads a
    whole 1080p frame (1280 of 1920 px). A 720p camera's tiles come out smaller at the network and a 4K
    camera's larger; both are found and read (``tests/test_vision_pipeline.py``)."""
    return max(64, round(max(w, h) * 1280 / 1920))


def _slot(t: DetectedTile) -> tuple[str, int, int, bool, bool]:
    """The cache key of a tile's place: a slot keeps its answer only while the same kind of tile lies there."""
    return (t.zone, t.seat, t.index, t.sideways, t.stacked)


def _kind(tile: str) -> str:
    return tile[:2] if tile.endswith("r") else tile


def _mixed_kan(tiles: list[DetectedTile], seat: int) -> int | None:
    """The first meld of ``seat`` whose guessed fourth tile is of another kind than the other three."""
    melds: dict[int, list[DetectedTile]] = {}
    for t in tiles:
        if t.zone == "meld" and t.seat == seat and not t.stacked:
            melds.setdefault(t.meld, []).append(t)
    for m in sorted(melds):
        members = melds[m]
        if len(members) == 4 and any(t.kan_guess for t in members):
            kinds = {_kind(t.tile) for t in members if t.tile is not None}
            if len(kinds) > 1:
                return m
    return None


def _read(t: DetectedTile) -> ReadTile:
    return ReadTile(t.tile if t.face_up else None, t.sideways, t.face_up, t.occluded, t.confidence, t.stacked,
                    t.apart)  # fmt: skip


def _assemble(
    tiles: list[DetectedTile],
) -> tuple[tuple[SeatReading, SeatReading, SeatReading, SeatReading], tuple[ReadTile, ...], tuple[ReadTile, ...]]:
    seats = []
    for seat in range(4):
        mine = [t for t in tiles if t.seat == seat]
        pond = tuple(_read(t) for t in sorted((t for t in mine if t.zone == "pond"), key=lambda t: t.index))
        hand = tuple(_read(t) for t in sorted((t for t in mine if t.zone == "hand"), key=lambda t: t.index))
        meld_tiles = sorted((t for t in mine if t.zone == "meld"), key=lambda t: t.index)
        melds = tuple(
            MeldReading(tuple(_read(t) for t in meld_tiles if t.meld == m))
            for m in sorted({t.meld for t in meld_tiles})
        )
        seats.append(SeatReading(pond, melds, hand))
    dora = tuple(_read(t) for t in sorted((t for t in tiles if t.zone == "dora"), key=lambda t: t.index))
    ura = tuple(_read(t) for t in sorted((t for t in tiles if t.zone == "ura"), key=lambda t: t.index))
    return tuple(seats), dora, ura  # type: ignore[return-value]
