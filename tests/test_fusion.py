"""Fusion edge cases a real table produces: withdrawn declarations, late hands, re-read indicators, stray buttons."""

from drivers.observations import Button, ButtonPressed, HandStarted
from tablesvc.engine.engine import Engine, Rejected, apply
from tablesvc.engine.events import Discard, DoraRevealed, Draw, GameStart, HandStart, Tsumo
from tablesvc.service.fusion import UNDO, Fusion
from tablesvc.tiles import parse_tile, parse_tiles
from vision.table.observations import DoraIndicatorSeen, HandRevealed, TileDiscarded


def setup():
    engine = Engine()

    def would(event):
        try:
            apply(engine.state, event)
        except Rejected:
            return False
        return True

    fusion = Fusion(lambda: engine.state, would)
    engine.apply(GameStart())
    return engine, fusion


def btn(seat, button, seq=[0]):  # noqa: B006 - a counter across calls is the point
    seq[0] += 1
    return ButtonPressed(device="P1", seq=seq[0], timestamp=0.0, seat=seat, button=Button(button))


def cam(cls, **fields):
    return cls(camera="c", timestamp=0.0, **fields)


def apply_all(engine, fusion, actions):
    for a in actions:
        out = engine.apply(a.event)
        if any(type(o).__name__ in ("HandResult", "GameResult") for o in out):
            fusion.hand_ended()


def test_a_withdrawn_ron_does_not_spoil_a_later_tsumo():
    engine, fusion = setup()
    apply_all(engine, fusion, fusion.observe(HandStarted(device="T1", seq=1, timestamp=0.0)))
    apply_all(engine, fusion, fusion.observe(cam(DoraIndicatorSeen, index=0, tile="1z")))
    assert fusion.observe(btn(2, "ron")) == []  # pressed, never confirmed
    apply_all(engine, fusion, fusion.observe(cam(TileDiscarded, seat=0, tile="9m")))  # play went on
    assert fusion.rons == []
    hand = parse_tiles("123m456p789s1122z3z")  # what seat 1 lays down (whether it wins is the engine's call)
    fusion.observe(btn(1, "tsumo"))
    fusion.observe(cam(HandRevealed, seat=1, tiles=tuple(t.mjai for t in hand), win_tile="W"))
    actions = fusion.observe(btn(1, "confirm"))
    assert len(actions) == 1 and isinstance(actions[0].event, Tsumo)  # a tsumo, not the stale ron


def test_undo_first_withdraws_a_declaration_and_only_then_takes_back_a_move():
    _, fusion = setup()
    fusion.observe(btn(0, "ron"))
    assert fusion.observe(btn(0, "undo")) == []
    assert fusion.rons == []
    assert [a.event for a in fusion.observe(btn(0, "undo"))] == [UNDO]


def test_tenpai_outside_the_exhaustive_draw_is_ignored():
    engine, fusion = setup()
    engine.apply(HandStart())
    engine.apply(DoraRevealed(tile=parse_tile("1z")))
    assert fusion.observe(btn(3, "tenpai")) == []
    assert fusion.answers == {}


def test_a_dora_indicator_read_twice_counts_once():
    engine, fusion = setup()
    engine.apply(HandStart())
    apply_all(engine, fusion, fusion.observe(cam(DoraIndicatorSeen, index=0, tile="3p")))
    assert fusion.observe(cam(DoraIndicatorSeen, index=0, tile="3p")) == []
    assert engine.state.hand.dora == [parse_tile("3p")]


def test_discard_seen_is_a_discard_and_sideways_is_riichi_once():
    engine, fusion = setup()
    engine.apply(HandStart())
    engine.apply(DoraRevealed(tile=parse_tile("1z")))
    (action,) = fusion.observe(cam(TileDiscarded, seat=0, tile="5mr", sideways=True))
    assert action.event == Discard(seat=0, tile=parse_tile("5mr"), riichi=True)
    assert isinstance(Draw(seat=0), Draw)
