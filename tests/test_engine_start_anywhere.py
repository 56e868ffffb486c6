"""Start anywhere: a game taken up midway (South 2, counters, sticks, scores) plays on as if seen from East 1.

Every figure is worked out by hand from /work/shared/RULES.md and the presets
(docs/rules.md); the arithmetic is in the comments. Hands are played in
camera mode, as in test_engine_scenarios.py.
"""

from __future__ import annotations

import json

import pytest

from tablesvc.engine.engine import Engine
from tablesvc.engine.events import GameStart, from_dict, to_dict
from tablesvc.engine.results import GameResult, HandResult, round_index, round_name
from tablesvc.engine.state import Phase
from tablesvc.formats.mjai import export_mjai, parse_mjai
from tablesvc.formats.record import RecordedGame
from tablesvc.replay import replay
from tests.scenario import Table, assert_unchanged_after

# 234m 567m 345p 88p + 56s shown with 4s: pinfu and tanyao, 2 han 30 fu (see test_engine_scenarios.py)
PINFU_TANYAO = "234m567m345p88p456s"


def _south_2_game() -> Table:
    tb = Table(round="S2", honba=2, sticks=1, scores=(31000, 28000, 35000, 25000))
    tb.draw_hand((True, False, False, False))
    tb.draw_hand((False, False, True, False))
    tb.draw_hand((False, False, False, False))
    tb.start_hand()
    tb.play("3:d1m 0:d9p 1:d3m 2:d6m 3:d4s")
    tb.ron(0, PINFU_TANYAO)
    return tb


def test_south_2_with_two_counters_and_a_stick_ends_after_south_4_with_the_right_uma() -> None:
    # ema2012: 30000 start and return, uma +30000/+10000/-10000/-30000, no oka.
    # South 2, 2 counters, 1 riichi stick on the table: 119000 in hand + 1000 on the table.
    tb = Table(round="S2", honba=2, sticks=1, scores=(31000, 28000, 35000, 25000))
    st = tb.state
    # seat 1 deals South 2 (seat 0 dealt East 1, so seat 1 deals the second hand of each wind)
    assert (st.round, st.honba, st.sticks, st.dealer, st.first_dealer) == (5, 2, 1, 1, 0)
    assert tb.scores == (31000, 28000, 35000, 25000)

    # S2-2: only seat 0 tenpai: +3000, the others -1000; the dealer (seat 1) is noten: the deal moves on,
    # the counter still grows (exhaustive draw), the stick stays
    r = tb.draw_hand((True, False, False, False))
    assert (r.round_name, r.honba, r.sticks, r.dealer) == ("S2", 2, 1, 1)
    assert r.deltas == (3000, -1000, -1000, -1000)
    assert (st.round, st.dealer, st.honba, st.sticks) == (6, 2, 3, 1)
    assert tb.scores == (34000, 27000, 34000, 24000)

    # S3-3: the dealer (seat 2) alone tenpai: +3000, -1000 each; the dealer keeps the deal
    r = tb.draw_hand((False, False, True, False))
    assert r.deltas == (-1000, -1000, 3000, -1000)
    assert (st.round, st.dealer, st.honba) == (6, 2, 4)
    assert tb.scores == (33000, 26000, 37000, 23000)

    # S3-4: nobody tenpai, nothing paid; the deal moves to seat 3 for South 4, the last hand
    r = tb.draw_hand((False, False, False, False))
    assert r.deltas == (0, 0, 0, 0)
    assert (st.round, st.dealer, st.honba, st.sticks) == (7, 3, 5, 1)
    assert st.phase is Phase.BETWEEN_HANDS

    # S4-5: seat 0 rons the dealer's 4s: pinfu tanyao (2 han from yaku, enough at five counters),
    # 30 fu: 2000; counters 5 x 300 = 1500 from the discarder; the stick (1000) to the winner.
    # Seat 0: +2000 +1500 +1000 = +4500; seat 3: -2000 -1500 = -3500.
    tb.start_hand()
    tb.play("3:d1m 0:d9p 1:d3m 2:d6m 3:d4s")
    out = tb.ron(0, PINFU_TANYAO)
    assert [type(o) for o in out] == [HandResult, GameResult]  # the dealer lost South 4: the game is over
    hand, final = out
    assert (hand.round_name, hand.honba, hand.sticks, hand.deltas) == ("S4", 5, 1, (4500, 0, 0, -3500))
    assert st.phase is Phase.GAME_OVER
    # final: 37500, 26000, 37000, 19500 (120000, no stick left)
    # places: seat 0 1st (+30000), seat 2 2nd (+10000), seat 1 3rd (-10000), seat 3 4th (-30000)
    # result = points - 30000 + uma: 37500, 17000, -14000, -40500 (sum 0)
    assert final.scores == (37500, 26000, 37000, 19500)
    assert [(s.seat, s.place, s.uma, s.result) for s in final.standings] == [
        (0, 1, 30000, 37500),
        (2, 2, 10000, 17000),
        (1, 3, -10000, -14000),
        (3, 4, -30000, -40500),
    ]


