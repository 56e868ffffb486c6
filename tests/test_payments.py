"""Payments: exact figures for every kind of settlement (RULES.md 3.3.6, 3.4.2, 3.4.6, 3.4.9-3.4.10, 3.6, 4).

Every expected figure below is worked out by hand from the rules; the arithmetic
is in the comment next to it. Seats are 0..3; ``dealer`` says who is East.
"""

from __future__ import annotations

import dataclasses

import pytest

from tablesvc.rules.hand import Hand, WinConditions, Wind
from tablesvc.rules.payments import (
    RonWin,
    Settlement,
    final_standings,
    ron_points,
    settle_chombo,
    settle_exhaustive_draw,
    settle_nagashi,
    settle_ron,
    settle_tsumo,
    tsumo_points,
)
from tablesvc.rules.ruleset import PRESETS, PaoLiability, get_ruleset
from tablesvc.rules.scoring import HandValue, Limit, score_hand

EMA2012 = get_ruleset("ema2012")
EMA2016 = get_ruleset("ema2016")
EMA2025 = get_ruleset("ema2025")
TENHOU = get_ruleset("tenhou")


def hand(base: int, *, han: int = 3, fu: int = 30, limit: Limit = Limit.NONE) -> HandValue:
    """An ordinary hand worth ``base`` base points (han/fu only for show)."""
    return HandValue(han=han, fu=fu, yaku=(), limit=limit, base_points=base)


def yakuman(multiple: int = 1, pao: int = 0) -> HandValue:
    """A yakuman hand; ``pao`` = how many of its multiples a pao player can be liable for."""
    return HandValue(
        han=13 * multiple,
        fu=30,
        yaku=(),
        limit=Limit.YAKUMAN,
        base_points=8000 * multiple,
        yakuman=multiple,
        pao_yakuman=pao,
    )


MANGAN = hand(2000, han=5, limit=Limit.MANGAN)
H3F30 = hand(960)  # 3 han 30 fu: 30 * 2**(2+3) = 960
H1F30 = hand(240, han=1)  # 1 han 30 fu: 30 * 2**3 = 240


def assert_balanced(s: Settlement) -> None:
    """Deltas sum to the sticks taken off the table, never more or less."""
    assert sum(s.deltas) == s.sticks_points
    for p in s.payments:
        assert p.amount > 0
        assert p.payer != p.payee


# ---------------------------------------------------------------- ron_points / tsumo_points


@pytest.mark.parametrize(
    ("base", "dealer", "expected"),
    [
        (240, False, 1000),  # 1 han 30 fu: 240*4 = 960 -> 1000
        (240, True, 1500),  # 240*6 = 1440 -> 1500
        (320, False, 1300),  # 1 han 40 fu: 40*8 = 320; *4 = 1280 -> 1300
        (320, True, 2000),  # 320*6 = 1920 -> 2000
        (400, False, 1600),  # 2 han 25 fu (chiitoitsu): 25*16 = 400; *4 = 1600
        (400, True, 2400),  # 400*6 = 2400
        (960, False, 3900),  # 3 han 30 fu: 960*4 = 3840 -> 3900
        (960, True, 5800),  # 960*6 = 5760 -> 5800
        (1920, False, 7700),  # 4 han 30 fu: 30*64 = 1920; *4 = 7680 -> 7700
        (1920, True, 11600),  # 1920*6 = 11520 -> 11600
        (2000, False, 8000),  # mangan: 2000*4
        (2000, True, 12000),  # 2000*6
        (3000, False, 12000),  # haneman: 3000*4
        (3000, True, 18000),  # 3000*6
        (4000, False, 16000),  # baiman
        (4000, True, 24000),
        (6000, False, 24000),  # sanbaiman
        (6000, True, 36000),
        (8000, False, 32000),  # yakuman
        (8000, True, 48000),
        (16000, False, 64000),  # double yakuman
        (16000, True, 96000),
    ],
)
def test_ron_points(base: int, dealer: bool, expected: int) -> None:
    assert ron_points(base, dealer) == expected


@pytest.mark.parametrize(
    ("base", "winner", "dealer", "expected"),
    [
        # 1 han 30 fu, non-dealer: others 240 -> 300, dealer 480 -> 500 (300/500)
        (240, 1, 0, {0: 500, 2: 300, 3: 300}),
        # 1 han 40 fu, non-dealer: 320 -> 400, dealer 640 -> 700 (400/700, not 2 x 400)
        (320, 2, 0, {0: 700, 1: 400, 3: 400}),
        # 2 han 20 fu (pinfu tsumo): 20*16 = 320 -> 400/700
        (320, 3, 1, {0: 400, 1: 700, 2: 400}),
        # 3 han 30 fu, non-dealer: 960 -> 1000, dealer 1920 -> 2000 (1000/2000)
        (960, 0, 3, {1: 1000, 2: 1000, 3: 2000}),
        # 4 han 30 fu, non-dealer: 1920 -> 2000, dealer 3840 -> 3900 (2000/3900)
        (1920, 1, 0, {0: 3900, 2: 2000, 3: 2000}),
        # mangan, non-dealer: 2000/4000
        (2000, 1, 2, {0: 2000, 2: 4000, 3: 2000}),
        # dealer tsumo: all pay 2x base. 1 han 30 fu: 480 -> 500 each
        (240, 0, 0, {1: 500, 2: 500, 3: 500}),
        # dealer 3 han 30 fu: 1920 -> 2000 each
        (960, 2, 2, {0: 2000, 1: 2000, 3: 2000}),
        # dealer 4 han 30 fu: 3840 -> 3900 each
        (1920, 3, 3, {0: 3900, 1: 3900, 2: 3900}),
        # dealer mangan: 4000 each
        (2000, 1, 1, {0: 4000, 2: 4000, 3: 4000}),
        # dealer yakuman: 16000 each
        (8000, 0, 0, {1: 16000, 2: 16000, 3: 16000}),
    ],
)
def test_tsumo_points(base: int, winner: int, dealer: int, expected: dict[int, int]) -> None:
    assert tsumo_points(base, winner, dealer) == expected


