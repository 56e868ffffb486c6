"""Tile faces for the pages: the project's own drawing as SVG, crisp at any size.

The same design as the camera simulator's drawn set (``hardware_sims/tile_art.py``):
pips in the standard layouts for pin, bamboo sticks (a bird for 1s) for sou, a
numeral over the red 'wan' glyph for man, big letters for winds, a frame, a
lattice and a centre bar for the dragons, red for the red fives. The layouts
and colour roles both draw come from :mod:`tablesvc.tile_design` (``tablesvc``
never depends on ``hardware_sims``, so the shared part lives down here); this
module draws them as vectors, so a tile stays sharp on a 1080p stream at any zoom. Faces are 130 x 175 user units
(the 26:35 face), names in mjai notation (``5mr`` a red five).
"""

from __future__ import annotations

import math
from functools import lru_cache

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

__all__ = ["TILE_NAMES", "back_svg", "face_svg"]

W, H = FACE_SIZE
IVORY = "#f4eee2"
EDGE = "#bab4aa"
BLACK = "#1e1e1e"
RED = "#cd2828"
GREEN = "#1e8c3c"
BLUE = "#14509a"

_ROLE = {"red": RED, "green": GREEN, "blue": BLUE}
_FONT = "font-family='DejaVu Sans, Arial, Helvetica, sans-serif' font-weight='bold' text-anchor='middle'"


def _svg(body: str) -> str:
    return (f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {W} {H}' width='{W}' height='{H}'>"
            f"{body}</svg>")


def _frame() -> str:
    return (f"<rect x='2' y='2' width='{W - 4}' height='{H - 4}' rx='12' fill='{IVORY}' stroke='{EDGE}' "
            f"stroke-width='4'/><rect x='7' y='7' width='{W - 14}' height='{H - 14}' rx='9' fill='none' "
            "stroke='#e2d8c8' stroke-width='2'/>")


