"""Camera simulator: render what lies on the felt as a camera would see it, with exact ground truth.

Vision is tested without a table, so the renderer must be faithful where
the recogniser is sensitive (perspective, tile orientations, sideways tiles,
lighting, noise, blur, JPEG, a hand over the table) and must say exactly what
it drew. The method:

1. Everything is drawn once in *table space*, a raster of the table in
   millimetres (``px_per_mm``, 2 by default): felt, centre panel, the four
   ArUco markers with their white margin, tile shadows, then every tile face
   (or back) warped into its :class:`~vision.table.geometry.TileRect`.
2. One ``cv2.warpPerspective`` maps table space to the 1920x1080 frame with
   the camera's homography (table mm -> pixels, from a pinhole
   :class:`CameraPose`: overhead or oblique, any azimuth).
3. Effects are applied in frame space: lighting gradient, glare, a hand
   blob, blur, Gaussian sensor noise, JPEG compression.

Ground truth lists every tile with its mjai name, zone, seat, index, sideways
flag, orientation relative to the camera (0/90/180/270, counter-clockwise)
and its four face corners in pixels (face TL, TR, BR, BL). Tiles are drawn
flat at table height: the few mm of parallax of a real tile's thickness in an
oblique view is not modelled.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field, replace
from functools import lru_cache

import cv2
import numpy as np

from hardware_sims.tile_art import TileSet, drawn_tile_set
from vision.table.geometry import MELD_SIDEWAYS, MELD_STACKED, MELD_UPRIGHT, TableGeometry, TileRect, local_to_table

__all__ = [
    "CameraPose",
    "Discard",
    "Effects",
    "GroundTruth",
    "MeldView",
    "SeatView",
    "TableView",
    "TileTruth",
    "render",
]

log = logging.getLogger(__name__)

FELT = (60, 110, 35)  # BGR: the usual green
BLUE_FELT = (120, 70, 25)  # BGR: the dark blue of many automatic tables
RIM = (40, 55, 75)
PANEL = (45, 45, 45)
FLOOR = (70, 75, 80)


# ---------------------------------------------------------------- what lies on the table
@dataclass(frozen=True)
class Discard:
    """One pond tile; ``sideways`` for a riichi declaration tile (laid crosswise).

    ``pushed_mm`` (seat-local: along the row, towards the player) and ``pushed_deg`` move a tile off its
    slot as a careless hand leaves it, further than any ``Effects.jitter_mm``.
    """

    tile: str
    sideways: bool = False
    pushed_mm: tuple[float, float] = (0.0, 0.0)
    pushed_deg: float = 0.0


@dataclass(frozen=True)
class MeldView:
    """An open set as laid out, tiles left to right as its owner sees them.

    ``called`` is the index of the crosswise (claimed) tile, None for a
    concealed kan; ``added`` is the added-kan tile laid beyond the called one;
    ``face_down`` lists indices shown face down (ends of a concealed kan).
    """

    tiles: tuple[str, ...]
    called: int | None = None
    added: str | None = None
    face_down: tuple[int, ...] = ()


@dataclass(frozen=True)
class SeatView:
    """What lies in front of one seat: pond, melds, a revealed hand, a riichi stick."""

    discards: tuple[Discard, ...] = ()
    melds: tuple[MeldView, ...] = ()
    hand: tuple[str, ...] = ()
    riichi_stick: bool = False
    win_tile: str | None = None  # a tsumo's winning tile, laid apart right of the hand


@dataclass(frozen=True)
class TableView:
    """The felt: four seats, dora indicators on the wall ring, optionally the face-down walls."""

    seats: tuple[SeatView, SeatView, SeatView, SeatView] = (SeatView(), SeatView(), SeatView(), SeatView())
    dora: tuple[str, ...] = ()
    dora_seat: int = 0  # wall in front of this seat holds the dead wall
    dora_stack: int = 4  # stack of the first indicator; kan-dora follow to its left
    ura: tuple[str, ...] = ()  # ura indicators turned at a riichi win, each in front of its dora indicator
    walls: bool = False  # draw every other wall stack face down


# ---------------------------------------------------------------- camera
@dataclass(frozen=True)
class CameraPose:
    """A pinhole camera looking at the table plane; gives the homography table mm -> pixels.

    ``tilt_deg`` is the angle of the optical axis from vertical (0 = straight
    down); the camera stands on the side of ``azimuth_deg`` (0 = behind seat
    0, 90 = behind seat 1, counter-clockwise on the overhead picture) and
    looks at ``target_mm`` from ``distance_mm``. ``focal_px=None`` picks the
    focal length that just fits the playing surface in the frame, like a
    user framing the table with a zoom lens.
    """

    tilt_deg: float = 0.0
    azimuth_deg: float = 0.0
    roll_deg: float = 0.0
    distance_mm: float = 1300.0
    target_mm: tuple[float, float] = (0.0, 0.0)
    focal_px: float | None = None
    image_size: tuple[int, int] = (1920, 1080)
    margin_mm: float = 30.0  # around the surface when fitting the focal length

    @classmethod
    def overhead(cls, **kw: float) -> CameraPose:
        """Straight down over the centre, seat 0 at the bottom of the picture."""
        return cls(**kw)  # type: ignore[arg-type]

    @classmethod
    def oblique(cls, tilt_deg: float = 35.0, **kw: float) -> CameraPose:
        """Tilted towards the table from behind seat 0 (a camera on a stand at the table's side)."""
        return cls(tilt_deg=tilt_deg, **kw)  # type: ignore[arg-type]

    def _extrinsics(self) -> tuple[np.ndarray, np.ndarray]:
        """World->camera rotation R (rows: right, down, forward) and camera centre C.

        World axes: x right, y down on the table, z into the table (so the
        frame is right-handed and an overhead camera has R = identity).
        """
        t = math.radians(self.tilt_deg)
        forward = np.array([0.0, -math.sin(t), math.cos(t)])
        down = np.array([0.0, math.cos(t), math.sin(t)])
        a = math.radians(self.azimuth_deg)
        rz = np.array([[math.cos(a), math.sin(a), 0], [-math.sin(a), math.cos(a), 0], [0, 0, 1]])
        forward, down = rz @ forward, rz @ down
        right = np.cross(down, forward)
        r = math.radians(self.roll_deg)
        right, down = math.cos(r) * right + math.sin(r) * down, -math.sin(r) * right + math.cos(r) * down
        rot = np.stack([right, down, forward])
        centre = np.array([*self.target_mm, 0.0]) - self.distance_mm * forward
        return rot, centre

    def homography(self, geometry: TableGeometry) -> np.ndarray:
        """3x3 homography from table mm (z = 0) to pixels."""
        rot, centre = self._extrinsics()
        m = np.column_stack([rot[:, 0], rot[:, 1], -rot @ centre])  # normalised camera coords of (x, y, 1)
        w, h = self.image_size
        f = self.focal_px
        if f is None:
            half = geometry.surface_mm / 2 + self.margin_mm
            pts = np.array([[sx * half, sy * half, 1.0] for sx in (-1, 1) for sy in (-1, 1)]) @ m.T
            xn, yn = pts[:, 0] / pts[:, 2], pts[:, 1] / pts[:, 2]
            if np.any(pts[:, 2] <= 0):
                raise ValueError(f"camera pose {self} does not see the whole table")
            f = min((w / 2) / np.abs(xn).max(), (h / 2) / np.abs(yn).max())
        k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
        hom = k @ m
        return hom / hom[2, 2]


# ---------------------------------------------------------------- effects
@dataclass(frozen=True)
class Effects:
    """Image degradations, all off by default; :meth:`realistic` turns on a plausible mix.

    Random parts (gradient direction, glare and hand position, noise) come
    from the ``rng`` given to :func:`render`, so a seed reproduces a frame.
    """

    gradient: float = 0.0  # darkening across the frame, 0..1
    glare: float = 0.0  # peak added brightness of a glare spot, 0..255
    glare_radius_px: float = 160.0
    noise_sigma: float = 0.0  # Gaussian sensor noise, grey levels
    blur_sigma: float = 0.0  # Gaussian blur, pixels (defocus / motion)
    jpeg_quality: int | None = None
    hand: bool = False  # a skin-coloured blob (a player's hand) over the table
    hand_at_mm: tuple[float, float] | None = None  # its centre; None = random
    jitter_mm: float = 0.0  # tiles are never placed exactly: centre offset (uniform, mm)
    jitter_deg: float = 0.0  # ... and rotation (uniform, degrees)
    light_seed: int | None = None  # fixes the gradient's direction and the glare's place (a room's lamps)
    # jitter drawn from this seed and each tile's place (zone, seat, index) instead of the frame's rng: a tile
    # lies still from frame to frame, as carelessly as it was put down (None: re-drawn in every frame)
    placement_seed: int | None = None

    @classmethod
    def realistic(cls) -> Effects:
        """A typical club room: uneven light, mild glare, noise, slight blur, JPEG 85, careless tiles."""
        return cls(gradient=0.3, glare=60.0, noise_sigma=4.0, blur_sigma=0.8, jpeg_quality=85,
                   jitter_mm=1.5, jitter_deg=3.0)  # fmt: skip


# ---------------------------------------------------------------- ground truth
@dataclass(frozen=True)
class TileTruth:
    """One rendered tile: what it is, where it lies (table mm and pixels), how it is turned.

    ``tile`` is None for a face-down tile. ``zone`` is 'pond', 'meld',
    'hand', 'dora', 'ura' or 'wall' (face-down wall stacks). ``orientation`` is
    the counter-clockwise angle of the tile's top relative to the camera's
    up, rounded to a quarter turn; ``corners_px`` are face TL, TR, BR, BL.
    ``occluded`` is set when the hand blob covers the tile's centre or two
    of its corners.
    """

    tile: str | None
    zone: str
    seat: int
    index: int
    sideways: bool
    orientation: int
    rect: TileRect
    corners_px: np.ndarray = field(repr=False)
    occluded: bool = False

    @property
    def face_up(self) -> bool:
        return self.tile is not None


@dataclass(frozen=True)
class GroundTruth:
    """Everything the renderer knows about a frame: tiles, markers, the true homography."""

    tiles: tuple[TileTruth, ...]
    homography: np.ndarray  # table mm -> pixels
    markers_px: dict[int, np.ndarray]  # id -> (4, 2) ArUco-order corners in pixels
    hand_polygon_px: np.ndarray | None = None


# ---------------------------------------------------------------- table space
@lru_cache(maxsize=8)
def _base(geometry: TableGeometry, px_per_mm: float, felt: tuple[int, int, int] = FELT) -> np.ndarray:
    """Felt, rim, centre panel and markers in table space (cached: the same for every frame)."""
    extent = geometry.surface_mm / 2 + 60.0
    n = round(2 * extent * px_per_mm)
    img = np.empty((n, n, 3), np.uint8)
    img[:] = RIM

    def to_px(v: float) -> int:
        return round((v + extent) * px_per_mm)

    s = geometry.surface_mm / 2
    cv2.rectangle(img, (to_px(-s), to_px(-s)), (to_px(s) - 1, to_px(s) - 1), felt, -1)
    at = np.arange(n)  # a faint felt weave, sin(0.9 x) sin(1.3 y): the outer product of a column and a row
    texture = ((np.sin(at * 0.9)[None, :] * np.sin(at * 1.3)[:, None]) * 4).astype(np.int16)
    woven = img.astype(np.int16)
    woven += texture[..., None]
    img = np.clip(woven, 0, 255, out=woven).astype(np.uint8)
    c = geometry.centre_half
    cv2.rectangle(img, (to_px(-c), to_px(-c)), (to_px(c) - 1, to_px(c) - 1), PANEL, -1)
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, geometry.marker_dictionary))
    size = round(geometry.marker_size * px_per_mm)
    q = geometry.marker_quiet
    for mid in geometry.marker_ids:
        x, y = geometry.marker_centre(mid)
        half = geometry.marker_size / 2
        lo, hi = (to_px(x - half - q), to_px(y - half - q)), (to_px(x + half + q) - 1, to_px(y + half + q) - 1)
        cv2.rectangle(img, lo, hi, (250, 250, 250), -1)
        marker = cv2.aruco.generateImageMarker(dictionary, mid, size, borderBits=1)
        x0, y0 = to_px(x - half), to_px(y - half)
        img[y0 : y0 + size, x0 : x0 + size] = cv2.cvtColor(marker, cv2.COLOR_GRAY2BGR)
    return img


