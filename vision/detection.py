"""Find the tiles lying flat on the felt, in a rectified top-down view, by testing the geometry's slots.

Tiles on a riichi table lie in known places (ponds in rows of six from the
player's left, melds flush with the player-side edge from the right, a
revealed hand from the left, dora indicators on the wall ring), so instead of
segmenting blobs and splitting touching tiles, the detector *walks the
slots* of :class:`~vision.geometry.TableGeometry` and tests each one on a
binary "tile body" mask of the rectified view:

- the mask is the red channel over a threshold: the ivory face, its rim and
  coloured backs are bright in red, the green felt, its shadows and the grey
  centre panel are not (glare adds at most ~60 levels to the felt);
- coverage of an axis-aligned rectangle is read from an integral image, so a
  slot test costs a few additions (every slot is a quarter turn of its seat);
- upright vs sideways: a pond tile laid crosswise is 26 mm deep in a 35 mm row,
  so thin strips along the row's near and far edges are felt over it; in a
  meld a sideways tile leaves the strip 26..35 mm from the edge empty and an
  added-kan tile fills a strip beyond it;
- a meld ends where the 4 mm gap between two melds shows felt;
- face up vs face down from the crop's inner saturation (ivory is grey-white,
  backs are coloured); a crop with much skin colour is *occluded* (a hand).

Each face-up tile's crop is warped from the camera frame along its nominal
slot corners (face top-left first), which turns it by the seat's quarter turn
(plus a quarter for sideways tiles) so the face is upright, as the classifier
expects. Tiles must lie near their
slots (a few mm, a few degrees); a tile dropped anywhere else is not found.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.calibration import Calibration
from vision.geometry import TableGeometry, TileRect

__all__ = ["DetectedTile", "TileDetector"]

#: (w, h) of the upright crop handed to the classifier: 1.5 px per mm of a 26 x 35 mm face.
CROP_SIZE = (39, 52)


@dataclass
class DetectedTile:
    """One tile found in a frame.

    ``zone`` is 'pond', 'meld', 'hand', 'dora' (a face-up tile on the wall
    ring) or 'wall' (a face-down wall stack); ``index`` counts in play order
    (pond discard order, meld tiles from the first meld, hand left to right,
    wall stack); ``meld`` numbers the meld (0 = first, rightmost) and
    ``stacked`` marks an added-kan tile. ``angle`` is the table angle of the
    tile's top (degrees, counter-clockwise on the overhead picture). ``tile``
    is None until classified, and stays None when the classifier is unsure,
    the tile is face down or occluded.
    """

    zone: str
    seat: int
    index: int
    tile: str | None
    confidence: float
    sideways: bool
    face_up: bool
    center_mm: tuple[float, float]
    angle: float = 0.0
    occluded: bool = False
    meld: int = -1
    stacked: bool = False
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)


class TileDetector:
    """Slot-walking tile detector on a rectified view (see the module doc).

    ``px_per_mm`` is the resolution of the rectified masks (1 is enough for
    slot tests; crops are warped from the frame itself); ``body_threshold``
    the red level separating tile bodies from felt.
    """

    def __init__(
        self,
        calibration: Calibration,
        geometry: TableGeometry | None = None,
        px_per_mm: float = 1.0,
        body_threshold: int = 115,
        face_down_fraction: float = 0.6,
        occluded_skin_fraction: float = 0.25,
    ) -> None:
        self.calibration = calibration
        self.geometry = geometry or TableGeometry()
        self.s = px_per_mm
        g = self.geometry
        self.extent = g.meld_edge + 2 * g.tile_w + 10.0
        self.body_threshold = body_threshold
        self.face_down_fraction = face_down_fraction
        self.occluded_skin_fraction = occluded_skin_fraction
        self._frame: np.ndarray | None = None
        self._view: np.ndarray | None = None
        self._integral: np.ndarray | None = None
        self._sat_integral: np.ndarray | None = None
        self._filled_integral: np.ndarray | None = None
        self._skin_integral: np.ndarray | None = None
        self._to_image = np.eye(3)

    # ------------------------------------------------------------ rectified view and mask
    def rectify(self, frame: np.ndarray) -> np.ndarray:
        return self.calibration.rectify(frame, self.s, self.extent)

    def _prepare(self, frame: np.ndarray) -> None:
        view = self.rectify(frame)
        b, g, r = cv2.split(view)
        rb = cv2.subtract(r, b)  # colourfulness towards red/orange: backs high, ivory low, felt zero
        gb = cv2.subtract(g, b)
        # tile bodies are bright in red (ivory, rims, coloured backs) or blue (blue ink); felt is neither
        body = ((r > self.body_threshold) | (b > self.body_threshold + 20)).astype(np.uint8)
        saturated = (rb > 120).astype(np.uint8)
        skin = ((rb > 50) & (rb <= 120) & (gb > 12) & (r > 110)).astype(np.uint8)
        self._frame = frame
        self._view = view
        self._integral = cv2.integral(body, sdepth=cv2.CV_32S)
        # presence tests run on the body with the face's ink filled in (strokes are a few mm wide)
        k = max(3, round(7 * self.s) | 1)
        filled = cv2.morphologyEx(body, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
        self._filled_integral = cv2.integral(filled, sdepth=cv2.CV_32S)
        self._sat_integral = cv2.integral(saturated, sdepth=cv2.CV_32S)
        self._skin_integral = cv2.integral(skin, sdepth=cv2.CV_32S)
        self._to_image = np.linalg.inv(self.calibration.homography)

    def _px(self, v: float) -> int:
        return round((v + self.extent) * self.s)

    def _cov_table(self, x0: float, x1: float, y0: float, y1: float, ii: np.ndarray | None = None) -> float:
        """Fraction of mask pixels (tile body by default) in the table-mm rectangle [x0, x1] x [y0, y1]."""
        ii = self._integral if ii is None else ii
        assert ii is not None
        n = ii.shape[0] - 1
        j0, j1 = max(self._px(min(x0, x1)), 0), min(self._px(max(x0, x1)), n)
        i0, i1 = max(self._px(min(y0, y1)), 0), min(self._px(max(y0, y1)), n)
        if j1 <= j0 or i1 <= i0:
            return 0.0
        total = int(ii[i1, j1]) - int(ii[i0, j1]) - int(ii[i1, j0]) + int(ii[i0, j0])
        return total / ((j1 - j0) * (i1 - i0))

    def _cov(self, seat: int, u0: float, u1: float, v0: float, v1: float, ii: np.ndarray | None = None) -> float:
        """Coverage of a seat-local rectangle (a quarter turn keeps it axis-aligned in table space)."""
        k = seat % 4
        if k == 0:
            return self._cov_table(u0, u1, v0, v1, ii)
        if k == 1:
            return self._cov_table(v0, v1, -u0, -u1, ii)
        if k == 2:
            return self._cov_table(-u0, -u1, -v0, -v1, ii)
        return self._cov_table(-v0, -v1, u0, u1, ii)

    def crop(self, rect: TileRect, size: tuple[int, int] = CROP_SIZE) -> np.ndarray:
        """Upright crop (face top up) of a tile rect, warped straight from the camera frame (one interpolation)."""
        w, h = size
        corners_px = cv2.perspectiveTransform(rect.corners().reshape(-1, 1, 2), self._to_image).reshape(4, 2)
        m = cv2.getPerspectiveTransform(corners_px.astype(np.float32),
                                        np.float32([[0, 0], [w, 0], [w, h], [0, h]]))  # fmt: skip
        return cv2.warpPerspective(self._frame, m, size, flags=cv2.INTER_LINEAR)

    def _tile(self, zone: str, seat: int, index: int, rect: TileRect, sideways: bool, **kw: object) -> DetectedTile:
        face_up, occluded = self._inspect(rect)
        crop = self.crop(rect) if face_up else None
        return DetectedTile(zone, seat, index, None, 0.0, sideways, face_up, (rect.cx, rect.cy),
                            rect.angle % 360, occluded, crop=crop, **kw)  # type: ignore[arg-type]  # fmt: skip

    def _inspect(self, rect: TileRect) -> tuple[bool, bool]:
        """(face up, occluded by a hand) from the colours of the rect's inner part."""
        sideways = round(rect.angle / 90) % 2 == 1
        w, h = (rect.height, rect.width) if sideways else (rect.width, rect.height)
        x0, x1, y0, y1 = rect.cx - w * 0.3, rect.cx + w * 0.3, rect.cy - h * 0.3, rect.cy + h * 0.3
        skin = self._cov_table(x0, x1, y0, y1, self._skin_integral)
        occluded = skin > self.occluded_skin_fraction
        face_up = self._cov_table(x0, x1, y0, y1, self._sat_integral) < self.face_down_fraction
        return face_up and not occluded, occluded

    # ------------------------------------------------------------ zones
    def detect(self, frame: np.ndarray) -> list[DetectedTile]:
        """Every tile in its slot: ponds, melds, revealed hands, the wall ring (unclassified)."""
        self._prepare(frame)
        out: list[DetectedTile] = []
        for seat in range(4):
            out += self._pond(seat)
            out += self._melds(seat)
            out += self._hand(seat)
        out += self._wall()
        return out

    def _present(self, seat: int, u0: float, u1: float, vc: float) -> bool:
        return self._cov(seat, u0, u1, vc - 7, vc + 7, self._filled_integral) > 0.6

    def _pond(self, seat: int) -> list[DetectedTile]:
        g = self.geometry
        found: list[DetectedTile] = []
        flags: list[bool] = []
        for row in range(g.pond_rows):
            v0 = g.pond_near + row * (g.tile_h + g.pond_row_gap)
            u = -g.pond_cols * g.tile_w / 2
            in_row = 0
            while row == g.pond_rows - 1 or in_row < g.pond_cols:
                if u + g.tile_w > g.wall_centre - g.tile_h / 2 or not self._present(seat, u + 5, u + g.tile_w - 5,
                                                                                      v0 + g.tile_h / 2):  # fmt: skip
                    return found
                near = self._cov(seat, u + 6, u + g.tile_w - 6, v0 + 1.5, v0 + 3.0)
                far = self._cov(seat, u + 6, u + g.tile_w - 6, v0 + g.tile_h - 3.0, v0 + g.tile_h - 1.5)
                strips = (near + far) / 2
                side = strips < 0.5
                flags.append(side)
                rect = g.pond_slot(seat, len(flags) - 1, flags)
                found.append(self._tile("pond", seat, len(flags) - 1, rect, side))
                u += g.tile_h if side else g.tile_w
                in_row += 1
            if in_row < g.pond_cols:
                break
        return found

    def _melds(self, seat: int) -> list[DetectedTile]:
        g = self.geometry
        e, w, h = g.meld_edge, g.tile_w, g.tile_h
        found: list[DetectedTile] = []
        right = g.meld_right
        meld = 0
        while right - w > g.meld_left - 6 and self._present(seat, right - 20, right - 6, e - 13):
            members = 0
            while True:
                stacked = self._cov(seat, right - 28, right - 8, e - 48, e - 40) > 0.5
                upright = not stacked and self._cov(seat, right - 20, right - 6, e - 32.5, e - 29.5) > 0.5
                span = w if upright else h
                u = right - span / 2
                local = TileRect(u, e - h / 2, w, h, 0.0) if upright else TileRect(u, e - w / 2, w, h, 90.0)
                found.append(self._tile("meld", seat, len(found), local.local_to(seat), not upright, meld=meld))
                if stacked:
                    top = TileRect(u, e - w / 2 - w, w, h, 90.0)
                    found.append(self._tile("meld", seat, len(found), top.local_to(seat), True, meld=meld,
                                            stacked=True))  # fmt: skip
                right -= span
                members += 1
                joined = self._cov(seat, right - 3.0, right - 1.0, e - 20, e - 6) > 0.5
                if not joined or members >= 4:
                    right -= g.meld_gap
                    break
            meld += 1
        return _order_melds(found)

    def _hand(self, seat: int) -> list[DetectedTile]:
        g = self.geometry
        found: list[DetectedTile] = []
        for i in range(18):
            u = g.hand_left + i * g.tile_w
            if u + g.tile_w > g.hand_right + 6 or not self._present(seat, u + 5, u + g.tile_w - 5, g.hand_centre):
                break
            found.append(self._tile("hand", seat, i, g.hand_slot(seat, i), False))
        return found

    def _wall(self) -> list[DetectedTile]:
        """Wall stacks: face-up tiles are dora indicators (index from the rightmost face-up stack leftwards)."""
        g = self.geometry
        found: list[DetectedTile] = []
        dora = 0
        for seat in range(4):
            for stack in reversed(range(g.wall_stacks)):
                u = -g.wall_stacks * g.tile_w / 2 + stack * g.tile_w
                if not self._present(seat, u + 5, u + g.tile_w - 5, g.wall_centre):
                    continue
                t = self._tile("wall", seat, stack, g.wall_slot(seat, stack), False)
                if t.face_up:
                    t.zone, t.index = "dora", dora
                    dora += 1
                found.append(t)
        return found


def _order_melds(found: list[DetectedTile]) -> list[DetectedTile]:
    """Melds were walked right to left; list each meld's tiles left to right as its owner sees them."""
    out: list[DetectedTile] = []
    for m in sorted({t.meld for t in found}):
        members = [t for t in found if t.meld == m]
        base = [t for t in members if not t.stacked]
        ordered: list[DetectedTile] = []
        for t in reversed(base):
            ordered.append(t)
            ordered += [s for s in members if s.stacked and s.center_mm is not None and _above(s, t)]
        out += ordered
    for i, t in enumerate(out):
        t.index = i
    return out


def _above(stacked: DetectedTile, base: DetectedTile) -> bool:
    return abs(stacked.center_mm[0] - base.center_mm[0]) + abs(stacked.center_mm[1] - base.center_mm[1]) < 30
