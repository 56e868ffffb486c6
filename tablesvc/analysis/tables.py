"""Shanten from per-suit tables: the many shanten questions of a live analysis, answered in microseconds.

The ``mahjong`` package's shanten (:func:`tablesvc.rules.shape.shanten_counts`)
searches every reading of the whole hand: 70-400 us a hand on one core. A
seat's tiles that improve its hand (ukeire) ask it up to 34 times, after every
event that changes the hand, which is too slow for a live broadcast (all four
seats within 1 ms). Here each suit's nine counts are read once into the
most partial sets (pairs, two of a run) it can hold beside each number of sets
and pair or none: a vector of ten numbers, kept in a table that fills as
suits are met. Few vectors exist (a few hundred against hundreds of thousands
of suit patterns), so combining the four parts of a hand with the standard
formula ``8 - 2*sets - partial - pair`` (at most four blocks besides the
pair) is remembered per pair of vectors too: a hand's shanten is then a
handful of table look-ups, about 3 us. Seven pairs and thirteen orphans are
counted directly.

A hand holding four of a kind goes to the package: its shanten counts a wait
on a kind held four times as impossible, which the formula alone does not;
the tests compare this module with the package on every state of the shared
recorded games.
"""

from __future__ import annotations

from collections.abc import Sequence

from tablesvc.rules.shape import shanten_counts as package_shanten

__all__ = ["TERMINALS_HONOURS", "fast_shanten", "suit_vector"]

TERMINALS_HONOURS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)
_CAP = 4  # more than four sets or partial sets never count
_NONE = -1
Vector = tuple[int, ...]
"""Index ``sets * 2 + pair``: the most partial sets beside that many sets and pair (0/1), or -1 (impossible)."""

_EMPTY: Vector = (0,) + (_NONE,) * 9
_VECTORS: dict[tuple[int, ...], Vector] = {(0,) * 9: _EMPTY}
_CONV: dict[tuple[Vector, Vector], Vector] = {}
_BEST: dict[tuple[Vector, int], int] = {}
_HONOURS: dict[tuple[int, ...], Vector] = {}
# each way to use the lowest tile: (tiles taken as offsets from it, sets, partial sets, pair)
_MOVES = (((0, 0, 0), 1, 0, 0), ((0, 1, 2), 1, 0, 0), ((0, 0), 0, 0, 1), ((0, 0), 0, 1, 0), ((0, 1), 0, 1, 0),
          ((0, 2), 0, 1, 0), ((0,), 0, 0, 0))


def suit_vector(pattern: tuple[int, ...]) -> Vector:
    """The vector of one suit's nine counts (see :data:`Vector`)."""
    v = _VECTORS.get(pattern)
    if v is not None:
        return v
    i = 0
    while pattern[i] == 0:
        i += 1
    best = [_NONE] * 10
    for offsets, dm, dt, dp in _MOVES:
        if i + offsets[-1] > 8:
            continue
        rest = list(pattern)
        ok = True
        for o in offsets:
            rest[i + o] -= 1
            if rest[i + o] < 0:
                ok = False
        if not ok:
            continue
        sub = suit_vector(tuple(rest))
        for idx in range(10):
            t = sub[idx]
            if t < 0:
                continue
            m, p = divmod(idx, 2)
            m += dm
            p += dp
            if m > _CAP or p > 1:
                continue
            t = min(t + dt, _CAP)
            j = m * 2 + p
            if t > best[j]:
                best[j] = t
    v = tuple(best)
    _VECTORS[pattern] = v
    return v


def _conv(a: Vector, b: Vector) -> Vector:
    key = (a, b)
    v = _CONV.get(key)
    if v is not None:
        return v
    best = [_NONE] * 10
    for i in range(10):
        ta = a[i]
        if ta < 0:
            continue
        ma, pa = divmod(i, 2)
        for j in range(10):
            tb = b[j]
            if tb < 0:
                continue
            mb, pb = divmod(j, 2)
            m, p = ma + mb, pa + pb
            if m > _CAP or p > 1:
                continue
            k = m * 2 + p
            t = min(ta + tb, _CAP)
            if t > best[k]:
                best[k] = t
    v = tuple(best)
    _CONV[key] = v
    return v


