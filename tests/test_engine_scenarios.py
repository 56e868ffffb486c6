"""EMA behaviour that no recorded game shows, played as short event scripts.

Every expected figure is worked out by hand from /work/shared/RULES.md (the
arithmetic is in the comments); none is read back from the engine. Unless a
test says otherwise the hands are played in camera mode (the deal is not
seen, the draws are inferred from the discards) and winners show their hands.
Seat 0 is the first dealer. The default dora indicator is W (dora North),
which none of the winning hands below holds.
"""

from __future__ import annotations

import dataclasses

import pytest

from tablesvc.engine.events import (
    AbortiveDraw,
    Chombo,
    Discard,
    DoraRevealed,
    Draw,
    EndGame,
    ExhaustiveDraw,
    Ron,
    RonClaim,
    SetScores,
    Tsumo,
)
from tablesvc.engine.results import GameResult, HandResult, RiichiAccepted
from tablesvc.engine.state import Phase, Step
from tablesvc.rules import ruleset
from tablesvc.tiles import Tile
from tests.scenario import Table, assert_unchanged_after, deal, t, ts

# A closed tanyao-pinfu hand: 234m 567m 345p 88p + 56s, waiting on 4s (or 7s).
# Shown on 4s it reads 234m 567m 345p 456s 88p: all sequences, two-sided wait, pair of simples.
PINFU_TANYAO = "234m567m345p88p456s"
# A closed hand with no yaku of its own: 123m 789m 345p 11s + 46s, waiting on 5s (closed wait).
NO_YAKU = "123m789m345p11s456s"


def _win(tb: Table) -> HandResult:
    result = tb.last_result
    assert result.kind == "win"
    return result


def _yaku(result: HandResult) -> dict[str, int]:
    (win,) = result.wins
    return dict(win.yaku)


def _four_winds(tb: Table, script: str = "0:dE 1:dE 2:dE 3:dE") -> HandResult:
    tb.start_hand()
    tb.play(script)
    tb.send(AbortiveDraw("four_winds"))
    return tb.last_result


# ---------------------------------------------------------------- pao (3.3.6)

# Seat 1 (South, not the dealer) pons white from seat 0, green from seat 2, and red from seat 3:
# seat 3 fed the third dragon set and is liable for Big Three Dragons.
# Seat 1 discards 1p, 9p, 9s after the pons and keeps 234m 5s (a single wait on 5s).
DRAGON_PONS = "0:dP 1:pon 1:d1p 2:dF 1:pon 1:d9p 2:d7s 3:dC 1:pon 1:d9s"


def test_pao_daisangen_tsumo_feeder_pays_everything_with_counters() -> None:
    tb = Table()
    _four_winds(tb)  # an abortive draw: one counter on the table, seat 0 deals again
    assert (tb.state.honba, tb.state.dealer) == (1, 0)
    tb.start_hand()
    tb.play(DRAGON_PONS)
    assert tb.hand.pao == {1: ("daisangen", 3)}
    tb.play("2:d2m 3:d3m 0:d4m")
    tb.tsumo(1, "234m55s", "5s")
    result = _win(tb)
    (win,) = result.wins
    assert (win.han, win.limit, win.pao, win.points) == (13, "yakuman", 3, 32000)
    # yakuman base 8000; the liable seat pays it as a non-dealer ron would cost: 4 x 8000 = 32000,
    # and the one counter in full: 300. Seats 0 and 2 pay nothing.
    assert result.deltas == (0, 32300, 0, -32300)
    assert tb.scores == (30000, 62300, 30000, -2300)
    # a non-dealer won: the counters go, seat 1 deals next
    assert (tb.state.honba, tb.state.dealer, tb.state.round) == (0, 1, 1)


def test_pao_daisangen_ron_from_a_third_player_is_shared() -> None:
    tb = Table()
    tb.start_hand()
    tb.play(DRAGON_PONS + " 2:d5s")
    tb.ron(1, "234m55s")
    result = _win(tb)
    assert result.wins[0].pao == 3
    # 32000 for a non-dealer yakuman ron, half from the discarder (seat 2), half from the feeder (seat 3)
    assert result.deltas == (0, 32000, -16000, -16000)


def test_pao_feeder_who_deals_in_pays_alone() -> None:
    tb = Table()
    tb.start_hand()
    tb.play(DRAGON_PONS + " 2:d2m 3:d5s")
    tb.ron(1, "234m55s")
    # discarder and liable player are the same seat: it pays the whole 32000
    assert _win(tb).deltas == (0, 32000, 0, -32000)


def test_pao_does_not_touch_another_players_win() -> None:
    tb = Table()
    tb.start_hand()
    tb.play(DRAGON_PONS + " 2:d3m 3:d4m 0:d6m 1:d2p")
    assert tb.hand.pao == {1: ("daisangen", 3)}
    tb.tsumo(2, PINFU_TANYAO, "4s")
    result = _win(tb)
    assert result.wins[0].pao is None
    assert _yaku(result) == {"Menzen Tsumo": 1, "Pinfu": 1, "Tanyao": 1}
    # 3 han 20 fu: base 20 x 2^5 = 640; dealer pays 2 x 640 = 1280 -> 1300, the others 640 -> 700 each.
    # The liable seat 3 pays only its ordinary share.
    assert result.deltas == (-1300, -700, 2700, -700)