# ---------------------------------------------------------------- tsumo


def test_tsumo_non_dealer_3han30fu() -> None:
    # winner 1, dealer 0: 1000/2000 -> 4000 in all
    s = settle_tsumo(H3F30, winner=1, dealer=0)
    assert s.deltas == (-2000, 4000, -1000, -1000)
    assert s.sticks_to is None
    assert s.sticks_points == 0
    assert_balanced(s)


def test_tsumo_non_dealer_1han30fu() -> None:
    # 300/500: dealer 3 pays 500, seats 0 and 2 pay 300; 1100 in all
    s = settle_tsumo(H1F30, winner=1, dealer=3)
    assert s.deltas == (-300, 1100, -300, -500)


def test_tsumo_dealer_all_pay_double() -> None:
    # dealer 2 wins mangan: 2*2000 = 4000 from each, 12000 in all
    s = settle_tsumo(MANGAN, winner=2, dealer=2)
    assert s.deltas == (-4000, -4000, 12000, -4000)


def test_tsumo_honba_100_from_each_and_sticks_to_winner() -> None:
    # winner 1, dealer 0, 3 han 30 fu, 2 counters, 1 stick:
    # dealer 2000 + 2*100 = 2200; seats 2, 3: 1000 + 200 = 1200; winner 4000 + 600 + 1000 (stick) = 5600
    s = settle_tsumo(H3F30, winner=1, dealer=0, honba=2, sticks=1)
    assert s.deltas == (-2200, 5600, -1200, -1200)
    assert s.sticks_to == 1
    assert s.sticks_points == 1000
    assert sum(s.deltas) == 1000
    assert s.paid_by(0) == 2200
    assert s.received_by(1) == 4600  # payments only; the stick is not a payment
    assert_balanced(s)


def test_tsumo_dealer_honba() -> None:
    # dealer 3 tsumo 1 han 30 fu with 3 counters: (480 -> 500) + 300 = 800 from each; 3 sticks -> +3000
    s = settle_tsumo(H1F30, winner=3, dealer=3, honba=3, sticks=3)
    assert s.deltas == (-800, -800, -800, 2400 + 3000)
    assert s.sticks_points == 3000
    assert_balanced(s)


# ---------------------------------------------------------------- pao (3.3.6)


def test_pao_tsumo_non_dealer_pao_pays_everything() -> None:
    # winner 2 (non-dealer), dealer 0, pao 3: yakuman as a ron 8000*4 = 32000, + 1 counter 300 from pao alone;
    # 2 sticks -> winner 32300 + 2000
    s = settle_tsumo(yakuman(pao=1), winner=2, dealer=0, honba=1, sticks=2, pao=3)
    assert s.deltas == (0, 0, 34300, -32300)
    assert s.paid_by(0) == 0
    assert s.paid_by(1) == 0
    assert s.paid_by(3) == 32300
    assert {p.reason for p in s.payments} == {"pao", "honba"}
    assert s.sticks_to == 2
    assert_balanced(s)


def test_pao_tsumo_dealer_winner() -> None:
    # dealer 0 wins yakuman by tsumo, pao 1: 8000*6 = 48000, + 2 counters = 600, all from seat 1
    s = settle_tsumo(yakuman(pao=1), winner=0, dealer=0, honba=2, pao=1)
    assert s.deltas == (48600, -48600, 0, 0)


def test_pao_tsumo_pao_player_is_dealer() -> None:
    # winner 1 is not the dealer: pao (the dealer, 0) pays what a ron would cost: 32000, not 48000
    s = settle_tsumo(yakuman(pao=1), winner=1, dealer=0, pao=0)
    assert s.deltas == (-32000, 32000, 0, 0)


def test_pao_ron_by_another_player_split_half_each() -> None:
    # winner 1 (non-dealer), discarder 2, pao 3, dealer 0: 32000 shared 16000/16000;
    # 2 counters = 600 from the discarder alone; 1 stick -> winner
    s = settle_ron([RonWin(1, yakuman(pao=1), pao=3)], discarder=2, dealer=0, rules=EMA2012, honba=2, sticks=1)
    assert s.deltas == (0, 32600 + 1000, -16600, -16000)
    assert s.paid_by(3) == 16000
    assert s.paid_by(2) == 16600
    assert s.sticks_to == 1
    assert_balanced(s)