_face_cache: dict[tuple[int, str, float, float, float], dict[str, np.ndarray]] = {}


def _scaled_faces(tiles: TileSet, geometry: TableGeometry, px_per_mm: float) -> dict[str, np.ndarray]:
    """Faces resized once to table-space resolution (INTER_AREA: no aliasing), keyed by name and '#back'."""
    key = (id(tiles), tiles.name, px_per_mm, geometry.tile_w, geometry.tile_h)
    if key not in _face_cache:
        size = (round(geometry.tile_w * px_per_mm), round(geometry.tile_h * px_per_mm))
        faces = {t: cv2.resize(img, size, interpolation=cv2.INTER_AREA) for t, img in tiles.faces.items()}
        faces["#back"] = cv2.resize(tiles.back, size, interpolation=cv2.INTER_AREA)
        if len(_face_cache) > 16:
            _face_cache.clear()
        _face_cache[key] = faces
    return _face_cache[key]


@dataclass
class _Placed:
    rect: TileRect
    image_key: str
    truth_tile: str | None
    zone: str
    seat: int
    index: int
    sideways: bool


def _layout(view: TableView, geometry: TableGeometry) -> list[_Placed]:
    """Every tile of the view with its rect, in drawing order (walls first, stacked kan tiles last)."""
    placed: list[_Placed] = []
    dora_slots = {(view.dora_seat, view.dora_stack - i): t for i, t in enumerate(view.dora)}
    for (seat, stack), t in dora_slots.items():
        if not 0 <= stack < geometry.wall_stacks:
            raise ValueError(f"dora indicator at stack {stack} is off the wall")
        placed.append(_Placed(geometry.wall_slot(seat, stack), t, t, "dora", seat, view.dora_stack - stack, False))
    for i, t in enumerate(view.ura):
        stack = view.dora_stack - i
        if not 0 <= stack < geometry.wall_stacks:
            raise ValueError(f"ura indicator at stack {stack} is off the wall")
        placed.append(_Placed(geometry.ura_slot(view.dora_seat, stack), t, t, "ura", view.dora_seat, i, False))
    if view.walls:
        for seat in range(4):
            for stack in range(geometry.wall_stacks):
                if (seat, stack) not in dora_slots:
                    placed.append(_Placed(geometry.wall_slot(seat, stack), "#back", None, "wall", seat, stack, False))
    for seat, sv in enumerate(view.seats):
        for i, (d, r) in enumerate(zip(sv.discards, geometry.pond_layout(seat, [d.sideways for d in sv.discards]),
                                       strict=True)):  # fmt: skip
            if d.pushed_mm != (0.0, 0.0) or d.pushed_deg:
                ((dx, dy),) = local_to_table(seat, [d.pushed_mm]) - local_to_table(seat, [(0.0, 0.0)])
                r = replace(r, cx=r.cx + float(dx), cy=r.cy + float(dy), angle=r.angle + d.pushed_deg)
            placed.append(_Placed(r, d.tile, d.tile, "pond", seat, i, d.sideways))
        for i, t in enumerate(sv.hand):
            placed.append(_Placed(geometry.hand_slot(seat, i), t, t, "hand", seat, i, False))
        if sv.win_tile is not None:
            n = len(sv.hand)
            placed.append(_Placed(geometry.hand_slot(seat, n, apart=True), sv.win_tile, sv.win_tile, "hand", seat, n,
                                  False))  # fmt: skip
        specs, names = [], []
        for m in sv.melds:
            spec = [MELD_SIDEWAYS if i == m.called else MELD_UPRIGHT for i in range(len(m.tiles))]
            tiles = [("#back" if i in m.face_down else t) for i, t in enumerate(m.tiles)]
            if m.added is not None:
                if m.called is None:
                    raise ValueError("an added kan needs a called tile")
                spec.insert(m.called + 1, MELD_STACKED)
                tiles.insert(m.called + 1, m.added)
            specs.append(spec)
            names.append(tiles)
        k = 0
        for spec, tiles, rects in zip(specs, names, geometry.meld_layout(seat, specs), strict=True):
            for place, t, r in zip(spec, tiles, rects, strict=True):
                truth = None if t == "#back" else t
                placed.append(_Placed(r, t, truth, "meld", seat, k, place != MELD_UPRIGHT))
                k += 1
    return placed


