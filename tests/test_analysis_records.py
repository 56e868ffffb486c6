"""The analysis on the 118 shared recorded games: waits and tiles left exact for every win and every seat
ready at an exhaustive draw, against a count this test makes on its own (the state kept at the very
moment before the winning tile came, every one of the 34 kinds tried with the ``mahjong`` package's agari
check); and the table shanten equal to the package's on every hand of those games."""

from __future__ import annotations

import pytest
from mahjong.agari import Agari
from mahjong.shanten import Shanten

from tablesvc.analysis.replay import AnalysedHand, analyse_record
from tablesvc.analysis.tables import fast_shanten
from tablesvc.engine.engine import Engine, implied_draw
from tablesvc.engine.events import AddedKan, ConcealedKan, Discard, Draw, ExhaustiveDraw, Ron, Tsumo
from tablesvc.engine.state import GameState
from tablesvc.replay import load_record
from tests.conftest import comes_before, mjlog_files

FILES = mjlog_files()
NAMES = ["1m", "2m", "3m", "4m", "5m", "6m", "7m", "8m", "9m", "1p", "2p", "3p", "4p", "5p", "6p", "7p", "8p", "9p",
         "1s", "2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s", "E", "S", "W", "N", "P", "F", "C"]


def brute_waits(state: GameState, seat: int, without=None) -> dict[str, dict[str, int]]:
    """The seat's waits in ``state`` (its hand less ``without``, a drawn tile), counted from scratch."""
    h = state.hand
    hand = list(h.seats[seat].hand)
    if without is not None:
        hand.remove(without)
    counts = [0] * 34
    for t in hand:
        counts[t.kind] += 1
    own_melds = [0] * 34
    public = [0] * 34
    for i, s in enumerate(h.seats):
        for p in s.pond:
            public[p.tile.kind] += not p.called
        for m in s.melds:
            for t in m.tiles:
                public[t.kind] += 1
                if i == seat:
                    own_melds[t.kind] += 1
    for t in h.dora:
        public[t.kind] += 1
    hands = [0] * 34
    for i, s in enumerate(h.seats):
        for t in (hand if i == seat else s.hand):
            hands[t.kind] += 1
    waits = {}
    for k in range(34):
        if counts[k] + own_melds[k] >= 4:
            continue
        trial = list(counts)
        trial[k] += 1
        if Agari.is_agari(trial):
            waits[NAMES[k]] = {"wall": 4 - public[k] - hands[k], "unseen": 4 - public[k] - counts[k]}
    return waits


def expected(record) -> tuple[list[dict], list[dict]]:
    """Each win's and each exhaustive draw's waits, from states kept at the moment before the tile came
    (kept only where a win may read them: a copy of every state costs more than the rest of the count)."""
    engine = Engine()
    before_draw: dict[int, tuple[int, GameState]] = {}  # seat -> (index of its kept draw, the state before it)
    last_draw: dict[int, int] = {}  # seat -> index of its latest draw
    before_claimable: GameState | None = None
    wins, draws = [], []
    events = record.events
    for index, event in enumerate(events):
        state = engine.state
        drawer = event.seat if isinstance(event, Draw) else implied_draw(state, event)
        if drawer is not None:
            last_draw[drawer] = index
            if comes_before(events, index, Tsumo, (Discard,)):
                before_draw[drawer] = (index, state.clone())
        if isinstance(event, Discard | AddedKan | ConcealedKan):
            ron_next = comes_before(events, index + 1, Ron, (Discard, AddedKan, ConcealedKan))
            before_claimable = state.clone() if ron_next else None
        win = None
        if isinstance(event, Tsumo):
            kept_at, kept = before_draw[event.seat]
            assert kept_at == last_draw[event.seat], f"no state kept before seat {event.seat}'s draw at {index}"
            win = {event.seat: brute_waits(kept, event.seat)}
        elif isinstance(event, Ron):
            assert before_claimable is not None, f"no state kept before the tile ron at {index} took"
            win = {c.seat: brute_waits(before_claimable, c.seat) for c in event.claims}
        elif isinstance(event, ExhaustiveDraw):
            ready = {seat: brute_waits(state, seat) for seat in range(4)}
            draws.append({seat: w for seat, w in ready.items() if w})
        outputs = engine.apply(event)
        if win is not None and any(getattr(o, "kind", None) == "win" for o in outputs):  # not a triple ron draw
            wins.append(win)
    return wins, draws


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
def test_waits_and_tiles_left_are_exact_on_every_recorded_win_and_draw():
    checked_wins = checked_draws = tiles_left = 0
    for path in FILES:
        record = load_record(path)
        wins, draws = expected(record)
        got_wins, got_draws = [], []
        for item in analyse_record(record):
            assert isinstance(item, AnalysedHand)
            if item.result.kind == "win" and item.result.wins and item.result.draw is None:
                got_wins.append(item.win_waits)
            if item.tenpai is not None:
                got_draws.append(item.tenpai)
                assert all(item.result.tenpai[seat] for seat in item.tenpai), path.name  # the record agrees
        assert got_wins == wins, path.name
        assert got_draws == draws, path.name
        for hand in wins:
            for waits in hand.values():
                assert waits, f"{path.name}: a winner with no wait"
                tiles_left += sum(w["wall"] for w in waits.values())
        checked_wins += sum(len(w) for w in wins)
        checked_draws += sum(len(d) for d in draws)
    assert len(FILES) == 118 and checked_wins > 500 and checked_draws > 100 and tiles_left > 0


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
def test_table_shanten_is_the_packages_on_every_hand_of_the_records():
    """Every concealed hand of every state of 4 games (13 and 14 tiles, open hands' fewer), and each hand
    with one more tile of every kind (what ukeire asks): the tables answer as the package does."""
    package = Shanten()
    compared = 0
    for path in FILES[:4]:
        engine = Engine()
        seen = set()
        for event in load_record(path).events:
            engine.apply(event)
            h = engine.state.hand
            if h is None:
                continue
            for s in h.seats:
                counts = [0] * 34
                for t in s.hand:
                    counts[t.kind] += 1
                key = tuple(counts)
                if key in seen:
                    continue
                seen.add(key)
                assert fast_shanten(counts) == package.calculate_shanten(counts), (path.name, key)
                if sum(counts) % 3 == 1:
                    for k in range(34):
                        if counts[k] < 4:
                            counts[k] += 1
                            assert fast_shanten(counts) == package.calculate_shanten(counts), (path.name, key, k)
                            counts[k] -= 1
                compared += 1
    assert compared > 2000
