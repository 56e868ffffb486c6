"""Seatings without a repeat meeting, built rather than searched: resolvable transversal designs.

Pure functions (no I/O, no clock). A hall of ``g`` tables seats ``4g``
players. Name each player by a row ``a`` (0..3) and a column ``x``; in round
``r`` table ``t`` seats, in row ``a``, the player of column ``t + m_a * r``.
Two players of rows ``a`` and ``b`` sit together in round ``r`` exactly when
their columns differ by ``(m_b - m_a) * r``, so two rounds ``r`` and ``s``
seat them together twice only when ``(m_b - m_a) * (r - s)`` is zero: over a
finite field (``g`` a prime power, the columns its elements, the ``m_a`` four
distinct elements) that never happens, and the ``g`` rounds have no repeat
meeting at all (a resolvable transversal design TD(4, g)). Players of one
row never meet, which is where the organiser's clubs go when they are kept
apart. For ``g = 4`` the rows themselves are a fifth round: the affine plane
of order 4, the most rounds 16 players can play without a repeat.

For other ``g`` the columns are the integers modulo ``g`` with ``m_a = a``,
and the rounds taken are consecutive: a pair meets again only after
``g / gcd(g, d)`` rounds for a row difference ``d`` of 1, 2 or 3, so
``g`` odd and not a multiple of 3 still gives ``g`` rounds, and every ``g``
at least ``g / 3`` (20 rounds for 60 tables). Rounds beyond what a design
gives are the search's (:func:`tablesvc.tournament.seating.plan`).

:data:`KNOWN_MOST_ROUNDS` is the most rounds without a repeat that a
published or constructed schedule (social golfer problem, groups of four)
reaches for the halls where one is known; the seating's quality prints it
beside its own figures, and elsewhere the counting bound
(``(4g - 1) // 3`` rounds) is all that is known.

For 64 players the lines of the affine space AG(3, 4) give 21 rounds
(:func:`affine_rounds`; 256 players 85). For 12 tables, where neither
gives more than 4 rounds, :data:`GROUP_DESIGNS`
holds a transversal design developed over the group Z2 x Z2 x Z3 (12
rounds; stored, found by a constraint search, checked by a test).

The halls where that falls short of what the published social-golfer tables
reach are built from a stored starting round instead (:data:`STARTERS`):
``w`` rounds on ``3 * w + k`` players (``k`` from 1 to 12). Players
``0 .. 3w - 1`` are ``w`` columns in three rows, the last ``k`` are fixed;
round ``t`` is the starting round with every column moved on by ``t``
modulo ``w``, each fixed player at the table of the three that the
starting round gives it. A pair of one row then meets in the rounds that
carry its column difference ``d`` (and ``-d``) onto a starting table, a
pair of two rows in those that carry its difference, so the starting round
covering each difference once (and never ``d = w / 2``, whose pair would
meet twice) is all it takes for ``w`` rounds without a repeat meeting; two
fixed players never meet. For ``3w + 1`` players that is a resolvable
2-(v, 4, 1) design (28 players in 9 rounds, 40 in 13); 24 players get 7
rounds, 36 players 11, 44 players 13, 52 and 56 players 15, 60 players
16. The starting
rounds were found by a search (constraint programming) and each is checked
by a test that counts every meeting of its ``w`` rounds
(``tests/test_tournament_seating.py``).

For 32 players, where the transversal design over GF(8) gives 8 rounds and
the counting bound 10, :data:`PAIRED_DESIGNS` gives the 10: the players
form 16 pairs (``2y`` and ``2y + 1`` for ``y`` in GF(2)^4) that never
meet, and each round is a plane ``U`` of GF(2)^4 (two of its vectors
stored) with a sign per pair (a 16-bit mask ``f``): every coset ``C`` of
``U`` seats two tables, ``{2y + f(y)}`` and ``{2y + 1 - f(y)}`` for ``y``
in ``C``. The pairs ``y`` and ``z`` share a coset exactly in the rounds
whose plane holds ``y + z``; the ten planes are two disjoint
spreads of GF(2)^4, so every ``y + z`` lies in exactly two of them, and the
signs make the two rounds seat different players of the two pairs together
(``f(y) + f(z)`` differs between them: a system of linear equations over
GF(2), solved off line). Every pair of players of two pairs then meets
exactly once: a resolvable 4-GDD of type 2^16, the social golfer problem's
8-4-10. It is checked by a test that counts every meeting.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import cache

__all__ = ["GROUP_DESIGNS", "KNOWN_MOST_ROUNDS", "PAIRED_DESIGNS", "STARTERS", "affine_rounds", "design_rounds",
           "developed_rounds", "group_design_rounds", "known_most_rounds", "most_rounds_without_repeats",
           "paired_rounds", "rounds_in_design", "zero_repeat_rounds"]

# tables -> the most rounds without a repeat meeting that a published or constructed schedule reaches (social
# golfer problem, groups of four). 16 players 5: the affine plane of order 4 (6 forces a repeat by counting);
# 20 players 5: the transversal design over GF(5) (6 rounds, the counting bound, are not known here);
# 24 players 7: the starting round stored here; 28, 40 and 52 players 9, 13 and 17: resolvable 2-(v, 4, 1)
# designs, which exist for every v = 4 mod 12 (Hanani, Ray-Chaudhuri and Wilson 1972; 28 and 40 are stored
# here); 32 players 10: Aguado's schedule of 2004 (https://www.metalevel.at/sgp/) and the paired design stored
# here; 64 players 21: the lines of the affine space AG(3, 4); 36 players 11: the starting round stored here.
# The counting bound is reached in each. Below it, what this module builds: 44 players 13, 56 players 15, 60
# players 16 (stored starting rounds; 52 players 15 too) and 48 players 13 (the group design's 12 and a round
# within its rows, found by the search).
KNOWN_MOST_ROUNDS: dict[int, int] = {4: 5, 5: 5, 6: 7, 7: 9, 8: 10, 9: 11, 10: 13, 11: 13, 12: 13, 13: 17, 14: 15,
                                     15: 16, 16: 21}


def known_most_rounds(tables: int) -> int | None:
    """The most rounds ``tables`` tables play with no pair meeting twice in a published or constructed
    schedule, None where this project knows of none beyond what it builds itself."""
    return KNOWN_MOST_ROUNDS.get(tables)


def most_rounds_without_repeats(tables: int) -> int | None:
    """The most rounds ``tables`` tables can play with no pair meeting twice as far as known: the published
    or constructed figure where there is one (:func:`known_most_rounds`), else the counting bound (each
    player has ``4 * tables - 1`` others to meet, 3 a round); None for a single table (it meets again every
    round)."""
    if tables < 2:
        return None
    return KNOWN_MOST_ROUNDS.get(tables, (4 * tables - 1) // 3)


def _prime_power(q: int) -> tuple[int, int] | None:
    """(p, k) with ``p ** k == q`` for a prime ``p``, or None."""
    for p in range(2, q + 1):
        if q % p == 0:
            k, rest = 0, q
            while rest % p == 0:
                rest //= p
                k += 1
            return (p, k) if rest == 1 else None
    return None


@cache
def _field(q: int) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] | None:
    """Addition and multiplication tables of GF(q), elements 0..q-1 (digits base p are the coefficients of a
    polynomial modulo an irreducible one); None when q is not a prime power."""
    pk = _prime_power(q)
    if pk is None:
        return None
    p, k = pk

    def digits(x: int) -> list[int]:
        return [(x // p ** i) % p for i in range(k)]

    def number(ds: Sequence[int]) -> int:
        return sum(d * p ** i for i, d in enumerate(ds))

    add = tuple(tuple(number([(a + b) % p for a, b in zip(digits(x), digits(y), strict=True)]) for y in range(q))
                for x in range(q))
    if k == 1:
        return add, tuple(tuple(x * y % q for y in range(q)) for x in range(q))
    modulus = next(m for m in _monic(p, k) if _irreducible(m, p))

    def times(x: int, y: int) -> int:
        prod = [0] * (2 * k - 1)
        for i, a in enumerate(digits(x)):
            for j, b in enumerate(digits(y)):
                prod[i + j] = (prod[i + j] + a * b) % p
        for deg in range(2 * k - 2, k - 1, -1):  # reduce by the monic modulus, highest power first
            c = prod[deg]
            if c:
                for i in range(k + 1):
                    prod[deg - k + i] = (prod[deg - k + i] - c * modulus[i]) % p
        return number(prod[:k])

    return add, tuple(tuple(times(x, y) for y in range(q)) for x in range(q))


def _monic(p: int, k: int) -> list[list[int]]:
    """Every monic polynomial of degree k over GF(p), coefficients lowest power first."""
    out = []
    for n in range(p ** k):
        out.append([(n // p ** i) % p for i in range(k)] + [1])
    return out


def _irreducible(m: list[int], p: int) -> bool:
    """No root and (for degree 4 and more) no factor of lower degree: checked by trial division."""
    k = len(m) - 1
    for d in range(1, k // 2 + 1):
        for f in _monic(p, d):
            if _divides(f, m, p):
                return False
    return True


def _divides(f: list[int], m: list[int], p: int) -> bool:
    rest = m[:]
    for deg in range(len(rest) - 1, len(f) - 2, -1):
        c = rest[deg]
        if c:
            for i in range(len(f)):
                rest[deg - len(f) + 1 + i] = (rest[deg - len(f) + 1 + i] - c * f[i]) % p
    return not any(rest[:len(f) - 1])


def rounds_in_design(tables: int) -> int:
    """How many rounds without a repeat :func:`design_rounds` builds for ``tables`` tables."""
    if tables < 2:
        return 1
    if tables >= 4 and _field(tables) is not None:
        return tables + 1 if tables == 4 else tables
    if tables < 4:
        return 1
    limit = tables
    for d in (1, 2, 3):
        for delta in range(1, tables):
            if d * delta % tables == 0:
                limit = min(limit, delta)
                break
    return max(1, limit)


def design_rounds(rows: Sequence[Sequence[int]], rounds: int) -> list[tuple[tuple[int, int, int, int], ...]]:
    """``rounds`` rounds (at most :func:`rounds_in_design`) for the players in ``rows``: four rows of
    ``tables`` players each; table ``t`` of every round seats one player of each row, and no two players
    meet twice. Players of one row never meet (except in the affine plane's fifth round)."""
    if len(rows) != 4 or len({len(r) for r in rows}) != 1:
        raise ValueError("four rows of one length")
    g = len(rows[0])
    if rounds > rounds_in_design(g):
        raise ValueError(f"{g} tables: the design has {rounds_in_design(g)} rounds, not {rounds}")
    field = _field(g)
    out = []
    for r in range(rounds):
        if g == 4 and r == 4:
            out.append(tuple((rows[a][0], rows[a][1], rows[a][2], rows[a][3]) for a in range(4)))
            continue
        tables = []
        for t in range(g):
            if field is not None and g > 3:
                add, mul = field
                cols = [add[t][mul[a][r]] for a in range(4)]  # m_a = a as field elements 0..3 (distinct)
            else:
                cols = [(t + a * r) % g for a in range(4)]
            tables.append((rows[0][cols[0]], rows[1][cols[1]], rows[2][cols[2]], rows[3][cols[3]]))
        out.append(tuple(tables))
    return out


# tables -> (w, the fixed players' tables (three columns each, one per row), the other tables of the starting
# round); a column x of row l is the player l * w + x, the fixed players are 3w, 3w + 1, ...
STARTERS: dict[int, tuple[int, tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]] = {
    6: (7, ((0, 7, 14), (1, 12, 20), (4, 9, 19)),
        ((2, 8, 10, 11), (3, 5, 6, 16), (13, 15, 17, 18))),
    7: (9, ((0, 9, 18),),
        ((3, 6, 13, 14), (4, 5, 10, 17), (2, 7, 19, 26), (1, 8, 21, 24), (11, 16, 22, 23), (12, 15, 20, 25))),
    9: (11, ((0, 11, 22), (9, 21, 29), (7, 12, 24)),
        ((1, 2, 15, 28), (3, 5, 8, 26), (10, 16, 17, 20), (4, 13, 19, 23), (18, 25, 27, 32), (6, 14, 30, 31))),
    10: (13, ((0, 13, 26),),
         ((1, 2, 16, 25), (3, 6, 22, 23), (5, 9, 14, 17), (4, 11, 31, 36), (7, 12, 28, 30), (8, 10, 32, 38),
          (15, 21, 29, 33), (19, 24, 34, 35), (18, 20, 27, 37))),
    11: (13, ((0, 13, 26), (8, 14, 31), (9, 23, 28), (2, 19, 29), (12, 22, 34)),
         ((1, 10, 17, 38), (18, 20, 25, 27), (6, 21, 24, 35), (4, 7, 15, 16), (30, 32, 33, 37), (3, 5, 11, 36))),
    13: (15, ((0, 15, 30), (2, 28, 33), (13, 29, 37), (9, 19, 36), (12, 17, 35), (8, 20, 41), (4, 26, 38)),
         ((5, 6, 10, 24), (3, 11, 32, 43), (14, 16, 22, 27), (1, 7, 42, 44), (23, 25, 34, 39), (18, 21, 31, 40))),
    14: (15, ((0, 15, 30), (10, 27, 37), (12, 19, 38), (3, 22, 42), (2, 28, 34), (11, 25, 39), (8, 16, 43),
              (13, 23, 31), (14, 17, 35), (6, 18, 40), (4, 24, 41)),
         ((5, 21, 26, 29), (1, 7, 9, 32), (20, 33, 36, 44))),
    15: (16, ((0, 16, 32), (1, 18, 36), (12, 26, 37), (3, 29, 34), (7, 30, 43), (8, 20, 35), (6, 28, 40),
              (13, 24, 46), (4, 19, 44), (5, 25, 42), (10, 23, 33), (2, 27, 47)),
         ((9, 11, 14, 15), (38, 39, 41, 45), (17, 21, 22, 31))),
}


# tables -> (the moduli of an abelian group G of that order, three rows of G's elements by index): a transversal
# design developed over G, for the halls whose own ring gives too few rounds. Index i is the element whose
# coordinates are i written in the moduli's mixed radix (the last modulus the fastest); the starting round's
# table i seats, row by row, the elements i, y[i], z[i] and u[i], and round t adds the element t to each. Every
# difference between two rows (y - x, z - x, u - x, z - y, u - y, u - z) is a bijection of G, so each pair of
# two rows meets in exactly one of the |G| rounds, and players of one row never meet. Z_12 itself has no such
# rows (a cyclic group of even order has no complete mapping), Z_2 x Z_2 x Z_3 has.
GROUP_DESIGNS: dict[int, tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]] = {
    12: ((2, 2, 3), ((0, 8, 10, 9, 5, 1, 4, 6, 11, 7, 3, 2), (0, 6, 1, 7, 11, 3, 9, 4, 10, 2, 8, 5),
                     (0, 11, 8, 4, 1, 7, 3, 2, 9, 5, 6, 10))),
}