def test_pao_ron_dealer_winner_split() -> None:
    # dealer 0 wins yakuman on seat 1's discard, pao 2: 48000 shared 24000/24000
    s = settle_ron([RonWin(0, yakuman(pao=1), pao=2)], discarder=1, dealer=0, rules=EMA2012)
    assert s.deltas == (48000, -24000, -24000, 0)


def test_pao_ron_discarded_by_pao_player_pays_all() -> None:
    # pao player 3 deals in himself: pays all 32000 and the 1 counter (300)
    s = settle_ron([RonWin(1, yakuman(pao=1), pao=3)], discarder=3, dealer=0, rules=EMA2012, honba=1)
    assert s.deltas == (0, 32300, 0, -32300)


def test_pao_without_pao_yakuman_is_ignored() -> None:
    # a yakuman that is not Big Three Dragons / Big Four Winds (pao_yakuman=0): a plain tsumo, 16000/8000/8000
    s = settle_tsumo(yakuman(pao=0), winner=1, dealer=0, pao=3)
    assert s.deltas == (-16000, 32000, -8000, -8000)


# A stacked hand: two yakuman, one of them the pao yakuman (Big Three Dragons + All Honours under Tenhou).
# Every preset makes the liable player cover the full hand (EMA 3.3.6 "pays the full hand"; Tenhou's settlement
# of a real game: the liable player paid 64,900, the others nothing); a club may limit it to the pao yakuman.
WHOLE = PaoLiability.HAND
PART = PaoLiability.YAKUMAN


def test_pao_stacked_double_yakuman_tsumo_liable_pays_the_whole_hand() -> None:
    # winner 1 (non-dealer), dealer 0, pao 2, 3 counters: 16000 * 4 = 64000 + 900, all from pao
    s = settle_tsumo(yakuman(2, pao=1), winner=1, dealer=0, honba=3, pao=2, pao_liability=WHOLE)
    assert s.deltas == (0, 64900, -64900, 0)
    assert_balanced(s)


def test_pao_stacked_double_yakuman_tsumo_pao_yakuman_only() -> None:
    # the club switch: liable part 8000 * 4 = 32000 + counter 300 from pao; the rest (base 8000) as an ordinary
    # tsumo: dealer 16000, seats 2 and 3 8000 each (pao pays his share too): pao 40300, winner 64300
    s = settle_tsumo(yakuman(2, pao=1), winner=1, dealer=0, honba=1, pao=2, pao_liability=PART)
    assert s.deltas == (-16000, 64300, -40300, -8000)
    assert_balanced(s)


def test_pao_stacked_double_yakuman_tsumo_dealer_winner() -> None:
    # dealer 0 wins double yakuman (1 liable), pao 3
    # whole hand: 16000 * 6 = 96000 from pao alone
    assert settle_tsumo(yakuman(2, pao=1), winner=0, dealer=0, pao=3, pao_liability=WHOLE).deltas == (
        96000, 0, 0, -96000)
    # pao yakuman only: liable 8000*6 = 48000; rest base 8000: 16000 from each: pao 64000, seats 1, 2 16000
    assert settle_tsumo(yakuman(2, pao=1), winner=0, dealer=0, pao=3, pao_liability=PART).deltas == (
        96000, -16000, -16000, -64000)


def test_pao_stacked_double_yakuman_ron() -> None:
    # winner 1 (non-dealer), discarder 3, pao 2, dealer 0, 1 counter
    # whole hand: 64000 shared 32000 / 32000; the counter from the discarder alone
    s = settle_ron([RonWin(1, yakuman(2, pao=1), pao=2)], discarder=3, dealer=0, rules=TENHOU, honba=1)
    assert s.deltas == (0, 64300, -32000, -32300)
    # pao yakuman only: liable 32000 split 16000 / 16000; the rest, a ron of 32000, from the discarder
    part = get_ruleset("tenhou; pao_liability=yakuman")
    s = settle_ron([RonWin(1, yakuman(2, pao=1), pao=2)], discarder=3, dealer=0, rules=part)
    assert s.deltas == (0, 64000, -16000, -48000)


def test_pao_real_daisangen_hand() -> None:
    # a real Big Three Dragons hand scored by score_hand: pao pays the whole 32000 on tsumo
    h = Hand.parse("123m55p", "5p", ["pon:PPP", "pon:FFF", "pon:CCC"])
    value = score_hand(h, WinConditions(tsumo=True, seat=Wind.S), EMA2012)
    assert (value.base_points, value.pao_yakuman) == (8000, 1)  # precondition on the input
    s = settle_tsumo(value, winner=1, dealer=0, pao=0)
    assert s.deltas == (-32000, 32000, 0, 0)


# ---------------------------------------------------------------- ron


def test_ron_non_dealer_and_dealer() -> None:
    # non-dealer 1 on dealer 0's discard, 3 han 30 fu: 3900
    assert settle_ron([RonWin(1, H3F30)], discarder=0, dealer=0, rules=EMA2012).deltas == (-3900, 3900, 0, 0)
    # dealer 0 on seat 2's discard, 3 han 30 fu: 5800
    assert settle_ron([RonWin(0, H3F30)], discarder=2, dealer=0, rules=EMA2012).deltas == (5800, 0, -5800, 0)
    # mangan 8000 / 12000
    assert settle_ron([RonWin(3, MANGAN)], discarder=2, dealer=0, rules=EMA2012).deltas == (0, 0, -8000, 8000)
    assert settle_ron([RonWin(1, MANGAN)], discarder=3, dealer=1, rules=EMA2012).deltas == (0, 12000, 0, -12000)