_ZONES = ("pond", "meld", "hand", "dora", "ura", "wall")


def _jitter(rect: TileRect, effects: Effects, rng: np.random.Generator) -> TileRect:
    if not effects.jitter_mm and not effects.jitter_deg:
        return rect
    dx, dy = rng.uniform(-effects.jitter_mm, effects.jitter_mm, 2)
    da = rng.uniform(-effects.jitter_deg, effects.jitter_deg)
    return replace(rect, cx=rect.cx + dx, cy=rect.cy + dy, angle=rect.angle + da)


def _paste(canvas: np.ndarray, face: np.ndarray, quad_px: np.ndarray) -> None:
    """Warp ``face`` so its TL, TR, BL corners land on ``quad_px`` (table-space pixels), only within its bbox."""
    fh, fw = face.shape[:2]
    xs, ys = quad_px[:, 0], quad_px[:, 1]
    x0, y0 = max(int(xs.min()) - 1, 0), max(int(ys.min()) - 1, 0)
    x1, y1 = min(int(xs.max()) + 2, canvas.shape[1]), min(int(ys.max()) + 2, canvas.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    src = np.float32([[0, 0], [fw, 0], [0, fh]])
    dst = np.float32([quad_px[0], quad_px[1], quad_px[3]]) - np.float32([x0, y0])
    m = cv2.getAffineTransform(src, dst)
    # pixel centres: face pixel (i, j) covers [j, j+1) in continuous coordinates, OpenCV puts it at j
    m[:, 2] += m[:, 0] * 0.5 + m[:, 1] * 0.5 - 0.5
    # BORDER_TRANSPARENT leaves destination pixels outside the face untouched: a paste without a mask
    roi = canvas[y0:y1, x0:x1].copy()
    cv2.warpAffine(face, m, (x1 - x0, y1 - y0), dst=roi, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_TRANSPARENT)
    canvas[y0:y1, x0:x1] = roi


@dataclass
class _View:
    """The last view drawn (per thread): the frame before the effects, the tiles as placed, the homography,
    the frame with the scene's light and blur (their settings, the frame) and the tiles as the camera sees
    them, each once drawn."""

    key: tuple
    frame: np.ndarray
    placed: list[_Placed]
    hom: np.ndarray
    lit: tuple[tuple, np.ndarray] | None = None
    seen: tuple[np.ndarray, list[int]] | None = None  # the tiles' corners in pixels and orientations


_last_view = threading.local()  # per thread: the last view's _View


def _same_view(a: tuple, b: tuple) -> bool:
    """The same view drawn the same way: the view, the geometry, the camera pose (frozen dataclasses of numbers)
    and the effects' placement by value, the tile set (images) as the same object (a camera feed keeps it)."""
    return a[3] is b[3] and a[:3] == b[:3] and a[4:] == b[4:]


def _felt(table_view: TableView, geometry: TableGeometry, camera: CameraPose, tiles: TileSet, effects: Effects,
          rng: np.random.Generator, px_per_mm: float,
          felt: tuple[int, int, int]) -> tuple[np.ndarray, list[_Placed], np.ndarray]:
    """The frame before the effects of :func:`render`: the felt, its tiles and their shadows seen through the
    camera; with the tiles as placed (jittered) and the homography table mm -> pixels."""
    extent = geometry.surface_mm / 2 + 60.0
    canvas = _base(geometry, px_per_mm, tuple(felt)).copy()
    faces = _scaled_faces(tiles, geometry, px_per_mm)
    placed = _layout(table_view, geometry)
    for p in placed:
        where = rng if effects.placement_seed is None else \
            np.random.default_rng([effects.placement_seed, _ZONES.index(p.zone), p.seat, p.index])
        p.rect = _jitter(p.rect, effects, where)

    def tex(points: np.ndarray) -> np.ndarray:
        return (np.asarray(points) + extent) * px_per_mm

    # shadows: tiles stand ~20 mm tall; light from the top-left throws a soft shadow to the bottom-right.
    # Drawn and blurred at a quarter of the resolution (a shadow has no detail), then multiplied in.
    for seat, sv in enumerate(table_view.seats):
        if sv.riichi_stick:
            stick = local_to_table(seat, [[-50, 76], [50, 76], [50, 84], [-50, 84]])
            cv2.fillConvexPoly(canvas, np.round(tex(stick)).astype(np.int32), (245, 245, 245), cv2.LINE_AA)
            ((cx, cy),) = local_to_table(seat, [[0, 80]])
            dot = tuple(np.round(tex(np.array([cx, cy]))).astype(int))
            cv2.circle(canvas, dot, round(3 * px_per_mm), (30, 30, 200), -1, cv2.LINE_AA)
    if placed:
        q = 4
        n = canvas.shape[0]
        shadow = np.zeros(((n + q - 1) // q, (n + q - 1) // q), np.uint8)
        off = np.array([2.5, 3.5])
        for p in placed:
            cv2.fillConvexPoly(shadow, np.round(tex(p.rect.corners() + off) / q).astype(np.int32), 255, cv2.LINE_AA)
        shadow = cv2.GaussianBlur(shadow, (0, 0), 2.0 * px_per_mm / q)
        factor = cv2.resize(255 - (shadow * 0.45).astype(np.uint8), (n, n), interpolation=cv2.INTER_LINEAR)
        cv2.multiply(canvas, cv2.merge([factor, factor, factor]), canvas, scale=1 / 255)
    for p in placed:
        _paste(canvas, faces[p.image_key], tex(p.rect.corners()))

    hom = camera.homography(geometry)
    to_tex = np.array([[px_per_mm, 0, extent * px_per_mm], [0, px_per_mm, extent * px_per_mm], [0, 0, 1.0]])
    w, h = camera.image_size
    # texture pixel centres sit at +0.5: compensate so table mm map exactly through ``hom``
    half = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1.0]])
    frame = cv2.warpPerspective(canvas, hom @ np.linalg.inv(half @ to_tex), (w, h), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=FLOOR)  # fmt: skip
    return frame, placed, hom


