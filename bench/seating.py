"""Tournament seating quality and speed: `python bench/seating.py [--quick]`

For halls of 16 to 172 players (4 to 43 tables) and up to 15 rounds, seats
every round (``plan``: the rounds a resolvable design gives first, the rest by
a min-conflicts tabu search) and prints, per hall: the repeat meetings
against the fewest any seating can have (the counting bound: a player meets 3
a round and has ``players - 1`` to meet), the most rounds a published
social-golfer schedule plays without a repeat at that size (``published``),
the most any pair met, the wind balance, and the time; beside it the best of
20 random seatings of the same hall, to show what the search buys.
``--quick`` seats fewer halls (the test's mode).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import random
import time

from tablesvc.tournament.designs import most_rounds_without_repeats
from tablesvc.tournament.model import Seating
from tablesvc.tournament.seating import plan, quality

FULL = [(4, 5), (4, 6), (5, 5), (6, 7), (7, 7), (7, 9), (8, 8), (8, 10), (10, 8), (10, 13), (12, 8), (12, 15),
        (16, 15), (20, 15), (30, 15), (40, 15), (43, 15), (60, 15)]
QUICK = [(4, 5), (8, 8), (16, 8), (43, 15), (60, 15)]


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
    print(f"{'tables':>6} {'players':>7} {'rounds':>6}  {'repeats':>7} {'bound':>5} {'published':>9} {'most':>4} "
          f"{'wind spread':>11} {'unbalanced':>10} {'time':>8}   {'random best':>11}")
    for tables, rounds in QUICK if args.quick else FULL:
        players = list(range(1, 4 * tables + 1))
        started = time.perf_counter()
        seatings = plan(players, rounds, seed=1)
        took = time.perf_counter() - started
        q = quality(seatings)
        rnd = min(quality(random_plan(players, rounds, s)).repeat_meetings for s in range(20))
        print(f"{tables:>6} {len(players):>7} {rounds:>6}  {q.repeat_meetings:>7} {q.repeat_bound:>5} "
              f"{most_rounds_without_repeats(tables):>9} {q.most_meetings:>4} {q.wind_spread:>11} "
              f"{q.unbalanced:>10} {took:>7.2f}s   {rnd:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
