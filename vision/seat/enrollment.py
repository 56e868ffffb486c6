"""Whether the enrollment frames show the rows they are named as: a check by the packaged tile sets.

A seat camera is enrolled from frames of known rows (:data:`vision.seat.reader.ENROLL_ROWS`, one frame per
row, in order). A frame that shows another row than the one it is given as (rows stood in the wrong order or
swapped, a row stood right to left, a row one place on) would enroll every one of its tiles under another
kind's name, and the seat camera would then read that set wrong with confidence. Nothing in the club's own
set can tell, since the frames are all there is of it; the packaged sets the photo reader names tiles by
(``vision/models/photo_tiles.npz``, :func:`vision.photos.reader.load_tiles`: the common Japanese designs)
can, for any set that looks like them.

Each frame's crops are named by the packaged sets (their best kind, a red five as its plain five) and laid
against the row the frame is given as and against the other readings of it: every other given row as long as
it, each left to right and right to left, and the given row one place on either way along the rows' order.
A club's set the packaged sets do not know well gets some names wrong whatever the frame, so a frame is
judged on the whole row, never on a tile: it is **refused** only on clear evidence (another reading matches
at least half its tiles, and more of them than the given row by a quarter of the row, three tiles at least);
where the given row matches under half the tiles and nothing else matches clearly better, the frame is
enrolled with a **warning** that says what to check.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from vision.seat.kinds import kind_of

__all__ = ["RowCheck", "RowOrderError", "check_rows", "packaged_namer"]

log = logging.getLogger(__name__)


class RowOrderError(ValueError):
    """Enrollment frames that show other rows than the ones they are given as; the message says which frame
    looks like which row and what to do."""


@dataclass(frozen=True)
class RowCheck:
    """What the packaged sets make of one enrollment frame: ``frame`` (1-based), the row it is given as
    (``given``), how many of its ``tiles`` they name as that row's (``agree``), the best other reading
    (``other``, said in words) and how many tiles they name as that's (``other_agree``); ``refused`` on clear
    evidence that the frame shows the other reading; ``message`` what a club owner reads."""

    frame: int
    given: str
    tiles: int
    agree: int
    other: str | None
    other_agree: int
    refused: bool
    message: str


@lru_cache(maxsize=1)
def packaged_namer() -> Any:
    """The packaged tile sets (the photo reader's), loaded once; None where they are not installed."""
    from vision.photos.reader import load_tiles

    try:
        return load_tiles()
    except (FileNotFoundError, ValueError) as exc:
        log.warning("the packaged tile sets cannot be read (%s): enrollment rows are not checked", exc)
        return None


def _span(row: Sequence[str]) -> str:
    return f"{row[0]}..{row[-1]}" if len(row) > 1 else row[0]


def _readings(n: int, given: tuple[str, ...], rows: list[tuple[str, ...]],
              ) -> list[tuple[str, tuple[str | None, ...]]]:
    """The other readings of a frame given as ``given`` (``n`` tiles), among the distinct given ``rows``, said
    in words: each other row as long, left to right and right to left, and the given row one place on either
    way along the rows' order (a place past either end of the rows matches nothing)."""
    out: list[tuple[str, tuple[str | None, ...]]] = []
    for r, row in enumerate(rows):
        if len(row) != n:
            continue
        label = f"row {r + 1} ({_span(row)})"
        if row != given:
            out.append((label, row))
        back = tuple(reversed(row))
        if back != given:
            out.append((f"{label} stood right to left", back))
    if given in rows:
        seq: list[str] = [t for row in rows for t in row]
        start = sum(len(row) for row in rows[: rows.index(given)])
        for step, way in ((1, "on"), (-1, "back")):
            names = tuple(seq[i] if 0 <= i < len(seq) else None for i in range(start + step, start + step + n))
            shown = [t for t in names if t is not None]
            out.append((f"row {rows.index(given) + 1} one place {way} ({_span(shown)})", names))
    return out


def _agree(kinds: Sequence[int], names: Sequence[str | None]) -> int:
    return sum(name is not None and kind_of(name) == k for k, name in zip(kinds, names, strict=True))


def check_rows(crops: Sequence[Sequence[np.ndarray]], names: Sequence[Sequence[str]], namer: Any = None,
               embedded: np.ndarray | None = None) -> list[RowCheck]:
    """Each enrollment frame's check (module docstring): ``crops`` per frame, left to right, and the names it
    is given as; ``namer``: what names the crops (default: :func:`packaged_namer`). ``embedded``: the namer's
    embeddings of the crops, frame after frame (an embedding namer's ``embed_many``), where they were made
    already. Empty where there is no namer to check with."""
    namer = namer if namer is not None else packaged_namer()
    if namer is None:
        return []
    rows = list(dict.fromkeys(tuple(n) for n in names))
    flat = [c for frame in crops for c in frame]
    if not flat:
        best = []
    elif embedded is not None:
        best = [got[0] for got in namer.scores_of(embedded)]
    else:
        best = [got[0] for got in namer.scores_many(flat)]
    checks = []
    at = 0
    for f, (frame, given_names) in enumerate(zip(crops, names, strict=True)):
        given = tuple(given_names)
        n = len(frame)
        kinds = [kind_of(t) for t in best[at : at + n]]
        at += n
        agree = _agree(kinds, given)
        label = f"row {rows.index(given) + 1} ({_span(given)})"
        others = sorted(((_agree(kinds, alt), words) for words, alt in _readings(n, given, rows)),
                        key=lambda x: -x[0])
        other_agree, other = others[0] if others else (0, None)
        clear = other_agree >= n / 2 and other_agree - agree >= max(3, math.ceil(n / 4))
        if clear:
            message = (f"enrollment frame {f + 1} is given as {label} but looks like {other}: the packaged tile "
                       f"sets name {other_agree} of its {n} tiles as that and {agree} as {label}")
        elif agree < n / 2:
            message = (f"enrollment frame {f + 1}: the packaged tile sets name only {agree} of its {n} tiles as "
                       f"{label}" + (f" ({other_agree} as {other})" if other_agree else "")
                       + "; a set unlike the common Japanese ones does that, so it is enrolled as given: if the "
                       f"frame does not show {' '.join(given)} left to right, stand the row so and enroll again")
        else:
            continue
        checks.append(RowCheck(f + 1, label, n, agree, other, other_agree, clear, message))
    return checks