def test_ron_honba_300_each_from_discarder_and_sticks() -> None:
    # 3 han 30 fu, 4 counters: 3900 + 4*300 = 5100 from the discarder; 2 sticks -> winner +2000
    s = settle_ron([RonWin(2, H3F30)], discarder=1, dealer=0, rules=EMA2012, honba=4, sticks=2)
    assert s.deltas == (0, -5100, 7100, 0)
    assert s.sticks_to == 2
    assert s.sticks_points == 2000
    assert_balanced(s)


def test_ron_kiriage_mangan_value() -> None:
    # a kiriage mangan (4 han 30 fu under ema2025 is worth base 2000) pays as a mangan: 8000
    kiri = HandValue(han=4, fu=30, yaku=(), limit=Limit.MANGAN, base_points=2000, kiriage=True)
    s = settle_ron([RonWin(1, kiri)], discarder=2, dealer=0, rules=EMA2025)
    assert s.deltas == (0, 8000, -8000, 0)


# ---------------------------------------------------------------- multiple ron


def test_double_ron_sticks_to_first_winner_behind_in_seat_number_ema2012() -> None:
    # discarder 3; winners 1 (non-dealer, 3 han 30 fu = 3900) and 0 (dealer, mangan 12000); dealer 0;
    # turn order after 3: 0, 1, 2 -> seat 0 is first although it has the lower number.
    # ema2012: counters to each: 2*300 = 600 each; 3 sticks to seat 0.
    # seat 0: 12000 + 600 + 3000 = 15600; seat 1: 3900 + 600 = 4500; seat 3: -(12600 + 4500) = -17100
    s = settle_ron([RonWin(1, H3F30), RonWin(0, MANGAN)], discarder=3, dealer=0, rules=EMA2012, honba=2, sticks=3)
    assert s.deltas == (15600, 4500, 0, -17100)
    assert s.sticks_to == 0
    assert s.sticks_points == 3000
    assert sum(s.deltas) == 3000
    assert_balanced(s)


def test_double_ron_counters_to_first_only_tenhou() -> None:
    # same as above under Tenhou (multi_ron_honba_to_each=False): seat 1 gets no counters
    # seat 0: 12000 + 600 + 3000 = 15600; seat 1: 3900; seat 3: -(12600 + 3900) = -16500
    s = settle_ron([RonWin(1, H3F30), RonWin(0, MANGAN)], discarder=3, dealer=0, rules=TENHOU, honba=2, sticks=3)
    assert s.deltas == (15600, 3900, 0, -16500)
    assert s.sticks_to == 0
    assert_balanced(s)


def test_double_ron_order_independent_of_list_order() -> None:
    # discarder 2, winners 1 and 3, dealer 0: turn order after 2 is 3, 0, 1 -> seat 3 first
    # ema2012: 1 counter each (300); 1 stick to seat 3. seat 3: 3900+300+1000 = 5200; seat 1: 3900+300 = 4200
    for wins in ([RonWin(1, H3F30), RonWin(3, H3F30)], [RonWin(3, H3F30), RonWin(1, H3F30)]):
        s = settle_ron(wins, discarder=2, dealer=0, rules=EMA2012, honba=1, sticks=1)
        assert s.sticks_to == 3
        assert s.deltas == (0, 4200, -8400, 5200)


def test_triple_ron_each_paid_in_full() -> None:
    # discarder 0 (dealer); winners 1, 2, 3 non-dealers: 1000 (1 han 30 fu), 3900, 8000; ema2012, 1 counter each;
    # 2 sticks to seat 1 (first after 0).
    # seat 1: 1000 + 300 + 2000 = 3300; seat 2: 3900 + 300 = 4200; seat 3: 8000 + 300 = 8300
    # seat 0: -(1300 + 4200 + 8300) = -13800
    wins = [RonWin(3, MANGAN), RonWin(2, H3F30), RonWin(1, H1F30)]
    s = settle_ron(wins, discarder=0, dealer=0, rules=EMA2012, honba=1, sticks=2)
    assert s.deltas == (-13800, 3300, 4200, 8300)
    assert s.sticks_to == 1
    assert_balanced(s)


def test_triple_ron_tenhou_counters_to_first_only() -> None:
    # discarder 1, winners 0, 2, 3, dealer 0; order after 1: 2, 3, 0 -> seat 2 first.
    # 1 han 30 fu each: seat 2 1000 + 3*300 = 1900 (+1000 stick); seat 3 1000; dealer 0 1500
    # discarder: -(1900 + 1000 + 1500) = -4400
    wins = [RonWin(0, H1F30), RonWin(2, H1F30), RonWin(3, H1F30)]
    s = settle_ron(wins, discarder=1, dealer=0, rules=TENHOU, honba=3, sticks=1)
    assert s.deltas == (1500, -4400, 2900, 1000)
    assert s.sticks_to == 2


