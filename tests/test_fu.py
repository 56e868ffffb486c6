"""Fu edge cases (RULES.md section 4), each counted by hand in the comment next to it.

Fu: 20 base; closed ron +10; tsumo +2 (not with pinfu); pair of dragons, seat or
round wind 2 (a double-wind pair 4); waits kanchan, penchan, tanki 2; pons 2 open
/ 4 closed for simples, 4 / 8 for terminals and honours; kans 8 / 16 and 16 / 32;
an open pinfu-shape ron is 30; round up to 10. Chiitoitsu is always 25.

Where it could be arranged, a hand's unrounded total sits right at a multiple of
ten (so that counting too much shows) or just above one (so that counting too
little shows). Unless a case says otherwise the winner sits South in an East
round (East is the round wind only), there are no dora, and the rule set is
``ema2012``. Base points = fu x 2^(2+han).
"""

from __future__ import annotations

import pytest

from tablesvc.rules import Hand, HandValue, Limit, WinConditions, Wind, get_ruleset, score_hand
from tablesvc.tiles import parse_tiles


def score(hand: str, win: str, melds=(), rules: str = "ema2012", **conditions) -> HandValue:
    """Score a hand written in compact notation (concealed tiles without the winning tile)."""
    for key in ("dora", "ura"):
        if isinstance(conditions.get(key), str):
            conditions[key] = tuple(parse_tiles(conditions[key]))
    for key in ("seat", "round"):
        if isinstance(conditions.get(key), str):
            conditions[key] = Wind.parse(conditions[key])
    return score_hand(Hand.parse(hand, win, melds), WinConditions(**conditions), get_ruleset(rules))


def yaku_of(value: HandValue) -> dict[str, int]:
    return {y.key: y.han for y in value.yaku}


def case(id: str, hand: str, win: str, *, yaku, han, fu, base, limit=Limit.NONE, melds=(), rules="ema2012", **cond):
    return pytest.param(hand, win, tuple(melds), rules, cond, (yaku, han, fu, base, limit), id=id)


# 123m 678p 45s+3s 789s 22p: all chi, ryanmen, non-valued pair
PINFU = ("123m678p45789s22p", "3s")
# 123m 456p 1_3s+2s 789s 55p: kanchan, no yaku of its own
KANCHAN = ("123m456p13789s55p", "2s")

