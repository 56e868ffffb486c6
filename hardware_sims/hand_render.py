"""Seat-camera simulator: a player's standing hand as a webcam at the seat sees it, with exact ground truth.

A seat camera (``[[camera]] kind = "hand"``) looks at one player's standing tiles from the player's
side, 20-70 degrees above the table, close or far. The renderer draws, in seat millimetres:

- the table plane (felt of the given colour, the room beyond the table's far edge);
- the rack behind the row (the ledge of an automatic table) and the row itself: each tile a box
  26 mm wide, 35 mm high, 20 mm deep standing at ``y = 0`` with its face towards the player; the
  top shows the ivory body and the coloured back layer; the drawn tile stands apart on the right;
- then, in the image: a hand reaching in (palm and arm, over some tiles), the room's light drifting
  from frame to frame (gain and colour), webcam noise, blur and JPEG; optionally the frame squeezed
  to another aspect ratio (a 640x640 stream).

Seat axes: x along the row (the player's left to right), y away from the player, z up. The camera
sits at ``y < 0`` looking at the middle of the row. :class:`SeatPose` projects any seat point;
:meth:`SeatPose.strip_quad` gives the image corners of the row's face plane, which is what the
reader is calibrated with (``vision.seat.SeatCalibration``).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import cv2
import numpy as np

from hardware_sims.tile_art import TileSet

__all__ = [
    "FELTS",
    "HandEffects",
    "HandFrameTruth",
    "HandView",
    "SeatPose",
    "render_cards",
    "render_hand",
]

TILE_W, TILE_H, TILE_D = 26.0, 35.0, 20.0  # mm: a standing tile's face width, height, and its depth
DRAWN_GAP = 12.0  # mm between the hand and the drawn tile
STRIP_TILES = 15  # the reader's strip: 14 tiles, the drawn tile's gap and a margin
STRIP_W = STRIP_TILES * TILE_W

#: felt colours (BGR) of automatic tables: green, dark blue, grey, burgundy
FELTS: dict[str, tuple[int, int, int]] = {
    "green": (60, 110, 35),
    "blue": (120, 70, 25),
    "grey": (85, 85, 80),
    "burgundy": (45, 35, 110),
}
RACK = (50, 50, 55)
ROOM = (95, 100, 110)
SKIN = (120, 150, 205)
IVORY = (226, 238, 244)


@dataclass(frozen=True)
class SeatPose:
    """A webcam at the seat: ``elevation_deg`` above the table plane, ``distance_mm`` from the row's
    middle, ``offset_mm`` to the side, ``roll_deg`` of a camera not quite level; the focal length fits
    the row's strip in the frame."""

    elevation_deg: float = 40.0
    distance_mm: float = 420.0
    offset_mm: float = 0.0
    roll_deg: float = 0.0
    image_size: tuple[int, int] = (640, 480)
    fill: float = 0.92  # the strip's share of the frame's width

    def _extrinsics(self) -> tuple[np.ndarray, np.ndarray]:
        """World->camera rotation (rows: right, down, forward) and the camera centre, seat mm."""
        e = math.radians(self.elevation_deg)
        target = np.array([0.0, 0.0, TILE_H / 2])
        centre = target + self.distance_mm * np.array([0.0, -math.cos(e), math.sin(e)])
        centre[0] += self.offset_mm
        forward = target - centre
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, np.array([0.0, 0.0, 1.0]))
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        r = math.radians(self.roll_deg)
        right, down = math.cos(r) * right + math.sin(r) * down, -math.sin(r) * right + math.cos(r) * down
        return np.stack([right, down, forward]), centre

    def camera(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(K, R, C): intrinsics, rotation and centre (read-only: computed once per pose, as a frame projects
        every tile's corners through them)."""
        return self._camera

    @cached_property
    def _camera(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rot, centre = self._extrinsics()
        w, h = self.image_size
        ends = np.array([[-STRIP_W / 2, 0.0, 0.0], [STRIP_W / 2, 0.0, 0.0], [-STRIP_W / 2, 0, TILE_H],
                         [STRIP_W / 2, 0, TILE_H]])  # fmt: skip
        cam = (ends - centre) @ rot.T
        xn = cam[:, 0] / cam[:, 2]
        f = self.fill * (w / 2) / float(np.abs(xn).max())
        k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
        for a in (k, rot, centre):
            a.setflags(write=False)
        return k, rot, centre

    def project(self, points: np.ndarray) -> np.ndarray:
        """Seat mm (N, 3) -> pixels (N, 2); points behind the camera are pushed just in front of it."""
        k, rot, centre = self.camera()
        cam = (np.asarray(points, np.float64) - centre) @ rot.T
        z = np.maximum(cam[:, 2], 1.0)
        return np.column_stack([k[0, 0] * cam[:, 0] / z + k[0, 2], k[1, 1] * cam[:, 1] / z + k[1, 2]])

    def strip_quad(self) -> np.ndarray:
        """Image corners (TL, TR, BR, BL) of the row's face plane, ``STRIP_W`` x ``TILE_H`` mm, centred."""
        x = STRIP_W / 2
        return self.project(np.array([[-x, 0, TILE_H], [x, 0, TILE_H], [x, 0, 0], [-x, 0, 0]]))


@dataclass(frozen=True)
class HandView:
    """One seat's standing row: the concealed tiles left to right and the drawn tile apart (or None).

    ``start_mm`` is where the row begins, from the strip's left end (players do not line a row up).
    """

    tiles: tuple[str, ...]
    drawn: str | None = None
    start_mm: float = 6.0


@dataclass(frozen=True)
class HandEffects:
    """Degradations of a seat camera's frame; random parts come from the ``rng`` given to :func:`render_hand`."""

    felt: str = "green"
    light: float = 1.0  # gain of the room's light
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)  # white balance (B, G, R gains)
    noise_sigma: float = 0.0
    blur_sigma: float = 0.0
    jpeg_quality: int | None = None
    hand_over: float | None = None  # a hand reaching in over the row at this x (mm from the strip's left)
    squeeze_to: tuple[int, int] | None = None  # resize the frame to this (w, h), e.g. a 640x640 stream
    lean_deg: float = 0.0  # the row leans back (players tilt their tiles), degrees from vertical


@dataclass(frozen=True)
class HandFrameTruth:
    """What the renderer drew: each standing tile's name and face corners (TL, TR, BR, BL) in pixels,
    whether the hand covers it, and the strip's corners (the reader's calibration)."""

    tiles: tuple[str, ...]
    drawn: str | None
    corners_px: tuple[np.ndarray, ...] = field(repr=False)
    covered: tuple[bool, ...]
    strip_px: np.ndarray = field(repr=False)


def _paste(frame: np.ndarray, image: np.ndarray, quad: np.ndarray) -> None:
    """Warp ``image`` onto the convex quad (TL, TR, BR, BL pixels) of ``frame``, in a bounding box only."""
    h, w = image.shape[:2]
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
    fh, fw = frame.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, fw), min(y1, fh)
    if x1 <= x0 or y1 <= y0:
        return
    src = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    m = cv2.getPerspectiveTransform(src, (quad - [x0, y0]).astype(np.float32))
    box = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(image, m, box, flags=cv2.INTER_AREA)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), m, box, flags=cv2.INTER_NEAREST)
    roi = frame[y0:y1, x0:x1]
    np.copyto(roi, warped, where=mask[..., None] > 0)