def test_a_game_taken_up_midway_exports_to_mjai_and_replays_exactly() -> None:
    """The export writes each hand's situation; the import takes the game up at the first one."""
    tb = _south_2_game()
    record = RecordedGame(source="s2", events=list(tb.events))
    report = replay(record)
    text = export_mjai(record, report)
    first = json.loads(text.splitlines()[1])
    assert (first["bakaze"], first["kyoku"], first["honba"], first["kyotaku"], first["oya"], first["scores"]) == (
        "S", 2, 2, 1, 1, [31000, 28000, 35000, 25000])
    again = replay(parse_mjai(text, "s2.mjai"), strict=True)  # the rules come with the file
    assert [h.deltas for h in again.hands] == [h.deltas for h in report.hands]
    assert again.final.standings == report.final.standings


def test_the_given_dealer_makes_the_first_dealer_who_breaks_ties() -> None:
    # tenhou: ties are broken by seat order from the first dealer. South 4 dealt by seat 0 means seat 1
    # dealt East 1 (South 4 is the fourth deal of the wind: seat 1, 2, 3, 0).
    tb = Table(rules="tenhou", round="S4", dealer=0, scores=(25000, 30000, 20000, 25000))
    assert (tb.state.dealer, tb.state.first_dealer) == (0, 1)
    # nobody tenpai: the dealer's South 4 ends, seat 1 has 30000 (the return points): the game is over
    r = tb.draw_hand((False, False, False, False))
    assert r.deltas == (0, 0, 0, 0)
    final = tb.outputs[-1]
    assert isinstance(final, GameResult)
    # seats 0 and 3 tie on 25000; from the first dealer (seat 1) the order is 1, 2, 3, 0: seat 3 is 2nd.
    # results (points - 30000 + uma, +20000 oka to first): 30000 -> 0+20000+20000 = 40000;
    # 25000 -> -5000+10000 = 5000; 25000 -> -5000-10000 = -15000; 20000 -> -10000-20000 = -30000
    assert [(s.seat, s.place, s.result) for s in final.standings] == [
        (1, 1, 40000), (3, 2, 5000), (0, 3, -15000), (2, 4, -30000)]


def test_tenhou_taken_up_in_south_4_plays_into_the_west_round_until_someone_reaches_30000() -> None:
    tb = Table(rules="tenhou", round="S4", honba=1, scores=(26000, 25000, 25000, 24000))
    assert tb.state.dealer == 3
    tb.draw_hand((False, False, False, False))  # nobody at 30000: West 1 follows, dealt by seat 0
    assert (tb.state.phase, tb.state.round, tb.state.dealer, tb.state.honba) == (Phase.BETWEEN_HANDS, 8, 0, 2)
    assert round_name(tb.state.round) == "W1"


def test_a_game_taken_up_in_the_west_round_starts_there_only_under_rules_that_play_it() -> None:
    tb = Table(rules="tenhou", round="W2", scores=(26000, 25000, 25000, 24000))
    assert (tb.state.round, tb.state.dealer) == (9, 1)
    engine = Engine()
    assert_unchanged_after(engine, GameStart(round="W1"), "cannot start in W1", "ema2012", "S4")


@pytest.mark.parametrize(("start", "fragments"), [
    (GameStart(round="S5"), ("E1..E4, S1..S4", "'S5'")),
    (GameStart(round="south"), ("a round is a wind and a number",)),
    (GameStart(honba=-1), ("cannot be negative",)),
    (GameStart(sticks=-2), ("cannot be negative",)),
    (GameStart(dealer=4), ("the dealer is a seat 0..3, not 4",)),
    (GameStart(rules="tenhou", scores=(50000, 30000, 20500, -500)), ("below zero", "tenhou")),
])
def test_an_impossible_situation_is_refused_with_the_reason(start: GameStart, fragments: tuple[str, ...]) -> None:
    assert_unchanged_after(Engine(), start, *fragments)


def test_defaults_are_east_1_with_the_presets_points() -> None:
    tb = Table(rules="tenhou")
    st = tb.state
    assert (st.round, st.honba, st.sticks, st.dealer, st.first_dealer) == (0, 0, 0, 0, 0)
    assert tb.scores == (25000, 25000, 25000, 25000)


def test_the_situation_goes_through_the_journal_codec() -> None:
    event = GameStart(players=("A", "B", "C", "D"), rules="tenhou", round="S2", honba=2, sticks=1,
                      scores=(31000, 28000, 35000, 25000), dealer=1)
    data = to_dict(event)
    assert data["round"] == "S2" and data["scores"] == [31000, 28000, 35000, 25000]
    assert from_dict(data) == event
    old = {"type": "start_game", "players": ["A", "B", "C", "D"], "rules": "ema2012"}  # a journal of before
    assert from_dict(old) == GameStart(players=("A", "B", "C", "D"))


def test_round_names_and_indices() -> None:
    assert [round_index(n) for n in ("E1", "e4", "S2", "W1", "N4")] == [0, 3, 5, 8, 15]
    assert all(round_name(round_index(round_name(i))) == round_name(i) for i in range(16))