def test_double_ron_with_pao_on_one_winner() -> None:
    # discarder 0 (dealer); winner 1 yakuman with pao 3 -> 16000 from 3, 16000 from 0;
    # winner 2: 3 han 30 fu 3900 from 0. ema2012, no counters. seat 0 pays 19900.
    wins = [RonWin(2, H3F30), RonWin(1, yakuman(pao=1), pao=3)]
    s = settle_ron(wins, discarder=0, dealer=0, rules=EMA2012)
    assert s.deltas == (-19900, 32000, 3900, -16000)


def test_multiple_ron_disallowed_by_rules() -> None:
    head_bump = dataclasses.replace(EMA2012, multiple_ron=False)
    with pytest.raises(ValueError, match="only one ron"):
        settle_ron([RonWin(1, H3F30), RonWin(2, H3F30)], discarder=0, dealer=0, rules=head_bump)
    # a single ron is still fine
    assert settle_ron([RonWin(1, H3F30)], discarder=0, dealer=0, rules=head_bump).deltas == (-3900, 3900, 0, 0)


# ---------------------------------------------------------------- invalid inputs


SEAT_ERROR = r"seat must be 0\.\.3"


@pytest.mark.parametrize("bad", [-1, 4])
def test_seat_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_tsumo(H3F30, winner=bad, dealer=0)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_tsumo(H3F30, winner=1, dealer=bad)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_tsumo(yakuman(pao=1), winner=1, dealer=0, pao=bad)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_ron([RonWin(bad, H3F30)], discarder=0, dealer=0, rules=EMA2012)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_ron([RonWin(1, H3F30)], discarder=bad, dealer=0, rules=EMA2012)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_ron([RonWin(1, H3F30)], discarder=2, dealer=bad, rules=EMA2012)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_ron([RonWin(1, yakuman(pao=1), pao=bad)], discarder=2, dealer=0, rules=EMA2012)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_nagashi([bad], dealer=0, rules=EMA2012)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_nagashi([1], dealer=bad, rules=EMA2012)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_chombo(bad, dealer=0, rules=EMA2012)
    with pytest.raises(ValueError, match=SEAT_ERROR):
        settle_chombo(1, dealer=bad, rules=EMA2012)


def test_winner_is_discarder() -> None:
    with pytest.raises(ValueError, match="not the discarder"):
        settle_ron([RonWin(2, H3F30)], discarder=2, dealer=0, rules=EMA2012)
    with pytest.raises(ValueError, match="not the discarder"):
        settle_ron([RonWin(1, H3F30), RonWin(2, H3F30)], discarder=2, dealer=0, rules=EMA2012)


def test_duplicate_winners() -> None:
    with pytest.raises(ValueError, match="distinct"):
        settle_ron([RonWin(1, H3F30), RonWin(1, MANGAN)], discarder=0, dealer=0, rules=EMA2012)


def test_no_winner() -> None:
    with pytest.raises(ValueError, match="at least one winner"):
        settle_ron([], discarder=0, dealer=0, rules=EMA2012)


def test_pao_is_winner_on_tsumo() -> None:
    with pytest.raises(ValueError, match="pao"):
        settle_tsumo(yakuman(pao=1), winner=1, dealer=0, pao=1)


def test_pao_is_winner_on_ron() -> None:
    with pytest.raises(ValueError, match="pao"):
        settle_ron([RonWin(1, yakuman(pao=1), pao=1)], discarder=2, dealer=0, rules=EMA2012)


# ---------------------------------------------------------------- exhaustive draw (3.4.2)


@pytest.mark.parametrize(
    ("tenpai", "expected"),
    [
        ((False, False, False, False), (0, 0, 0, 0)),  # nobody tenpai: nothing
        ((True, True, True, True), (0, 0, 0, 0)),  # all tenpai: nothing
        ((True, False, False, False), (3000, -1000, -1000, -1000)),  # 1 tenpai: 1000 from each noten
        ((False, False, True, False), (-1000, -1000, 3000, -1000)),
        ((True, False, True, False), (1500, -1500, 1500, -1500)),  # 2 tenpai: 1500 each way
        ((False, True, True, False), (-1500, 1500, 1500, -1500)),
        ((True, True, False, True), (1000, 1000, -3000, 1000)),  # 3 tenpai: the noten pays 1000 to each
        ((False, True, True, True), (-3000, 1000, 1000, 1000)),
    ],
)
def test_exhaustive_draw_noten_payments(tenpai: tuple[bool, ...], expected: tuple[int, ...]) -> None:
    s = settle_exhaustive_draw(tenpai)
    assert s.deltas == expected
    assert s.sticks_to is None
    assert s.sticks_points == 0
    assert all(p.reason == "noten" for p in s.payments)
    assert_balanced(s)
    if expected == (0, 0, 0, 0):
        assert s.payments == ()


@pytest.mark.parametrize("tenpai", [(), (True, False, True), (True, False, False, False, True)])
def test_exhaustive_draw_needs_four_flags(tenpai: tuple[bool, ...]) -> None:
    with pytest.raises(ValueError, match="one flag per seat"):
        settle_exhaustive_draw(tenpai)


# ---------------------------------------------------------------- nagashi mangan


def test_nagashi_as_win_ema2012() -> None:
    # seat 2, dealer 0, 1 counter, 2 sticks: a mangan tsumo 2000/4000 plus 100 from each, sticks to seat 2
    # dealer -4100, seats 1, 3 -2100, seat 2 +8300 + 2000 = 10300
    s = settle_nagashi([2], dealer=0, rules=EMA2012, honba=1, sticks=2)
    assert s.deltas == (-4100, -2100, 10300, -2100)
    assert s.sticks_to == 2
    assert s.sticks_points == 2000
    assert_balanced(s)


