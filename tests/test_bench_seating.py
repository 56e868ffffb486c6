"""``bench/seating.py --quick`` runs and prints what docs/tournament.md says: for 4 to 60 tables (16 to 240
players, up to 15 rounds), no repeat meeting where the bound allows none, and far fewer than the best of 20
random seatings."""

from __future__ import annotations

from tests.test_benches import run_bench


def test_the_seating_bench_prints_its_figures():
    out = run_bench("seating", timeout=300)
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    assert [int(r[0]) for r in rows] == [4, 8, 16, 43, 60]
    for r in rows:
        repeats, bound, random_best = int(r[3]), int(r[4]), int(r[10])
        assert repeats == bound == 0, r
        assert random_best > 10 * (repeats + 1), r
        assert int(r[8]) == 0  # no player's winds out of balance
