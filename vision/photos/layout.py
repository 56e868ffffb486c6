"""Reading order of the tiles found in a photo: rows top to bottom, each left to right, melds apart.

A player lays a winning hand as a row, the melds set apart at its right (or on a row of their own) and
the winning tile a little apart; the photo reader reports the tiles as the player reads them and the
groups the gaps make, so that :mod:`tablesvc.photo_hand` can tell the concealed part, the melds and the
winning tile apart. Pure geometry on boxes: no pixels, no classes.

- **Rows**: boxes are taken by their centres from top to bottom; a box joins the row whose centre line
  lies within half a tile's height of its own centre, else it starts a row.
- **Askew photos**: where the rows run at an angle (:func:`row_angle`), the centres are turned level
  first and the rows read in their own frame.
- **Groups**: within a row, a gap wider than the row's usual gap (the median) by ``gap_fraction`` of a
  tile's width starts a new group (tiles laid touching, as in a hand, have the same small gap between
  their boxes; a meld or the winning tile pushed apart has a wider one). The tile's width is the row's
  median short side, so a meld's sideways tile does not widen the threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

__all__ = ["TILE_PROPORTIONS", "Layout", "reading_order", "row_angle", "tile_shaped"]

Box = tuple[int, int, int, int]

#: height/width a tile's box can have in a true picture: upright 1.2-1.45, lying sideways 0.7-0.8, standing
#: seen from above up to ~1.8, sideways seen at a slant down to ~0.5. Beyond it a box is no tile, or the
#: picture was scaled out of its proportions (a screenshot or an app's crop squeezed into a square).
TILE_PROPORTIONS = (0.45, 2.2)


def tile_shaped(height: float, width: float) -> bool:
    """Whether a box ``height`` by ``width`` has a tile's proportions (:data:`TILE_PROPORTIONS`)."""
    return TILE_PROPORTIONS[0] <= height / max(width, 1e-6) <= TILE_PROPORTIONS[1]


@dataclass(frozen=True)
class Layout:
    """``groups``: indices into the boxes given, group by group in reading order; ``rows``: the row of each
    group (0 = top)."""

    groups: list[list[int]]
    rows: list[int]

    @property
    def order(self) -> list[int]:
        return [i for g in self.groups for i in g]


def row_angle(boxes: Sequence[Box]) -> float:
    """The direction the rows run in, in degrees (0: left to right; positive: going down to the right).

    Tiles of a row touch their neighbours, so the vector from each box's centre to its nearest neighbour's
    runs along the row; their mean direction (of the doubled angles: a vector and its opposite agree) is
    the rows'. 0 with fewer than three boxes, or where the neighbours lie in no one direction."""
    if len(boxes) < 3:
        return 0.0
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    c = np.stack([(b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2], axis=1)
    d = np.linalg.norm(c[:, None] - c[None], axis=2)
    np.fill_diagonal(d, np.inf)
    v = c[d.argmin(axis=1)] - c
    theta = np.arctan2(v[:, 1], v[:, 0])
    s, c = np.sin(2 * theta).mean(), np.cos(2 * theta).mean()
    if np.hypot(s, c) < 0.5:  # neighbours in every direction (a grid whose rows touch): no one direction
        return 0.0
    return float(np.degrees(np.arctan2(s, c) / 2))


def reading_order(boxes: Sequence[Box], gap_fraction: float = 0.35, level_below: float = 12.0,
                  steepest: float = 75.0) -> Layout:
    """Rows, then left to right, then groups split by gaps (module docstring).

    A photo taken askew, whose rows run at between ``level_below`` and ``steepest`` degrees
    (:func:`row_angle`), is read in the rows' own frame: centres turned level, rows found as in a level
    photo, and groups split where the step from one centre to the next is longer than the row's usual
    step by ``gap_fraction`` of a tile (an askew tile's box is no measure of its edges)."""
    if not boxes:
        return Layout([], [])
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    cx, cy = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2
    angle = row_angle(boxes)
    askew = level_below <= abs(angle) <= steepest
    if askew:
        a = np.radians(angle)
        cx, cy = cx * np.cos(a) + cy * np.sin(a), -cx * np.sin(a) + cy * np.cos(a)
    tile_h = float(np.median(np.maximum(w, h)))
    rows: list[list[int]] = []
    centres: list[float] = []
    for i in np.argsort(cy, kind="stable"):
        for r, c in enumerate(centres):
            if abs(cy[i] - c) <= tile_h / 2:
                rows[r].append(int(i))
                centres[r] = float(np.median(cy[rows[r]]))
                break
        else:
            rows.append([int(i)])
            centres.append(float(cy[i]))
    groups: list[list[int]] = []
    group_rows: list[int] = []
    for r in np.argsort(centres, kind="stable"):
        row = sorted(rows[r], key=lambda i: cx[i])
        tile_w = float(np.median(np.minimum(w[row], h[row])))
        if askew:
            gaps = [cx[n] - cx[p] for p, n in pairwise(row)]
        else:
            gaps = [max(0.0, b[n, 0] - b[p, 2]) for p, n in pairwise(row)]
        usual = float(np.median(gaps)) if gaps else 0.0
        current = [row[0]]
        for nxt, gap in zip(row[1:], gaps, strict=True):
            if gap > usual + gap_fraction * tile_w:
                groups.append(current)
                group_rows.append(int(r))
                current = []
            current.append(nxt)
        groups.append(current)
        group_rows.append(int(r))
    # rows numbered top to bottom in reading order
    order = {r: k for k, r in enumerate(dict.fromkeys(group_rows))}
    return Layout(groups, [order[r] for r in group_rows])
