"""The seat analysis beyond waits: shanten of the three shapes, a wait on a kind held four times, ukeire
against a brute force over the ``mahjong`` package's shanten, and deal-in and furiten on the recorded
games' rons (the discarder's deal-in tiles name each winner and the points the engine then scored)."""

from __future__ import annotations

import pytest
from mahjong.shanten import Shanten

from tablesvc.analysis.seats import Analyst, hand_shape
from tablesvc.engine.engine import Engine
from tablesvc.engine.events import Discard, Ron
from tablesvc.engine.results import HandResult
from tablesvc.engine.state import Step
from tablesvc.replay import load_record
from tablesvc.tiles import parse_tiles, tiles_to_34
from tests.conftest import comes_before, mjlog_files

FILES = mjlog_files()


def shape(text: str, held_extra: str = ""):
    counts = tiles_to_34(parse_tiles(text))
    held = list(counts)
    for t in parse_tiles(held_extra) if held_extra else []:
        held[t.kind] += 1
    return hand_shape(counts, held)


def test_the_three_shapes_and_their_waits():
    thirteen = shape("19m19p19s1234567z")
    assert thirteen.shanten == 0 and len(thirteen.waits) == 13  # thirteen orphans, thirteen-sided
    pairs = shape("1122m3344p5566s7z")
    assert pairs.shanten == 0 and pairs.waits == (33,)  # seven pairs on the red dragon
    assert shape("123m456p789s1122z").waits == (27, 28)  # a standard shanpon on E and S
    assert shape("1358m2469p1357s1z").shanten == Shanten().calculate_shanten(tiles_to_34(parse_tiles(
        "1358m2469p1357s1z")))


def test_a_kind_the_seat_holds_all_four_of_is_no_wait():
    # 1112m: waits 2m (111 and a single 2m) and 3m (11 and 12m); with a kan of 3m beside it, 3m cannot come
    assert shape("1112m456p789s").waits == (1, 2)
    assert shape("1112m", held_extra="3333m").waits == (1,)
    lone = shape("1111m234p567p789s")  # a single wait on the fifth 1m: not ready (3.4.2), as the package says
    assert lone.waits == () and lone.shanten == Shanten().calculate_shanten(tiles_to_34(parse_tiles(
        "1111m234p567p789s"))) == 1


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
def test_ukeire_is_every_kind_the_packages_shanten_says_improves():
    package = Shanten()
    checked = 0
    for path in FILES[:2]:
        engine = Engine()
        for event in load_record(path).events:
            engine.apply(event)
            h = engine.state.hand
            if h is None or not isinstance(event, Discard):
                continue
            s = h.seats[event.seat]  # 13 tiles (or fewer, open) just after a discard
            counts = tiles_to_34(s.hand)
            now = package.calculate_shanten(counts)
            expected = []
            for k in range(34):
                if counts[k] < 4:
                    counts[k] += 1
                    if package.calculate_shanten(counts) < now:
                        expected.append(k)
                    counts[k] -= 1
            got = hand_shape(list(counts))
            assert got.shanten == now
            if now > 0:
                assert list(got.ukeire) == expected, (path.name, s.hand)
            checked += 1
    assert checked > 200


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
def test_deal_in_names_each_recorded_ron_with_its_points():
    """Before every discard that was won on, the discarder's deal-in tiles hold it, with each winner; where
    no ura dora, counters or sticks can add to the win, with the very points the engine scored it for. The
    winners are never furiten there (the engine refuses a ron in furiten)."""
    rons = exact = 0
    for path in FILES[:40]:
        engine, analyst = Engine(), Analyst()
        before = None
        events = load_record(path).events
        for index, event in enumerate(events):
            state = engine.state
            if isinstance(event, Discard) and state.hand is not None and state.hand.step is Step.DISCARD:
                # analysed only where a ron comes before the next discard: the rest would never be read
                ron_next = comes_before(events, index + 1, Ron, (Discard,))
                before = (event.tile, analyst.analyse(state), state.hand.sticks) if ron_next else None
            outputs = engine.apply(event)
            result = next((o for o in outputs if isinstance(o, HandResult)), None)
            if not isinstance(event, Ron) or result is None or result.kind != "win" or before is None:
                continue
            tile, seats, sticks = before
            if tile.kind != result.wins[0].win_tile.kind:
                continue  # won on an added kan, not on this discard
            actor = seats[event.from_seat]
            assert tile in actor.deal_in, (path.name, tile, actor.deal_in)
            named = {d.seat: d.points for d in actor.deal_in[tile]}
            for win in result.wins:
                assert win.seat in named and not seats[win.seat].furiten
                if result.honba == 0 and sticks == 0 and not result.deposits and not result.ura:
                    assert named[win.seat] == win.points, (path.name, win)
                    exact += 1
            rons += 1
    assert rons > 100 and exact > 20


@pytest.mark.skipif(not FILES, reason="../shared/data/tenhou-mjlog not found beside the checkout")
def test_only_the_seat_whose_hand_changed_is_recomputed():
    """A draw changes no seat's shape (the drawn tile is read apart), a discard or a call only its seat's;
    the others' shapes come from before, and their counts of tiles left still follow the table."""
    engine, analyst = Engine(), Analyst()
    analyst.analyse(engine.state)
    draws = discards = 0
    for event in load_record(FILES[0]).events:
        engine.apply(event)
        before = analyst.recomputed
        seats = analyst.analyse(engine.state)
        if engine.state.hand is None or event.type == "hand_start":
            continue
        if event.type == "draw":
            assert analyst.recomputed == before
            draws += 1
        elif event.type in ("discard", "call"):
            assert analyst.recomputed - before <= 1
            discards += 1
        if event.type == "discard":  # the discarded tile is seen by everyone: no seat counts it unseen
            for a in seats:
                for kind, n in a.ukeire.items():
                    assert n <= 4 - sum(1 for p in engine.state.hand.seats for t in p.pond if t.tile.kind == kind
                                        and not t.called)
    assert draws > 100 and discards > 100
