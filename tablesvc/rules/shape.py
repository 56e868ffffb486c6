"""The shape of a hand: shanten, complete or not, waits. The one wrapper of the ``mahjong`` package's hand shape.

The engine (riichi needs a ready hand, tenpai shown at a draw, a kan after
riichi that keeps the hand), the importers' hand tracker
(:mod:`tablesvc.formats.tracker`) and the game generator
(:mod:`hardware_sims.generator`) all ask the same questions of a set of
concealed tiles; they ask them here. Answers are the package's own
(``Shanten``, ``Agari``, ``HandDivider``): they match the online servers on
real hands. Waits (and so tenpai) are read from per-suit shapes instead of 34
calls of the package's agari check (about 85 us a hand against 15, asked at every
riichi, furiten check and exhaustive draw); the tests hold them equal to it.
:mod:`tablesvc.analysis` answers the same questions from its own
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
    """Kinds that complete these concealed tiles, less any kind they hold all four of (a fifth is no wait).

    The package's agari check on each of the 34 kinds plus one (about 85 us a hand) answers this, exactly;
    the engine asks it at every riichi, furiten check and exhaustive draw, so it is answered here from the
    same shapes read per suit (:func:`_suit_forms`, remembered per suit pattern): only a suit whose count
    can become sets or sets and the pair is tried, and the others are read once. Seven pairs and thirteen
    orphans are counted directly (about 15 us). The tests compare it with the package's check on hands of the
    shared recorded games and on random ones."""
    parts = (tuple(counts[0:9]), tuple(counts[9:18]), tuple(counts[18:27]))
    honours = tuple(counts[27:34])
    forms = [_suit_forms(parts[0]), _suit_forms(parts[1]), _suit_forms(parts[2]), _honour_forms(honours)]
    found: set[int] = set()
    for p in range(4):
        # the other three parts: all sets, or all sets but one with the pair
        others = [forms[q] for q in range(4) if q != p]
        all_sets = others[0] & others[1] & others[2] & _SETS
        one_pair = ((others[0] & _PAIR and others[1] & others[2] & _SETS)
                    or (others[1] & _PAIR and others[0] & others[2] & _SETS)
                    or (others[2] & _PAIR and others[0] & others[1] & _SETS))
        if not all_sets and not one_pair:
            continue
        need = (_PAIR if all_sets else 0) | (_SETS if one_pair else 0)
        if p < 3:
            pattern = list(parts[p])
            if sum(pattern) % 3 == 0:
                continue  # one more tile leaves a single over
            for i in range(9):
                if pattern[i] >= 4:
                    continue
                pattern[i] += 1
                if _suit_forms(tuple(pattern)) & need:
                    found.add(p * 9 + i)
                pattern[i] -= 1
        else:
            pattern = list(honours)
            for i in range(7):
                if pattern[i] >= 4:
                    continue
                pattern[i] += 1
                if _honour_forms(tuple(pattern)) & need:
                    found.add(27 + i)
                pattern[i] -= 1
    if sum(counts) == 13:
        pairs = singles = 0
        single = -1
        for k in range(34):
            c = counts[k]
            if c == 2:
                pairs += 1
            elif c == 1:
                singles += 1
                single = k
        if pairs == 6 and singles == 1:
            found.add(single)  # seven pairs
        product = 1
        for k in _ORPHANS:
            product *= counts[k]
        if product == 1:
            found.update(_ORPHANS)  # thirteen orphans, thirteen-sided
        elif product == 0:
            missing = [k for k in _ORPHANS if counts[k] == 0]
            if len(missing) == 1:
                rest = list(counts)
                rest[missing[0]] += 1
                if _orphans_product(rest) == 2:
                    found.add(missing[0])
    return frozenset(found)


_SETS = 1  # the part is sets alone
_PAIR = 2  # the part is sets and one pair
_ORPHANS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)
_SUIT_FORMS: dict[tuple[int, ...], int] = {(0,) * 9: _SETS}


def _orphans_product(counts: Sequence[int]) -> int:
    product = 1
    for k in _ORPHANS:
        product *= counts[k]
    return product


def _suit_forms(pattern: tuple[int, ...]) -> int:
    """How one suit's nine counts read: :data:`_SETS`, :data:`_PAIR`, both bits or neither."""
    known = _SUIT_FORMS.get(pattern)
    if known is not None:
        return known
    n = sum(pattern)
    forms = 0
    if n % 3 == 0:
        forms = _SETS if _all_sets(list(pattern)) else 0
    elif n % 3 == 2:
        for i in range(9):
            if pattern[i] >= 2:
                rest = list(pattern)
                rest[i] -= 2
                if _all_sets(rest):
                    forms = _PAIR
                    break
    _SUIT_FORMS[pattern] = forms
    return forms


def _all_sets(rest: list[int]) -> bool:
    """Nine counts made of triplets and runs alone (the lowest tile is in a triplet or starts a run)."""
    i = 0
    while i < 9:
        c = rest[i]
        if c == 0:
            i += 1
            continue
        if c >= 3:
            # a lowest tile held three or four times: a triplet, or three runs from it (the same tiles)
            rest[i] -= 3
            continue
        if i > 6 or rest[i + 1] < c or rest[i + 2] < c:
            return False
        rest[i] = 0
        rest[i + 1] -= c
        rest[i + 2] -= c
    return True


def _honour_forms(pattern: tuple[int, ...]) -> int:
    pairs = 0
    for c in pattern:
        if c == 2:
            pairs += 1
        elif c not in (0, 3):
            return 0
    return _SETS if pairs == 0 else _PAIR if pairs == 1 else 0


def waits(tiles: Sequence[Tile]) -> frozenset[int]:
    return waits_counts(tiles_to_34(tiles))


def is_tenpai(tiles: Sequence[Tile]) -> bool:
    """Ready: one tile from winning, on a tile that can still come (3.4.2: not only on one's own fourth).

    For 3n+1 tiles that is a wait existing: any kind that completes the hand makes its shanten 0, so the
    waits (:func:`waits_counts`, about 15 us) answer alone, where the package's shanten takes 70-400 us."""
    return bool(waits_counts(tiles_to_34(tiles)))


def divide_counts(counts: Sequence[int]) -> list[list[list[int]]]:
    """Every reading of a complete hand as sets and a pair (each set a list of kinds)."""
    return _DIVIDER.divide_hand(list(counts))