def test_pao_dealer_daisangen_tsumo() -> None:
    tb = Table()
    tb.start_hand()
    # the dealer pons white and green from seat 1 and red from seat 2
    tb.play("0:d1m 1:dP 0:pon 0:d9p 1:dF 0:pon 0:d9s 1:d2m 2:dC 0:pon 0:d1s 1:d3m 2:d4m 3:d6m")
    tb.tsumo(0, "234m55s", "5s")
    # a dealer yakuman as a ron: 6 x 8000 = 48000, all from seat 2
    assert _win(tb).deltas == (48000, 0, -48000, 0)


def test_pao_daisuushi_ema2012_double_yakuman_feeder_pays_all() -> None:
    tb = Table()
    tb.start_hand(dora="9m")  # dora 1m
    # seat 1 pons E (seat 0), S (seat 2), W (seat 3), and the fourth wind, N, from seat 0: seat 0 is liable
    tb.play("0:dE 1:pon 1:d1p 2:dS 1:pon 1:d9p 2:d2m 3:dW 1:pon 1:d9s 2:d3m 3:d6p 0:dN 1:pon 1:d1s")
    assert tb.hand.pao == {1: ("daisuushi", 0)}
    tb.play("2:d4m 3:d6m 0:d7m")
    tb.tsumo(1, "55s", "5s")
    result = _win(tb)
    (win,) = result.wins
    # Big Four Winds is a double yakuman under ema2012: base 16000; as a non-dealer ron 4 x 16000 = 64000
    assert (win.han, win.pao) == (26, 0)
    assert result.deltas == (-64000, 64000, 0, 0)


def test_pao_with_a_second_yakuman_ema2012_does_not_stack() -> None:
    tb = Table()
    tb.start_hand()
    tb.play(DRAGON_PONS + " 2:d2m 3:d3m 0:d4m")
    # all honours as well (PPP FFF CCC EEE SS): still one yakuman under ema2012, and the feeder's
    tb.tsumo(1, "EEESS", "S")
    result = _win(tb)
    (win,) = result.wins
    assert (win.han, win.pao) == (13, 3)
    assert result.deltas == (0, 32000, 0, -32000)


# Big Three Dragons and All Honours (PPP FFF CCC EEE SS) won by seat 1 with seat 3 liable, the hand of a real
# Tenhou game: each preset's own rule. EMA (3.3.6): the hand does not stack, it is worth one yakuman and the
# liable player "pays the full hand" on a self-draw and shares a ron with the discarder. Tenhou stacks the two
# yakuman (64,000) and its own settlement of that game made the liable player pay all of it, counters too.
COMPOSITE = {"ema2012": 32000, "ema2016": 32000, "ema2025": 32000, "tenhou": 64000}


@pytest.mark.parametrize("rules", sorted(COMPOSITE))
def test_pao_on_a_composite_yakuman_tsumo_each_preset(rules: str) -> None:
    tb = Table(rules)
    tb.start_hand()
    tb.play(DRAGON_PONS + " 2:d2m 3:d3m 0:d4m")
    tb.tsumo(1, "EEESS", "S")
    result = _win(tb)
    (win,) = result.wins
    assert win.pao == 3
    value = COMPOSITE[rules]
    assert result.deltas == (0, value, 0, -value)