def render(
    table_view: TableView,
    *,
    geometry: TableGeometry | None = None,
    camera: CameraPose | None = None,
    tiles: TileSet | None = None,
    effects: Effects | None = None,
    rng: np.random.Generator | None = None,
    px_per_mm: float = 2.0,
    felt: tuple[int, int, int] = FELT,
) -> tuple[np.ndarray, GroundTruth]:
    """Render ``table_view`` as a BGR uint8 frame of ``camera.image_size`` and its ground truth.

    Defaults: the standard geometry, an overhead camera, the drawn tile set,
    no effects, a fixed seed. ``px_per_mm`` is the table-space resolution;
    2 is enough for a 1080p view of an 840 mm table (about 1.2 px/mm).
    ``felt`` is the cloth's BGR colour (:data:`FELT` green, :data:`BLUE_FELT`...).
    """
    geometry = geometry or TableGeometry()
    camera = camera or CameraPose.overhead()
    tiles = tiles or drawn_tile_set()
    effects = effects or Effects()
    rng = rng if rng is not None else np.random.default_rng(0)

    # the felt as the camera sees it before the frame's own effects depends on nothing random when each tile's
    # place is seeded (or not jittered): a camera feed renders several frames of one view, drawn once
    still = effects.placement_seed is not None or not (effects.jitter_mm or effects.jitter_deg)
    key = (table_view, geometry, camera, tiles, px_per_mm, tuple(felt), effects.placement_seed, effects.jitter_mm,
           effects.jitter_deg)
    cached = getattr(_last_view, "entry", None) if still else None
    if cached is None or not _same_view(cached.key, key):
        bare, placed, hom = _felt(table_view, geometry, camera, tiles, effects, rng, px_per_mm, felt)
        cached = _View(key, bare, placed, hom) if still else None
        _last_view.entry = cached
        frame = bare.copy() if still else bare
    else:
        frame, placed, hom = None, cached.placed, cached.hom

    hand_poly = None
    if cached is not None and _has_effects(effects) and _steady_light(effects):
        # and so is the scene's light and blur when they draw nothing from ``rng``: only the sensor's part is
        # per frame
        lit_key = (effects.gradient, effects.glare, effects.glare_radius_px, effects.blur_sigma, effects.light_seed)
        if cached.lit is None or cached.lit[0] != lit_key:
            lit = cached.frame.copy() if frame is None else frame
            _light_and_optics(lit, effects, rng, hom)
            cached.lit = (lit_key, lit.copy())
            frame = lit
        else:
            frame = cached.lit[1].copy()
        frame = _sensor(frame, effects, rng)
    else:
        if frame is None:
            frame = cached.frame.copy()
        if _has_effects(effects):
            hand_poly = _light_and_optics(frame, effects, rng, hom)
            frame = _sensor(frame, effects, rng)

    if cached is None:
        seen = _seen_corners(placed, hom)
    else:
        if cached.seen is None:
            cached.seen = _seen_corners(placed, hom)
        seen = cached.seen
    truths = []
    for p, corners, orientation in zip(placed, seen[0], seen[1], strict=True):
        corners_px = corners.copy()
        occluded = False
        if hand_poly is not None:
            pts = [*corners_px, corners_px.mean(axis=0)]
            inside = [cv2.pointPolygonTest(hand_poly, (float(x), float(y)), False) >= 0 for x, y in pts]
            occluded = inside[-1] or sum(inside[:4]) >= 2
        truths.append(TileTruth(p.truth_tile, p.zone, p.seat, p.index, p.sideways, orientation, p.rect, corners_px,
                                occluded))  # fmt: skip
    markers = {
        mid: cv2.perspectiveTransform(c.reshape(-1, 1, 2), hom).reshape(4, 2)
        for mid, c in geometry.all_marker_corners().items()
    }
    return frame, GroundTruth(tuple(truths), hom, markers, hand_poly)


