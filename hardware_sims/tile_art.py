"""Tile faces for the camera simulator: the project's own drawing and tile-set directories.

The simulator must not depend on one artwork, because real tile sets differ
and the classifier is enrolled per set. So there are two sources of faces:

- :func:`drawn_tile_set` draws all 37 faces (34 kinds + three red fives) with
  OpenCV primitives only: pips for pin, bamboo sticks for sou, a numeral
  over a character-like glyph for man, letters and strokes for honours, red
  for the red fives. It is deterministic (no randomness, fixed fonts), so a
  test or a benchmark renders the same pixels every time.
- :func:`digits_tile_set` draws a set unlike the Japanese designs (a numeral and the suit's letter, honours
  by their letter): a club's set that readers trained on the common designs cannot name; and
  :func:`mirrored_tile_set` mirrors any set left to right (one they name partly wrong);
- :func:`load_tile_set` reads a directory of face images, either named by
  notation (``1m.png`` .. ``5mr.png``, ``E.png`` ..) or with the FluffyStuff
  file names (``Man1.png``, ``Pin5-Dora.png``, ``Ton.png`` ...), whose RGBA
  artwork is composited on an ivory tile body with a border.

Faces are BGR uint8 images of the whole top surface of a tile (body margin
included) in the 26:35 aspect, ``FACE_SIZE`` pixels (w, h), top up. The
names, the face size and the pip and stick layouts come from
:mod:`tablesvc.tile_design`, which the pages' SVG faces draw as well.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from tablesvc.tile_design import (
    FACE_SIZE,
    PIN_COLOURS,
    PIN_LAYOUT,
    PIN_RADIUS,
    SOU_LAYOUT,
    TILE_NAMES,
    sou_colour,
    sou_length,
    sou_tilt,
)

__all__ = [
    "FACE_SIZE",
    "FLUFFY_NAMES",
    "TILE_NAMES",
    "TileSet",
    "digits_tile_set",
    "draw_back",
    "draw_face",
    "drawn_tile_set",
    "load_tile_set",
    "mirrored_tile_set",
]

log = logging.getLogger(__name__)

#: FluffyStuff file stem -> mjai name.
FLUFFY_NAMES: dict[str, str] = {
    **{f"Man{n}": f"{n}m" for n in range(1, 10)},
    **{f"Pin{n}": f"{n}p" for n in range(1, 10)},
    **{f"Sou{n}": f"{n}s" for n in range(1, 10)},
    "Man5-Dora": "5mr", "Pin5-Dora": "5pr", "Sou5-Dora": "5sr",
    "Ton": "E", "Nan": "S", "Shaa": "W", "Pei": "N", "Haku": "P", "Hatsu": "F", "Chun": "C",
}  # fmt: skip

IVORY = (226, 238, 244)
EDGE = (170, 180, 186)
BLACK = (30, 30, 30)
RED = (40, 40, 205)
GREEN = (60, 130, 30)
BLUE = (150, 80, 20)
BACK_COLOUR = (40, 120, 215)  # orange-ish back, like many automatic-table sets
_ROLE = {"red": RED, "green": GREEN, "blue": BLUE}  # the design's colour roles in BGR


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


def _pin(img: np.ndarray, n: int, red: bool) -> None:
    """Circles in the standard layouts; rows coloured so that 6, 7, 8 and 9 differ beyond their count."""
    w, h = FACE_SIZE
    ax, ay, aw, ah = 10, 12, w - 20, h - 24
    r = int(PIN_RADIUS[n] * aw)
    for i, (px, py) in enumerate(PIN_LAYOUT[n]):
        c = (int(ax + px * aw), int(ay + py * ah))
        colour = RED if red else _ROLE[PIN_COLOURS[n][i]]
        cv2.circle(img, c, r, colour, -1, cv2.LINE_AA)
        cv2.circle(img, c, max(2, int(r * 0.6)), IVORY, max(1, r // 6), cv2.LINE_AA)
        cv2.circle(img, c, max(1, int(r * 0.25)), colour, -1, cv2.LINE_AA)


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
    length = int(ah * sou_length(n))
    for i, (px, py) in enumerate(SOU_LAYOUT[n]):
        _stick(img, (int(ax + px * aw), int(ay + py * ah)), length, _ROLE[sou_colour(n, i, red)], sou_tilt(n, i))


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


def random_back(rng: random.Random) -> np.ndarray:
    """A tile back of a random colour with a darker rim, half of them with a printed mark: the backs a
    recogniser must learn are no face (training/train_embedding.py, training/not_tiles.py)."""
    colour = tuple(rng.randint(0, 255) for _ in range(3))
    img = np.full((160, 120, 3), colour, np.uint8)
    if rng.random() < 0.5:  # a printed pattern or logo on some backs
        ink = tuple(rng.randint(0, 255) for _ in range(3))
        cv2.circle(img, (60, 80), rng.randint(10, 45), ink, rng.choice([-1, 3]))
    rim = tuple(int(c * 0.8) for c in colour)
    cv2.rectangle(img, (0, 0), (119, 159), rim, 6)
    return img


@lru_cache(maxsize=1)
def _drawn() -> TileSet:
    return TileSet("drawn", {t: draw_face(t) for t in TILE_NAMES}, draw_back())


def drawn_tile_set() -> TileSet:
    """The project's own 37 faces and back (cached: drawing them takes a few ms)."""
    return _drawn()


SUIT_INK = {"m": (30, 30, 160), "p": (140, 60, 20), "s": (40, 120, 30)}


@lru_cache(maxsize=1)
def digits_tile_set() -> TileSet:
    """37 faces that show a numeral in the suit's colour and the suit's letter (honours: their letter, red fives
    in red), nothing of the Japanese designs: for what must hold of a set the packaged readers cannot name."""
    w, h = FACE_SIZE
    faces = {}
    for t in TILE_NAMES:
        face = np.full((h, w, 3), IVORY, np.uint8)
        cv2.rectangle(face, (0, 0), (w - 1, h - 1), EDGE, 4)
        big, small, ink = (t[0], t[1], SUIT_INK[t[1]]) if t[0].isdigit() else (t, "", BLACK)
        ink = RED if t.endswith("r") else ink
        cv2.putText(face, big, (w // 5, int(h * 0.62)), cv2.FONT_HERSHEY_SIMPLEX, w / 40, ink, w // 12, cv2.LINE_AA)
        cv2.putText(face, small, (int(w * 0.55), int(h * 0.9)), cv2.FONT_HERSHEY_SIMPLEX, w / 90, ink, w // 25,
                    cv2.LINE_AA)
        faces[t] = face
    return TileSet("digits", faces, draw_back())


def mirrored_tile_set(tiles: TileSet) -> TileSet:
    """``tiles`` mirrored left to right: still 37 distinct faces, which a reader of the usual designs names partly
    wrong (a mirrored 2m looks like its 3m, a mirrored S like an E)."""
    return TileSet(f"{tiles.name}-mirrored", {t: np.ascontiguousarray(f[:, ::-1]) for t, f in tiles.faces.items()},
                   tiles.back)


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
