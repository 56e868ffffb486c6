"""Tile faces for the camera simulator: the project's own drawing and tile-set directories.

The simulator must not depend on one artwork, because real tile sets differ
and the classifier is enrolled per set. So there are two sources of faces:

- :func:`drawn_tile_set` draws all 37 faces (34 kinds + three red fives) with
  OpenCV primitives only: pips for pin, bamboo sticks for sou, a numeral
  over a character-like glyph for man, letters and strokes for honours, red
  for the red fives. It is deterministic (no randomness, fixed fonts), so a
  test or a benchmark renders the same pixels every time.
- :func:`load_tile_set` reads a directory of face images, either named by
  notation (``1m.png`` .. ``5mr.png``, ``E.png`` ..) or with the FluffyStuff
  file names (``Man1.png``, ``Pin5-Dora.png``, ``Ton.png`` ...), whose RGBA
  artwork is composited on an ivory tile body with a border.

Faces are BGR uint8 images of the whole top surface of a tile (body margin
included) in the 26:35 aspect, ``FACE_SIZE`` pixels (w, h), top up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

__all__ = [
    "FACE_SIZE",
    "FLUFFY_NAMES",
    "TILE_NAMES",
    "TileSet",
    "draw_back",
    "draw_face",
    "drawn_tile_set",
    "load_tile_set",
]

log = logging.getLogger(__name__)

#: The 37 faces in mjai notation: 34 kinds then the red fives.
TILE_NAMES: tuple[str, ...] = (
    *(f"{n}m" for n in range(1, 10)),
    *(f"{n}p" for n in range(1, 10)),
    *(f"{n}s" for n in range(1, 10)),
    "E", "S", "W", "N", "P", "F", "C",
    "5mr", "5pr", "5sr",
)  # fmt: skip

#: FluffyStuff file stem -> mjai name.
FLUFFY_NAMES: dict[str, str] = {
    **{f"Man{n}": f"{n}m" for n in range(1, 10)},
    **{f"Pin{n}": f"{n}p" for n in range(1, 10)},
    **{f"Sou{n}": f"{n}s" for n in range(1, 10)},
    "Man5-Dora": "5mr", "Pin5-Dora": "5pr", "Sou5-Dora": "5sr",
    "Ton": "E", "Nan": "S", "Shaa": "W", "Pei": "N", "Haku": "P", "Hatsu": "F", "Chun": "C",
}  # fmt: skip

#: Face image size in pixels (width, height): 5 px per mm of a 26 x 35 mm face.
FACE_SIZE: tuple[int, int] = (130, 175)

IVORY = (226, 238, 244)
EDGE = (170, 180, 186)
BLACK = (30, 30, 30)
RED = (40, 40, 205)
GREEN = (60, 130, 30)
BLUE = (150, 80, 20)
BACK_COLOUR = (40, 120, 215)  # orange-ish back, like many automatic-table sets


@dataclass(frozen=True)
class TileSet:
    """One tile design: a face per mjai name (BGR, ``FACE_SIZE``) and the back."""

    name: str
    faces: dict[str, np.ndarray]
    back: np.ndarray

    def face(self, tile: str) -> np.ndarray:
        """The face of ``tile``; a clear error names the set when the tile is missing."""
        try:
            return self.faces[tile]
        except KeyError:
            raise KeyError(f"tile set {self.name!r} has no face for {tile!r}") from None


def _body() -> np.ndarray:
    """An empty ivory face with a soft grey rim: the common base of every drawn face."""
    w, h = FACE_SIZE
    img = np.full((h, w, 3), IVORY, np.uint8)
    cv2.rectangle(img, (0, 0), (w - 1, h - 1), EDGE, 4)
    cv2.rectangle(img, (4, 4), (w - 5, h - 5), (212, 224, 232), 2)
    return img


# pip positions on a unit face (x, y in 0..1), per count, standard layouts.
_PIN_LAYOUT: dict[int, list[tuple[float, float]]] = {
    1: [(0.5, 0.5)],
    2: [(0.5, 0.27), (0.5, 0.73)],
    3: [(0.25, 0.22), (0.5, 0.5), (0.75, 0.78)],
    4: [(0.3, 0.28), (0.7, 0.28), (0.3, 0.72), (0.7, 0.72)],
    5: [(0.27, 0.24), (0.73, 0.24), (0.5, 0.5), (0.27, 0.76), (0.73, 0.76)],
    6: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.52), (0.7, 0.52), (0.3, 0.8), (0.7, 0.8)],
    7: [(0.22, 0.16), (0.5, 0.24), (0.78, 0.32), (0.3, 0.6), (0.7, 0.6), (0.3, 0.84), (0.7, 0.84)],
    8: [(0.3, 0.14), (0.7, 0.14), (0.3, 0.38), (0.7, 0.38), (0.3, 0.62), (0.7, 0.62), (0.3, 0.86), (0.7, 0.86)],
    9: [(x, y) for y in (0.2, 0.5, 0.8) for x in (0.22, 0.5, 0.78)],
}
_PIN_COLOURS: dict[int, list[tuple[int, int, int]]] = {
    1: [GREEN],
    2: [GREEN, BLUE],
    3: [BLUE, RED, GREEN],
    4: [BLUE, GREEN, GREEN, BLUE],
    5: [BLUE, GREEN, RED, GREEN, BLUE],
    6: [GREEN, GREEN, RED, RED, RED, RED],
    7: [GREEN] * 3 + [RED] * 4,
    8: [BLUE] * 8,
    9: [BLUE] * 3 + [RED] * 3 + [GREEN] * 3,
}
_PIN_RADIUS = {1: 0.36, 2: 0.2, 3: 0.16, 4: 0.17, 5: 0.15, 6: 0.14, 7: 0.12, 8: 0.11, 9: 0.12}


def _pin(img: np.ndarray, n: int, red: bool) -> None:
    """Circles in the standard layouts; rows coloured so that 6, 7, 8 and 9 differ beyond their count."""
    w, h = FACE_SIZE
    ax, ay, aw, ah = 10, 12, w - 20, h - 24
    r = int(_PIN_RADIUS[n] * aw)
    for i, (px, py) in enumerate(_PIN_LAYOUT[n]):
        c = (int(ax + px * aw), int(ay + py * ah))
        colour = RED if red else _PIN_COLOURS[n][i]
        cv2.circle(img, c, r, colour, -1, cv2.LINE_AA)
        cv2.circle(img, c, max(2, int(r * 0.6)), IVORY, max(1, r // 6), cv2.LINE_AA)
        cv2.circle(img, c, max(1, int(r * 0.25)), colour, -1, cv2.LINE_AA)


_SOU_LAYOUT: dict[int, list[tuple[float, float]]] = {
    2: [(0.5, 0.27), (0.5, 0.73)],
    3: [(0.5, 0.27), (0.3, 0.73), (0.7, 0.73)],
    4: [(0.3, 0.27), (0.7, 0.27), (0.3, 0.73), (0.7, 0.73)],
    5: [(0.25, 0.27), (0.75, 0.27), (0.5, 0.5), (0.25, 0.73), (0.75, 0.73)],
    6: [(x, y) for y in (0.27, 0.73) for x in (0.2, 0.5, 0.8)],
    7: [(0.5, 0.15)] + [(x, y) for y in (0.5, 0.82) for x in (0.2, 0.5, 0.8)],
    8: [(x, y) for y in (0.27, 0.73) for x in (0.14, 0.38, 0.62, 0.86)],
    9: [(x, y) for y in (0.18, 0.5, 0.82) for x in (0.2, 0.5, 0.8)],
}


def _stick(img: np.ndarray, centre: tuple[int, int], length: int, colour: tuple[int, int, int], tilt: float) -> None:
    """One bamboo stick: a rounded bar with a node band in the middle and at both ends."""
    cx, cy = centre
    dx, dy = int(np.sin(tilt) * length / 2), int(np.cos(tilt) * length / 2)
    cv2.line(img, (cx - dx, cy - dy), (cx + dx, cy + dy), colour, 9, cv2.LINE_AA)
    for t in (-1.0, 0.0, 1.0):
        px, py = int(cx + t * dx * 0.85), int(cy + t * dy * 0.85)
        cv2.line(img, (px - 6, py), (px + 6, py), IVORY, 2, cv2.LINE_AA)


def _sou(img: np.ndarray, n: int, red: bool) -> None:
    """Bamboo sticks; 1s is a bird (a body, a crest and a tail), as on real sets."""
    w, h = FACE_SIZE
    if n == 1:
        cv2.ellipse(img, (w // 2, h // 2 + 10), (30, 42), 0, 0, 360, GREEN, -1, cv2.LINE_AA)
        cv2.circle(img, (w // 2, h // 2 - 40), 16, RED, -1, cv2.LINE_AA)
        cv2.fillPoly(img, [np.array([[w // 2 - 30, h - 24], [w // 2, h // 2 + 40], [w // 2 + 30, h - 24]])], BLUE)
        cv2.line(img, (w // 2 - 12, h // 2 - 8), (w // 2 + 12, h // 2 + 28), IVORY, 3, cv2.LINE_AA)
        return
    ax, ay, aw, ah = 12, 14, w - 24, h - 28
    length = int(ah * (0.36 if n in (2, 3, 4, 5, 6, 8) else 0.26))
    for i, (px, py) in enumerate(_SOU_LAYOUT[n]):
        colour = RED if red or (n in (5, 7, 9) and i == len(_SOU_LAYOUT[n]) // 2 - (1 if n == 7 else 0)) else GREEN
        if n == 9 and i % 3 == 1:
            colour = RED if not red else BLUE
        tilt = 0.0 if n != 8 else (0.35 if i % 4 in (1,) else -0.35 if i % 4 == 2 else 0.0)
        _stick(img, (int(ax + px * aw), int(ay + py * ah)), length, colour, tilt)


def _man_glyph(img: np.ndarray, top: int, colour: tuple[int, int, int]) -> None:
    """A fixed stroke pattern standing for the character 'wan' (10,000), shared by every man tile."""
    w, _ = FACE_SIZE
    x0, x1 = 22, w - 22
    cv2.line(img, (x0, top), (x1, top), colour, 5, cv2.LINE_AA)
    cv2.line(img, ((x0 + x1) // 2 - 14, top - 10), ((x0 + x1) // 2 - 14, top + 8), colour, 4, cv2.LINE_AA)
    cv2.line(img, ((x0 + x1) // 2 + 14, top - 10), ((x0 + x1) // 2 + 14, top + 8), colour, 4, cv2.LINE_AA)
    cv2.rectangle(img, (x0 + 10, top + 14), (x1 - 10, top + 40), colour, 4, cv2.LINE_AA)
    cv2.line(img, (x0 + 10, top + 27), (x1 - 10, top + 27), colour, 3, cv2.LINE_AA)
    cv2.line(img, ((x0 + x1) // 2, top + 40), (x0 + 4, top + 70), colour, 5, cv2.LINE_AA)
    cv2.line(img, ((x0 + x1) // 2, top + 40), (x1 - 4, top + 70), colour, 5, cv2.LINE_AA)
    cv2.line(img, ((x0 + x1) // 2, top + 40), ((x0 + x1) // 2, top + 74), colour, 4, cv2.LINE_AA)


def _man(img: np.ndarray, n: int, red: bool) -> None:
    """A numeral (1..9, Hershey font) above the red 'wan' glyph; the red five's numeral is red."""
    w, _ = FACE_SIZE
    text = str(n)
    font, scale, thick = cv2.FONT_HERSHEY_DUPLEX, 2.2, 5
    (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
    cv2.putText(img, text, ((w - tw) // 2, 16 + th), font, scale, RED if red else BLACK, thick, cv2.LINE_AA)
    _man_glyph(img, 88, RED)


def _honour(img: np.ndarray, tile: str) -> None:
    """Winds as big letters over a bar; dragons as a frame (P), a green lattice (F) and a red 'centre' (C)."""
    w, h = FACE_SIZE
    if tile in "ESWN":
        font, scale, thick = cv2.FONT_HERSHEY_DUPLEX, 3.2, 8
        (tw, th), _ = cv2.getTextSize(tile, font, scale, thick)
        cv2.putText(img, tile, ((w - tw) // 2, (h + th) // 2 - 6), font, scale, BLACK, thick, cv2.LINE_AA)
        cv2.line(img, (28, h - 26), (w - 28, h - 26), BLACK, 4, cv2.LINE_AA)
    elif tile == "P":
        cv2.rectangle(img, (22, 28), (w - 22, h - 28), BLUE, 5, cv2.LINE_AA)
        cv2.rectangle(img, (32, 38), (w - 32, h - 38), BLUE, 2, cv2.LINE_AA)
    elif tile == "F":
        for k in range(3):
            y = 40 + k * 40
            cv2.line(img, (24, y), (w - 24, y), GREEN, 6, cv2.LINE_AA)
        cv2.line(img, (w // 2, 26), (w // 2, h - 24), GREEN, 6, cv2.LINE_AA)
        cv2.line(img, (30, h - 30), (w // 2, 90), GREEN, 5, cv2.LINE_AA)
        cv2.line(img, (w - 30, h - 30), (w // 2, 90), GREEN, 5, cv2.LINE_AA)
    elif tile == "C":
        cv2.rectangle(img, (24, 58), (w - 24, 112), RED, 7, cv2.LINE_AA)
        cv2.line(img, (w // 2, 24), (w // 2, h - 22), RED, 9, cv2.LINE_AA)
    else:
        raise ValueError(f"not an honour: {tile!r}")


def draw_face(tile: str) -> np.ndarray:
    """Draw one face (BGR, ``FACE_SIZE``) of ``tile`` in mjai notation, deterministically."""
    if tile not in TILE_NAMES:
        raise ValueError(f"unknown tile {tile!r}; expected one of {TILE_NAMES}")
    img = _body()
    red = tile.endswith("r")
    if tile[-1] in "mps" or red:
        n, suit = int(tile[0]), tile[1]
        {"m": _man, "p": _pin, "s": _sou}[suit](img, n, red)
    else:
        _honour(img, tile)
    return img


def draw_back() -> np.ndarray:
    """A tile back: a coloured field inside a thin ivory rim (the bottom layer of a two-layer tile)."""
    w, h = FACE_SIZE
    img = np.full((h, w, 3), IVORY, np.uint8)
    cv2.rectangle(img, (6, 6), (w - 7, h - 7), BACK_COLOUR, -1)
    cv2.rectangle(img, (0, 0), (w - 1, h - 1), EDGE, 3)
    return img


@lru_cache(maxsize=1)
def _drawn() -> TileSet:
    return TileSet("drawn", {t: draw_face(t) for t in TILE_NAMES}, draw_back())


def drawn_tile_set() -> TileSet:
    """The project's own 37 faces and back (cached: drawing them takes a few ms)."""
    return _drawn()


def _composite_rgba(rgba: np.ndarray, base: np.ndarray | None = None) -> np.ndarray:
    """Lay an RGBA artwork on an ivory body (or ``base``) and frame it like a tile top, at ``FACE_SIZE``."""
    w, h = FACE_SIZE
    art = cv2.resize(rgba, (w - 12, h - 12), interpolation=cv2.INTER_AREA)
    out = base.copy() if base is not None else np.full((h, w, 3), IVORY, np.uint8)
    roi = out[6 : h - 6, 6 : w - 6].astype(np.float32)
    if art.shape[2] == 4:
        alpha = art[..., 3:4].astype(np.float32) / 255.0
        roi = roi * (1 - alpha) + art[..., :3].astype(np.float32) * alpha
    else:
        roi = art[..., :3].astype(np.float32)
    out[6 : h - 6, 6 : w - 6] = np.clip(roi, 0, 255).astype(np.uint8)
    cv2.rectangle(out, (0, 0), (w - 1, h - 1), EDGE, 4)
    return out


def _read(path: Path) -> np.ndarray:
    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise ValueError(f"cannot read image {path}")
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    return img


def load_tile_set(directory: str | Path) -> TileSet:
    """Load a tile-set directory named by notation (``1m.png``, ``5mr.png``, ``E.png``) or FluffyStuff-style.

    Images with alpha are composited on an ivory body; opaque photos of a
    tile top are just resized to ``FACE_SIZE``. The back is ``back.png`` /
    ``Back.png`` when present, otherwise the drawn back. Every one of the 37
    faces must be present: a set with a hole would silently bias tests.
    """
    d = Path(directory)
    files = {p.stem: p for p in d.iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg", ".webp", ".bmp")}
    by_tile: dict[str, Path] = {}
    for stem, p in files.items():
        if stem in TILE_NAMES:
            by_tile[stem] = p
        elif stem in FLUFFY_NAMES:
            by_tile.setdefault(FLUFFY_NAMES[stem], p)
    missing = [t for t in TILE_NAMES if t not in by_tile]
    if missing:
        raise ValueError(f"tile set {d} lacks {', '.join(missing)}")
    base = None
    if "Front" in files:  # FluffyStuff's empty face gives its own tile body shading
        base = _composite_rgba(_read(files["Front"]))
    faces = {}
    for t in TILE_NAMES:
        img = _read(by_tile[t])
        if img.shape[2] == 4:
            faces[t] = _composite_rgba(img, base)
        else:
            faces[t] = cv2.resize(img, FACE_SIZE, interpolation=cv2.INTER_AREA)
    back_path = files.get("back") or files.get("Back")
    if back_path is not None:
        img = _read(back_path)
        back = _composite_rgba(img) if img.shape[2] == 4 else cv2.resize(img, FACE_SIZE, interpolation=cv2.INTER_AREA)
    else:
        back = draw_back()
    log.info("tile set %s: %d faces from %s", d.name, len(faces), d)
    return TileSet(d.name, faces, back)