def group_design_rounds(tables: int) -> list[tuple[tuple[int, int, int, int], ...]]:
    """The ``tables`` rounds of :data:`GROUP_DESIGNS` (players ``0 .. 4 * tables - 1``, row ``a`` holding
    ``a * tables .. a * tables + tables - 1``); [] where none is stored."""
    if tables not in GROUP_DESIGNS:
        return []
    moduli, (ys, zs, us) = GROUP_DESIGNS[tables]

    def coords(i: int) -> list[int]:
        out = []
        for m in reversed(moduli):
            i, c = divmod(i, m)
            out.append(c)
        return out[::-1]

    def index(cs: Sequence[int]) -> int:
        i = 0
        for c, m in zip(cs, moduli, strict=True):
            i = i * m + c
        return i

    def plus(a: int, b: int) -> int:
        return index([(x + y) % m for x, y, m in zip(coords(a), coords(b), moduli, strict=True)])

    out = []
    for t in range(tables):
        out.append(tuple((plus(i, t), tables + plus(ys[i], t), 2 * tables + plus(zs[i], t), 3 * tables + plus(us[i], t))
                         for i in range(tables)))
    return out


# tables -> one (u, v, f) per round: the plane {0, u, v, u ^ v} of GF(2)^4 (vectors as 4-bit integers, addition
# XOR) whose cosets seat the round's tables in pairs, and f, bit y the sign of the pair y (players 2y, 2y + 1);
# the first five planes are one spread of GF(2)^4, the last five another with no plane in common.
PAIRED_DESIGNS: dict[int, tuple[tuple[int, int, int], ...]] = {
    8: ((1, 2, 0x0000), (4, 8, 0x0000), (5, 10, 0x0ff0), (6, 11, 0x93a0), (7, 9, 0x6ac0),
        (1, 4, 0x5a5a), (2, 8, 0x33cc), (3, 13, 0xa5cc), (6, 9, 0xf550), (7, 11, 0xfc30)),
}


