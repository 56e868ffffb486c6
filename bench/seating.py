"""Tournament seating quality and speed: `python bench/seating.py [--quick]`

For every hall of 16 to 172 players (4 to 43 tables), and 60 tables, seats
``min(15, P)`` rounds, where ``P`` is the most rounds a published or
constructed schedule plays without a repeat meeting at that size, and
``min(15, C)`` where the counting bound ``C = (players - 1) // 3`` is more
(no schedule without a repeat is known there, none is ruled out), and then
some halls past both; ``plan`` builds the rounds a construction gives (a
transversal design, a paired design or a stored starting round, see
``tablesvc/tournament/designs.py``) and finds the rest by a min-conflicts
tabu search. Per hall it prints the repeat meetings against the fewest any
seating can have (``bound``: the counting bound, a player meets 3 a round
and has ``players - 1`` to meet), ``published`` (the most rounds of a
published or constructed schedule without a repeat, ``-`` where none is
known), ``gap`` (the repeats above the best known: above 0 up to the
published rounds, above the bound elsewhere), the most any pair met, the wind balance, the time, and the
best of 20 random seatings of the same hall, to show what the search buys.
``--quick`` seats fewer halls (the test's mode).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import random
import time

from tablesvc.tournament.designs import known_most_rounds, most_rounds_without_repeats
from tablesvc.tournament.model import Seating
from tablesvc.tournament.seating import plan, quality

PAST = [(4, 6), (5, 6), (6, 8), (8, 11), (11, 15)]  # past the most rounds without a repeat: the bound counts
# every hall at the most rounds known without a repeat, and at the counting bound's most where that is more
FULL = sorted({(t, min(15, most_rounds_without_repeats(t) or 1)) for t in range(4, 44)}
              | {(t, min(15, (4 * t - 1) // 3)) for t in range(4, 44)} | {(60, 15)} | set(PAST))
QUICK = [(4, 5), (6, 7), (7, 9), (8, 10), (10, 13), (16, 8), (43, 15), (60, 15)]


def random_plan(players: list[int], rounds: int, seed: int) -> list[Seating]:
    rng = random.Random(seed)
    out = []
    for _ in range(rounds):
        order = players[:]
        rng.shuffle(order)
        out.append(Seating(tuple(tuple(order[i:i + 4]) for i in range(0, len(order), 4))))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer halls (the test's mode)")
    args = parser.parse_args()
    print(f"{'tables':>6} {'players':>7} {'rounds':>6}  {'repeats':>7} {'bound':>5} {'published':>9} {'gap':>4} "
          f"{'most':>4} {'wind spread':>11} {'unbalanced':>10} {'time':>8}   {'random best':>11}")
    for tables, rounds in QUICK if args.quick else FULL:
        players = list(range(1, 4 * tables + 1))
        started = time.perf_counter()
        seatings = plan(players, rounds, seed=1)
        took = time.perf_counter() - started
        q = quality(seatings)
        published = known_most_rounds(tables)
        gap = q.repeat_meetings - (0 if published is not None and rounds <= published else q.repeat_bound)
        rnd = min(quality(random_plan(players, rounds, s)).repeat_meetings for s in range(20))
        print(f"{tables:>6} {len(players):>7} {rounds:>6}  {q.repeat_meetings:>7} {q.repeat_bound:>5} "
              f"{published if published is not None else '-':>9} {gap:>4} {q.most_meetings:>4} {q.wind_spread:>11} "
              f"{q.unbalanced:>10} {took:>7.2f}s   {rnd:>11}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
