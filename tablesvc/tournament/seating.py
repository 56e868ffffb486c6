"""Seating a tournament round: who sits at which table and in which wind.

Pure functions (no I/O, no clock): players are numbers, a seating is four
numbers per table in seat order East, South, West, North. The methods are
Pantheon's four:

- shuffled, the one a tournament normally uses: every round at once
  (:func:`plan`) from a construction without a repeat meeting where the
  hall has one (:mod:`tablesvc.tournament.designs`), round by round the
  next round of that plan (:func:`next_of_plan`), and otherwise
  :func:`shuffled`: a tabu search over swaps of two players at different
  tables that minimises, over the rounds already seated, the meetings again
  (a pair that met ``m`` times costs ``m * m`` more, so a third meeting is
  worse than two second ones) and, where asked, players of one club at a
  table; the leading four can be held at table 1 (the streamed one). It
  stops as soon as a round costs nothing.
- :func:`swiss`: by standing, the leading four at table 1, the next four at
  table 2 ...
- :func:`interval`: by standing, spread: table ``k`` gets places ``k``,
  ``k + T``, ``k + 2T`` and ``k + 3T`` of ``T`` tables.
- a seating read from a file (:mod:`tablesvc.tournament.files`).

Every method then gives each table's four their winds so that each player's
count of East, South, West and North stays as even as it can
(:func:`balance_winds`; a whole plan is balanced over all its rounds at once,
by descent over each table's 24 orders with random kicks). :func:`quality` measures a whole plan (repeat
meetings, wind balance, club meetings) and :func:`repeat_lower_bound` says
how few repeats any seating can have, which is what a seating is judged by.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tablesvc.tournament.designs import known_most_rounds, zero_repeat_rounds
from tablesvc.tournament.model import Seating, TournamentError

__all__ = ["SeatingQuality", "balance_winds", "interval", "meetings", "next_of_plan", "part_clubs", "plan", "quality",
           "repeat_lower_bound", "shuffled", "swiss"]

CLUB_COST = 3  # a club pair at one table costs as much as three second meetings: kept apart, but not at any price
_PERMUTATIONS = tuple(itertools.permutations(range(4)))


def _check_count(players: Sequence[int]) -> int:
    if len(players) < 4 or len(players) % 4:
        raise TournamentError(f"{len(players)} players cannot be seated four to a table: fill a withdrawn "
                              "player's seat (tablesvc tournament add NAME --substitute PLAYER), or add or withdraw "
                              "players until the count is a multiple of 4")
    if len(set(players)) != len(players):
        seen: set[int] = set()
        twice = next(p for p in players if p in seen or seen.add(p))  # type: ignore[func-returns-value]
        raise TournamentError(f"player {twice} is seated twice in one round")
    return len(players) // 4


def meetings(history: Sequence[Seating]) -> dict[frozenset[int], int]:
    """How often each pair has sat at one table in ``history``."""
    met: dict[frozenset[int], int] = {}
    for seating in history:
        for table in seating.tables:
            for a, b in itertools.combinations(table, 2):
                key = frozenset((a, b))
                met[key] = met.get(key, 0) + 1
    return met


def _wind_counts(history: Sequence[Seating]) -> dict[int, list[int]]:
    counts: dict[int, list[int]] = {}
    for seating in history:
        for table in seating.tables:
            for wind, p in enumerate(table):
                counts.setdefault(p, [0, 0, 0, 0])[wind] += 1
    return counts


def balance_winds(tables: Sequence[Sequence[int]], history: Sequence[Seating], *,
                  rng: random.Random | None = None) -> Seating:
    """Each table's four in the wind order that keeps their wind counts most even (of the 24 orders, the one
    with the smallest sum of squared counts after this round; ties broken at random)."""
    rng = rng or random.Random(0)
    counts = _wind_counts(history)
    out = []
    for table in tables:
        four = list(table)
        rng.shuffle(four)
        best, best_cost = four, None
        for perm in _PERMUTATIONS:
            order = [four[i] for i in perm]
            cost = sum((counts.get(p, [0, 0, 0, 0])[w] + 1) ** 2 for w, p in enumerate(order))
            if best_cost is None or cost < best_cost:
                best, best_cost = order, cost
        out.append((best[0], best[1], best[2], best[3]))
    return Seating(tuple(out))


def shuffled(players: Sequence[int], history: Sequence[Seating] = (), *, clubs: Mapping[int, str] | None = None,
             top: Sequence[int] | None = None, seed: int = 0, iterations: int | None = None,
             start: Seating | None = None) -> Seating:
    """The next round: as few meetings again as the search finds (none while possible), clubs apart where
    ``clubs`` is given, ``top`` (four players) held at table 1, winds balanced. ``start``: search on from
    this seating of the same players (a plan's improvement pass) instead of a random one."""
    tables = _check_count(players)
    rng = random.Random(seed)
    index = {p: i for i, p in enumerate(players)}
    n = len(players)
    cost = [[0] * n for _ in range(n)]
    for pair, m in meetings(history).items():
        a, b = tuple(pair)
        if a in index and b in index:
            cost[index[a]][index[b]] = cost[index[b]][index[a]] = m * m
    if clubs:
        for a, b in itertools.combinations(range(n), 2):
            ca, cb = clubs.get(players[a]), clubs.get(players[b])
            if ca and cb and ca.strip().casefold() == cb.strip().casefold():
                cost[a][b] += CLUB_COST
                cost[b][a] += CLUB_COST
    locked: set[int] = set()
    order = list(range(n))
    rng.shuffle(order)
    if start is not None:
        if sorted(start.players()) != sorted(players):
            raise TournamentError("a seating to improve must seat the same players")
        order = [index[p] for p in start.players()]
    if top:
        fixed = [index[p] for p in top if p in index]
        if len(fixed) != 4:
            raise TournamentError("the top table needs four players of this round")
        locked = set(fixed)
        order = fixed + [i for i in order if i not in locked]
    at = [[order[4 * t + k] for k in range(4)] for t in range(tables)]
    table_of = [0] * n
    for t, four in enumerate(at):
        for i in four:
            table_of[i] = t
    if tables > 1:
        at = _search(at, table_of, cost, locked, rng, iterations)
    return balance_winds([[players[i] for i in four] for four in at], history, rng=rng)


def _search(at: list[list[int]], table_of: list[int], cost: list[list[int]], locked: set[int], rng: random.Random,
            iterations: int | None) -> list[list[int]]:
    """Tabu search over swaps of two players at different tables; the best seating seen."""
    n = len(table_of)
    movable = [i for i in range(n) if i not in locked]

    def with_others(i: int, t: int, skip: int) -> int:
        row = cost[i]
        return sum(row[j] for j in at[t] if j != i and j != skip)

    def table_cost(t: int) -> int:
        four = at[t]
        return sum(cost[a][b] for a, b in itertools.combinations(four, 2))

    total = sum(table_cost(t) for t in range(len(at)))
    best_total, best = total, [list(t) for t in at]
    limit = iterations if iterations is not None else 2000 + 100 * len(at)
    stall_limit = max(200, limit // 3)
    tabu = [0] * n
    tenure = max(5, min(20, len(at)))
    stall = 0
    for it in range(1, limit + 1):
        if best_total == 0 or stall > stall_limit:
            break
        hot = [i for i in movable if with_others(i, table_of[i], -1) > 0]
        if not hot:
            break
        p = rng.choice(hot)
        tp = table_of[p]
        here_p = with_others(p, tp, -1)
        move, move_delta = None, None
        for q in movable:
            tq = table_of[q]
            if tq == tp:
                continue
            delta = (with_others(p, tq, q) + with_others(q, tp, p)) - (here_p + with_others(q, tq, -1))
            if tabu[q] > it and total + delta >= best_total:
                continue  # tabu, unless it beats the best (aspiration)
            if move_delta is None or delta < move_delta or (delta == move_delta and rng.random() < 0.3):
                move, move_delta = q, delta
        if move is None or move_delta is None:
            continue
        q, tq = move, table_of[move]
        at[tp][at[tp].index(p)] = q
        at[tq][at[tq].index(q)] = p
        table_of[p], table_of[q] = tq, tp
        tabu[p] = tabu[q] = it + tenure + rng.randint(0, 3)
        total += move_delta
        if total < best_total:
            best_total, best, stall = total, [list(t) for t in at], 0
        else:
            stall += 1
    return best


def swiss(ranked: Sequence[int], history: Sequence[Seating] = (), *, seed: int = 0,
          clubs: Mapping[int, str] | None = None) -> Seating:
    """By standing: ``ranked`` best first; the leading four at table 1, and so on. With ``clubs``, a club pair
    at one table is parted by swapping one of them with the nearest player in the standing at another table
    (:func:`part_clubs`)."""
    tables = _check_count(ranked)
    four = [list(ranked[4 * t:4 * t + 4]) for t in range(tables)]
    return balance_winds(part_clubs(four, ranked, clubs), history, rng=random.Random(seed))


def interval(ranked: Sequence[int], history: Sequence[Seating] = (), *, seed: int = 0,
             clubs: Mapping[int, str] | None = None) -> Seating:
    """By standing, spread over the hall: table ``k`` gets places ``k, k+T, k+2T, k+3T``; clubs parted as in
    :func:`swiss`."""
    tables = _check_count(ranked)
    four = [[ranked[k + j * tables] for j in range(4)] for k in range(tables)]
    return balance_winds(part_clubs(four, ranked, clubs), history, rng=random.Random(seed))


def _club(clubs: Mapping[int, str] | None, p: int) -> str:
    return ((clubs or {}).get(p) or "").strip().casefold()


def part_clubs(tables: list[list[int]], ranked: Sequence[int], clubs: Mapping[int, str] | None) -> list[list[int]]:
    """Players of one club at one table parted by the smallest change to a seating by standing: one of them
    swapped with the player nearest in the standing, at another table, whose swap lowers the club meetings.
    What cannot be parted (a club larger than the hall's tables) stays, and the quality counts it."""
    if not clubs:
        return tables
    rank = {p: i for i, p in enumerate(ranked)}

    def clashes(four: Sequence[int]) -> int:
        return sum(1 for a, b in itertools.combinations(four, 2) if _club(clubs, a) and _club(clubs, a) ==
                   _club(clubs, b))

    for _ in range(4 * len(tables)):
        t = next((t for t, four in enumerate(tables) if clashes(four)), None)
        if t is None:
            break
        best = None
        for p in tables[t]:
            if not _club(clubs, p) or sum(_club(clubs, q) == _club(clubs, p) for q in tables[t]) < 2:
                continue
            for u, other in enumerate(tables):
                if u == t:
                    continue
                for q in other:
                    here = [q if x == p else x for x in tables[t]]
                    there = [p if x == q else x for x in other]
                    gain = clashes(tables[t]) + clashes(other) - clashes(here) - clashes(there)
                    if gain > 0 and (best is None or abs(rank[q] - rank[p]) < best[0]):
                        best = (abs(rank[q] - rank[p]), u, p, q)
        if best is None:
            break
        _d, u, p, q = best
        tables[t][tables[t].index(p)] = q
        tables[u][tables[u].index(q)] = p
    return tables


def plan(players: Sequence[int], rounds: int, history: Sequence[Seating] = (), *,
         clubs: Mapping[int, str] | None = None, seed: int = 0, iterations: int | None = None,
         passes: int = 8, attempts: int = 6) -> list[Seating]:
    """Every remaining round at once. Before the tournament (no ``history``): the rounds of the longest
    construction without a repeat for this hall (:func:`tablesvc.tournament.designs.zero_repeat_rounds`),
    its players placed to keep clubs apart, and the rounds beyond it found by a min-conflicts tabu search
    (:func:`_extend`). After rounds that are that plan's first (the same fours): the plan's later rounds.
    After other rounds: each round shuffled against all before it, then each
    re-seated against all the others for up to ``passes`` sweeps while that removes repeats; all that again
    from other random starts (up to ``attempts``) until a plan reaches the fewest repeats possible."""
    best: list[Seating] | None = None
    best_key = None
    bound = repeat_lower_bound(len(players), len(history) + rounds)
    tables = _check_count(players)
    if history and tables >= 2 and rounds >= 1:
        # the rounds so far may be the first of the whole tournament's plan (seated round by round, or
        # --all before the first round): the plan's later rounds then still fit them, and a construction's
        # rounds beat any search from the played ones
        full = plan(players, len(history) + rounds, clubs=clubs, seed=seed, iterations=iterations,
                    passes=passes, attempts=attempts)
        if _begins_with(full, history):
            return full[len(history):]
    if not history and tables >= 2 and rounds >= 1:
        # a construction first: the rounds it gives have no repeat at all, its players placed so that club
        # mates meet as little as the construction lets them
        rng = random.Random(seed)
        built = _built(players, rounds, clubs, rng)
        out = built + (_extend(players, rounds - len(built), built, clubs, rng, target=bound)
                       if rounds > len(built) else [])
        if clubs:
            q = quality(out, clubs)
            if q.club_meetings > q.club_bound:  # clubs too large for the construction: the search may part them
                searched = _extend(players, rounds, [], clubs, rng, target=bound)
                qs = quality(searched, clubs)
                if qs.repeat_meetings + CLUB_COST * qs.club_meetings < q.repeat_meetings + CLUB_COST * q.club_meetings:
                    out = searched
        return _balance_plan(out, history, random.Random(seed))
    for attempt in range(max(1, attempts)):
        out = _plan_once(players, rounds, history, clubs, seed * 7 + attempt * 104729, iterations, passes)
        q = quality([*history, *out], clubs)
        key = (q.repeat_meetings + CLUB_COST * q.club_meetings, q.most_meetings)
        if best_key is None or key < best_key:
            best, best_key = out, key
        if q.repeat_meetings == bound and q.club_meetings == 0:
            break
    assert best is not None
    return _balance_plan(best, history, random.Random(seed))


def next_of_plan(players: Sequence[int], rounds: int, history: Sequence[Seating], *,
                 clubs: Mapping[int, str] | None = None, seed: int = 0) -> Seating | None:
    """Round ``len(history) + 1`` of the whole tournament's plan (:func:`plan` of ``rounds`` rounds from
    nothing, the same players, clubs and seed), where the rounds so far are that plan's first ones (the same
    tables): seated round by round, a tournament then gets the construction's rounds, as ``--all`` gives
    them, instead of a greedy next round that a construction's later rounds no longer fit. None where the
    rounds so far are not the plan's (a player withdrew or joined, a round was seated otherwise)."""
    if len(history) >= rounds:
        return None
    full = plan(players, rounds, clubs=clubs, seed=seed)
    return full[len(history)] if _begins_with(full, history) else None


def _begins_with(full: Sequence[Seating], history: Sequence[Seating]) -> bool:
    """Whether the rounds of ``history`` seat the same fours as the first rounds of ``full`` (winds and
    table numbers aside: a meeting is all the plan's later rounds depend on)."""
    return len(history) <= len(full) and all(
        {frozenset(t) for t in played.tables} == {frozenset(t) for t in planned.tables}
        for played, planned in zip(history, full, strict=False))


def _built(players: Sequence[int], rounds: int, clubs: Mapping[int, str] | None,
           rng: random.Random) -> list[Seating]:
    """Up to ``rounds`` rounds of the construction for this hall (:func:`zero_repeat_rounds`: the one with
    rows while it gives the rounds asked, where a longer one has none), taken at
    random among those it has, its points given to the players: a transversal design's rows to whole clubs
    (:func:`_rows`), then, where clubs are kept apart, players exchanged while that lowers the club meetings
    (:func:`_part_labels`); any exchange of players keeps a seating without repeats."""
    tables = len(players) // 4
    design, by_rows = zero_repeat_rounds(tables, rounds)
    chosen = rng.sample(design, min(rounds, len(design)))
    if by_rows:
        rows = _rows(players, clubs, rng)
        label = [rows[a][x] for a in range(4) for x in range(tables)]
    else:
        label = list(players)
        rng.shuffle(label)
    if clubs:
        label = _part_labels(chosen, label, clubs, rng)
    return [Seating(tuple((label[t[0]], label[t[1]], label[t[2]], label[t[3]]) for t in r)) for r in chosen]


def _part_labels(rounds: Sequence[Sequence[Sequence[int]]], label: list[int], clubs: Mapping[int, str],
                 rng: random.Random, moves: int = 4000) -> list[int]:
    """Players exchanged between the points of a construction so that as few club mates as possible sit at a
    table: a descent with random sideways moves over exchanges of a player who meets a club mate with any
    player of another club (or none); the best labelling seen."""
    n = len(label)
    near: list[set[int]] = [set() for _ in range(n)]
    for r in rounds:
        for four in r:
            for a, b in itertools.combinations(four, 2):
                near[a].add(b)
                near[b].add(a)
    names = sorted({_club(clubs, p) for p in label} - {""})
    club_id = {c: i + 1 for i, c in enumerate(names)}
    club = [club_id.get(_club(clubs, p), 0) for p in label]  # 0: no club
    count = [[0] * (len(names) + 1) for _ in range(n)]  # point -> club -> its neighbours of that club
    for a in range(n):
        for b in near[a]:
            count[a][club[b]] += 1

    def clash(a: int) -> int:
        return count[a][club[a]] if club[a] else 0

    total = sum(clash(a) for a in range(n)) // 2
    best_total, best = total, label[:]
    for _ in range(moves):
        if total == 0:
            break
        hot = [a for a in range(n) if clash(a)]
        p = rng.choice(hot)
        move, move_delta = None, None
        for q in range(n):
            ca, cb = club[p], club[q]
            if ca == cb:
                continue
            delta = (count[p][cb] if cb else 0) - count[p][ca] + (count[q][ca] - (count[q][cb] if cb else 0))
            if q in near[p]:  # the pair itself: a club mate of the other after, as before, never
                delta -= 1 + (1 if cb else 0)
            if move_delta is None or delta < move_delta or (delta == move_delta and rng.random() < 0.3):
                move, move_delta = q, delta
        if move is None or move_delta is None or (move_delta > 0 and rng.random() > 0.1):
            continue
        q = move
        ca, cb = club[p], club[q]
        for r in near[p]:
            count[r][ca] -= 1
            count[r][cb] += 1
        for r in near[q]:
            count[r][cb] -= 1
            count[r][ca] += 1
        club[p], club[q] = cb, ca
        label[p], label[q] = label[q], label[p]
        total += move_delta
        if total < best_total:
            best_total, best = total, label[:]
    return best


def _extend(players: Sequence[int], rounds: int, fixed: Sequence[Seating], clubs: Mapping[int, str] | None,
            rng: random.Random, moves: int | None = None, target: int = 0) -> list[Seating]:
    """``rounds`` more rounds after ``fixed`` (kept as they are): a min-conflicts tabu search over the whole
    set of new rounds at once. A move swaps a player who meets someone again (or a club mate) with a player
    at another table of the same round; a pair's ``m``-th meeting costs ``m - 1`` more than the one before, a
    club pair's meeting ``CLUB_COST``. Stops at ``target`` (the fewest repeats possible), or after ``moves`` moves
    without a better plan."""
    n = len(players)
    index = {p: i for i, p in enumerate(players)}
    g = n // 4
    met = [[0] * n for _ in range(n)]
    for s in fixed:
        for t in s.tables:
            for a, b in itertools.combinations(t, 2):
                if a in index and b in index:
                    met[index[a]][index[b]] += 1
                    met[index[b]][index[a]] += 1
    club = [[0] * n for _ in range(n)]
    if clubs:
        names = [(clubs.get(p) or "").strip().casefold() for p in players]
        for a, b in itertools.combinations(range(n), 2):
            if names[a] and names[a] == names[b]:
                club[a][b] = club[b][a] = CLUB_COST
    at: list[list[list[int]]] = []  # round -> table -> player indexes
    where: list[list[int]] = []  # round -> player -> table
    for _ in range(rounds):
        order = list(range(n))
        rng.shuffle(order)
        tables = [order[4 * t:4 * t + 4] for t in range(g)]
        at.append(tables)
        w = [0] * n
        for t, four in enumerate(tables):
            for i in four:
                w[i] = t
        where.append(w)
        for four in tables:
            for a, b in itertools.combinations(four, 2):
                met[a][b] += 1
                met[b][a] += 1

    def pair_cost(a: int, b: int) -> int:  # the cost of this pair's meetings so far
        m = met[a][b]
        return m * (m - 1) // 2 + club[a][b] * m

    def player_cost(r: int, i: int) -> int:
        return sum((met[i][j] - 1) + club[i][j] for j in at[r][where[r][i]] if j != i)

    total = sum(pair_cost(a, b) for a in range(n) for b in range(a + 1, n))
    best_total, best = total, [[list(f) for f in tables] for tables in at]
    limit = moves if moves is not None else 1500  # moves without a better plan before it stops
    cap = 20 * limit  # and moves in all: the time an organiser waits stays a few seconds
    tabu: dict[tuple[int, int], int] = {}
    stall, it = 0, 0
    while total > target and stall < limit and it < cap:
        it += 1
        hot: list[int] = []
        for r in rng.sample(range(rounds), rounds):  # a round with someone meeting again, at random
            hot = [i for i in range(n) if player_cost(r, i) > 0]
            if hot:
                break
        if not hot:
            break
        p = rng.choice(hot)
        tp = where[r][p]
        mates_p = [j for j in at[r][tp] if j != p]
        lose_p = sum(met[p][j] - 1 + club[p][j] for j in mates_p)
        move, move_delta = None, None
        for tq in range(g):
            if tq == tp:
                continue
            others = at[r][tq]
            for q in others:
                mates_q = [j for j in others if j != q]
                delta = (sum(met[p][j] + club[p][j] for j in mates_q) - lose_p
                         + sum(met[q][j] + club[q][j] for j in mates_p)
                         - sum(met[q][j] - 1 + club[q][j] for j in mates_q))
                if tabu.get((r, q), 0) > it and total + delta >= best_total:
                    continue
                if move_delta is None or delta < move_delta or (delta == move_delta and rng.random() < 0.3):
                    move, move_delta = q, delta
        if move is None or move_delta is None:
            stall += 1
            continue
        q, tq = move, where[r][move]
        for j in mates_p:
            met[p][j] -= 1
            met[j][p] -= 1
            met[q][j] += 1
            met[j][q] += 1
        for j in at[r][tq]:
            if j != q:
                met[q][j] -= 1
                met[j][q] -= 1
                met[p][j] += 1
                met[j][p] += 1
        at[r][tp][at[r][tp].index(p)] = q
        at[r][tq][at[r][tq].index(q)] = p
        where[r][p], where[r][q] = tq, tp
        tabu[(r, p)] = tabu[(r, q)] = it + 8 + rng.randint(0, 4)
        total += move_delta
        if total < best_total:
            best_total, best, stall = total, [[list(f) for f in tables] for tables in at], 0
        else:
            stall += 1
    return [Seating(tuple((players[f[0]], players[f[1]], players[f[2]], players[f[3]]) for f in tables))
            for tables in best]


def _rows(players: Sequence[int], clubs: Mapping[int, str] | None, rng: random.Random) -> list[list[int]]:
    """The players in four rows of equal length for a design (players of one row never meet): each club whole
    in one row where it fits (the largest club first, best fit), then everyone else; otherwise at random."""
    order = list(players)
    rng.shuffle(order)
    g = len(order) // 4
    groups: dict[str, list[int]] = {}
    loose: list[int] = []
    for p in order:
        club = (clubs or {}).get(p)
        if club and club.strip():
            groups.setdefault(club.strip().casefold(), []).append(p)
        else:
            loose.append(p)
    rows: list[list[int]] = [[], [], [], []]
    for members in sorted(groups.values(), key=len, reverse=True):
        # the fullest row the whole club fits in; a club that fits in none is split over the emptiest rows
        fits = [r for r in rows if g - len(r) >= len(members)]
        if fits:
            max(fits, key=len).extend(members)
            continue
        for p in members:
            min(rows, key=len).append(p)
    for p in loose:
        min(rows, key=len).append(p)
    for r in rows:
        rng.shuffle(r)
    return rows


def _fewest_club_meetings(players: Sequence[int], clubs: Mapping[int, str] | None) -> int:
    """0 where every club fits apart (a club of ``k`` players over ``T`` tables meets at least when ``k > T``);
    otherwise the pigeonhole's count for one round, a lower bound the plan is judged by."""
    if not clubs:
        return 0
    tables = len(players) // 4
    sizes: dict[str, int] = {}
    for p in players:
        c = clubs.get(p)
        if c and c.strip():
            sizes[c.strip().casefold()] = sizes.get(c.strip().casefold(), 0) + 1
    forced = 0
    for k in sizes.values():
        if k > tables:
            base, extra = divmod(k, tables)
            forced += extra * (base + 1) * base // 2 + (tables - extra) * base * (base - 1) // 2
    return forced


def _plan_once(players: Sequence[int], rounds: int, history: Sequence[Seating], clubs: Mapping[int, str] | None,
               seed: int, iterations: int | None, passes: int) -> list[Seating]:
    seated = list(history)
    out: list[Seating] = []
    for r in range(rounds):
        seating = shuffled(players, seated, clubs=clubs, seed=seed * 1009 + r, iterations=iterations)
        seated.append(seating)
        out.append(seating)
    # then improve round by round against all the others (the first rounds were seated against fewer), while
    # that finds repeats to remove; then the winds once more against every other round
    for sweep in range(passes):
        before = _plan_cost(out, clubs)
        if before == 0:
            break
        for r in range(rounds):
            others = [*history, *out[:r], *out[r + 1:]]
            out[r] = shuffled(players, others, clubs=clubs, seed=seed * 7919 + sweep * 101 + r,
                              iterations=iterations, start=out[r])
        if _plan_cost(out, clubs) >= before:
            break
    return out


def _balance_plan(out: list[Seating], history: Sequence[Seating], rng: random.Random,
                  budget: int = 2_000_000) -> list[Seating]:
    """Every table's wind order over the whole plan: descent (each table the best of its 24 orders against every
    other round) until nothing moves, then kicks (a few tables shuffled) and descent again, keeping the best:
    the fewest players out of balance, then the most even counts."""
    counts: dict[int, list[int]] = {}
    for seating in [*history, *out]:
        for table in seating.tables:
            for w, p in enumerate(table):
                counts.setdefault(p, [0, 0, 0, 0])[w] += 1
    tables = [[list(t) for t in s.tables] for s in out]

    def key() -> tuple[int, int]:
        return (sum(1 for c in counts.values() if max(c) - min(c) > 1), sum(x * x for c in counts.values() for x in c))

    def place(order: Sequence[int], sign: int) -> None:
        for w, p in enumerate(order):
            counts[p][w] += sign

    def descend() -> None:
        # sideways moves too (a random one of the best orders, the current among them): the counts have
        # plateaus that a strict descent never leaves
        for _ in range(12):
            moved = False
            for r in range(len(tables)):
                for t, four in enumerate(tables[r]):
                    place(four, -1)
                    best, best_cost = four, None
                    for perm in rng.sample(_PERMUTATIONS, len(_PERMUTATIONS)):
                        order = [four[i] for i in perm]
                        cost = sum(counts[p][w] for w, p in enumerate(order))  # the growth of the squares, halved
                        if best_cost is None or cost < best_cost:
                            best, best_cost = order, cost
                    place(best, +1)
                    if best != four:
                        tables[r][t] = best
                        moved = True
            if not moved or key()[0] == 0:
                return

    descend()
    best_key, best_tables = key(), [[list(t) for t in r] for r in tables]
    cells = [(r, t) for r in range(len(tables)) for t in range(len(tables[r]))]
    kicks = min(30, budget // max(1, 24 * 12 * len(cells)))  # each kick's descent costs up to this many orders
    for _ in range(kicks):
        if best_key[0] == 0 or not cells:
            break
        for r, t in rng.sample(cells, max(1, len(cells) // 10)):
            four = tables[r][t]
            place(four, -1)
            order = four[:]
            rng.shuffle(order)
            place(order, +1)
            tables[r][t] = order
        descend()
        if key() < best_key:
            best_key, best_tables = key(), [[list(t) for t in r] for r in tables]
    return [Seating(tuple((t[0], t[1], t[2], t[3]) for t in r)) for r in best_tables]


def _plan_cost(seatings: Sequence[Seating], clubs: Mapping[int, str] | None) -> int:
    q = quality(seatings, clubs)
    return sum(m * m - 1 for m in meetings(seatings).values() if m > 1) + CLUB_COST * q.club_meetings


@dataclass(frozen=True)
class SeatingQuality:
    """What an organiser checks before printing the seating."""

    rounds: int
    players: int
    repeat_pairs: int  # pairs that met more than once
    repeat_meetings: int  # meetings beyond each pair's first
    most_meetings: int  # the most any pair met
    repeat_bound: int  # the fewest repeat meetings any seating of this size can have
    wind_spread: int  # the largest (most - fewest) of one player's winds
    unbalanced: int  # players whose winds differ by more than the rounds allow (more than 1)
    club_meetings: int  # pairs of one club at one table, summed over rounds
    club_bound: int = 0  # the fewest club meetings possible (a club larger than the hall's tables meets)
    zero_rounds: int | None = None  # the most rounds a known schedule plays without a repeat at this size

    def lines(self) -> list[str]:
        out = [
            f"{self.rounds} round(s), {self.players} players",
            f"repeat meetings: {self.repeat_meetings} (pairs meeting again: {self.repeat_pairs}, at most "
            f"{self.most_meetings} times; the fewest possible: {self.repeat_bound})",
            f"wind balance: largest spread {self.wind_spread}, players unbalanced: {self.unbalanced}",
            f"club meetings: {self.club_meetings} (the fewest possible: {self.club_bound})",
        ]
        if self.zero_rounds is not None:
            out.append(f"known schedules: {self.players} players play up to {self.zero_rounds} round(s) without "
                       "a repeat meeting")
        if self.repeat_meetings > self.repeat_bound:
            why = ""
            if self.zero_rounds is not None and self.repeat_bound == 0:
                why = (" (no known schedule of this size has none)" if self.rounds > self.zero_rounds else
                       " (a published schedule of this size has none; this seating does not reach it: seat fewer "
                       "rounds, or accept them)")
            out.append(f"WARNING: {self.repeat_meetings - self.repeat_bound} repeat meeting(s) above the fewest "
                       "possible" + why)
        if self.club_meetings > self.club_bound:
            out.append(f"WARNING: {self.club_meetings - self.club_bound} club meeting(s) above the fewest possible")
        return out


# the fewest pairs of one earlier table that four players drawn from 1, 2 or 3 such tables hold (4, 2+2, 2+1+1)
_FORCED_PAIRS = {1: 6, 2: 2, 3: 1}


def repeat_lower_bound(players: int, rounds: int) -> int:
    """No seating has fewer repeat meetings: a player meets 3 per round and has ``players - 1`` others to meet,
    so ``3 * rounds - (players - 1)`` of their meetings at least are repeats (each repeat counts for two).
    A hall of three tables or fewer is bound harder by the first round alone: every later table draws its
    four players from that round's tables, so with fewer than four tables some of them sat together then."""
    per_player = max(0, 3 * rounds - (players - 1))
    counting = (players * per_player + 1) // 2
    tables = players // 4
    forced = (rounds - 1) * tables * _FORCED_PAIRS[tables] if tables in _FORCED_PAIRS and rounds > 1 else 0
    return max(counting, forced)


def quality(seatings: Sequence[Seating], clubs: Mapping[int, str] | None = None) -> SeatingQuality:
    met = meetings(seatings)
    winds = _wind_counts(seatings)
    players = {p for s in seatings for p in s.players()}
    spread = max((max(c) - min(c) for c in winds.values()), default=0)
    club_meetings = 0
    if clubs:
        for s in seatings:
            for table in s.tables:
                for a, b in itertools.combinations(table, 2):
                    ca, cb = clubs.get(a), clubs.get(b)
                    club_meetings += bool(ca and cb and ca.strip().casefold() == cb.strip().casefold())
    return SeatingQuality(
        rounds=len(seatings), players=len(players),
        repeat_pairs=sum(1 for m in met.values() if m > 1),
        repeat_meetings=sum(m - 1 for m in met.values() if m > 1),
        most_meetings=max(met.values(), default=0),
        repeat_bound=repeat_lower_bound(len(players), len(seatings)),
        wind_spread=spread,
        unbalanced=sum(1 for c in winds.values() if max(c) - min(c) > 1),
        club_meetings=club_meetings,
        club_bound=len(seatings) * _fewest_club_meetings(sorted(players), clubs) if players else 0,
        zero_rounds=known_most_rounds(len(players) // 4) if len(players) >= 8 else None,
    )
