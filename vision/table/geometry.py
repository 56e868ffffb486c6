"""Table coordinates, tile slots and zones of a riichi table, in millimetres.

Everything the camera sees is finally expressed in *table coordinates* so that
detection, zones and the simulator agree without knowing the camera:

- origin at the centre of the playing surface, ``x`` to the right and ``y``
  downwards as seen by an overhead camera, with seat 0 (East) at the bottom;
- seats follow counter-clockwise on that picture: seat 1 right, seat 2 top,
  seat 3 left.

Each seat has a *seat-local* frame ``(u, v)``: ``u`` points to the player's
right and ``v`` from the centre towards the player. Seat 0's local frame is
the table frame; seat ``k``'s is the same frame turned by ``k * 90`` degrees
counter-clockwise on the overhead picture. Layout rules (pond rows, meld
area, ...) are written once in the local frame and mapped for every seat,
which is why the opposite player's tiles come out upside down to the camera.

Angles (``TileRect.angle``, orientations) are counter-clockwise on the
overhead picture (y down), in degrees: an upright tile of seat ``k`` has
angle ``90 * k``, a sideways one ``90 * k + 90`` (riichi and called tiles are
turned to the player's left).

The geometry of a table is data: :func:`load_geometry` / :func:`save_geometry`
read and write it as TOML with the keys documented in :data:`TOML_KEYS`.
"""

from __future__ import annotations

import logging
import math
import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

__all__ = [
    "MELD_SIDEWAYS",
    "MELD_STACKED",
    "MELD_UPRIGHT",
    "SEATS",
    "TOML_KEYS",
    "ZONES",
    "TableGeometry",
    "TileRect",
    "load_geometry",
    "local_to_table",
    "save_geometry",
    "table_to_local",
]

log = logging.getLogger(__name__)

SEATS = (0, 1, 2, 3)
ZONES = ("pond", "meld", "hand", "wall")

#: Meld tile placements for :meth:`TableGeometry.meld_layout`.
MELD_UPRIGHT = "upright"
MELD_SIDEWAYS = "sideways"
#: A sideways tile laid on the far side of the previous sideways tile (added kan).
MELD_STACKED = "stacked"


def _rot(angle_deg: float) -> np.ndarray:
    """2x2 matrix turning vectors counter-clockwise *on the y-down picture* by ``angle_deg``.

    On a y-down picture a visual counter-clockwise turn is the mathematical
    clockwise one, hence the sign of the sines.
    """
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    # (x, y) -> (x c + y s, -x s + y c): right (1,0) turns to up (0,-1) for 90 degrees.
    return np.array([[c, s], [-s, c]])


