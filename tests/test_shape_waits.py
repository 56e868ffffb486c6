"""Waits read from per-suit shapes equal the package's agari check tried on every kind.

The engine's riichi, furiten and exhaustive-draw checks ask ``waits_counts``; it
must answer exactly what 34 calls of ``mahjong``'s ``Agari.is_agari`` answer.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from mahjong.agari import Agari

from tablesvc.engine.engine import Engine
from tablesvc.formats.mjlog import parse_mjlog
from tablesvc.rules.shape import is_tenpai, waits_counts
from tablesvc.tiles import parse_tiles, tiles_to_34

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "tenhou-mjlog"
ORPHANS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)


def package_waits(counts: list[int]) -> frozenset[int]:
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


def test_every_hand_of_recorded_games() -> None:
    files = sorted(DATA.glob("*.mjlog"))[:3]
    assert files, f"no recorded games in {DATA}"
    checked = ready = 0
    for path in files:
        engine = Engine()
        for event in parse_mjlog(path.read_text(encoding="utf-8"), str(path)).events:
            engine.apply(event)
            h = engine.state.hand
            if h is None:
                continue
            for s in h.seats:
                if s.hand is None or len(s.hand) % 3 != 1:
                    continue
                counts = tiles_to_34(s.hand)
                want = package_waits(counts)
                assert waits_counts(counts) == want, f"{path.name}: {s.hand}"
                checked += 1
                ready += bool(want)
    assert checked > 5000 and ready > 300, (checked, ready)


def test_random_hands_of_few_kinds() -> None:
    """Hands crowded in a few kinds: many-sided waits, kinds held four times, one-suit hands."""
    rng = random.Random(27)
    ready = 0
    for _ in range(3000):
        size = rng.choice((1, 4, 7, 10, 13))
        pool = [k for k in rng.sample(range(34), rng.randint(2, 7)) for _ in range(4)]
        if len(pool) < size:
            continue
        counts = [0] * 34
        for k in rng.sample(pool, size):
            counts[k] += 1
        want = package_waits(counts)
        assert waits_counts(counts) == want, counts
        ready += bool(want)
    assert ready > 300


@pytest.mark.parametrize(("hand", "waits"), [
    ("19m19p19s1234567z", ORPHANS),  # thirteen-sided
    ("119m19p19s123456z", (33,)),
    ("1199m19p19s12345z", ()),  # two orphans missing
    ("113355m2277p446s", (23,)),  # seven pairs
    ("1122m3344p5566s1z", (27,)),
    ("1111m2222p3333s4z", ()),  # four of a kind is no pair of pairs
    ("1112345678999m", tuple(range(9))),  # nine gates
    ("3334445m", (2, 3, 4, 5)),
    ("2222m", ()),  # a fifth 2m is no wait
    ("1111z2222z3333z4z", ()),
])
def test_shapes(hand: str, waits: tuple[int, ...]) -> None:
    counts = tiles_to_34(parse_tiles(hand))
    assert waits_counts(counts) == frozenset(waits) == package_waits(counts)
    assert is_tenpai(parse_tiles(hand)) == bool(waits)