def _poly(frame: np.ndarray, pts: np.ndarray, colour: tuple[int, int, int]) -> None:
    cv2.fillConvexPoly(frame, np.round(pts * 16).astype(np.int32), colour, cv2.LINE_AA, shift=4)


#: per thread: the last scene drawn (its key, the frame before the hand and the light, the tiles' face corners):
#: a seat camera shows one row for several frames, and only the hand and the light differ between them
_last_scene = threading.local()


def _scene(view: HandView, tiles: TileSet, pose: SeatPose, felt: tuple[int, int, int], lean_deg: float,
           near: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """The table, the rack and the row as ``pose`` sees them, before any hand or light: a fresh frame and the
    tiles' face corners (TL, TR, BR, BL pixels, left to right, the drawn one last)."""
    key = (view, pose, felt, lean_deg)
    cached = getattr(_last_scene, "entry", None)
    if cached is not None and cached[0] == key and cached[1] is tiles:
        return cached[2].copy(), [q.copy() for q in cached[3]]
    w, h = pose.image_size
    frame = _room(w, h).copy()
    # the table: from its far edge (600 mm behind the row) to just in front of the camera
    _poly(frame, pose.project(np.array([[-900, near, 0], [900, near, 0], [900, 600, 0], [-900, 600, 0]])), felt)
    # the rack behind the row
    rack = np.array([[-STRIP_W / 2 - 20, TILE_D + 4, 18], [STRIP_W / 2 + 20, TILE_D + 4, 18],
                     [STRIP_W / 2 + 20, TILE_D + 4, 0], [-STRIP_W / 2 - 20, TILE_D + 4, 0]])  # fmt: skip
    rack_top = rack[:2].copy()
    rack_top = np.vstack([rack_top + np.array([0, 30, 0]), rack_top[::-1]])
    _poly(frame, pose.project(rack_top), tuple(int(c * 0.8) for c in RACK))
    _poly(frame, pose.project(rack), RACK)
    lean = math.radians(lean_deg)
    top_dy, top_dz = TILE_H * math.sin(lean), TILE_H * math.cos(lean)
    x_left = -STRIP_W / 2 + view.start_mm
    names = list(view.tiles) + ([view.drawn] if view.drawn else [])
    xs = [x_left + i * TILE_W for i in range(len(view.tiles))]
    if view.drawn:
        xs.append(x_left + len(view.tiles) * TILE_W + DRAWN_GAP)
    back = cv2.resize(tiles.back, (8, 8))
    corners: list[np.ndarray] = []
    for name, x in zip(names, xs, strict=True):
        # the top: ivory body towards the player, the back's colour behind it
        top = np.array([[x, top_dy + TILE_D, top_dz], [x + TILE_W, top_dy + TILE_D, top_dz],
                        [x + TILE_W, top_dy, top_dz], [x, top_dy, top_dz]])  # fmt: skip
        tq = pose.project(top)
        _poly(frame, tq, IVORY)
        back_part = top.copy()
        back_part[2:, 1] = top_dy + TILE_D * 0.45
        _paste(frame, back, pose.project(back_part))
        face = np.array([[x, top_dy, top_dz], [x + TILE_W, top_dy, top_dz], [x + TILE_W, 0, 0], [x, 0, 0]])
        fq = pose.project(face)
        _paste(frame, tiles.face(name), fq)
        cv2.polylines(frame, [np.round(fq * 16).astype(np.int32)], True, (150, 160, 166), 1, cv2.LINE_AA, shift=4)
        corners.append(fq)
    _last_scene.entry = (key, tiles, frame.copy(), tuple(corners))
    return frame, corners


def render_hand(view: HandView, tiles: TileSet, pose: SeatPose | None = None, effects: HandEffects | None = None,
                rng: np.random.Generator | None = None) -> tuple[np.ndarray, HandFrameTruth]:
    """One seat camera frame of ``view`` drawn with ``tiles``' artwork, and what it shows."""
    pose = pose or SeatPose()
    e = effects or HandEffects()
    rng = rng or np.random.default_rng(0)
    w, h = pose.image_size
    _, _, centre = pose.camera()
    near = max(-300.0, centre[1] + 40.0)
    frame, corners = _scene(view, tiles, pose, FELTS.get(e.felt, FELTS["green"]), e.lean_deg, near)
    names = list(view.tiles) + ([view.drawn] if view.drawn else [])
    covered = [False] * len(names)
    if e.hand_over is not None:
        # a palm over the row and the arm back towards the player, in the row's plane and in front of it
        cx = -STRIP_W / 2 + e.hand_over
        palm = [np.array([cx + 45 * math.cos(a), -5 - 10 * math.sin(a), 22 + 26 * math.sin(a)])
                for a in np.linspace(0, 2 * math.pi, 24)]  # fmt: skip
        arm = np.array([[cx - 30, -10, 10], [cx + 30, -10, 10], [cx + 45, max(near, -260), 40],
                        [cx - 45, max(near, -260), 40]])  # fmt: skip
        palm_px = pose.project(np.array(palm))
        for part in (arm, None):
            pts = pose.project(part) if part is not None else palm_px
            hull = cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2)
            _poly(frame, hull, SKIN)
        hull = cv2.convexHull(np.vstack([palm_px, pose.project(arm)]).astype(np.float32))
        for i, q in enumerate(corners):
            c = q.mean(axis=0)
            inside = cv2.pointPolygonTest(hull, (float(c[0]), float(c[1])), False) >= 0
            n_in = sum(cv2.pointPolygonTest(hull, (float(p[0]), float(p[1])), False) >= 0 for p in q)
            covered[i] = bool(inside or n_in >= 2)
    _light(frame, e, rng)
    strip = pose.strip_quad()
    if e.squeeze_to is not None and tuple(e.squeeze_to) != (w, h):
        sx, sy = e.squeeze_to[0] / w, e.squeeze_to[1] / h
        frame = cv2.resize(frame, e.squeeze_to, interpolation=cv2.INTER_AREA)
        corners = [q * [sx, sy] for q in corners]
        strip = strip * [sx, sy]
    if e.jpeg_quality:
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, int(e.jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        frame = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    truth = HandFrameTruth(tuple(view.tiles), view.drawn, tuple(corners), tuple(covered), strip)
    return frame, truth


def _light(frame: np.ndarray, e: HandEffects, rng: np.random.Generator) -> None:
    """The room's light and the webcam: gain and white balance, a soft gradient, blur, sensor noise."""
    gains = np.array(e.tint) * e.light
    if not np.allclose(gains, 1.0):
        # the gain of each channel as a table of its 256 levels: ``cv2.multiply`` of the levels themselves, so each
        # pixel gets what multiplying it would give, in one lookup
        cv2.LUT(frame, cv2.multiply(_LEVELS, np.array([*gains, 0.0])), dst=frame)
    if e.blur_sigma:
        cv2.GaussianBlur(frame, (0, 0), e.blur_sigma, dst=frame)
    if e.noise_sigma:
        # ``rng.normal(0, sigma)`` draws sigma times the standard normal, the same numbers in the same order: drawn
        # here into buffers kept per thread and frame size (a 720p frame's noise is 22 MB of doubles), scaled and
        # cut towards zero into whole levels, then added to the frame saturating at 0 and 255
        z, noise = _noise_buffers(frame.shape)
        rng.standard_normal(out=z)
        np.multiply(z, e.noise_sigma, out=noise, casting="unsafe")
        cv2.add(frame, noise, dst=frame, dtype=cv2.CV_8U)


_buffers = threading.local()
#: the 256 levels of each of three channels (256 x 1 x 3): a gain applied to them is the lookup table of that gain
_LEVELS = np.repeat(np.arange(256, dtype=np.uint8)[:, None, None], 3, axis=2)


@lru_cache(maxsize=8)
def _room(w: int, h: int) -> np.ndarray:
    """A frame of the room's colour (read-only): a scene starts from a copy of it (filling a 720p frame colour by
    colour costs thirty times the copy)."""
    frame = np.empty((h, w, 3), np.uint8)
    frame[:] = ROOM
    frame.setflags(write=False)
    return frame


def _noise_buffers(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """This thread's float64 and int16 buffers of ``shape``, for a frame's noise."""
    kept = getattr(_buffers, "by_shape", None)
    if kept is None:
        kept = _buffers.by_shape = {}
    if shape not in kept:
        kept[shape] = (np.empty(shape, np.float64), np.empty(shape, np.int16))
    return kept[shape]


def render_cards(pose: SeatPose, tiles: TileSet, effects: HandEffects | None = None,
                 rng: np.random.Generator | None = None) -> np.ndarray:
    """A seat camera's frame of the two calibration cards (``vision.seat.calibration.seat_card``) stood upright
    where the row stands, the left as its first tile and the right as its fifteenth (the strip's ends)."""
    from vision.seat.calibration import CARD_IDS, seat_card

    e = effects or HandEffects()
    rng = rng or np.random.default_rng(0)
    frame, _ = render_hand(HandView(()), tiles, pose, HandEffects(felt=e.felt), rng)
    for marker, x in zip(CARD_IDS, (-STRIP_W / 2, STRIP_W / 2 - TILE_W), strict=True):
        card = cv2.cvtColor(seat_card(marker, 8.0), cv2.COLOR_GRAY2BGR)
        face = np.array([[x, 0, TILE_H], [x + TILE_W, 0, TILE_H], [x + TILE_W, 0, 0], [x, 0, 0]])
        _paste(frame, card, pose.project(face))
    _light(frame, e, rng)
    if e.squeeze_to is not None and tuple(e.squeeze_to) != pose.image_size:
        frame = cv2.resize(frame, e.squeeze_to, interpolation=cv2.INTER_AREA)
    if e.jpeg_quality:
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, int(e.jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        frame = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return frame