def paired_rounds(tables: int) -> list[tuple[tuple[int, int, int, int], ...]]:
    """The rounds of :data:`PAIRED_DESIGNS` for ``tables`` tables (players ``0 .. 4 * tables - 1``; ``2y``
    and ``2y + 1`` never meet); [] where none is stored."""
    if tables not in PAIRED_DESIGNS:
        return []
    out = []
    for u, v, f in PAIRED_DESIGNS[tables]:
        plane = (0, u, v, u ^ v)
        seen: set[int] = set()
        seats: list[tuple[int, int, int, int]] = []
        for x in range(2 * tables):
            if x in seen:
                continue
            coset = sorted(x ^ d for d in plane)
            seen.update(coset)
            signs = [(f >> y) & 1 for y in coset]
            first = [2 * y + s for y, s in zip(coset, signs, strict=True)]
            second = [2 * y + 1 - s for y, s in zip(coset, signs, strict=True)]
            seats += [(first[0], first[1], first[2], first[3]), (second[0], second[1], second[2], second[3])]
        out.append(tuple(seats))
    return out


def developed_rounds(tables: int) -> list[tuple[tuple[int, int, int, int], ...]]:
    """The ``w`` rounds of :data:`STARTERS` for ``tables`` tables, players numbered ``0 .. 4 * tables - 1``;
    [] where none is stored."""
    if tables not in STARTERS:
        return []
    w, fixed, others = STARTERS[tables]

    def moved(p: int, t: int) -> int:
        row, col = divmod(p, w)
        return row * w + (col + t) % w

    out = []
    for t in range(w):
        seats = [(3 * w + j, *(moved(p, t) for p in three)) for j, three in enumerate(fixed)]
        seats += [tuple(moved(p, t) for p in four) for four in others]
        out.append(tuple((s[0], s[1], s[2], s[3]) for s in seats))
    return out