def _best(v: Vector, melds: int) -> int:
    key = (v, melds)
    r = _BEST.get(key)
    if r is not None:
        return r
    r = 8
    for idx in range(10):
        t = v[idx]
        if t < 0:
            continue
        m, p = divmod(idx, 2)
        m = min(m + melds, 4)
        s = 8 - 2 * m - min(t, 4 - m) - p
        if s < r:
            r = s
    _BEST[key] = r
    return r


def _honour_vector(counts: Sequence[int]) -> Vector:
    key = tuple(counts[27:34])
    v = _HONOURS.get(key)
    if v is None:
        v = _HONOURS[key] = _honours(key)
    return v


def _honours(honours: tuple[int, ...]) -> Vector:
    m = pairs = 0
    for n in honours:
        if n >= 3:
            m += 1
        elif n == 2:
            pairs += 1
    best = [_NONE] * 10
    options = [(m, min(pairs, _CAP), 0)]
    if pairs:
        options.append((m, min(pairs - 1, _CAP), 1))
    if m:
        options.append((m - 1, min(pairs, _CAP), 1))
    for om, ot, op in options:
        if om <= _CAP:
            j = om * 2 + op
            best[j] = max(best[j], ot)
    return tuple(best)


def _others(counts: Sequence[int], n: int) -> int:
    """Seven pairs and thirteen orphans (13 or 14 tiles only), else a large number."""
    if n < 13:
        return 99
    pairs = kinds = 0
    for x in counts:
        if x:
            kinds += 1
            if x >= 2:
                pairs += 1
    chiitoi = -1 if pairs == 7 else 6 - pairs + (7 - kinds if kinds < 7 else 0)
    orphans = pair = 0
    for k in TERMINALS_HONOURS:
        if counts[k]:
            orphans += 1
            if counts[k] >= 2:
                pair = 1
    return min(chiitoi, 13 - orphans - pair)


def fast_shanten(counts: Sequence[int]) -> int:
    """The package's shanten of these concealed counts (3n+1 or 3n+2 tiles), from the tables."""
    n = sum(counts)
    if 4 in counts:
        return package_shanten(counts)
    v = _conv(_conv(suit_vector(tuple(counts[0:9])), suit_vector(tuple(counts[9:18]))),
              _conv(suit_vector(tuple(counts[18:27])), _honour_vector(counts)))
    regular = _best(v, (14 - n) // 3)
    return min(regular, _others(counts, n))


def improving_kinds(counts: list[int], current: int, candidates: Sequence[int]) -> list[int]:
    """Of ``candidates``, the kinds whose one more copy lowers the shanten below ``current`` (``counts`` is
    3n+1 tiles, left as it was). The parts of the hand a candidate does not touch are combined once; a
    fourth copy is checked against the package only where the tables say it helps (the package's answer is
    never lower than theirs)."""
    n = sum(counts) + 1
    melds = (14 - n) // 3
    vectors = [suit_vector(tuple(counts[0:9])), suit_vector(tuple(counts[9:18])),
               suit_vector(tuple(counts[18:27])), _honour_vector(counts)]
    rests = [_conv(_conv(vectors[1], vectors[2]), vectors[3]), _conv(_conv(vectors[0], vectors[2]), vectors[3]),
             _conv(_conv(vectors[0], vectors[1]), vectors[3]), _conv(_conv(vectors[0], vectors[1]), vectors[2])]
    out = []
    for k in candidates:
        counts[k] += 1
        try:
            part = k // 9
            if part < 3:
                base = part * 9
                v = suit_vector(tuple(counts[base:base + 9]))
            else:
                v = _honour_vector(counts)
            s = min(_best(_conv(rests[part], v), melds), _others(counts, n))
            if s < current and counts[k] == 4:
                s = package_shanten(counts)
            if s < current:
                out.append(k)
        finally:
            counts[k] -= 1
    return out