FU_CASES = [
    # ---------------------------------------------------------------- pinfu
    # pinfu tsumo: 20, no tsumo fu; pinfu 1 + tsumo 1 = 2 han -> 20*16 = 320
    case("pinfu_tsumo_20", *PINFU, tsumo=True, yaku={"pinfu": 1, "tsumo": 1}, han=2, fu=20, base=320),
    # pinfu ron: 20 + 10 = 30; 30*8 = 240
    case("pinfu_ron_30", *PINFU, yaku={"pinfu": 1}, han=1, fu=30, base=240),
    # guest-wind pair WW keeps pinfu: riichi 1 + pinfu 1, 30 fu; 30*16 = 480
    case(
        "pinfu_guest_wind_pair", "123m678p45789s33z", "3s", riichi=True,
        yaku={"riichi": 1, "pinfu": 1}, han=2, fu=30, base=480,
    ),
    # a valued pair breaks pinfu and gives 2: 20 + 10 + 2 = 32 -> 40; riichi 1 -> 320
    case(
        "pinfu_shape_dragon_pair", "123m678p45789s77z", "3s", riichi=True,
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    case(
        "pinfu_shape_seat_wind_pair", "123m678p45789s22z", "3s", riichi=True, seat="S", round="E",
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    case(
        "pinfu_shape_round_wind_pair", "123m678p45789s11z", "3s", riichi=True, seat="S", round="E",
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    # open pinfu shape, ron: 20 + nothing = 20 -> made 30; open tanyao 1 (ema2016) -> 1 han 30 fu = 240
    # chi 234m | 456p 678s 34s+5s 88p
    case(
        "open_pinfu_shape_ron_tanyao", "456p678s34s88p", "5s", melds=["chi:234m"], rules="ema2016",
        yaku={"tanyao": 1}, han=1, fu=30, base=240,
    ),
    # the same with open ittsu under ema2012: chi 123m | 456m 789m 23p+4p 99s -> 1 han 30 fu = 240
    case(
        "open_pinfu_shape_ron_ittsu", "456789m23p99s", "4p", melds=["chi:123m"],
        yaku={"ittsu": 1}, han=1, fu=30, base=240,
    ),
    # open pinfu shape, tsumo: 20 + 2 = 22 -> 30 (no menzen tsumo when open)
    case(
        "open_pinfu_shape_tsumo", "456789m23p99s", "4p", melds=["chi:123m"], tsumo=True,
        yaku={"ittsu": 1}, han=1, fu=30, base=240,
    ),
    # ---------------------------------------------------------------- chiitoitsu: always 25
    # 11m 22m 33p 44p 66s 88s + tanki C (a dragon pair, a tanki wait: still 25); 2 han -> 25*16 = 400
    case("chiitoitsu_ron_25", "1122m3344p6688s7z", "7z", yaku={"chiitoitsu": 2}, han=2, fu=25, base=400),
    # tsumo: still 25 (no tsumo fu); chiitoitsu 2 + tsumo 1 = 3 han -> 25*32 = 800
    case(
        "chiitoitsu_tsumo_25", "1122m3344p6688s7z", "7z", tsumo=True,
        yaku={"chiitoitsu": 2, "tsumo": 1}, han=3, fu=25, base=800,
    ),
    # a pair of the double wind (E seat, E round): still 25; dealer, 2 han -> 400
    case(
        "chiitoitsu_double_wind_pair_25", "1122m3344p6688s1z", "1z", seat="E", round="E",
        yaku={"chiitoitsu": 2}, han=2, fu=25, base=400,
    ),
    # ---------------------------------------------------------------- closed ron +10
    # closed ron: 20 + 10 + 2 kanchan = 32 -> 40; riichi -> 320
    case("closed_ron_kanchan_40", *KANCHAN, riichi=True, yaku={"riichi": 1}, han=1, fu=40, base=320),
    # the same hand closed tsumo: 20 + 2 kanchan + 2 tsumo = 24 -> 30; menzen tsumo -> 240
    case("closed_tsumo_kanchan_30", *KANCHAN, tsumo=True, yaku={"tsumo": 1}, han=1, fu=30, base=240),
    # open ron (no +10): chi 123m | 456p 1_3s 789s 55m, houtei: 20 + 2 = 22 -> 30; 240
    case(
        "open_ron_kanchan_30", "456p13789s55m", "2s", melds=["chi:123m"], houtei=True,
        yaku={"houtei": 1}, han=1, fu=30, base=240,
    ),
    # ---------------------------------------------------------------- waits
    # penchan: 123m 456p 12s+3s 789s 55p; 30 + 2 = 32 -> 40; riichi -> 320
    case("penchan_2", "123m456p12789s55p", "3s", riichi=True, yaku={"riichi": 1}, han=1, fu=40, base=320),
    # tanki: 123m 456p 123s 789s W+W (guest wind); 30 + 2 = 32 -> 40; riichi -> 320
    case("tanki_2", "123m456p123789s3z", "3z", riichi=True, yaku={"riichi": 1}, han=1, fu=40, base=320),
    # ---------------------------------------------------------------- pons
    # open simple pon 2: pon PPP, pon 222m | 1_3p 456s FF
    # 20 + 4 (open PPP) + 2 (open 222m) + 2 (kanchan) + 2 (dragon pair) = 30 exactly; haku 1 -> 240
    case(
        "open_simple_pon_2", "13p456s66z", "2p", melds=["pon:PPP", "pon:222m"],
        yaku={"haku": 1}, han=1, fu=30, base=240,
    ),
    # closed simple pon 4 + closed honour pon 8: 222m NNN 456p 23s+1s 99p
    # 30 + 4 + 8 = 42 -> 50; riichi -> 50*8 = 400
    case(
        "closed_simple_pon_4_honour_pon_8", "222m444z456p23s99p", "1s", riichi=True,
        yaku={"riichi": 1}, han=1, fu=50, base=400,
    ),
    # closed terminal pon 8: 222m 999p 456s 23s+1s 88p; 30 + 4 + 8 = 42 -> 50; riichi -> 400
    case(
        "closed_terminal_pon_8", "222m999p456s23s88p", "1s", riichi=True,
        yaku={"riichi": 1}, han=1, fu=50, base=400,
    ),
    # open terminal/honour pons 4: pon PPP, pon 999p | 1_3m 456s FF
    # 20 + 4 + 4 + 2 (kanchan) + 2 (dragon pair) = 32 -> 40; haku 1 -> 320
    case(
        "open_terminal_honour_pons_4", "13m456s66z", "2m", melds=["pon:PPP", "pon:999p"],
        yaku={"haku": 1}, han=1, fu=40, base=320,
    ),
    # a pon completed by ron counts as open: 111m 456p 789s 22s 33p, shanpon, ron on 3p
    # 30 + 8 (111m closed) + 2 (333p, open by the ron) = 40 exactly; riichi -> 320
    case(
        "shanpon_ron_pon_is_open", "111m456p789s22s33p", "3p", riichi=True,
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    # the same by tsumo stays closed: 20 + 8 + 4 + 2 (tsumo) = 34 -> 40; riichi 1 + tsumo 1 -> 40*16 = 640
    case(
        "shanpon_tsumo_pon_is_closed", "111m456p789s22s33p", "3p", riichi=True, tsumo=True,
        yaku={"riichi": 1, "tsumo": 1}, han=2, fu=40, base=640,
    ),
    # ---------------------------------------------------------------- kans
    # open simple kan 8: kan 2222m, pon PPP | 456p 78s+6s 99m; 20 + 8 + 4 = 32 -> 40; haku -> 320
    case(
        "open_simple_kan_8", "456p78s99m", "6s", melds=["kan:2222m", "pon:PPP"],
        yaku={"haku": 1}, han=1, fu=40, base=320,
    ),
    # an added kan (from a pon) is open too: same 40
    case(
        "added_simple_kan_8", "456p78s99m", "6s", melds=["kakan:2222m", "pon:PPP"],
        yaku={"haku": 1}, han=1, fu=40, base=320,
    ),
    # closed simple kan 16: ankan 4444s | 123m 456p 78s+6s 99p; 30 + 16 = 46 -> 50; riichi -> 400
    case(
        "closed_simple_kan_16", "123m456p78s99p", "6s", melds=["ankan:4444s"], riichi=True,
        yaku={"riichi": 1}, han=1, fu=50, base=400,
    ),
    # open honour kan 16: kan PPPP | 123m 456p 78s+6s 99m; 20 + 16 = 36 -> 40; haku -> 320
    case(
        "open_honour_kan_16", "123m456p78s99m", "6s", melds=["kan:PPPP"],
        yaku={"haku": 1}, han=1, fu=40, base=320,
    ),
    # open terminal kan 16: kan 9999p, pon PPP | 1_3m 456s 88s; 20 + 16 + 4 + 2 = 42 -> 50; haku -> 400
    case(
        "open_terminal_kan_16", "13m456s88s", "2m", melds=["kan:9999p", "pon:PPP"],
        yaku={"haku": 1}, han=1, fu=50, base=400,
    ),
    # closed honour kan 32: ankan PPPP | 123m 456p 78s+6s 99m; 30 + 32 = 62 -> 70; haku -> 70*8 = 560
    case(
        "closed_honour_kan_32", "123m456p78s99m", "6s", melds=["ankan:PPPP"],
        yaku={"haku": 1}, han=1, fu=70, base=560,
    ),
    # closed terminal kan 32: ankan 1111p | 123m 456p 78s+6s 99m; 30 + 32 = 62 -> 70; riichi -> 560
    case(
        "closed_terminal_kan_32", "123m456p78s99m", "6s", melds=["ankan:1111p"], riichi=True,
        yaku={"riichi": 1}, han=1, fu=70, base=560,
    ),
    # ---------------------------------------------------------------- valued pairs
    # NNN (closed, guest wind) 123m 678p 45s+3s + pair: 30 + 8 + pair; riichi 1
    # dragon / seat / round wind pair 2: 30 + 8 + 2 = 40 exactly -> 320
    case(
        "white_dragon_pair_2", "123m678p45s444z55z", "3s", riichi=True,
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    case(
        "green_dragon_pair_2", "123m678p45s444z66z", "3s", riichi=True,
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    case(
        "red_dragon_pair_2", "123m678p45s444z77z", "3s", riichi=True,
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    case(
        "seat_wind_pair_2", "123m678p45s444z22z", "3s", riichi=True, seat="S", round="E",
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    case(
        "round_wind_pair_2", "123m678p45s444z11z", "3s", riichi=True, seat="S", round="E",
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    case(
        "seat_wind_pair_2_dealer", "123m678p45s444z11z", "3s", riichi=True, seat="E", round="S",
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    # double-wind pair 4: 30 + 8 + 4 = 42 -> 50 -> 400
    case(
        "double_east_pair_4", "123m678p45s444z11z", "3s", riichi=True, seat="E", round="E",
        yaku={"riichi": 1}, han=1, fu=50, base=400,
    ),
    case(
        "double_south_pair_4", "123m678p45s444z22z", "3s", riichi=True, seat="S", round="S",
        yaku={"riichi": 1}, han=1, fu=50, base=400,
    ),
    # ---------------------------------------------------------------- rinshan (a tsumo: +2)
    # open kan 2222m | 456p 1_3s+2s 789s 99m: 20 + 8 + 2 (kanchan) + 2 (tsumo) = 32 -> 40; rinshan 1 -> 320
    case(
        "rinshan_open_kan", "456p13789s99m", "2s", melds=["kan:2222m"], tsumo=True, rinshan=True,
        yaku={"rinshan": 1}, han=1, fu=40, base=320,
    ),
    # concealed kan: 20 + 16 + 2 + 2 = 40 exactly; rinshan 1 + menzen tsumo 1 -> 40*16 = 640
    case(
        "rinshan_closed_kan", "456p13789s99m", "2s", melds=["ankan:2222m"], tsumo=True, rinshan=True,
        yaku={"rinshan": 1, "tsumo": 1}, han=2, fu=40, base=640,
    ),
    # ---------------------------------------------------------------- the most valuable reading (3.4.9)
    # 222333444m 67p+5p 88s: as 234m x3 it is pinfu 1 + iipeikou 1 + tanyao 1 = 3 han 30 fu (960);
    # as 222m 333m 444m it is sanankou 2 + tanyao 1 = 3 han, 30 + 4*3 = 42 -> 50 fu (1600): the pons win
    case(
        "sanankou_beats_pinfu_iipeikou", "222333444m67p88s", "5p",
        yaku={"sanankou": 2, "tanyao": 1}, han=3, fu=50, base=1600,
    ),
    # by tsumo: chi reading pinfu + iipeikou + tanyao + tsumo = 4 han 20 fu (1280);
    # pon reading sanankou + tanyao + tsumo = 4 han, 20 + 12 + 2 = 34 -> 40 fu -> mangan: the pons win
    case(
        "sanankou_beats_pinfu_iipeikou_tsumo", "222333444m67p88s", "5p", tsumo=True,
        yaku={"sanankou": 2, "tanyao": 1, "tsumo": 1}, han=4, fu=40, base=2000, limit=Limit.MANGAN,
    ),
    # 111222333m 78p+9p 99s: as 123m x3 it is junchan 3 + iipeikou 1 + pinfu 1 = 5 han (mangan);
    # as 111m 222m 333m it is sanankou 2 only (30 + 8 + 4 + 4 = 46 -> 50 fu, 800): the chi win
    case(
        "junchan_iipeikou_pinfu_beats_sanankou", "111222333m78p99s", "9p",
        yaku={"junchan": 3, "iipeiko": 1, "pinfu": 1}, han=5, fu=30, base=2000, limit=Limit.MANGAN,
    ),
    # 123m 456p 789p 4566s + 6s: ryanmen on 45s (pinfu: riichi + pinfu = 2 han 30 fu, 480) beats the
    # tanki on 6s (riichi only, 30 + 2 -> 40 fu, 320)
    case(
        "ryanmen_reading_beats_tanki", "123m456p789p4566s", "6s", riichi=True,
        yaku={"riichi": 1, "pinfu": 1}, han=2, fu=30, base=480,
    ),
    # 12345s + 3s: penchan on 12s (+2) or ryanmen on 45s. Open hand pon PPP, pon 999m, pair FF:
    # 20 + 4 + 4 + 2 = 30; the penchan reading makes 32 -> 40 (320), the ryanmen reading 30 (240)
    case(
        "penchan_reading_beats_ryanmen", "12345s66z", "3s", melds=["pon:PPP", "pon:999m"],
        yaku={"haku": 1}, han=1, fu=40, base=320,
    ),
    # 112233m 55667p+7p 99s: ryanpeikou 3 + pinfu 1 = 4 han 30 fu (1920) beats chiitoitsu (2 han 25 fu)
    case(
        "ryanpeikou_beats_chiitoitsu", "112233m55667p99s", "7p",
        yaku={"ryanpeiko": 3, "pinfu": 1}, han=4, fu=30, base=1920,
    ),
    # ---------------------------------------------------------------- rounding and big fu
    # rounding: 30 + 4 (closed 222p) + 2 (tanki) = 36 -> 40; 123m 222p 789s 456s W+W; riichi -> 320
    case(
        "round_36_to_40", "123m222p456789s3z", "3z", riichi=True,
        yaku={"riichi": 1}, han=1, fu=40, base=320,
    ),
    # 110 fu: ankan 1111m, ankan 9999p | NNN 4_6s+5s CC
    # 30 + 32 + 32 + 8 (closed NNN) + 2 (kanchan) + 2 (dragon pair) = 106 -> 110;
    # sanankou 2 (two concealed kans + NNN) -> 110 * 16 = 1760
    case(
        "fu_110", "444z46s77z", "5s", melds=["ankan:1111m", "ankan:9999p"],
        yaku={"sanankou": 2}, han=2, fu=110, base=1760,
    ),
]


@pytest.mark.parametrize(("hand", "win", "melds", "rules", "cond", "expected"), FU_CASES)
def test_fu(hand, win, melds, rules, cond, expected):
    yaku, han, fu, base, limit = expected
    value = score(hand, win, melds, rules, **cond)
    assert yaku_of(value) == yaku
    assert value.han == han
    assert value.fu == fu
    assert value.base_points == base
    assert value.limit is limit