def local_to_table(seat: int, points: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Map seat-local ``(u, v)`` points (N, 2) to table ``(x, y)`` for ``seat``."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    u, v = pts[:, 0], pts[:, 1]
    # Quarter turns written out: exact (no cos/sin noise) and cheap (no BLAS call per tile).
    k = seat % 4
    out = (u, v) if k == 0 else (v, -u) if k == 1 else (-u, -v) if k == 2 else (-v, u)
    return np.column_stack(out)


def table_to_local(seat: int, points: np.ndarray | Sequence[Sequence[float]]) -> np.ndarray:
    """Inverse of :func:`local_to_table`: table ``(x, y)`` points to seat-local ``(u, v)``."""
    return local_to_table((4 - seat % 4) % 4, points)


@dataclass(frozen=True)
class TileRect:
    """A tile lying flat: centre and upright size in mm and the angle of its top.

    ``width``/``height`` are the tile's face size as if upright (26 x 35 for a
    standard tile) whatever its angle, so ``corners()`` can always be listed
    as the face's top-left, top-right, bottom-right, bottom-left: a renderer
    maps face image corners onto them and a reader knows where the top is.
    """

    cx: float
    cy: float
    width: float
    height: float
    angle: float = 0.0

    def corners(self) -> np.ndarray:
        """(4, 2) face corners TL, TR, BR, BL in table mm (TL is the face's top-left)."""
        w, h = self.width / 2, self.height / 2
        a = math.radians(self.angle)
        c, s = math.cos(a), math.sin(a)
        # rotation as in _rot: (x, y) -> (x c + y s, -x s + y c), written out for speed
        return np.array(
            [[self.cx + x * c + y * s, self.cy - x * s + y * c] for x, y in ((-w, -h), (w, -h), (w, h), (-w, h))]
        )

    @property
    def sideways(self) -> bool:
        """True when the tile's long side runs along the table's x axis for seat 0 (turned a quarter)."""
        return round(self.angle / 90) % 2 == 1

    def local_to(self, seat: int) -> TileRect:
        """This rect, given in seat-local coordinates, expressed in table coordinates for ``seat``."""
        ((cx, cy),) = local_to_table(seat, [[self.cx, self.cy]])
        return TileRect(float(cx), float(cy), self.width, self.height, (self.angle + 90 * seat) % 360)


@dataclass(frozen=True)
class TableGeometry:
    """Where everything lies on one table model (mm, table coordinates, see module doc).

    The default describes a common square automatic table: an 840 mm playing
    surface, 26 x 35 mm tile faces, walls of 17 stacks rising 250 mm from the
    centre, ponds of rows of six inside the walls, revealed hands and melds
    between the wall and the player's edge, and four 50 mm ArUco markers
    (DICT_4X4_50, ids 0..3) in the corners, id ``k`` at the right-hand
    corner of seat ``k``, printed upright as seen from seat 0.
    """

    surface_mm: float = 840.0
    tile_w: float = 26.0
    tile_h: float = 35.0
    tile_thickness: float = 20.0
    marker_dictionary: str = "DICT_4X4_50"
    marker_ids: tuple[int, int, int, int] = (0, 1, 2, 3)
    marker_size: float = 50.0
    marker_inset: float = 35.0  # marker centre to each edge of the surface
    marker_quiet: float = 8.0  # white margin around a marker (detection needs it)
    pond_near: float = 92.0  # centre to the pond's first row; > half a row + margins, so ponds pinwheel
    pond_cols: int = 6
    pond_rows: int = 3  # the last row grows past six tiles, as in play
    pond_row_gap: float = 1.0
    wall_centre: float = 250.0  # distance from the centre to the wall's mid-line
    ura_gap: float = 3.0  # an ura indicator lies this far inside the wall, in front of its dora indicator
    wall_stacks: int = 17
    hand_centre: float = 305.0  # distance from the centre to a laid-down hand's mid-line
    hand_left: float = -230.0  # u of the left edge of the first hand tile
    hand_right: float = 240.0
    win_gap: float = 10.0  # a tsumo winner sets the winning tile apart, this far right of the hand
    meld_edge: float = 398.0  # distance from the centre to the near (player-side) edge of melds
    meld_right: float = 350.0  # u of the right edge of the first meld
    meld_left: float = -330.0
    meld_gap: float = 4.0  # between two melds
    centre_half: float = 75.0  # half side of the centre panel (dice, scores)

    # ------------------------------------------------------------ markers
    def marker_centre(self, marker_id: int) -> tuple[float, float]:
        """Centre of marker ``marker_id``: id k is at the right-hand corner of seat k."""
        k = self.marker_ids.index(marker_id)
        c = self.surface_mm / 2 - self.marker_inset
        ((x, y),) = local_to_table(k, [[c, c]])
        return float(x), float(y)

    def marker_corners(self, marker_id: int) -> np.ndarray:
        """(4, 2) corners of a marker in ArUco order (TL, TR, BR, BL of the printed marker).

        Markers are laid upright for seat 0 (their printed top towards seat 2),
        so the order is the same on the table as on the sheet.
        """
        x, y = self.marker_centre(marker_id)
        s = self.marker_size / 2
        return np.array([[x - s, y - s], [x + s, y - s], [x + s, y + s], [x - s, y + s]], dtype=np.float64)

    def all_marker_corners(self) -> dict[int, np.ndarray]:
        """Marker id -> (4, 2) corners in table mm."""
        return {i: self.marker_corners(i) for i in self.marker_ids}

    # ------------------------------------------------------------ slots
    def pond_layout(self, seat: int, sideways: Sequence[bool]) -> list[TileRect]:
        """Rects of a whole pond, in discard order; ``sideways[i]`` = discard i lies crosswise.

        Rows of ``pond_cols`` from the player's left; a sideways tile takes
        ``tile_h`` of its row instead of ``tile_w``, pushing the rest of the row
        right; the last row (``pond_rows``) keeps growing, as at a real table.
        """
        rects: list[TileRect] = []
        u = 0.0
        for i, side in enumerate(sideways):
            row = min(i // self.pond_cols, self.pond_rows - 1)
            if i % self.pond_cols == 0 and i // self.pond_cols < self.pond_rows:
                u = -self.pond_cols * self.tile_w / 2
            v = self.pond_near + row * (self.tile_h + self.pond_row_gap) + self.tile_h / 2
            span = self.tile_h if side else self.tile_w
            rects.append(TileRect(u + span / 2, v, self.tile_w, self.tile_h, 90.0 if side else 0.0).local_to(seat))
            u += span
        return rects

    def pond_slot(self, seat: int, index: int, sideways: Sequence[bool] = ()) -> TileRect:
        """Rect of discard ``index`` of ``seat``; ``sideways`` lists the crosswise flags of discards 0..index.

        Missing flags are upright, so ``pond_slot(seat, n)`` is the plain grid.
        """
        flags = [bool(sideways[i]) if i < len(sideways) else False for i in range(index + 1)]
        return self.pond_layout(seat, flags)[index]

    def wall_slot(self, seat: int, stack: int) -> TileRect:
        """Rect of the top tile of wall stack ``stack`` (0 = the player's leftmost) in front of ``seat``."""
        u = -self.wall_stacks * self.tile_w / 2 + (stack + 0.5) * self.tile_w
        return TileRect(u, self.wall_centre, self.tile_w, self.tile_h).local_to(seat)

    def ura_slot(self, seat: int, stack: int) -> TileRect:
        """Rect of the ura indicator turned over from under the indicator on ``stack``.

        At a riichi win the tile under each dora indicator is turned face up and laid on the
        felt just inside the wall, in front of (towards the centre from) its indicator.
        """
        u = -self.wall_stacks * self.tile_w / 2 + (stack + 0.5) * self.tile_w
        v = self.wall_centre - self.tile_h - self.ura_gap
        return TileRect(u, v, self.tile_w, self.tile_h).local_to(seat)

    def hand_slot(self, seat: int, index: int, apart: bool = False) -> TileRect:
        """Rect of tile ``index`` of a hand laid down face up in front of ``seat`` (left to right);
        ``apart``: the winning tile of a tsumo, set ``win_gap`` right of the tile before it."""
        u = self.hand_left + (index + 0.5) * self.tile_w + (self.win_gap if apart else 0.0)
        return TileRect(u, self.hand_centre, self.tile_w, self.tile_h).local_to(seat)

    def meld_layout(self, seat: int, melds: Sequence[Sequence[str]]) -> list[list[TileRect]]:
        """Rects of the melds of ``seat``; the first meld lies rightmost, later ones to its left.

        Each meld lists its tiles left to right as the player sees them, each
        :data:`MELD_UPRIGHT`, :data:`MELD_SIDEWAYS` (the called tile) or
        :data:`MELD_STACKED` (an added-kan tile laid beyond the previous
        sideways tile). Tiles are flush with the player-side edge ``meld_edge``.
        """
        out: list[list[TileRect]] = []
        right = self.meld_right
        for meld in melds:
            spans = [self.tile_h if p == MELD_SIDEWAYS else (0.0 if p == MELD_STACKED else self.tile_w) for p in meld]
            u = right - sum(spans)
            rects: list[TileRect] = []
            last_side: TileRect | None = None
            for place, span in zip(meld, spans, strict=True):
                if place == MELD_STACKED:
                    if last_side is None:
                        raise ValueError("a stacked meld tile needs a sideways tile before it")
                    r = TileRect(last_side.cx, last_side.cy - self.tile_w, self.tile_w, self.tile_h, 90.0)
                elif place == MELD_SIDEWAYS:
                    r = TileRect(u + span / 2, self.meld_edge - self.tile_w / 2, self.tile_w, self.tile_h, 90.0)
                    last_side = r
                elif place == MELD_UPRIGHT:
                    r = TileRect(u + span / 2, self.meld_edge - self.tile_h / 2, self.tile_w, self.tile_h, 0.0)
                else:
                    raise ValueError(f"unknown meld placement {place!r}")
                rects.append(r)
                u += span
            if right - sum(spans) < self.meld_left:
                log.warning("seat %d melds run past the meld area (u=%.0f mm)", seat, right - sum(spans))
            out.append([r.local_to(seat) for r in rects])
            right -= sum(spans) + self.meld_gap
        return out

    # ------------------------------------------------------------ zones
    def zone_polygon(self, seat: int, zone: str) -> np.ndarray:
        """(4, 2) table-mm polygon of a seat's zone: 'pond', 'meld', 'hand' or 'wall'.

        The wall strips of the four seats together are the ring where dora
        indicators are turned. Zones are generous (a few mm around the slots)
        because real tiles are never placed on the grid.
        """
        m = 6.0
        if zone == "pond":
            u0 = -self.pond_cols * self.tile_w / 2 - m
            u1 = self.wall_centre - self.tile_h / 2 - 2 * m  # the last row may grow up to the next wall
            v0 = self.pond_near - m
            v1 = self.pond_near + self.pond_rows * (self.tile_h + self.pond_row_gap) + m
        elif zone == "meld":
            u0, u1 = self.meld_left - m, self.meld_right + m
            v0, v1 = self.meld_edge - 2 * self.tile_w - m, self.meld_edge + m
        elif zone == "hand":
            u0, u1 = self.hand_left - m, self.hand_right + m
            v0, v1 = self.hand_centre - self.tile_h / 2 - m, self.hand_centre + self.tile_h / 2 + m
        elif zone == "wall":
            half = self.wall_stacks * self.tile_w / 2
            u0, u1 = -half - m, half + m
            v0, v1 = self.wall_centre - self.tile_h / 2 - m, self.wall_centre + self.tile_h / 2 + m
        else:
            raise ValueError(f"unknown zone {zone!r}; expected one of {ZONES}")
        return local_to_table(seat, [[u0, v0], [u1, v0], [u1, v1], [u0, v1]])

    def zone_of(self, x: float, y: float) -> tuple[int, str] | None:
        """The (seat, zone) containing table point (x, y), or None; used to file a detected tile."""
        for seat in SEATS:
            u, v = table_to_local(seat, [[x, y]])[0]
            for zone in ZONES:
                poly = table_to_local(seat, self.zone_polygon(seat, zone))
                if poly[:, 0].min() <= u <= poly[:, 0].max() and poly[:, 1].min() <= v <= poly[:, 1].max():
                    return seat, zone
        return None


#: TOML keys: every field of :class:`TableGeometry`, grouped by section; all optional (defaults built in).
TOML_KEYS: dict[str, dict[str, str]] = {
    "table": {"surface_mm": "side of the square playing surface", "centre_half": "half side of the centre panel"},
    "tile": {"tile_w": "face width", "tile_h": "face height", "tile_thickness": "body thickness"},
    "markers": {
        "marker_dictionary": "cv2.aruco predefined dictionary name",
        "marker_ids": "ids at the right-hand corner of seats 0..3",
        "marker_size": "printed black square side",
        "marker_inset": "marker centre to each surface edge",
        "marker_quiet": "white margin around the marker",
    },
    "pond": {
        "pond_near": "centre to first row",
        "pond_cols": "tiles per row",
        "pond_rows": "rows (last one grows)",
        "pond_row_gap": "gap between rows",
    },
    "wall": {
        "wall_centre": "centre to wall mid-line",
        "wall_stacks": "stacks per wall",
        "ura_gap": "wall's inner edge to an ura indicator laid in front of its dora indicator",
    },
    "hand": {
        "hand_centre": "centre to hand mid-line",
        "hand_left": "u of first tile's left edge",
        "hand_right": "",
        "win_gap": "gap before a tsumo's winning tile, set apart",
    },
    "meld": {
        "meld_edge": "centre to melds' player-side edge",
        "meld_right": "u of first meld's right edge",
        "meld_left": "leftmost u of the meld area",
        "meld_gap": "gap between melds",
    },
}


def save_geometry(geometry: TableGeometry, path: str | Path) -> None:
    """Write ``geometry`` as TOML (sections of :data:`TOML_KEYS`), so a club can edit its table."""
    values = asdict(geometry)
    lines = ["# tablesvc table geometry, millimetres, table coordinates (see vision/table/geometry.py)"]
    for section, keys in TOML_KEYS.items():
        lines.append(f"\n[{section}]")
        for key, doc in keys.items():
            v = values[key]
            if isinstance(v, str):
                text = f'"{v}"'
            elif isinstance(v, tuple | list):
                text = "[" + ", ".join(str(x) for x in v) + "]"
            else:
                text = repr(v)
            lines.append(f"{key} = {text}" + (f"  # {doc}" if doc else ""))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def load_geometry(path: str | Path | None = None) -> TableGeometry:
    """Read a TOML geometry; ``None`` gives the built-in default. Unknown keys are an error (typos)."""
    if path is None:
        return TableGeometry()
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    types = {f.name: f.type for f in fields(TableGeometry)}
    kwargs: dict[str, object] = {}
    for section, keys in data.items():
        if section not in TOML_KEYS or not isinstance(keys, dict):
            raise ValueError(f"{path}: unknown section [{section}]; expected {sorted(TOML_KEYS)}")
        for key, value in keys.items():
            if key not in TOML_KEYS[section]:
                raise ValueError(f"{path}: unknown key {section}.{key}")
            default = getattr(TableGeometry(), key)
            if isinstance(default, tuple):
                value = tuple(int(x) for x in value)
            elif isinstance(default, int) and not isinstance(default, bool):
                value = int(value)
            elif isinstance(default, float):
                value = float(value)
            kwargs[key] = value
    log.debug("geometry %s: %d keys over the default (%s)", path, len(kwargs), len(types))
    return TableGeometry(**kwargs)  # type: ignore[arg-type]