def test_nagashi_dealer_as_win_ema2012() -> None:
    # dealer 1 nagashi: 4000 + 2*100 from each = 4200; 12600 + 1000 stick
    s = settle_nagashi([1], dealer=1, rules=EMA2012, honba=2, sticks=1)
    assert s.deltas == (-4200, 13600, -4200, -4200)


def test_nagashi_as_draw_payment_tenhou() -> None:
    # Tenhou: a draw payment: mangan tsumo 2000/4000, no counters, no sticks
    s = settle_nagashi([2], dealer=0, rules=TENHOU, honba=1, sticks=2)
    assert s.deltas == (-4000, -2000, 8000, -2000)
    assert s.sticks_to is None
    assert s.sticks_points == 0
    assert all(p.reason == "nagashi" for p in s.payments)
    assert_balanced(s)


def test_nagashi_two_players_ema2012_sticks_to_first_from_dealer() -> None:
    # seats 1 and 3, dealer 0, no counters, 1 stick:
    # seat 1 gets 4000 (0) + 2000 (2) + 2000 (3), pays 2000 to seat 3 -> +6000; seat 3 likewise +6000
    # dealer pays 4000 twice = -8000; seat 2 pays 2000 twice = -4000; stick to seat 1 (first from the dealer)
    s = settle_nagashi([3, 1], dealer=0, rules=EMA2012, sticks=1)
    assert s.deltas == (-8000, 7000, -4000, 6000)
    assert s.sticks_to == 1
    # with dealer 2 the first from the dealer is seat 3 ((3-2)%4 = 1 < (1-2)%4 = 3):
    # seat 1: +2000 (0) +4000 (2) +2000 (3) -2000 (to 3) = 6000; seat 3 likewise 6000; seat 2 -8000; seat 0 -4000
    s = settle_nagashi([1, 3], dealer=2, rules=EMA2012, sticks=1)
    assert s.sticks_to == 3
    assert s.deltas == (-4000, 6000, -8000, 7000)


@pytest.mark.parametrize("name", ["ema2016", "ema2025"])
def test_nagashi_not_played(name: str) -> None:
    with pytest.raises(ValueError, match="not played"):
        settle_nagashi([1], dealer=0, rules=get_ruleset(name))


def test_nagashi_needs_a_player() -> None:
    with pytest.raises(ValueError, match="at least one player"):
        settle_nagashi([], dealer=0, rules=EMA2012)


def test_nagashi_duplicate_seats() -> None:
    with pytest.raises(ValueError, match="listed once"):
        settle_nagashi([1, 1], dealer=0, rules=EMA2012)


def test_pao_needs_the_rule() -> None:
    no_pao = dataclasses.replace(EMA2012, pao=False)
    with pytest.raises(ValueError, match="pao is not played"):
        settle_ron([RonWin(1, yakuman(pao=1), pao=3)], discarder=2, dealer=0, rules=no_pao)


# ---------------------------------------------------------------- chombo (3.4.6)


def test_chombo_non_dealer_ema2012() -> None:
    # offender 2, dealer 0: 4000 to the dealer, 2000 to each other -> -8000
    s = settle_chombo(2, dealer=0, rules=EMA2012)
    assert s.deltas == (4000, 2000, -8000, 2000)
    assert s.final_penalties == (0, 0, 0, 0)
    assert all(p.reason == "chombo" for p in s.payments)
    assert_balanced(s)


def test_chombo_dealer_ema2012() -> None:
    # dealer 1 is the offender: 4000 to each -> -12000
    s = settle_chombo(1, dealer=1, rules=EMA2012)
    assert s.deltas == (4000, -12000, 4000, 4000)
    assert s.final_penalties == (0, 0, 0, 0)


@pytest.mark.parametrize("name", ["ema2016", "ema2025"])
@pytest.mark.parametrize(("offender", "dealer"), [(2, 0), (1, 1)])
def test_chombo_final_penalty_ema2016(name: str, offender: int, dealer: int) -> None:
    s = settle_chombo(offender, dealer=dealer, rules=get_ruleset(name))
    assert s.deltas == (0, 0, 0, 0)
    assert s.payments == ()
    expected = [0, 0, 0, 0]
    expected[offender] = 20000
    assert s.final_penalties == tuple(expected)


# ---------------------------------------------------------------- final standings (3.6)


def by_seat(standings: list) -> dict:
    return {st.seat: st for st in standings}


def test_final_standings_plain_ema2012() -> None:
    # scores 42000, 28000, 35000, 15000 (sum 120000): ranking seats 0, 2, 1, 3
    # result = points - 30000 + uma: 12000+30000 = 42000; 5000+10000 = 15000; -2000-10000 = -12000;
    # -15000-30000 = -45000; sum 0
    st = final_standings([42000, 28000, 35000, 15000], EMA2012)
    assert [s.seat for s in st] == [0, 2, 1, 3]
    assert [s.place for s in st] == [1, 2, 3, 4]
    assert [s.uma for s in st] == [30000, 10000, -10000, -30000]
    assert [s.result for s in st] == [42000, 15000, -12000, -45000]
    assert [s.oka for s in st] == [0, 0, 0, 0]
    assert sum(s.result for s in st) == 0