def _seen_corners(placed: list[_Placed], hom: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Each placed tile's face corners in pixels, (N, 4, 2), all mapped at once, and its :func:`_orientation`."""
    if not placed:
        return np.empty((0, 4, 2)), []
    corners = np.concatenate([p.rect.corners() for p in placed]).reshape(-1, 1, 2)
    px = cv2.perspectiveTransform(corners, hom).reshape(-1, 4, 2)
    return px, [_orientation(c) for c in px]


def _orientation(corners_px: np.ndarray) -> int:
    """Quarter turn of the tile's top relative to the image's up, counter-clockwise, from its pixel corners."""
    up = (corners_px[0] + corners_px[1]) / 2 - (corners_px[3] + corners_px[2]) / 2  # bottom -> top
    angle = math.degrees(math.atan2(-up[0], -up[1]))  # 0 when up = (0, -1); 90 when up = (-1, 0)
    return round(angle / 90.0) % 4 * 90


_NOISE_SEED = 12345
_noise_lock = threading.Lock()
_noise_draws = np.empty(0)  # the noise seed's standard normal draws, as many as the largest bank asked for
_noise_banks: dict[float, tuple[np.ndarray, np.ndarray]] = {}  # sigma -> bank as long as the draws


def _noise_bank(sigma: float, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded Gaussian noise (positive part, negative part) as uint8, reused across frames.

    ``round(sigma * z)`` saturated to 0..255 and ``round(-sigma * z)`` likewise, z the seed's standard normal
    draws. A generator's first draws do not depend on how many follow, so one set of draws (the longest asked
    for) serves every frame size and sigma: a smaller frame's bank is the start of a larger one's, and each
    sigma's bank is two saturating multiplications of the same draws.
    """
    global _noise_draws
    with _noise_lock:
        if _noise_draws.size < size:
            _noise_draws = np.random.default_rng(_NOISE_SEED).standard_normal(size)
            _noise_banks.clear()
        bank = _noise_banks.get(sigma)
        if bank is None:
            if len(_noise_banks) >= 4:
                del _noise_banks[next(iter(_noise_banks))]
            # OpenCV's saturating conversion rounds half to even, as np.round does
            bank = (cv2.multiply(_noise_draws, sigma, dtype=cv2.CV_8U).reshape(-1),
                    cv2.multiply(_noise_draws, -sigma, dtype=cv2.CV_8U).reshape(-1))  # fmt: skip
            _noise_banks[sigma] = bank
    return bank[0][:size], bank[1][:size]


def _has_effects(e: Effects) -> bool:
    return bool(e.gradient or e.glare or e.noise_sigma or e.blur_sigma or e.jpeg_quality or e.hand)


def _steady_light(e: Effects) -> bool:
    """The effects before the sensor's (no hand; light, blur) draw nothing from the frame's rng: every frame of
    one view looks the same up to the sensor noise."""
    return not e.hand and (e.light_seed is not None or not (e.gradient or e.glare))


def _light_and_optics(frame: np.ndarray, e: Effects, rng: np.random.Generator, hom: np.ndarray) -> np.ndarray | None:
    """The scene's part of the effects, in place: a hand, the room's light, the lens's blur; returns the hand
    polygon (pixels) when a hand is drawn."""
    h, w = frame.shape[:2]
    hand_poly = None
    if e.hand:
        at = np.array(e.hand_at_mm if e.hand_at_mm is not None else rng.uniform(-250, 250, 2))
        ang = rng.uniform(0, 2 * math.pi)
        # a palm (ellipse) and a forearm running off towards the table edge, in table mm
        palm = cv2.ellipse2Poly((0, 0), (55, 45), 0, 0, 360, 10).astype(np.float64)
        arm = np.array([[-35, 0], [35, 0], [45, 600], [-45, 600]], np.float64)
        rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
        shapes = [s @ rot.T + at for s in (palm, arm)]
        hand_px = [cv2.perspectiveTransform(s.reshape(-1, 1, 2), hom).reshape(-1, 2) for s in shapes]
        for poly in hand_px:
            cv2.fillPoly(frame, [np.round(poly).astype(np.int32)], (120, 150, 205), cv2.LINE_AA)
        hand_poly = cv2.convexHull(np.round(np.vstack(hand_px)).astype(np.float32))
    if e.gradient or e.glare:
        # the room's light: random per frame unless fixed by light_seed (a real camera's frames share it)
        light = np.random.default_rng(e.light_seed) if e.light_seed is not None else rng
        # Smooth maps are computed on a 48x27 grid and stretched to (3w, h) so they apply to the
        # interleaved BGR buffer in one saturating uint8 operation (no float frame, no channel merge).
        yy, xx = np.mgrid[0:27, 0:48].astype(np.float32)
        flat = frame.reshape(h, w * 3)
        if e.gradient:
            d = light.uniform(0, 2 * math.pi)
            proj = (xx / 47 - 0.5) * math.cos(d) + (yy / 26 - 0.5) * math.sin(d)
            gain = 1.0 - e.gradient * (proj - proj.min()) / max(float(np.ptp(proj)), 1e-6)
            gain8 = cv2.resize(np.clip(gain * 255, 0, 255).astype(np.uint8), (w * 3, h), interpolation=cv2.INTER_LINEAR)
            cv2.multiply(flat, gain8, flat, scale=1 / 255)
        if e.glare:
            gx, gy = light.uniform(0.2, 0.8) * 48, light.uniform(0.2, 0.8) * 27
            r = e.glare_radius_px * 48 / w
            spot = np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * r * r)) * e.glare
            spot8 = cv2.resize(np.clip(spot, 0, 255).astype(np.uint8), (w * 3, h), interpolation=cv2.INTER_CUBIC)
            cv2.add(flat, spot8, flat)
    if e.blur_sigma:
        cv2.GaussianBlur(frame, (0, 0), e.blur_sigma, dst=frame)
    return hand_poly


def _sensor(frame: np.ndarray, e: Effects, rng: np.random.Generator) -> np.ndarray:
    """The camera's part of the effects: sensor noise (from ``rng``, in place) and JPEG compression (the decoded
    picture is the frame returned)."""
    if e.noise_sigma:
        # A cached bank of Gaussian noise, split into its positive and negative parts so it applies with
        # two saturating uint8 operations; a random offset into the bank makes each frame's noise different.
        pos, neg = _noise_bank(float(e.noise_sigma), 2 * frame.size + 4099)
        n = frame.size
        start = int(rng.integers(0, pos.size - n))
        flat = frame.reshape(-1)
        cv2.add(flat, pos[start : start + n], flat)
        cv2.subtract(flat, neg[start : start + n], flat)
    if e.jpeg_quality:
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, int(e.jpeg_quality)])
        if not ok:
            raise RuntimeError("JPEG encoding failed")
        return cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return frame
