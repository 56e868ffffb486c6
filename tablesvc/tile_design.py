"""The project's own tile design: names, face size and where each pip and stick goes.

Two renderers draw this one design: the pages' SVG faces (``tablesvc/web/tiles.py``)
and the camera simulator's OpenCV faces (``hardware_sims/tile_art.py``). The layouts
and colour roles live here, once, so the two cannot drift apart; each renderer keeps
its own palette and strokes (vectors and pixels want different line widths). It sits
in ``tablesvc`` because dependencies flow downward: ``hardware_sims`` may import
``tablesvc``, never the reverse. Positions are fractions (x, y in 0..1) of the
area a renderer sets aside for the pips or sticks; colours are roles (``"red"``,
``"green"``, ``"blue"``) that a renderer maps to its own values.
"""

from __future__ import annotations

__all__ = [
    "FACE_SIZE",
    "PIN_COLOURS",
    "PIN_LAYOUT",
    "PIN_RADIUS",
    "SOU_LAYOUT",
    "TILE_NAMES",
    "sou_colour",
    "sou_length",
    "sou_tilt",
]

#: The 37 faces in mjai notation: 34 kinds then the red fives.
TILE_NAMES: tuple[str, ...] = (
    *(f"{n}m" for n in range(1, 10)),
    *(f"{n}p" for n in range(1, 10)),
    *(f"{n}s" for n in range(1, 10)),
    "E", "S", "W", "N", "P", "F", "C",
    "5mr", "5pr", "5sr",
)  # fmt: skip

#: Face size (width, height) in design units: 5 per mm of a 26 x 35 mm face.
FACE_SIZE: tuple[int, int] = (130, 175)

#: Pip positions per count, the standard layouts.
PIN_LAYOUT: dict[int, list[tuple[float, float]]] = {
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

#: Pip colour roles, in layout order: rows coloured so that 6, 7, 8 and 9 differ beyond their count.
PIN_COLOURS: dict[int, list[str]] = {
    1: ["green"],
    2: ["green", "blue"],
    3: ["blue", "red", "green"],
    4: ["blue", "green", "green", "blue"],
    5: ["blue", "green", "red", "green", "blue"],
    6: ["green", "green", "red", "red", "red", "red"],
    7: ["green"] * 3 + ["red"] * 4,
    8: ["blue"] * 8,
    9: ["blue"] * 3 + ["red"] * 3 + ["green"] * 3,
}

#: Pip radius per count, as a fraction of the pip area's width.
PIN_RADIUS: dict[int, float] = {1: 0.36, 2: 0.2, 3: 0.16, 4: 0.17, 5: 0.15, 6: 0.14, 7: 0.12, 8: 0.11, 9: 0.12}

#: Bamboo stick centres per count (1s is a bird, drawn apart).
SOU_LAYOUT: dict[int, list[tuple[float, float]]] = {
    2: [(0.5, 0.27), (0.5, 0.73)],
    3: [(0.5, 0.27), (0.3, 0.73), (0.7, 0.73)],
    4: [(0.3, 0.27), (0.7, 0.27), (0.3, 0.73), (0.7, 0.73)],
    5: [(0.25, 0.27), (0.75, 0.27), (0.5, 0.5), (0.25, 0.73), (0.75, 0.73)],
    6: [(x, y) for y in (0.27, 0.73) for x in (0.2, 0.5, 0.8)],
    7: [(0.5, 0.15)] + [(x, y) for y in (0.5, 0.82) for x in (0.2, 0.5, 0.8)],
    8: [(x, y) for y in (0.27, 0.73) for x in (0.14, 0.38, 0.62, 0.86)],
    9: [(x, y) for y in (0.18, 0.5, 0.82) for x in (0.2, 0.5, 0.8)],
}


def sou_length(n: int) -> float:
    """A stick's length as a fraction of the stick area's height: shorter where three rows must fit."""
    return 0.36 if n in (2, 3, 4, 5, 6, 8) else 0.26


def sou_colour(n: int, i: int, red: bool) -> str:
    """The colour role of stick ``i`` of ``n``s: green, a red centre stick on 5/7/9, a red middle column on 9."""
    colour = "red" if red or (n in (5, 7, 9) and i == len(SOU_LAYOUT[n]) // 2 - (1 if n == 7 else 0)) else "green"
    if n == 9 and i % 3 == 1:
        colour = "red" if not red else "blue"
    return colour


def sou_tilt(n: int, i: int) -> float:
    """The tilt (radians) of stick ``i`` of ``n``s: only 8s leans, its inner sticks in a V."""
    if n != 8:
        return 0.0
    return 0.35 if i % 4 == 1 else -0.35 if i % 4 == 2 else 0.0