def test_final_standings_ema2016_uma_and_chombo_penalty_after_uma() -> None:
    # same scores, uma 15/5/-5/-15 thousand, seat 0 has a 20000 chombo penalty (after uma; place unchanged)
    # seat 0: 12000 + 15000 - 20000 = 7000; seat 2: 5000 + 5000 = 10000; seat 1: -2000 - 5000 = -7000;
    # seat 3: -15000 - 15000 = -30000; sum = -20000 (the penalty)
    st = final_standings([42000, 28000, 35000, 15000], EMA2016, penalties=(20000, 0, 0, 0))
    assert [s.seat for s in st] == [0, 2, 1, 3]
    assert [s.place for s in st] == [1, 2, 3, 4]
    assert [s.uma for s in st] == [15000, 5000, -5000, -15000]
    assert [s.penalty for s in st] == [20000, 0, 0, 0]
    assert [s.result for s in st] == [7000, 10000, -7000, -30000]
    assert sum(s.result for s in st) == -20000


def test_final_standings_two_tied_first_ema2012() -> None:
    # 40000, 40000, 25000, 15000: seats 0 and 1 share places 1-2: uma (30000+10000)/2 = 20000 each
    # results: 10000+20000 = 30000 each; -5000-10000 = -15000; -15000-30000 = -45000
    st = by_seat(final_standings([40000, 40000, 25000, 15000], EMA2012))
    assert [st[s].place for s in range(4)] == [1, 1, 3, 4]
    assert [st[s].uma for s in range(4)] == [20000, 20000, -10000, -30000]
    assert [st[s].result for s in range(4)] == [30000, 30000, -15000, -45000]


def test_final_standings_three_tied_first_ema2012() -> None:
    # 35000 x3, 15000: uma (30000+10000-10000)/3 = 10000 each; results 5000+10000 = 15000; -15000-30000
    st = by_seat(final_standings([35000, 35000, 15000, 35000], EMA2012))
    assert [st[s].place for s in range(4)] == [1, 1, 4, 1]
    assert [st[s].uma for s in range(4)] == [10000, 10000, -30000, 10000]
    assert [st[s].result for s in range(4)] == [15000, 15000, -45000, 15000]


def test_final_standings_four_tied_ema2012() -> None:
    st = final_standings([30000] * 4, EMA2012)
    assert [s.place for s in st] == [1, 1, 1, 1]
    assert [s.uma for s in st] == [0, 0, 0, 0]
    assert [s.result for s in st] == [0, 0, 0, 0]


def test_final_standings_tied_second_and_tied_last_ema2012() -> None:
    # 50000, 25000, 25000, 20000: seats 1, 2 share places 2-3: (10000-10000)/2 = 0
    st = by_seat(final_standings([50000, 25000, 25000, 20000], EMA2012))
    assert [st[s].place for s in range(4)] == [1, 2, 2, 4]
    assert [st[s].uma for s in range(4)] == [30000, 0, 0, -30000]
    # 45000, 25000 x3: places 2-4 shared: (10000-10000-30000)/3 = -10000 each
    st = by_seat(final_standings([45000, 25000, 25000, 25000], EMA2012))
    assert [st[s].place for s in range(4)] == [1, 2, 2, 2]
    assert [st[s].uma for s in range(4)] == [30000, -10000, -10000, -10000]
    assert [st[s].result for s in range(4)] == [45000, -15000, -15000, -15000]


def test_final_standings_two_tied_last_ema2016() -> None:
    # ema2016: 40000, 30000, 25000, 25000: last two share (-5000-15000)/2 = -10000
    st = by_seat(final_standings([40000, 30000, 25000, 25000], EMA2016))
    assert [st[s].place for s in range(4)] == [1, 2, 3, 3]
    assert [st[s].uma for s in range(4)] == [15000, 5000, -10000, -10000]
    # results: 10000+15000, 0+5000, -5000-10000 twice -> sum 0
    assert [st[s].result for s in range(4)] == [25000, 5000, -15000, -15000]


def test_final_standings_leftover_sticks_to_first() -> None:
    # 40000, 30000, 27000, 21000 (sum 118000) + 2 sticks left: seat 0 gets 2000 -> 42000
    # results: 12000+30000 = 42000; 0+10000; -3000-10000 = -13000; -9000-30000 = -39000; sum 0
    st = by_seat(final_standings([40000, 30000, 27000, 21000], EMA2012, leftover_sticks=2))
    assert [st[s].points for s in range(4)] == [42000, 30000, 27000, 21000]
    assert [st[s].result for s in range(4)] == [42000, 10000, -13000, -39000]


def test_final_standings_leftover_sticks_split_between_tied_first() -> None:
    # 40000, 40000, 20000, 18000 (sum 118000) + 2 sticks: 1000 each -> 41000;
    # results 11000 + 20000 = 31000 each; -10000-10000 = -20000; -12000-30000 = -42000; sum 0
    st = by_seat(final_standings([40000, 40000, 20000, 18000], EMA2012, leftover_sticks=2))
    assert [st[s].points for s in range(4)] == [41000, 41000, 20000, 18000]
    assert [st[s].result for s in range(4)] == [31000, 31000, -20000, -42000]
    assert sum(st[s].result for s in range(4)) == 0