@pytest.mark.parametrize("rules", sorted(COMPOSITE))
def test_pao_on_a_composite_yakuman_ron_each_preset(rules: str) -> None:
    tb = Table(rules)
    tb.start_hand()
    tb.play(DRAGON_PONS + " 2:dS")
    tb.ron(1, "EEESS")
    result = _win(tb)
    assert result.wins[0].pao == 3
    value = COMPOSITE[rules]
    # the whole hand shared: half from the discarder (seat 2), half from the liable seat 3
    assert result.deltas == (0, value, -value // 2, -value // 2)


def test_pao_on_a_composite_yakuman_pao_yakuman_only_as_a_house_rule() -> None:
    tb = Table("tenhou; pao_liability=yakuman")
    tb.start_hand()
    tb.play(DRAGON_PONS + " 2:d2m 3:d3m 0:d4m")
    tb.tsumo(1, "EEESS", "S")
    # the liable seat pays Big Three Dragons as a ron (32,000); All Honours is an ordinary non-dealer tsumo
    # of base 8000: 16,000 from the dealer, 8,000 from each other seat, the liable one included
    assert _win(tb).deltas == (-16000, 64000, -8000, -40000)


# ---------------------------------------------------------------- 3.4.11


def test_five_counters_need_two_han_from_yaku() -> None:
    tb = Table()
    for _ in range(5):
        _four_winds(tb)
    assert (tb.state.honba, tb.state.dealer, tb.state.round) == (5, 0, 0)
    tb.start_hand(dora="8p")  # dora 9p
    tb.play("0:d9m 1:d1p 2:dN 3:dW 0:d8m 1:d4s")
    # Seat 2: 123m 789p 234s 99s + a concealed white triplet: white dragon 1 han, and one dora (9p),
    # so 2 han but only 1 from yaku: refused with five counters.
    message = assert_unchanged_after(
        tb.engine, Ron(1, (RonClaim(2, ts("123m789p234s99sPPP")),)), "two han from yaku", "chombo"
    )
    assert "5 counters" in message
    # Seat 3: pinfu + tanyao = 2 han from yaku: accepted.
    tb.ron(3, PINFU_TANYAO)
    result = _win(tb)
    assert _yaku(result) == {"Pinfu": 1, "Tanyao": 1}
    # 2 han 30 fu: base 30 x 2^4 = 480; ron 4 x 480 = 1920 -> 2000; counters 5 x 300 = 1500
    assert (result.wins[0].han, result.wins[0].fu, result.wins[0].points) == (2, 30, 2000)
    assert result.deltas == (0, -3500, 0, 3500)
    assert (tb.state.honba, tb.state.dealer) == (0, 1)


# ---------------------------------------------------------------- chombo (3.4.6)


def test_chombo_non_dealer_ema2012_pays_mangan_and_the_hand_is_replayed() -> None:
    tb = Table()
    # hand 1: seat 0 declares (double) riichi with E, then four winds: a stick and a counter stay
    result = _four_winds(tb, "0:rE 1:dE 2:dE 3:dE")
    assert result.deposits == (0,)
    assert (tb.state.honba, tb.state.sticks) == (1, 1)
    assert tb.scores == (29000, 30000, 30000, 30000)
    # hand 2: seat 1 puts a riichi stick down, then seat 2 commits a chombo
    tb.start_hand()
    tb.play("0:d2m 1:r3m 2:d4m")
    assert tb.hand.sticks == 2
    assert tb.scores == (29000, 29000, 30000, 30000)
    out = tb.send(Chombo(2, reason="false ron"))
    (result,) = out
    assert (result.kind, result.chombo, result.dealer_continues) == ("chombo", 2, True)
    # non-dealer offender: 4000 to the dealer, 2000 to each other player
    assert result.deltas == (4000, 2000, -8000, 2000)
    # seat 1's stick of this hand goes back (29000 + 1000 + 2000); the stick of hand 1 stays on the table
    assert tb.scores == (33000, 32000, 22000, 32000)
    assert (tb.state.round, tb.state.honba, tb.state.sticks, tb.state.dealer) == (0, 1, 1, 0)
    assert tb.state.phase is Phase.BETWEEN_HANDS
    # the replay: same round, same counter, same dealer, the old stick still there
    tb.start_hand()
    assert (tb.hand.round, tb.hand.honba, tb.hand.sticks, tb.hand.dealer) == (0, 1, 1, 0)


def test_chombo_dealer_ema2012_pays_4000_each() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:d2m 1:d3m")
    (result,) = tb.send(Chombo(0))
    assert result.deltas == (-12000, 4000, 4000, 4000)
    assert (tb.state.dealer, tb.state.round, tb.state.honba) == (0, 0, 0)


def test_chombo_ema2016_is_taken_off_the_final_result_after_uma() -> None:
    tb = Table("ema2016")
    tb.start_hand()
    tb.play("0:d2m 1:d3m")
    (result,) = tb.send(Chombo(2))
    assert result.deltas == (0, 0, 0, 0)
    assert tb.scores == (30000, 30000, 30000, 30000)
    tb.send(SetScores((40000, 35000, 25000, 20000)))
    (final,) = tb.send(EndGame())
    assert isinstance(final, GameResult)
    by_seat = {s.seat: s for s in final.standings}
    # uma 15/5/-5/-15 thousand by points; the penalty does not change the places
    assert [(s.seat, s.place, s.uma, s.penalty) for s in final.standings] == [
        (0, 1, 15000, 0),
        (1, 2, 5000, 0),
        (2, 3, -5000, 20000),
        (3, 4, -15000, 0),
    ]
    assert by_seat[0].result == 40000 - 30000 + 15000  # 25000
    assert by_seat[1].result == 35000 - 30000 + 5000  # 10000
    assert by_seat[2].result == 25000 - 30000 - 5000 - 20000  # -30000, below seat 3 yet third
    assert by_seat[3].result == 20000 - 30000 - 15000  # -25000


# ---------------------------------------------------------------- end of game (3.6)


def test_end_game_tied_first_share_uma_and_leftover_sticks() -> None:
    tb = Table()
    _four_winds(tb, "0:rE 1:rE 2:dE 3:dE")  # two riichi sticks stay on the table
    assert tb.state.sticks == 2
    tb.send(SetScores((35000, 35000, 28000, 20000)))  # 118000 + 2000 on the table
    (final,) = tb.send(EndGame(reason="time"))
    assert isinstance(final, GameResult)
    assert final.leftover_sticks == 2
    # tied first: uma (30000 + 10000) / 2 = 20000 each, sticks 2000 / 2 = 1000 each
    assert [(s.seat, s.points, s.place, s.uma, s.result) for s in final.standings] == [
        (0, 36000, 1, 20000, 36000 - 30000 + 20000),
        (1, 36000, 1, 20000, 36000 - 30000 + 20000),
        (2, 28000, 3, -10000, 28000 - 30000 - 10000),
        (3, 20000, 4, -30000, 20000 - 30000 - 30000),
    ]
    assert final.scores == (36000, 36000, 28000, 20000)
    assert tb.state.phase is Phase.GAME_OVER
    assert tb.state.sticks == 0


def test_end_game_tied_third_share_uma() -> None:
    tb = Table()
    tb.send(SetScores((40000, 25000, 25000, 30000)))
    (final,) = tb.send(EndGame())
    # seats 1 and 2 share places 3 and 4: (-10000 - 30000) / 2 = -20000 each
    assert [(s.seat, s.place, s.uma, s.result) for s in final.standings] == [
        (0, 1, 30000, 40000),
        (3, 2, 10000, 10000),
        (1, 3, -20000, -25000),
        (2, 3, -20000, -25000),
    ]


def test_game_ends_after_south_4_with_three_tied_for_second() -> None:
    tb = Table()
    for hand in range(7):  # E1..S3, everyone noten: the deal moves on every time
        result = tb.draw_hand((False, False, False, False))
        assert (result.round, result.dealer, result.deltas) == (hand, hand % 4, (0, 0, 0, 0))
        assert tb.state.phase is Phase.BETWEEN_HANDS
    assert (tb.state.round, tb.state.dealer, tb.state.honba) == (7, 3, 7)
    # South 4: only seat 0 tenpai (+3000, the others -1000); the dealer (seat 3) is noten: the game ends
    tb.start_hand()
    tb.exhaust()
    out = tb.send(ExhaustiveDraw((True, False, False, False)))
    assert [type(o) for o in out] == [HandResult, GameResult]
    final = out[1]
    # seats 1-3 tied on 29000 share places 2-4: (10000 - 10000 - 30000) / 3 = -10000 each
    assert [(s.seat, s.points, s.place, s.uma, s.result) for s in final.standings] == [
        (0, 33000, 1, 30000, 33000),
        (1, 29000, 2, -10000, -11000),
        (2, 29000, 2, -10000, -11000),
        (3, 29000, 2, -10000, -11000),
    ]
    assert tb.state.phase is Phase.GAME_OVER


# ---------------------------------------------------------------- kuikae (3.3.2-3.3.4)


def test_kuikae_after_pon() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:d5p 2:pon")
    assert_unchanged_after(tb.engine, Discard(2, t("5p")), "kuikae")
    assert_unchanged_after(tb.engine, Discard(2, t("5pr")), "kuikae")  # a red five is a five
    tb.play("2:d6p")
    assert tb.hand.last_discard == (2, t("6p"))


@pytest.mark.parametrize(
    ("own", "called", "banned", "allowed"),
    [
        ("45m", "6m", ("6m", "3m"), "7m"),  # 45 + 6: neither 6 nor 3
        ("56m", "4m", ("4m", "7m"), "3m"),  # 56 + 4: neither 4 nor 7
        ("46m", "5m", ("5m",), "3m"),  # closed wait: only the 5
        ("78m", "9m", ("9m", "6m"), "5m"),
        ("23m", "1m", ("1m", "4m"), "5m"),
    ],
)
def test_kuikae_after_chi(own: str, called: str, banned: tuple[str, ...], allowed: str) -> None:
    tb = Table()
    tb.start_hand()
    tb.play(f"0:d{called} 1:chi{own}")
    for tile in banned:
        assert_unchanged_after(tb.engine, Discard(1, t(tile)), "kuikae", tile)
    tb.play(f"1:d{allowed}")


def test_kuikae_allowed_by_a_house_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    # GameStart names a preset; a house rule set is registered under its own name
    house = dataclasses.replace(ruleset.PRESETS["ema2012"], name="house", kuikae_forbidden=False)
    monkeypatch.setitem(ruleset.PRESETS, "house", house)
    tb = Table("house")
    tb.start_hand()
    tb.play("0:d5p 2:pon 2:d5p")
    tb.play("3:d6m 0:chi45m 0:d3m")
    assert tb.hand.last_discard == (0, t("3m"))


# ---------------------------------------------------------------- riichi (3.3.12)


def test_riichi_discard_won_on_deposits_no_stick() -> None:
    tb = Table()
    tb.start_hand()
    out = tb.play("0:d1m 1:d9p 2:d3m 3:d4m 0:d6m 1:r4s")
    assert not any(isinstance(o, RiichiAccepted) for o in out)
    tb.ron(2, PINFU_TANYAO)
    result = _win(tb)
    # 2 han 30 fu ron: 2000; the riichi is void, no stick changes hands
    assert result.deposits == ()
    assert result.deltas == (0, -2000, 2000, 0)
    assert tb.scores == (30000, 28000, 32000, 30000)
    assert tb.state.sticks == 0


def test_riichi_discard_that_passes_deposits_a_stick() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:d1m 1:d9p 2:d3m 3:d4m 0:d6m 1:r1p")
    assert tb.hand.sticks == 0
    assert tb.scores == (30000, 30000, 30000, 30000)  # not yet: the discard may still be won on
    out = tb.play("2:d2m")  # seat 2 drew: the riichi discard has passed
    assert out == [RiichiAccepted(seat=1, scores=(30000, 29000, 30000, 30000))]
    assert (tb.hand.sticks, tb.hand.deposits) == (1, [1])


def test_riichi_discard_that_is_called_deposits_a_stick() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:d1m 1:d9p 2:d3m 3:d4m 0:d6m 1:r2p")
    out = tb.play("3:pon")
    assert out == [RiichiAccepted(seat=1, scores=(30000, 29000, 30000, 30000))]
    assert tb.hand.sticks == 1


# ---------------------------------------------------------------- ippatsu, double riichi

RIICHI_SECOND_TURN = "0:d1m 1:d9p 2:d3m 3:d4m 0:d6m 1:r1p"


def test_ippatsu_on_own_next_draw() -> None:
    tb = Table()
    tb.start_hand()
    tb.play(RIICHI_SECOND_TURN + " 2:dN 3:dW 0:dS")
    tb.tsumo(1, PINFU_TANYAO, "4s", ura="9m")  # ura dora 1m: none
    result = _win(tb)
    assert _yaku(result) == {"Menzen Tsumo": 1, "Riichi": 1, "Ippatsu": 1, "Pinfu": 1, "Tanyao": 1}
    # 5 han: mangan, base 2000: the dealer pays 4000, the others 2000; plus seat 1's own stick back
    assert result.wins[0].limit == "mangan"
    assert result.deltas == (-4000, 8000 + 1000, -2000, -2000)
    assert tb.scores == (26000, 38000, 28000, 28000)


@pytest.mark.parametrize(
    "interruption",
    ["3:pon 3:d7m", "3:chi78s 3:d7m", "3:ankan9s 3:d7m", "0:pon 0:d7m"],
    ids=["pon", "chi", "concealed-kan", "pon-skipping-seat-3"],
)
def test_ippatsu_broken_by_a_call(interruption: str) -> None:
    tb = Table()
    tb.start_hand()
    tb.play(RIICHI_SECOND_TURN + " 2:d6s " + interruption)
    if tb.next_actor() == 0:
        tb.play("0:dS")
    tb.tsumo(1, PINFU_TANYAO, "4s", ura="9m")
    result = _win(tb)
    assert _yaku(result) == {"Menzen Tsumo": 1, "Riichi": 1, "Pinfu": 1, "Tanyao": 1}
    # 4 han 20 fu (pinfu tsumo): base 20 x 2^6 = 1280; dealer 2560 -> 2600, others 1280 -> 1300
    assert (result.wins[0].han, result.wins[0].fu) == (4, 20)
    assert result.deltas == (-2600, 5200 + 1000, -1300, -1300)


def test_double_riichi_on_the_first_uninterrupted_turn() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:d1m 1:r9p 2:d3m 3:d4m 0:d6m 1:d1p 2:d4s")  # seat 1's own next discard ends ippatsu
    tb.ron(1, PINFU_TANYAO)
    result = _win(tb)
    assert _yaku(result) == {"Double Riichi": 2, "Pinfu": 1, "Tanyao": 1}
    # 4 han 30 fu: base 30 x 2^6 = 1920; ron 4 x 1920 = 7680 -> 7700 (no kiriage in ema2012); + own stick
    assert result.deltas == (0, 7700 + 1000, -7700, 0)


def test_house_rules_after_a_preset_are_played_and_journalled_by_name() -> None:
    """The same hand as above under "ema2012; kiriage=yes": 4 han 30 fu is rounded up to a mangan."""
    tb = Table("ema2012; kiriage=yes")
    assert tb.engine.state.rules == "ema2012; kiriage=yes" and tb.engine.rules.kiriage
    tb.start_hand()
    tb.play("0:d1m 1:r9p 2:d3m 3:d4m 0:d6m 1:d1p 2:d4s")
    tb.ron(1, PINFU_TANYAO)
    assert _win(tb).deltas == (0, 8000 + 1000, -8000, 0)


def test_first_riichi_after_a_call_is_a_plain_riichi() -> None:
    tb = Table()
    tb.start_hand()
    # seat 2 pons seat 0's first discard: seat 1's first discard comes after an interruption
    tb.play("0:d2p 2:pon 2:d1m 3:d4m 0:d6m 1:r9p 2:d2m 3:d3m 0:d7m 1:d1p 2:d4s")
    tb.ron(1, PINFU_TANYAO)
    result = _win(tb)
    assert _yaku(result) == {"Riichi": 1, "Pinfu": 1, "Tanyao": 1}
    # 3 han 30 fu: base 960; ron 3840 -> 3900; + own stick
    assert result.deltas == (0, 3900 + 1000, -3900, 0)


# ---------------------------------------------------------------- the last tile (2.8, 3.4.1)


def test_haitei_on_the_seventieth_draw() -> None:
    tb = Table()
    tb.start_hand()
    assert tb.hand.wall == 70
    tb.burn(69)  # draws 1..69 (the dealer's 14th tile is draw 1), each followed by a discard
    assert (tb.hand.wall, tb.next_actor()) == (1, 1)  # draw 70 is seat 1's: (70 - 1) % 4 = 1
    tb.tsumo(1, NO_YAKU, "5s")
    result = _win(tb)
    assert _yaku(result) == {"Menzen Tsumo": 1, "Haitei Raoyue": 1}
    # fu 20 + 2 tsumo + 2 closed wait = 24 -> 30; 2 han 30 fu: base 480; dealer 960 -> 1000, others 500
    assert result.deltas == (-1000, 2000, -500, -500)


def test_houtei_on_the_last_discard() -> None:
    tb = Table()
    tb.start_hand()
    tb.burn(69, avoid="5s")  # seat 3 neither discards nor lets pass its wait
    tb.play("1:d5s")  # draw 70 and the last discard
    assert tb.hand.wall == 0
    tb.ron(3, NO_YAKU)
    result = _win(tb)
    assert _yaku(result) == {"Houtei Raoyui": 1}
    # fu 20 + 10 closed ron + 2 closed wait = 32 -> 40; 1 han 40 fu: base 320; ron 1280 -> 1300
    assert result.deltas == (0, -1300, 0, 1300)


# Dealer's hand with a concealed kan of 9m: 55m 123p 456p 89s waiting on 7s (edge wait)
KAN_HAND = "55m123p456p789s"


def test_kan_replacement_counts_as_a_draw() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:ankan9m")  # draw 1, then the kan
    tb.send(DoraRevealed(t("E")))  # kan dora S: not in the hand
    tb.burn(68)  # the replacement (draw 2) and draws 3..69, each followed by a discard
    # the kan shifted the turn: draw 70 is now the dealer's ((70 - 2) % 4 = 0)
    assert (tb.hand.wall, tb.next_actor()) == (1, 0)
    tb.tsumo(0, KAN_HAND, "7s")
    result = _win(tb)
    assert _yaku(result) == {"Menzen Tsumo": 1, "Haitei Raoyue": 1}
    # fu 20 + 2 tsumo + 2 edge wait + 32 closed kan of terminals = 56 -> 60
    # 2 han 60 fu: base 960; a dealer tsumo: 2 x 960 = 1920 -> 2000 from each
    assert (result.wins[0].fu, result.wins[0].han) == (60, 2)
    assert result.deltas == (6000, -2000, -2000, -2000)


def test_kan_on_the_second_to_last_tile_replacement_is_rinshan_not_haitei() -> None:
    tb = Table()
    tb.start_hand()
    tb.burn(68)
    assert (tb.hand.wall, tb.next_actor()) == (2, 0)
    tb.play("0:ankan9m")  # draw 69, then the kan
    tb.send(DoraRevealed(t("E")))
    assert (tb.hand.wall, tb.hand.step, tb.hand.rinshan) == (1, Step.DRAW, True)
    tb.tsumo(0, KAN_HAND, "7s")  # the replacement is the last tile (draw 70)
    result = _win(tb)
    assert _yaku(result) == {"Menzen Tsumo": 1, "Rinshan Kaihou": 1}
    assert result.deltas == (6000, -2000, -2000, -2000)


def test_thirteen_orphans_robs_a_concealed_kan() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:d2m 1:d3m 2:d4m 3:d5m 0:ankan1m")
    # seat 2 waits on 1m alone: 9m 1p 9p 1s 9s E S W N P F C C
    tb.send(Ron(0, (RonClaim(2, ts("1m9m19p19sESWNPFCC")),)))
    result = _win(tb)
    assert (result.wins[0].han, result.wins[0].limit) == (13, "yakuman")
    # a non-dealer yakuman ron: 4 x 8000 = 32000 from the dealer who declared the kan
    assert result.deltas == (-32000, 0, 32000, 0)


# ---------------------------------------------------------------- draws (3.4.2-3.4.3)


@pytest.mark.parametrize(
    ("tenpai", "deltas"),
    [
        ((False, False, False, False), (0, 0, 0, 0)),
        ((False, True, False, False), (-1000, 3000, -1000, -1000)),  # one tenpai: 1000 from each noten
        ((True, False, True, False), (1500, -1500, 1500, -1500)),  # two: 1500 each way
        ((False, True, True, True), (-3000, 1000, 1000, 1000)),  # three: the noten pays 1000 to each
        ((True, True, True, True), (0, 0, 0, 0)),
    ],
)
def test_exhaustive_draw_noten_payments(tenpai: tuple[bool, bool, bool, bool], deltas: tuple[int, ...]) -> None:
    tb = Table()
    tb.start_hand()
    assert tb.exhaust() == 70  # 70 draws, each with a discard
    out = tb.send(ExhaustiveDraw(tenpai))
    (result,) = out
    assert (result.kind, result.draw) == ("exhaustive_draw", "exhaustive")
    assert result.deltas == deltas
    assert result.dealer_continues is tenpai[0]
    assert tb.state.honba == 1
    assert tb.state.dealer == (0 if tenpai[0] else 1)


def test_dealer_rotation_over_exhaustive_draws() -> None:
    tb = Table()
    # E1: dealer 0 alone tenpai: keeps the deal
    r = tb.draw_hand((True, False, False, False))
    assert (r.deltas, r.dealer_continues) == ((3000, -1000, -1000, -1000), True)
    assert (tb.state.round, tb.state.dealer, tb.state.honba) == (0, 0, 1)
    # E1 again, 1 counter: dealer noten: the deal moves to seat 1, the counter still grows
    r = tb.draw_hand((False, True, True, False))
    assert (r.round, r.honba, r.deltas) == (0, 1, (-1500, 1500, 1500, -1500))
    assert (tb.state.round, tb.state.dealer, tb.state.honba) == (1, 1, 2)
    # E2: dealer 1 tenpai with two others
    r = tb.draw_hand((True, True, True, False))
    assert r.deltas == (1000, 1000, 1000, -3000)
    assert (tb.state.round, tb.state.dealer, tb.state.honba) == (1, 1, 3)
    # E2 again: nobody tenpai, the deal moves on
    r = tb.draw_hand((False, False, False, False))
    assert r.deltas == (0, 0, 0, 0)
    assert (tb.state.round, tb.state.dealer, tb.state.honba) == (2, 2, 4)
    # 33000/29000/29000/29000, then 31500/30500/30500/27500, then 32500/31500/31500/24500
    assert tb.scores == (32500, 31500, 31500, 24500)


TENPAI_DEAL = deal(
    "1111m234p567s789s",  # seat 0: waits only on a fifth 1m: not tenpai (3.4.2)
    "234m567m345p88p56s",  # seat 1: 234m 567m 345p 88p 56s, waiting on 4s/7s
    "24689m2468p2468s",  # seat 2: far from ready
    "EESSWWNNPPFFC",  # seat 3: not ready
)


def _known_hand_to_the_end(tb: Table) -> None:
    """Every seat draws (seen) and discards the drawn tile, 70 times: hands stay known to the end."""
    tb.start_hand(TENPAI_DEAL, dora="C")
    pool = [Tile.of(k) for k in range(34) for _ in range(4)]
    for red in ("5mr", "5pr", "5sr"):  # ema2012: one five of each suit is red
        pool.remove(t(red).plain)
        pool.append(t(red))
    for tile in [x for hand in TENPAI_DEAL for x in hand] + [t("C")]:
        pool.remove(tile)
    for i, tile in enumerate(sorted(pool)[:70]):
        seat = i % 4
        tb.send(Draw(seat, tile), Discard(seat, tile))
    assert (tb.hand.wall, tb.hand.step) == (0, Step.CLAIMS)


def test_tenpai_shown_at_the_draw_is_checked_with_known_hands() -> None:
    tb = Table()
    _known_hand_to_the_end(tb)
    assert_unchanged_after(tb.engine, ExhaustiveDraw((True, True, False, False)), "seat 0", "not ready")
    assert_unchanged_after(tb.engine, ExhaustiveDraw((False, True, True, False)), "seat 2", "not ready")
    (result,) = tb.send(ExhaustiveDraw((False, True, False, False)))
    assert (result.draw, result.deltas) == ("exhaustive", (-1000, 3000, -1000, -1000))


def test_a_pon_takes_no_tile_from_the_wall() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:d2p 2:pon 2:d1m")
    assert tb.hand.wall == 69  # only the dealer's 14th tile was drawn
    tb.play("3:d4m")
    assert tb.hand.wall == 68
    # 68 draws left, one discard each
    assert tb.exhaust() == 68


def test_riichi_player_must_show_tenpai_at_the_draw() -> None:
    tb = Table()
    tb.start_hand()
    tb.play(RIICHI_SECOND_TURN)
    tb.exhaust()
    assert_unchanged_after(tb.engine, ExhaustiveDraw((False, False, False, False)), "seat 1", "riichi")
    (result,) = tb.send(ExhaustiveDraw((False, True, False, False)))
    assert result.deltas == (-1000, 3000, -1000, -1000)
    assert tb.state.sticks == 1  # the riichi stick stays for the next winner
    assert tb.scores == (29000, 32000, 29000, 29000)


def test_abortive_draw_four_winds_ema2012() -> None:
    tb = Table()
    result = _four_winds(tb)
    assert (result.kind, result.draw, result.deltas, result.dealer_continues) == (
        "abortive_draw",
        "four_winds",
        (0, 0, 0, 0),
        True,
    )
    assert (tb.state.round, tb.state.dealer, tb.state.honba) == (0, 0, 1)


def test_four_winds_riichi_on_the_fourth_wind_stays_on_the_table() -> None:
    # 3.3.12: a riichi is void only if its discard is won on; here it is not won on, the hand is aborted
    # after it, and 3.4.4: the sticks of a drawn hand stay on the table (as the engine does for four riichi)
    tb = Table()
    result = _four_winds(tb, "0:dE 1:dE 2:dE 3:rE")
    assert result.deposits == (3,)
    assert tb.scores == (30000, 30000, 30000, 29000)
    assert tb.state.sticks == 1


FOUR_KANS_BY_TWO = "0:ankan1m 0:ankan2m 0:ankan3m"  # three concealed kans by the dealer, three replacement draws


def test_abortive_draw_four_kans_ema2012() -> None:
    tb = Table()
    tb.start_hand()
    tb.play(FOUR_KANS_BY_TWO + " 0:d4m 1:ankan9s 1:d5p")  # the fourth kan by another player, the next discard passes
    tb.send(AbortiveDraw("four_kans"))
    result = tb.last_result
    assert (result.draw, result.deltas, result.dealer_continues) == ("four_kans", (0, 0, 0, 0), True)
    assert (tb.state.dealer, tb.state.honba) == (0, 1)


def test_abortive_draw_four_kans_when_the_next_discard_is_the_last() -> None:
    tb = Table()
    tb.start_hand()
    tb.play(FOUR_KANS_BY_TWO)
    tb.burn(65)  # the dealer's discard after the replacement (draw 4), then draws 5..68
    assert (tb.hand.wall, tb.next_actor()) == (2, 1)
    tb.play("1:ankan9s 1:d5p")  # draw 69, the fourth kan, the replacement is the last tile (draw 70), discard
    assert tb.hand.wall == 0
    # 3.3.9: after the fourth kan (by more than one player) nobody won on the next discard: abortive draw
    tb.send(AbortiveDraw("four_kans"))
    result = tb.last_result
    assert (result.draw, result.deltas, result.dealer_continues) == ("four_kans", (0, 0, 0, 0), True)


NINE_TERMINALS_DEAL = deal(
    "123456789m23pEE",
    "12349m159p19sESW",  # 1m 9m 1p 9p 1s 9s E S W: nine different terminals and honours
    "147m258p369s5677z",
    "2568m3467p12478s",
)


def test_abortive_draw_nine_terminals_ema2012() -> None:
    tb = Table()
    tb.start_hand(NINE_TERMINALS_DEAL)
    tb.send(Draw(0, t("N")), Discard(0, t("N")), Draw(1, t("6p")))
    tb.send(AbortiveDraw("nine_terminals", seat=1))
    result = tb.last_result
    assert (result.kind, result.draw, result.deltas, result.dealer_continues) == (
        "abortive_draw",
        "nine_terminals",
        (0, 0, 0, 0),
        True,
    )
    assert (tb.state.dealer, tb.state.honba) == (0, 1)


def test_abortive_draw_four_riichi_ema2012() -> None:
    tb = Table()
    tb.start_hand()
    tb.play("0:r1m 1:r2m 2:r3m 3:r4m")
    tb.send(AbortiveDraw("four_riichi"))
    result = tb.last_result
    # all four sticks are down (the fourth one as the hand ends) and stay on the table
    assert (result.draw, result.deltas, result.deposits) == ("four_riichi", (0, 0, 0, 0), (0, 1, 2, 3))
    assert tb.scores == (29000, 29000, 29000, 29000)
    assert (tb.state.sticks, tb.state.honba, tb.state.dealer) == (4, 1, 0)


def test_no_abortive_draws_under_ema2016() -> None:
    tb = Table("ema2016")
    tb.start_hand()
    assert_unchanged_after(tb.engine, AbortiveDraw("nine_terminals", seat=0), "no abortive draws", "ema2016")
    assert tb.hand.wall == 70  # the inferred draw was undone with the refusal
    tb.play("0:dE 1:dE 2:dE 3:dE")
    assert_unchanged_after(tb.engine, AbortiveDraw("four_winds"), "no abortive draws", "ema2016")
    tb.play("0:d2m")  # play goes on
    assert tb.hand.wall == 70 - 5


# ---------------------------------------------------------------- camera mode


def test_camera_mode_infers_draws_and_needs_the_winning_hand_shown() -> None:
    tb = Table()
    tb.start_hand(None)
    assert tb.hand.seats[0].hand is None
    expected_wall = 70
    for move in ("0:d9m", "1:d1p", "2:dN", "3:dW", "0:d8m", "1:d1s"):
        tb.play(move)
        expected_wall -= 1  # each discard implies the draw before it
        assert tb.hand.wall == expected_wall
    assert [s.draws for s in tb.hand.seats] == [2, 2, 1, 1]
    assert [s.count for s in tb.hand.seats] == [13, 13, 13, 13]
    # seat 2 declares tsumo: the drawn tile was not seen, so hand and winning tile must be shown
    assert_unchanged_after(tb.engine, Tsumo(2), "must be given")
    assert_unchanged_after(tb.engine, Tsumo(2, win_tile=t("4s")), "must be shown")
    assert_unchanged_after(tb.engine, Tsumo(2, hand=ts(PINFU_TANYAO)), "winning tile")
    assert tb.hand.wall == 64  # the inferred draws of the refused tsumo were undone
    tb.tsumo(2, PINFU_TANYAO, "4s")
    result = _win(tb)
    # menzen tsumo + pinfu + tanyao, 3 han 20 fu: 700 / 1300
    assert result.deltas == (-1300, -700, 2700, -700)


def test_camera_mode_ron_needs_the_hand_shown() -> None:
    tb = Table()
    tb.start_hand(None)
    tb.play("0:d9m 1:d1p 2:dN 3:dW 0:d8m 1:d4s")
    assert_unchanged_after(tb.engine, Ron(1, (RonClaim(2),)), "must be shown")
    tb.ron(2, PINFU_TANYAO)
    assert _win(tb).deltas == (0, -2000, 2000, 0)
