"""``bench/seating.py --quick`` runs and prints what docs/tournament.md says: no repeat meeting where a
construction or the search reaches none (the constructed 24, 28, 32 and 40 players in 7, 9, 10 and 13 rounds among
them), far fewer than the best of 20 random seatings, every player's winds in balance."""

from __future__ import annotations

from tests.test_benches import run_bench


def test_the_seating_bench_prints_its_figures():
    out = run_bench("seating", timeout=300)
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    assert [(int(r[0]), int(r[2])) for r in rows] == [(4, 5), (6, 7), (7, 9), (8, 10), (10, 13), (16, 8), (43, 15),
                                                      (60, 15)]
    for r in rows:
        repeats, bound, gap, random_best = int(r[3]), int(r[4]), int(r[6]), int(r[11])
        assert repeats == bound == gap == 0, r
        assert r[5] == "-" or int(r[2]) <= int(r[5]), r  # within the rounds a known schedule plays
        assert random_best > 10 * (repeats + 1), r
        assert int(r[9]) == 0  # no player's winds out of balance