def test_final_standings_odd_stick_split_in_hundreds() -> None:
    # 1 stick between two tied firsts: 500 each
    st = by_seat(final_standings([40000, 20000, 40000, 19000], EMA2012, leftover_sticks=1))
    assert (st[0].points, st[2].points) == (40500, 40500)
    # 1 stick among three tied firsts: 300 each in whole hundreds, the 100 left to the seat nearest the first dealer
    st = by_seat(final_standings([20000, 33000, 33000, 33000], EMA2012, leftover_sticks=1, first_dealer=2))
    assert (st[1].points, st[2].points, st[3].points) == (33300, 33400, 33300)
    assert sum(s.result for s in st.values()) == 0


def test_final_standings_tenhou_oka_and_uma() -> None:
    # Tenhou: start 25000, return 30000 -> oka 4*5000 = 20000 to first; uma 20/10/-10/-20 thousand
    # 40000, 30000, 20000, 10000 (sum 100000):
    # 10000+20000+20000 = 50000; 0+10000 = 10000; -10000-10000 = -20000; -20000-20000 = -40000
    st = final_standings([40000, 30000, 20000, 10000], TENHOU)
    assert [s.oka for s in st] == [20000, 0, 0, 0]
    assert [s.uma for s in st] == [20000, 10000, -10000, -20000]
    assert [s.result for s in st] == [50000, 10000, -20000, -40000]


def test_final_standings_real_tenhou_game() -> None:
    # a real Tenhou final: 33400, 36000, 32000, -1400 (sum 100000)
    # seat 1: 36000 - 30000 + 20000 (oka) + 20000 = 46000   -> +46.0
    # seat 0: 33400 - 30000 + 10000 = 13400                  -> +13.4
    # seat 2: 32000 - 30000 - 10000 = -8000                  -> -8.0
    # seat 3: -1400 - 30000 - 20000 = -51400                 -> -51.4
    st = final_standings([33400, 36000, 32000, -1400], TENHOU)
    assert [s.seat for s in st] == [1, 0, 2, 3]
    assert [s.place for s in st] == [1, 2, 3, 4]
    results = {s.seat: s.result for s in st}
    assert results == {0: 13400, 1: 46000, 2: -8000, 3: -51400}
    assert [round(results[s] / 1000, 1) for s in range(4)] == [13.4, 46.0, -8.0, -51.4]
    assert sum(results.values()) == 0


def test_final_standings_tenhou_ties_broken_by_seat_from_first_dealer() -> None:
    # 30000, 25000, 25000, 20000: seats 1 and 2 tied
    # first dealer 0: seat 1 ranks above seat 2. seat 0: 0+20000+20000 = 40000; seat 1: -5000+10000 = 5000;
    # seat 2: -5000-10000 = -15000; seat 3: -10000-20000 = -30000
    st = final_standings([30000, 25000, 25000, 20000], TENHOU, first_dealer=0)
    assert [s.seat for s in st] == [0, 1, 2, 3]
    assert [s.place for s in st] == [1, 2, 3, 4]
    assert [s.result for s in st] == [40000, 5000, -15000, -30000]
    # first dealer 2: order from the first dealer is 2, 3, 0, 1 -> seat 2 ranks above seat 1
    st = by_seat(final_standings([30000, 25000, 25000, 20000], TENHOU, first_dealer=2))
    assert (st[2].place, st[1].place) == (2, 3)
    assert (st[2].result, st[1].result) == (5000, -15000)


def test_final_standings_tenhou_tie_for_first_with_sticks() -> None:
    # 35000, 25000, 35000, 4000 (sum 99000) + 1 stick; first dealer 1: order 1, 2, 3, 0 -> seat 2 is first
    # seat 2: 35000 + 1000 = 36000 -> 6000 + 20000 + 20000 = 46000; seat 0: 5000 + 10000 = 15000 (no oka, no stick)
    # seat 1: -5000 - 10000 = -15000; seat 3: -26000 - 20000 = -46000; sum 0
    st = by_seat(final_standings([35000, 25000, 35000, 4000], TENHOU, leftover_sticks=1, first_dealer=1))
    assert [st[s].place for s in range(4)] == [2, 3, 1, 4]
    assert [st[s].points for s in range(4)] == [35000, 25000, 36000, 4000]
    assert [st[s].oka for s in range(4)] == [0, 0, 20000, 0]
    assert [st[s].result for s in range(4)] == [15000, -15000, 46000, -46000]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_final_standings_sum_to_zero_every_preset(name: str) -> None:
    rules = PRESETS[name]
    # four scores summing to 4 * start points, one leftover stick taken off them
    start = rules.start_points
    scores = [start + 15000, start - 3000, start + 2000, start - 15000]
    st = final_standings(scores, rules, leftover_sticks=1)
    assert sum(s.result for s in st) == 0


@pytest.mark.parametrize(("scores", "penalties"), [([30000] * 3, (0, 0, 0, 0)), ([30000] * 4, (0, 0, 0))])
def test_final_standings_needs_four(scores: list[int], penalties: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="four scores"):
        final_standings(scores, EMA2012, penalties=penalties)