def _pin(n: int, red: bool) -> str:
    ax, ay, aw, ah = 10, 12, W - 20, H - 24
    r = PIN_RADIUS[n] * aw
    out = []
    for i, (px, py) in enumerate(PIN_LAYOUT[n]):
        cx, cy = ax + px * aw, ay + py * ah
        colour = RED if red else _ROLE[PIN_COLOURS[n][i]]
        out.append(f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='{r:.1f}' fill='{colour}'/>"
                   f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='{r * 0.6:.1f}' fill='none' stroke='{IVORY}' "
                   f"stroke-width='{max(1.5, r / 6):.1f}'/>"
                   f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='{r * 0.25:.1f}' fill='{colour}'/>")
    return "".join(out)


def _stick(cx: float, cy: float, length: float, colour: str, tilt: float) -> str:
    dx, dy = math.sin(tilt) * length / 2, math.cos(tilt) * length / 2
    out = [f"<line x1='{cx - dx:.1f}' y1='{cy - dy:.1f}' x2='{cx + dx:.1f}' y2='{cy + dy:.1f}' stroke='{colour}' "
           "stroke-width='10' stroke-linecap='round'/>"]
    for t in (-1.0, 0.0, 1.0):
        px, py = cx + t * dx * 0.85, cy + t * dy * 0.85
        out.append(f"<line x1='{px - 6:.1f}' y1='{py:.1f}' x2='{px + 6:.1f}' y2='{py:.1f}' stroke='{IVORY}' "
                   "stroke-width='2.2'/>")
    return "".join(out)


def _sou(n: int, red: bool) -> str:
    if n == 1:  # a bird: body, crest, tail
        return (f"<polygon points='{W / 2 - 30},{H - 24} {W / 2},{H / 2 + 40} {W / 2 + 30},{H - 24}' fill='{BLUE}'/>"
                f"<ellipse cx='{W / 2}' cy='{H / 2 + 10}' rx='30' ry='42' fill='{GREEN}'/>"
                f"<circle cx='{W / 2}' cy='{H / 2 - 40}' r='16' fill='{RED}'/>"
                f"<line x1='{W / 2 - 12}' y1='{H / 2 - 8}' x2='{W / 2 + 12}' y2='{H / 2 + 28}' stroke='{IVORY}' "
                "stroke-width='3'/>")
    ax, ay, aw, ah = 12, 14, W - 24, H - 28
    length = ah * sou_length(n)
    out = []
    for i, (px, py) in enumerate(SOU_LAYOUT[n]):
        out.append(_stick(ax + px * aw, ay + py * ah, length, _ROLE[sou_colour(n, i, red)], sou_tilt(n, i)))
    return "".join(out)


def _man(n: int, red: bool) -> str:
    """A numeral above the red 'wan' glyph (a fixed stroke pattern, as the simulator draws it)."""
    x0, x1, top, mid = 22, W - 22, 96, W / 2
    c = RED
    glyph = (
        f"<g stroke='{c}' stroke-linecap='round' fill='none'>"
        f"<line x1='{x0}' y1='{top}' x2='{x1}' y2='{top}' stroke-width='6'/>"
        f"<line x1='{mid - 14}' y1='{top - 10}' x2='{mid - 14}' y2='{top + 8}' stroke-width='5'/>"
        f"<line x1='{mid + 14}' y1='{top - 10}' x2='{mid + 14}' y2='{top + 8}' stroke-width='5'/>"
        f"<rect x='{x0 + 10}' y='{top + 14}' width='{x1 - x0 - 20}' height='24' stroke-width='5'/>"
        f"<line x1='{x0 + 10}' y1='{top + 26}' x2='{x1 - 10}' y2='{top + 26}' stroke-width='3.5'/>"
        f"<line x1='{mid}' y1='{top + 38}' x2='{x0 + 4}' y2='{top + 64}' stroke-width='6'/>"
        f"<line x1='{mid}' y1='{top + 38}' x2='{x1 - 4}' y2='{top + 64}' stroke-width='6'/>"
        f"<line x1='{mid}' y1='{top + 38}' x2='{mid}' y2='{top + 66}' stroke-width='5'/></g>"
    )
    numeral = f"<text x='{mid}' y='78' font-size='78' {_FONT} fill='{RED if red else BLACK}'>{n}</text>"
    return numeral + glyph


def _honour(tile: str) -> str:
    if tile in "ESWN":
        return (f"<text x='{W / 2}' y='{H / 2 + 30}' font-size='92' {_FONT} fill='{BLACK}'>{tile}</text>"
                f"<line x1='28' y1='{H - 24}' x2='{W - 28}' y2='{H - 24}' stroke='{BLACK}' stroke-width='5'/>")
    if tile == "P":
        return (f"<rect x='22' y='28' width='{W - 44}' height='{H - 56}' fill='none' stroke='{BLUE}' "
                f"stroke-width='6'/><rect x='32' y='38' width='{W - 64}' height='{H - 76}' fill='none' "
                f"stroke='{BLUE}' stroke-width='2.5'/>")
    if tile == "F":
        lines = "".join(f"<line x1='24' y1='{40 + k * 40}' x2='{W - 24}' y2='{40 + k * 40}'/>" for k in range(3))
        return (f"<g stroke='{GREEN}' stroke-width='7' stroke-linecap='round'>{lines}"
                f"<line x1='{W / 2}' y1='26' x2='{W / 2}' y2='{H - 24}'/>"
                f"<line x1='30' y1='{H - 30}' x2='{W / 2}' y2='90' stroke-width='6'/>"
                f"<line x1='{W - 30}' y1='{H - 30}' x2='{W / 2}' y2='90' stroke-width='6'/></g>")
    if tile == "C":
        return (f"<rect x='24' y='58' width='{W - 48}' height='54' fill='none' stroke='{RED}' stroke-width='8'/>"
                f"<line x1='{W / 2}' y1='24' x2='{W / 2}' y2='{H - 22}' stroke='{RED}' stroke-width='10' "
                "stroke-linecap='round'/>")
    raise ValueError(f"not an honour: {tile!r}")


@lru_cache(maxsize=64)
def face_svg(tile: str) -> str:
    """One face in mjai notation (``5mr`` a red five) as an SVG document."""
    if tile not in TILE_NAMES:
        raise ValueError(f"unknown tile {tile!r}; expected one of {', '.join(TILE_NAMES)}")
    red = tile.endswith("r")
    if tile[-1] in "mps" or red:
        n, suit = int(tile[0]), tile[1]
        body = {"m": _man, "p": _pin, "s": _sou}[suit](n, red)
    else:
        body = _honour(tile)
    return _svg(_frame() + body)


@lru_cache(maxsize=1)
def back_svg() -> str:
    """A tile back: an orange field in an ivory rim (face-down dora indicators, concealed kans)."""
    return _svg(f"<rect x='2' y='2' width='{W - 4}' height='{H - 4}' rx='12' fill='{IVORY}' stroke='{EDGE}' "
                f"stroke-width='4'/><rect x='9' y='9' width='{W - 18}' height='{H - 18}' rx='8' fill='#d77828'/>")
