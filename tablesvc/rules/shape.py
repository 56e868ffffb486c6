"""The shape of a hand: shanten, complete or not, waits. The one wrapper of the ``mahjong`` package's hand shape.

The engine (riichi needs a ready hand, tenpai shown at a draw, a kan after
riichi that keeps the hand), the importers' hand tracker
(:mod:`tablesvc.formats.tracker`) and the game generator
(:mod:`hardware_sims.generator`) all ask the same questions of a set of
concealed tiles; they ask them here. Answers are the package's own
(``Shanten``, ``Agari``, ``HandDivider``): they match the online servers on
real hands. :mod:`tablesvc.analysis` answers the same questions from its own
tables where it must answer many of them per event (the package's shanten
takes 70-400 us a hand).

Tiles are either :class:`~tablesvc.tiles.Tile` sequences or 34-count arrays
(``counts``); the ``*_counts`` functions take the latter and never change it.
"""

from __future__ import annotations

from collections.abc import Sequence

from mahjong.agari import Agari
from mahjong.hand_calculating.divider import HandDivider
from mahjong.shanten import Shanten

from tablesvc.tiles import Tile, tiles_to_34

__all__ = [
    "divide_counts",
    "is_complete",
    "is_complete_counts",
    "is_tenpai",
    "shanten",
    "shanten_counts",
    "waits",
    "waits_counts",
]

_SHANTEN = Shanten()
_DIVIDER = HandDivider()


def shanten_counts(counts: Sequence[int]) -> int:
    """Tiles from ready (0) or complete (-1): the least of standard, seven pairs and thirteen orphans."""
    return _SHANTEN.calculate_shanten(counts)


def shanten(tiles: Sequence[Tile]) -> int:
    return _SHANTEN.calculate_shanten(tiles_to_34(tiles))


def is_complete_counts(counts: Sequence[int]) -> bool:
    """Sets and a pair, seven pairs or thirteen orphans (concealed part: melds already set aside)."""
    return Agari.is_agari(counts)


def is_complete(tiles: Sequence[Tile]) -> bool:
    return Agari.is_agari(tiles_to_34(tiles))


def waits_counts(counts: Sequence[int]) -> frozenset[int]:
    """Kinds that complete these concealed tiles, less any kind they hold all four of (a fifth is no wait)."""
    work = list(counts)
    found = set()
    for kind in range(34):
        if work[kind] >= 4:
            continue
        work[kind] += 1
        if Agari.is_agari(work):
            found.add(kind)
        work[kind] -= 1
    return frozenset(found)


def waits(tiles: Sequence[Tile]) -> frozenset[int]:
    return waits_counts(tiles_to_34(tiles))


def is_tenpai(tiles: Sequence[Tile]) -> bool:
    """Ready: one tile from winning, on a tile that can still come (3.4.2: not only on one's own fourth).

    For 3n+1 tiles that is a wait existing: any kind that completes the hand makes its shanten 0, so the 34
    agari checks (about 20 us) answer alone, where the package's shanten takes 70-400 us."""
    return bool(waits_counts(tiles_to_34(tiles)))


def divide_counts(counts: Sequence[int]) -> list[list[list[int]]]:
    """Every reading of a complete hand as sets and a pair (each set a list of kinds)."""
    return _DIVIDER.divide_hand(list(counts))