def affine_rounds(tables: int) -> list[tuple[tuple[int, int, int, int], ...]]:
    """The lines of the affine space AG(n, 4) for ``4 * tables == 4 ** n`` players (16, 64, 256): each
    direction's 4-point lines are a round, and two points lie on exactly one line, so the ``(4 ** n - 1) / 3``
    rounds (5, 21, 85) meet every pair once; [] for other halls."""
    n, size = 1, 4
    while size < 4 * tables:
        n, size = n + 1, size * 4
    if size != 4 * tables or n < 2:
        return []
    field = _field(4)
    assert field is not None
    add, mul = field
    points = list(itertools.product(range(4), repeat=n))
    index = {p: i for i, p in enumerate(points)}
    directions = [d for d in points if any(d) and d[next(i for i, x in enumerate(d) if x)] == 1]
    out = []
    for d in directions:
        seen: set[int] = set()
        lines = []
        for p in points:
            if index[p] in seen:
                continue
            line = sorted(index[tuple(add[x][mul[c][y]] for x, y in zip(p, d, strict=True))] for c in range(4))
            seen.update(line)
            lines.append((line[0], line[1], line[2], line[3]))
        out.append(tuple(lines))
    return out


def zero_repeat_rounds(tables: int, rounds: int | None = None) -> tuple[list[tuple[tuple[int, int, int, int], ...]],
                                                                         bool]:
    """The most rounds without a repeat meeting that this module builds for ``tables`` tables (players
    ``0 .. 4 * tables - 1``), and whether they are the transversal design's (whose rows ``t, t + tables,
    t + 2 * tables, ...`` are four groups that never meet: where clubs can go). A longer paired design
    (:data:`PAIRED_DESIGNS`) is taken only where the others give fewer than ``rounds`` (or ``rounds`` is None):
    its groups that never meet are pairs, too small to keep a club apart."""
    built = _zero_repeat_unpaired(tables)
    paired = paired_rounds(tables)
    if len(paired) > len(built[0]) and (rounds is None or rounds > len(built[0])):
        return paired, False
    return built


def _zero_repeat_unpaired(tables: int) -> tuple[list[tuple[tuple[int, int, int, int], ...]], bool]:
    """The longest of the transversal design, the affine space, the starting rounds and the group designs."""
    starter = developed_rounds(tables)
    grouped = group_design_rounds(tables)
    affine = affine_rounds(tables)
    if len(affine) > max(len(starter), len(grouped), rounds_in_design(tables)):
        return affine, False
    if len(starter) > max(len(grouped), rounds_in_design(tables)):
        return starter, False
    if len(grouped) > rounds_in_design(tables):
        return grouped, True
    rows = [[a * tables + x for x in range(tables)] for a in range(4)]
    return design_rounds(rows, rounds_in_design(tables)), True
