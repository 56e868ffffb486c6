"""Tournament seating quality and speed: `python bench/seating.py [--quick]`

For halls of 8, 16, 40 and 60 tables, seats every round (``plan``: each round
by tabu search against the ones before, then re-seated against all the
others) and prints, per hall: the repeat meetings against the fewest any
seating can have (the counting bound: a player meets 3 a round and has
``players - 1`` to meet), the most any pair met, the wind balance, and the
time; beside it the best of 20 random seatings of the same hall, to show
what the search buys. ``--quick`` seats fewer rounds.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, not bench/, comes first

import argparse
import random
import time

from tablesvc.tournament.model import Seating
from tablesvc.tournament.seating import plan, quality


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
    parser.add_argument("--quick", action="store_true", help="fewer rounds (the test's mode)")
    args = parser.parse_args()
    halls = [(8, 5), (16, 6), (40, 6), (60, 6)] if args.quick else [(8, 7), (8, 12), (16, 8), (16, 12), (40, 10),
                                                                     (60, 10), (60, 16)]
    print(f"{'tables':>6} {'players':>7} {'rounds':>6}  {'repeats':>7} {'bound':>5} {'most':>4} {'wind spread':>11} "
          f"{'unbalanced':>10} {'time':>8}   {'random best':>11}")
    for tables, rounds in halls:
        players = list(range(1, 4 * tables + 1))
        started = time.perf_counter()
        seatings = plan(players, rounds, seed=1)
        took = time.perf_counter() - started
        q = quality(seatings)
        rnd = min(quality(random_plan(players, rounds, s)).repeat_meetings for s in range(20))
        print(f"{tables:>6} {len(players):>7} {rounds:>6}  {q.repeat_meetings:>7} {q.repeat_bound:>5} "
              f"{q.most_meetings:>4} {q.wind_spread:>11} {q.unbalanced:>10} {took:>7.2f}s   {rnd:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
