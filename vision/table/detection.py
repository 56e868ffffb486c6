"""Find the tiles lying flat on the felt, in a rectified top-down view, by testing the geometry's slots.

Tiles on a riichi table lie in known places (ponds in rows of six from the
player's left, melds flush with the player-side edge from the right, a
revealed hand from the left, dora indicators on the wall ring), so instead of
segmenting blobs and splitting touching tiles, the detector *walks the
slots* of :class:`~vision.table.geometry.TableGeometry` and tests each one on a
binary "tile body" mask of the rectified view:

- the mask is "not felt": the felt's hue and saturation are estimated per
  frame (the median of the playing surface, which is mostly felt), and a
  pixel is felt when its hue is near the felt's and it is at least half as
  saturated. Hue and saturation do not change when the light dims (a lamp
  gradient, a tile's shadow), so no brightness threshold has to fit every
  corner of the table; ivory, its rim, black/red/blue ink and coloured backs
  all differ from the felt. Only ink of the felt's own colour (green bamboo
  on green felt) looks like felt, so presence is tested on the tile's *rim*
  as well as its centre: a face never reaches its last few millimetres;
- coverage of an axis-aligned rectangle is read from an integral image, so a
  slot test costs a few additions (every slot is a quarter turn of its seat);
- upright vs sideways: a pond tile laid crosswise is 26 mm deep in a 35 mm row,
  so thin strips along the row's near and far edges are felt over it (at
  least one of them: a careless neighbour may cover the other); in a
  meld a sideways tile leaves the strip 26..35 mm from the edge empty and an
  added-kan tile fills a strip beyond it;
- a meld ends where the 4 mm gap between two melds shows felt;
- face up vs face down from the crop's inner saturation (ivory is grey-white,
  backs are coloured); a crop with much skin colour is *occluded* (a hand).

Each face-up tile's crop is warped from the camera frame along its nominal
slot corners (face top-left first), which turns it by the seat's quarter turn
(plus a quarter for sideways tiles) so the face is upright, as the classifier
expects. Tiles must lie near their
slots (a few mm, a few degrees); a tile dropped anywhere else is not walked
(:meth:`TileDetector.loose_pond_tile` tells where one lies beyond a pond, for
the pipeline's tile finder).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.table.calibration import Calibration
from vision.table.geometry import TableGeometry, TileRect

__all__ = ["DetectedTile", "TileDetector"]

#: (w, h) of the upright crop handed to the classifier: 1.5 px per mm of a 26 x 35 mm face.
CROP_SIZE = (39, 52)


@dataclass
class DetectedTile:
    """One tile found in a frame.

    ``zone`` is 'pond', 'meld', 'hand', 'dora' (a face-up tile on the wall
    ring), 'ura' (a face-up tile in front of a dora indicator) or 'wall' (a
    face-down wall stack); ``index`` counts in play order
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
    kan_guess: bool = False  # fourth tile of a meld joined on a touching edge only (see TileDetector._melds)
    upright_guess: bool = False  # a pond tile read upright though a strip was partly bare (TileDetector.pond)
    apart: bool = False  # a hand's last tile, set apart: the winning tile of a tsumo
    crop: np.ndarray | None = field(default=None, repr=False, compare=False)
    rect: TileRect | None = field(default=None, repr=False, compare=False)  # the slot the crop was cut from


UPRIGHT_SURE = 0.8  # a pond tile whose weaker strip is covered less than this may be a crosswise one pushed up


class TileDetector:
    """Slot-walking tile detector on a rectified view (see the module doc).

    ``px_per_mm`` is the resolution of the rectified masks (1 is enough for
    slot tests; crops are warped from the frame itself); ``felt_hue_tolerance``
    (OpenCV hue units, 0..180) and ``felt_saturation_fraction`` say how close
    to the felt's own hue and saturation a pixel must be to count as felt.
    """

    def __init__(
        self,
        calibration: Calibration,
        geometry: TableGeometry | None = None,
        px_per_mm: float = 1.0,
        felt_hue_tolerance: int = 14,
        felt_saturation_fraction: float = 0.45,
        face_down_fraction: float = 0.6,
        occluded_skin_fraction: float = 0.25,
    ) -> None:
        self.calibration = calibration
        self.geometry = geometry or TableGeometry()
        self.s = px_per_mm
        g = self.geometry
        self.extent = g.meld_edge + 2 * g.tile_w + 10.0
        self.felt_hue_tolerance = felt_hue_tolerance
        self.felt_saturation_fraction = felt_saturation_fraction
        self.felt_hsv: tuple[int, int, int] = (0, 0, 0)  # the last frame's estimate (hue, saturation, value)
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
        body = self._not_felt(view)
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

    def _not_felt(self, view: np.ndarray) -> np.ndarray:
        """1 where a pixel is not felt (tile body, ink, backs), 0 on the felt and its shadows."""
        hsv = cv2.cvtColor(view, cv2.COLOR_BGR2HSV)
        # the playing surface inside the markers is mostly felt: its median is the felt's colour
        c = self._px(self.geometry.surface_mm / 2 - self.geometry.marker_inset)
        lo = self._px(-(self.geometry.surface_mm / 2 - self.geometry.marker_inset))
        sample = hsv[lo:c:4, lo:c:4].reshape(-1, 3)
        hue, sat, val = (int(x) for x in np.median(sample, axis=0))
        self.felt_hsv = (hue, sat, val)
        tol = self.felt_hue_tolerance
        min_sat = max(25, round(sat * self.felt_saturation_fraction))
        h, s_ = hsv[..., 0], hsv[..., 1]
        # hue is circular (0..179): distance the short way round
        dh = cv2.absdiff(h, np.full_like(h, hue))
        dh = np.minimum(dh, 180 - dh)
        felt = (dh <= tol) & (s_ >= min_sat)
        return (~felt).astype(np.uint8)

    def _px(self, v: float) -> int:
        return round((v + self.extent) * self.s)

    def _cov_table(self, x0: float, x1: float, y0: float, y1: float, ii: np.ndarray | None = None) -> float:
        """Fraction of mask pixels (tile body by default) in the table-mm rectangle [x0, x1] x [y0, y1]."""
        ii = self._integral if ii is None else ii
        assert ii is not None
        # a detection makes tens of thousands of these look-ups: _px written out, the corners read as Python ints
        n = ii.shape[0] - 1
        e, s = self.extent, self.s
        if x1 < x0:
            x0, x1 = x1, x0
        if y1 < y0:
            y0, y1 = y1, y0
        j0, j1 = max(round((x0 + e) * s), 0), min(round((x1 + e) * s), n)
        i0, i1 = max(round((y0 + e) * s), 0), min(round((y1 + e) * s), n)
        if j1 <= j0 or i1 <= i0:
            return 0.0
        at = ii.item
        total = at(i1, j1) - at(i0, j1) - at(i1, j0) + at(i0, j0)
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
                            rect.angle % 360, occluded, crop=crop, rect=rect, **kw)  # type: ignore[arg-type]  # fmt: skip

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
            out += self.pond(seat)
            out += self.melds(seat)
            out += self._hand(seat)
        out += self._wall()
        return out

    def _present(self, seat: int, u0: float, u1: float, vc: float, *rims: tuple[float, float, float, float]) -> bool:
        """A tile body over [u0, u1] x [vc - 7, vc + 7], or a tile's rim all round one of ``rims``."""
        if self._cov(seat, u0, u1, vc - 7, vc + 7, self._filled_integral) > 0.6:
            return True
        return any(self._rim(seat, *r) > 0.75 for r in rims)

    def _rim(self, seat: int, u0: float, u1: float, v0: float, v1: float) -> float:
        """Mean body coverage of four bands 1.5..3.5 mm inside the edges of a tile-sized rect.

        A face's ink keeps off its last few millimetres, so the rim is tile body whatever the
        face shows (a green bamboo bird on green felt included), and felt where there is no tile.
        """
        a, b, c = 1.5, 3.5, 4.5  # band from a to b inside the edge; bands stop c short of the corners
        bands = (
            self._cov(seat, u0 + c, u1 - c, v0 + a, v0 + b),
            self._cov(seat, u0 + c, u1 - c, v1 - b, v1 - a),
            self._cov(seat, u0 + a, u0 + b, v0 + c, v1 - c),
            self._cov(seat, u1 - b, u1 - a, v0 + c, v1 - c),
        )
        return sum(bands) / 4

    def pond(self, seat: int, crosswise: frozenset[int] = frozenset()) -> list[DetectedTile]:
        """The pond of ``seat`` in discard order, each tile upright or crosswise (a riichi tile) by two strips.

        A crosswise tile pushed against the row before it has both strips partly covered (the neighbour
        row's tiles on one side, its own edge on the other) and reads upright, as an upright tile with
        ink of the felt's colour at both ends would: such a tile is marked ``upright_guess``, and the
        pipeline asks the face (classifies the crosswise cut too) and walks the pond again with its
        index in ``crosswise`` when the crosswise cut reads better (on the frame last given to
        :meth:`detect`).
        """
        g = self.geometry
        found: list[DetectedTile] = []
        flags: list[bool] = []
        for row in range(g.pond_rows):
            v0 = g.pond_near + row * (g.tile_h + g.pond_row_gap)
            u = -g.pond_cols * g.tile_w / 2
            in_row = 0
            while row == g.pond_rows - 1 or in_row < g.pond_cols:
                upright_rect = (u, u + g.tile_w, v0, v0 + g.tile_h)
                sideways_rect = (u, u + g.tile_h, v0 + (g.tile_h - g.tile_w) / 2, v0 + (g.tile_h + g.tile_w) / 2)
                if u + g.tile_w > g.wall_centre - g.tile_h / 2 or not self._present(
                    seat, u + 5, u + g.tile_w - 5, v0 + g.tile_h / 2, upright_rect, sideways_rect
                ):
                    return found
                near = self._cov(seat, u + 6, u + g.tile_w - 6, v0 + 1.5, v0 + 3.0)
                far = self._cov(seat, u + 6, u + g.tile_w - 6, v0 + g.tile_h - 3.0, v0 + g.tile_h - 1.5)
                # an upright tile covers both strips; a crosswise one leaves at least one bare (jitter or a
                # neighbour row can cover the other; green ink of a bamboo tile may look like felt on part
                # of one strip of an upright tile): the weaker strip decides
                side = min(near, far) < 0.25 or len(flags) in crosswise
                guess = not side and min(near, far) < UPRIGHT_SURE and row > 0
                flags.append(side)
                span = g.tile_h if side else g.tile_w  # the slot as TableGeometry.pond_layout places it
                rect = TileRect(u + span / 2, v0 + g.tile_h / 2, g.tile_w, g.tile_h, 90.0 if side else 0.0)
                found.append(self._tile("pond", seat, len(flags) - 1, rect.local_to(seat), side, upright_guess=guess))
                u += span
                in_row += 1
            if in_row < g.pond_cols:
                break
        return found

    def loose_pond_tile(self, seat: int, pond: list[DetectedTile], min_cover: float = 0.2,
                        max_skin: float = 0.05) -> tuple[float, float, float, float] | None:  # fmt: skip
        """The seat-local rect (u0, u1, v0, v1) around the pond's next slot when tile body lies there that the
        walk did not take (a discard pushed half a tile off its slot, or turned), else None.

        The walk stops at the first slot with no tile in it; a tile pushed along the row or towards the
        player still covers part of the rect that reaches half a tile beyond that slot (right and towards
        the player: the other sides hold the tiles before it), where an ordinary pond leaves felt. A few
        look-ups in the integral images of the frame last given to :meth:`detect`; a hand over the rect
        (skin) is no tile.
        """
        g = self.geometry
        flags = [t.sideways for t in sorted(pond, key=lambda t: t.index)]
        nxt = g.pond_layout(0, [*flags, False])[len(flags)]  # seat 0's table frame is the seat-local frame
        u0, v0 = nxt.cx - g.tile_w / 2 + 2.0, nxt.cy - g.tile_h / 2 + 2.0
        u1 = min(nxt.cx + g.tile_w, g.wall_centre - g.tile_h / 2 - 2.0)
        v1 = nxt.cy + g.tile_h
        if u1 <= u0 or self._integral is None:
            return None
        if self._cov(seat, u0, u1, v0, v1) < min_cover:
            return None
        if self._cov(seat, u0, u1, v0, v1, self._skin_integral) > max_skin:
            return None
        return (u0, u1, v0, v1)

    def loose_tile(self, seat: int, zone: str, index: int, rect: TileRect) -> DetectedTile:
        """A tile found off its slot (by the tile finder), cut along ``rect`` (table mm) as a slot's tile is."""
        return self._tile(zone, seat, index, rect, False)

    def melds(self, seat: int, cut_after_three: frozenset[int] = frozenset()) -> list[DetectedTile]:
        """The melds of ``seat`` (see :meth:`_walk_melds`); a guessed kan that leaves the next meld
        with fewer than three tiles was a wrong guess, and the walk is repeated with a cut there."""
        cuts = set(cut_after_three)
        while True:
            found = self._walk_melds(seat, frozenset(cuts))
            base: dict[int, int] = {}
            for t in found:
                base[t.meld] = base.get(t.meld, 0) + (not t.stacked)
            guessed = {t.meld for t in found if t.kan_guess} - cuts
            short = [m for m, n in base.items() if n < 3]
            culprit = max((k for k in guessed if short and k < min(short)), default=None)
            if culprit is None:
                return found
            cuts.add(culprit)

    def _walk_melds(self, seat: int, cut_after_three: frozenset[int]) -> list[DetectedTile]:
        """Walk the meld area from the right; group tiles into melds by how melds are laid.

        Gaps between melds are a few mm, which careless placing closes and opens, so a gap
        decides only what the layout rules leave open: a meld has three or four tiles; a
        concealed kan (no crosswise tile) always four; an added kan (a stacked tile) three in
        its row; a second crosswise tile starts a new meld. A fourth tile that touches three
        with a crosswise one could be an open kan or the next meld: it is joined, and marked
        ``kan_guess`` so the pipeline can check the kinds and walk again with
        ``cut_after_three`` naming that meld when they differ (on the frame last given to
        :meth:`detect`).
        """
        g = self.geometry
        e, w, h = g.meld_edge, g.tile_w, g.tile_h
        found: list[DetectedTile] = []
        right = g.meld_right
        meld = 0
        while right - w > g.meld_left - 6 and self._present(
            seat, right - 20, right - 6, e - 13, (right - w, right, e - h, e), (right - h, right, e - w, e)
        ):
            members = crosswise = 0
            stacked_seen = False
            while True:
                # an added-kan tile lies alone beyond the row: its ink (green bamboo) may be filled in
                stacked = self._cov(seat, right - 28, right - 8, e - 48, e - 40, self._filled_integral) > 0.5
                # an upright tile reaches 35 mm from the edge, a crosswise one 26: test a strip between, in three
                # parts, ink filled in (ink of the felt's colour near an upright face's top looks like felt). The
                # middle value decides: filling also closes the notch a crosswise tile leaves beside an upright
                # neighbour, so the part next to it reads covered (a crosswise 4s read upright, its meld lost)
                parts = sorted(self._cov(seat, a, a + 5, e - 32.5, e - 29.5, self._filled_integral)
                               for a in (right - 24, right - 15.5, right - 7))  # fmt: skip
                upright = not stacked and parts[1] > 0.6
                if members >= 3 and not upright and crosswise:
                    right -= g.meld_gap  # a second crosswise tile: the next meld
                    break
                right = self._meld_edge_as_it_lies(seat, right)
                span = w if upright else h
                u = right - span / 2
                local = TileRect(u, e - h / 2, w, h, 0.0) if upright else TileRect(u, e - w / 2, w, h, 90.0)
                tile = self._tile("meld", seat, len(found), local.local_to(seat), not upright, meld=meld)
                if members == 3 and crosswise and not tile.face_up and not tile.occluded:
                    right -= g.meld_gap  # an open kan shows four faces: a face-down tile starts a concealed kan
                    break
                found.append(tile)
                if stacked:
                    top = TileRect(u, e - w / 2 - w, w, h, 90.0)
                    found.append(self._tile("meld", seat, len(found), top.local_to(seat), True, meld=meld,
                                            stacked=True))  # fmt: skip
                stacked_seen |= stacked
                crosswise += not upright
                right -= span
                members += 1
                if members == 4 and crosswise:
                    tile.kan_guess = True
                next_present = self._present(seat, right - 20, right - 6, e - 13,
                                             (right - w, right, e - h, e), (right - h, right, e - w, e))  # fmt: skip
                joined = next_present and self._cov(seat, right - 3.0, right - 1.0, e - 20, e - 6) > 0.9
                if members < 3 and next_present:
                    continue  # a meld has at least three tiles
                if members == 3 and not crosswise and next_present:
                    continue  # a concealed kan has four
                if members >= 4 or not joined or stacked_seen or (members == 3 and meld in cut_after_three):
                    right = self._next_meld_edge(seat, right)
                    break
            meld += 1
        return _order_melds(found)

    def _next_meld_edge(self, seat: int, right: float) -> float:
        """Right edge of the next meld after a meld ending at ``right``: past the felt gap as it lies.

        Melds are laid by hand, so the gap is rarely the nominal ``meld_gap``: scan 1 mm strips for
        the felt and take the first tile edge after it (no felt seen: half the nominal gap).
        """
        g = self.geometry
        e = g.meld_edge
        felt_seen = False
        for d in range(int(g.meld_gap) + 4):
            covered = self._cov(seat, right - d - 1, right - d, e - 20, e - 6) > 0.8
            if not covered:
                felt_seen = True
            elif felt_seen:
                return right - d
        # no felt seen: the melds touch, or the gap is under the mask's resolution; split the difference
        return right - g.meld_gap / 2 if not felt_seen else right - g.meld_gap

    def _meld_edge_as_it_lies(self, seat: int, right: float, ahead: float = 1.0, back: float = 4.0) -> float:
        """The right edge of the meld tile expected to end at ``right``, where a gap shows it lies.

        Tiles laid by hand leave gaps of up to ~3 mm, and a walk that assumes them touching drifts: a
        crosswise 3m of FluffyStuff lay 2 mm left of its slot, the crop cut into its first stroke and it
        read 2m, surely enough that no shifted crop was tried (a lost game of the loop bench). Along the
        tiles' blank margin at the meld edge (no ink there, upright or crosswise) the unfilled mask is
        read in 1 mm strips (its pixels) from ``ahead`` right of ``right`` to ``back`` left of it: where
        a strip is mostly felt (a gap), the tile's edge is the first strip left of it that is tile.
        Two touching tiles show no edge between them: then ``right`` stands.
        """
        e = self.geometry.meld_edge
        x, gap = right + ahead, False
        while x > right - back:
            cover = self._cov(seat, x - 1.0, x, e - 4.0, e - 1.5)
            if cover < 0.75:
                gap = True
            elif gap:
                return x
            x -= 1.0
        return right

    def _hand(self, seat: int) -> list[DetectedTile]:
        g = self.geometry
        found: list[DetectedTile] = []
        for i in range(18):
            u = g.hand_left + i * g.tile_w
            rim = (u, u + g.tile_w, g.hand_centre - g.tile_h / 2, g.hand_centre + g.tile_h / 2)
            if u + g.tile_w > g.hand_right + 6 or not self._present(seat, u + 5, u + g.tile_w - 5, g.hand_centre, rim):
                break
            hc, top = g.hand_centre, g.tile_h / 2
            ii = self._filled_integral  # ink filled in: a 10 mm gap is not, a green bamboo stick is
            left_edge = max(self._cov(seat, u + 1.5, u + 4.0, hc - 10, hc + 10, ii),  # its left margin, or its
                            self._cov(seat, u + 1.5, u + 7.0, hc - top + 1.5, hc - top + 4.0, ii),  # corners
                            self._cov(seat, u + 1.5, u + 7.0, hc + top - 4.0, hc + top - 1.5, ii))  # fmt: skip
            gap = self._felt_gap(seat, u) if i > 0 else None
            if left_edge < 0.5 and (i == 0 or gap is not None):
                break  # felt where this tile's left edge should be: the next tile lies apart
            # (with no gap of a win tile's width before it, a tile whose edge lies a little off is only
            # carelessly laid: it is the hand's next tile)
            if gap is not None:
                nxt = gap + g.tile_w  # a win tile is the last: with a tile beyond it, the gap is careless laying
                if not self._present(seat, nxt + 5, nxt + g.tile_w - 5, hc, (nxt, nxt + g.tile_w, hc - top, hc + top)):
                    break  # a gap the ink filling closed (a win tile laid close): it lies apart all the same
            found.append(self._tile("hand", seat, i, g.hand_slot(seat, i), False))
        if found:  # a tile set apart after the hand: a tsumo's winning tile, found by the gap as it lies
            i = len(found)
            after = self._felt_gap(seat, g.hand_left + i * g.tile_w)
            u = after if after is not None else g.hand_left + i * g.tile_w + g.win_gap
            rim = (u, u + g.tile_w, g.hand_centre - g.tile_h / 2, g.hand_centre + g.tile_h / 2)
            if u + g.tile_w <= g.hand_right + 6 and self._present(seat, u + 5, u + g.tile_w - 5, g.hand_centre, rim):
                local = TileRect(u + g.tile_w / 2, g.hand_centre, g.tile_w, g.tile_h)
                found.append(self._tile("hand", seat, i, local.local_to(seat), False, apart=True))
        return found

    def _felt_gap(self, seat: int, u: float, min_gap: float = 5.0) -> float | None:
        """Where the tile after a felt gap begins, if one at least ``min_gap`` mm wide lies near ``u``.

        Hand tiles touch (careless placing opens at most ~3.5 mm between two); a tsumo's winning tile
        lies ``win_gap`` (10 mm) apart, which jitter narrows to ~6 mm: under the 7 mm ink filling, so
        the gap is measured on the unfilled mask, in 1 mm strips across the middle of the tiles, from
        3 mm before the nominal edge to past the widest gap. A strip is felt when under a third of it
        is tile across the middle *and* along the face's top and bottom margins: green ink on green
        felt reads as felt, and a face dense with it (a green dragon, 8s, 9s) emptied six middle strips
        of the drawn set's tiles (a hand cut there lost its last tile); no ink reaches the margins.
        """
        g = self.geometry
        hc, top = g.hand_centre, g.tile_h / 2
        run = start = 0
        for d in range(-3, int(g.win_gap) + 6):
            x0, x1 = u + d, u + d + 1
            if (self._cov(seat, x0, x1, hc - 10, hc + 10) < 0.33 and self._cov(seat, x0, x1, hc - top + 1, hc - top + 5)
                    < 0.33 and self._cov(seat, x0, x1, hc + top - 5, hc + top - 1) < 0.33):  # fmt: skip
                start = start if run else d
                run += 1
            elif run >= min_gap:
                return u + start + run
            else:
                run = 0
        return None

    def _wall(self) -> list[DetectedTile]:
        """Wall stacks: face-up tiles are dora indicators (index from the rightmost face-up stack leftwards);
        a face-up tile in front of a dora indicator is its ura indicator (same index)."""
        g = self.geometry
        found: list[DetectedTile] = []
        dora = 0
        for seat in range(4):
            for stack in reversed(range(g.wall_stacks)):
                u = -g.wall_stacks * g.tile_w / 2 + stack * g.tile_w
                rim = (u, u + g.tile_w, g.wall_centre - g.tile_h / 2, g.wall_centre + g.tile_h / 2)
                if not self._present(seat, u + 5, u + g.tile_w - 5, g.wall_centre, rim):
                    continue
                t = self._tile("wall", seat, stack, g.wall_slot(seat, stack), False)
                if t.face_up:
                    t.zone, t.index = "dora", dora
                    vc = g.wall_centre - g.tile_h / 2 - g.ura_gap - g.tile_h / 2
                    ura_rim = (u, u + g.tile_w, vc - g.tile_h / 2, vc + g.tile_h / 2)
                    if self._present(seat, u + 5, u + g.tile_w - 5, vc, ura_rim):
                        ura = self._tile("ura", seat, dora, g.ura_slot(seat, stack), False)
                        if ura.face_up or ura.occluded:
                            found.append(ura)
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
