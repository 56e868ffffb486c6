"""Every yaku and yakuman of RULES.md section 4, and the preset switches around them.

Each expectation is counted by hand from RULES.md section 4 (the comment next to a
case shows the count), never taken from the code under test. Unless a case says
otherwise the winner sits South in an East round (a non-dealer, so East is the
round wind only), there are no dora, and the rule set is ``ema2012``.

Fu notation in the comments: 20 base, +10 closed ron, +2 tsumo (not with pinfu),
waits kanchan/penchan/tanki +2, valued pair +2, pons 2/4 open (simple/terminal-
honour) and double that closed, kans 8/16 open and double that closed, rounded up
to 10. Base points = fu x 2^(2+han) up to the limits.
"""

from __future__ import annotations

import pytest

from tablesvc.rules import (
    Hand,
    HandValue,
    InvalidHandError,
    Limit,
    NoYakuError,
    WinConditions,
    Wind,
    get_ruleset,
    score_hand,
)
from tablesvc.tiles import parse_tiles

PRESETS = ("ema2012", "ema2016", "ema2025", "tenhou")


def score(hand: str, win: str, melds=(), rules: str = "ema2012", **conditions) -> HandValue:
    """Score a hand written in compact notation.

    ``hand`` is the concealed tiles without the winning tile; ``dora``/``ura`` may
    be written as tile strings (indicators) and ``seat``/``round`` as "E", "S"...
    """
    for key in ("dora", "ura"):
        if isinstance(conditions.get(key), str):
            conditions[key] = tuple(parse_tiles(conditions[key]))
    for key in ("seat", "round"):
        if isinstance(conditions.get(key), str):
            conditions[key] = Wind.parse(conditions[key])
    return score_hand(Hand.parse(hand, win, melds), WinConditions(**conditions), get_ruleset(rules))


def yaku_of(value: HandValue) -> dict[str, int]:
    """The hand's yaku as {key: han}."""
    return {y.key: y.han for y in value.yaku}


def check(value: HandValue, yaku: dict[str, int], han: int, fu: int | None, base: int, limit: Limit) -> None:
    """Assert the exact yaku (key and han), han, fu (None: not checked), base points and limit."""
    assert yaku_of(value) == yaku
    assert value.han == han
    if fu is not None:
        assert value.fu == fu
    assert value.base_points == base
    assert value.limit is limit


def case(id: str, hand: str, win: str, *, yaku, han, fu, base, limit=Limit.NONE, melds=(), rules="ema2012", **cond):
    return pytest.param(hand, win, tuple(melds), rules, cond, (yaku, han, fu, base, limit), id=id)


# Hands reused below (concealed tiles without the winning tile, winning tile):
# 123m 456p 1_3s 789s 55p, kanchan on 2s: no yaku of its own, not tanyao (1m), not pinfu (kanchan).
PLAIN = ("123m456p13789s55p", "2s")
# 123m 678p 45s 789s 22p, ryanmen 3s/6s, non-valued pair: pinfu shape without tanyao.
PINFU = ("123m678p45789s22p", "3s")

# --------------------------------------------------------------------------- yaku

YAKU_CASES = [
    # riichi 1: fu 20 + 10 closed ron + 2 kanchan = 32 -> 40; 1 han 40 fu = 40*8 = 320
    case("riichi", *PLAIN, riichi=True, yaku={"riichi": 1}, han=1, fu=40, base=320),
    # riichi 1 + ippatsu 1: 40 fu, 2 han = 40*16 = 640
    case("ippatsu", *PLAIN, riichi=True, ippatsu=True, yaku={"riichi": 1, "ippatsu": 1}, han=2, fu=40, base=640),
    # menzen tsumo 1: fu 20 + 2 kanchan + 2 tsumo = 24 -> 30; 30*8 = 240
    case("menzen_tsumo", *PLAIN, tsumo=True, yaku={"tsumo": 1}, han=1, fu=30, base=240),
    # double riichi 2 (replaces riichi): 40 fu, 2 han = 640
    case("double_riichi", *PLAIN, double_riichi=True, yaku={"daburu_riichi": 2}, han=2, fu=40, base=640),
    # pinfu 1: closed ron 30 fu, nothing else; 30*8 = 240
    case("pinfu", *PINFU, yaku={"pinfu": 1}, han=1, fu=30, base=240),
    # 123m 123m 456p 1_3s 99p: iipeikou 1; fu 30 + 2 kanchan = 32 -> 40; 320
    case("iipeikou", "112233m456p13s99p", "2s", yaku={"iipeiko": 1}, han=1, fu=40, base=320),
    # 234m 456p 3_5s 678s 88p, kanchan 4s: tanyao 1 (closed); fu 30 + 2 = 32 -> 40; 320
    case("tanyao_closed", "234m456p35678s88p", "4s", yaku={"tanyao": 1}, han=1, fu=40, base=320),
    # haitei 1 on an open hand (chi 123m | 456p 1_3s 789s 55m): fu 20 + 2 kanchan + 2 tsumo = 24 -> 30; 240
    case(
        "haitei", "456p13789s55m", "2s", melds=["chi:123m"], tsumo=True, haitei=True,
        yaku={"haitei": 1}, han=1, fu=30, base=240,
    ),
    # houtei 1, same hand on the last discard: fu 20 + 2 kanchan = 22 -> 30; 240
    case(
        "houtei", "456p13789s55m", "2s", melds=["chi:123m"], houtei=True,
        yaku={"houtei": 1}, han=1, fu=30, base=240,
    ),
    # chankan 1, same hand robbing a kan: 22 -> 30; 240
    case(
        "chankan", "456p13789s55m", "2s", melds=["chi:123m"], chankan=True,
        yaku={"chankan": 1}, han=1, fu=30, base=240,
    ),
    # rinshan 1 (open kan 9999p | 123m 456p 1_3s 55m): fu 20 + 16 open terminal kan + 2 kanchan + 2 tsumo = 40; 320
    case(
        "rinshan", "123m456p13s55m", "2s", melds=["kan:9999p"], tsumo=True, rinshan=True,
        yaku={"rinshan": 1}, han=1, fu=40, base=320,
    ),
    # chiitoitsu 2: 11m 22m 33p 44p 66s 88s CC, always 25 fu; 25*16 = 400
    case("chiitoitsu", "1122m3344p6688s7z", "7z", yaku={"chiitoitsu": 2}, han=2, fu=25, base=400),
    # chanta closed 2: 12_m penchan, 789p 123s NNN(closed) 99s; fu 30 + 8 + 2 = 40; 40*16 = 640
    case("chanta_closed", "12m789p123s444z99s", "3m", yaku={"chantai": 2}, han=2, fu=40, base=640),
    # chanta open 1: chi 789p | 12_m 123s NNN 99s; fu 20 + 8 + 2 = 30; 240
    case(
        "chanta_open", "12m123s444z99s", "3m", melds=["chi:789p"],
        yaku={"chantai": 1}, han=1, fu=30, base=240,
    ),
    # ittsu closed 2: 123m 456m 789m 1_3p 99s; fu 30 + 2 = 32 -> 40; 640
    case("ittsu_closed", "123456789m13p99s", "2p", yaku={"ittsu": 2}, han=2, fu=40, base=640),
    # ittsu open 1: chi 123m | 456m 789m 1_3p 99s; fu 20 + 2 = 22 -> 30; 240
    case(
        "ittsu_open", "456789m13p99s", "2p", melds=["chi:123m"],
        yaku={"ittsu": 1}, han=1, fu=30, base=240,
    ),
    # sanshoku closed 2: 123m 123p 5_7p 123s 88s; fu 30 + 2 = 32 -> 40; 640
    case("sanshoku_closed", "123m12357p123s88s", "6p", yaku={"sanshoku": 2}, han=2, fu=40, base=640),
    # sanshoku open 1: chi 123p | 123m 5_7p 123s 88s; fu 20 + 2 = 22 -> 30; 240
    case(
        "sanshoku_open", "123m57p123s88s", "6p", melds=["chi:123p"],
        yaku={"sanshoku": 1}, han=1, fu=30, base=240,
    ),
    # sanshoku doukou 2 (open too): pon 222m, pon 222p | 222s(closed) 34p+5p 99m
    # fu 20 + 2 + 2 + 4 = 28 -> 30; 30*16 = 480
    case(
        "sanshoku_doukou", "222s34p99m", "5p", melds=["pon:222m", "pon:222p"],
        yaku={"sanshoku_douko": 2}, han=2, fu=30, base=480,
    ),
    # toitoi 2: pon 222m 777p 333s | 66s 99p shanpon, ron on 6s (that pon counts open)
    # fu 20 + 2 + 2 + 2 + 2 = 28 -> 30; 480
    case(
        "toitoi", "66s99p", "6s", melds=["pon:222m", "pon:777p", "pon:333s"],
        yaku={"toitoi": 2}, han=2, fu=30, base=480,
    ),
    # sanankou closed 2: 222m 444p 666s (closed) 78m+9m 55p; fu 30 + 4*3 = 42 -> 50; 50*16 = 800
    case("sanankou_closed", "222m444p666s78m55p", "9m", yaku={"sanankou": 2}, han=2, fu=50, base=800),
    # sanankou open 2: chi 789m | 222m 444p 666s, tanki 5p; fu 20 + 12 + 2 = 34 -> 40; 640
    case(
        "sanankou_open", "222m444p666s5p", "5p", melds=["chi:789m"],
        yaku={"sanankou": 2}, han=2, fu=40, base=640,
    ),
    # sankantsu 2: kan 2222m, kan 4444p, kakan 6666s | 78m+9m 55p; fu 20 + 8*3 = 44 -> 50; 800
    case(
        "sankantsu", "78m55p", "9m", melds=["kan:2222m", "kan:4444p", "kakan:6666s"],
        yaku={"sankantsu": 2}, han=2, fu=50, base=800,
    ),
    # honroutou 2 + toitoi 2: pon 111m 999p 111s | 99s WW, ron on W (open pon)
    # fu 20 + 4*4 = 36 -> 40; 4 han 40 fu = 2560 -> mangan 2000
    case(
        "honroutou_toitoi", "99s33z", "3z", melds=["pon:111m", "pon:999p", "pon:111s"],
        yaku={"honroto": 2, "toitoi": 2}, han=4, fu=40, base=2000, limit=Limit.MANGAN,
    ),
    # honroutou 2 + chiitoitsu 2: 11m 99m 11p 99p 11s 99s WW; 25 fu; 25*64 = 1600
    case(
        "honroutou_chiitoitsu", "1199m1199p1199s3z", "3z",
        yaku={"chiitoitsu": 2, "honroto": 2}, han=4, fu=25, base=1600,
    ),
    # shousangen 2 + haku 1 + hatsu 1: pon PPP FFF | 12_m penchan 456p CC
    # fu 20 + 4 + 4 + 2 (dragon pair) + 2 (penchan) = 32 -> 40; 4 han 40 fu -> mangan
    case(
        "shousangen", "12m456p77z", "3m", melds=["pon:PPP", "pon:FFF"],
        yaku={"shosangen": 2, "haku": 1, "hatsu": 1}, han=4, fu=40, base=2000, limit=Limit.MANGAN,
    ),
    # ryanpeikou 3: 123m 123m 567p 567p, tanki 9s; fu 30 + 2 = 32 -> 40; 40*32 = 1280
    # (the seven-pairs reading, 2 han 25 fu = 400, is worth less)
    case("ryanpeikou", "112233m556677p9s", "9s", yaku={"ryanpeiko": 3}, han=3, fu=40, base=1280),
    # honitsu closed 3: 123m 567m 78m+9m NNN(closed) WW; fu 30 + 8 = 38 -> 40; 1280
    case("honitsu_closed", "12356778m444z33z", "9m", yaku={"honitsu": 3}, han=3, fu=40, base=1280),
    # honitsu open 2: chi 123m | 567m 78m+9m NNN WW; fu 20 + 8 = 28 -> 30; 30*16 = 480
    case(
        "honitsu_open", "56778m444z33z", "9m", melds=["chi:123m"],
        yaku={"honitsu": 2}, han=2, fu=30, base=480,
    ),
    # junchan closed 3: 123m 789m 7_9p 123s 11p; fu 30 + 2 = 32 -> 40; 1280
    case("junchan_closed", "123m789m79p123s11p", "8p", yaku={"junchan": 3}, han=3, fu=40, base=1280),
    # junchan open 2: chi 123m | 789m 7_9p 123s 11p; fu 20 + 2 = 22 -> 30; 480
    case(
        "junchan_open", "789m79p123s11p", "8p", melds=["chi:123m"],
        yaku={"junchan": 2}, han=2, fu=30, base=480,
    ),
    # chinitsu closed 6: 1_3m 345m 567m 777m(closed) 99m; fu 30 + 4 + 2 = 36 -> 40; 6 han = haneman 3000
    case(
        "chinitsu_closed", "13m345m567m777m99m", "2m",
        yaku={"chinitsu": 6}, han=6, fu=40, base=3000, limit=Limit.HANEMAN,
    ),
    # chinitsu open 5: chi 123m | 3_5m 567m 777m 99m; fu 20 + 4 + 2 = 26 -> 30; 5 han = mangan 2000
    case(
        "chinitsu_open", "35m567m777m99m", "4m", melds=["chi:123m"],
        yaku={"chinitsu": 5}, han=5, fu=30, base=2000, limit=Limit.MANGAN,
    ),
]

YAKUHAI_CASES = [
    # open hand: pon XXX | 234m 456p 78s+9s (ryanmen) 55m; fu 20 + 4 (open honour pon) = 24 -> 30
    case("haku", "234m456p78s55m", "9s", melds=["pon:PPP"], yaku={"haku": 1}, han=1, fu=30, base=240),
    case("hatsu", "234m456p78s55m", "9s", melds=["pon:FFF"], yaku={"hatsu": 1}, han=1, fu=30, base=240),
    case("chun", "234m456p78s55m", "9s", melds=["pon:CCC"], yaku={"chun": 1}, han=1, fu=30, base=240),
    case(
        "seat_wind_south", "234m456p78s55m", "9s", melds=["pon:SSS"], seat="S", round="E",
        yaku={"seat_wind_south": 1}, han=1, fu=30, base=240,
    ),
    case(
        "seat_wind_north", "234m456p78s55m", "9s", melds=["pon:NNN"], seat="N", round="E",
        yaku={"seat_wind_north": 1}, han=1, fu=30, base=240,
    ),
    case(
        "round_wind_east", "234m456p78s55m", "9s", melds=["pon:EEE"], seat="S", round="E",
        yaku={"round_wind_east": 1}, han=1, fu=30, base=240,
    ),
    case(
        "round_wind_south", "234m456p78s55m", "9s", melds=["pon:SSS"], seat="W", round="S",
        yaku={"round_wind_south": 1}, han=1, fu=30, base=240,
    ),
    # East seat in the East round: the East pon counts twice, 2 han 30 fu = 480
    case(
        "double_east", "234m456p78s55m", "9s", melds=["pon:EEE"], seat="E", round="E",
        yaku={"seat_wind_east": 1, "round_wind_east": 1}, han=2, fu=30, base=480,
    ),
]


@pytest.mark.parametrize(("hand", "win", "melds", "rules", "cond", "expected"), YAKU_CASES + YAKUHAI_CASES)
def test_yaku(hand, win, melds, rules, cond, expected):
    yaku, han, fu, base, limit = expected
    check(score(hand, win, melds, rules, **cond), yaku, han, fu, base, limit)


def test_guest_wind_pon_is_no_yaku():
    # West pon for a South seat in the East round: no yaku at all
    with pytest.raises(NoYakuError):
        score("234m456p78s55m", "9s", ["pon:WWW"], seat="S", round="E")


def test_dragon_pair_is_no_yaku():
    # a pair of dragons gives fu, never a yaku: open hand chi 123m | 456p 1_3s 789s CC
    with pytest.raises(NoYakuError):
        score("456p13789s77z", "2s", ["chi:123m"])


def test_open_hand_gets_no_closed_only_yaku():
    # chi 234m | 234m 456p 78s+6s 88p, tsumo: the iipeikou shape, the pinfu shape and the tsumo are worth nothing
    # when open; under ema2016 (open tanyao) only tanyao 1. fu: open 20 + tsumo 2 = 22 -> 30; 240
    value = score("234m456p78s88p", "6s", ["chi:234m"], "ema2016", tsumo=True)
    check(value, {"tanyao": 1}, 1, 30, 240, Limit.NONE)


# --------------------------------------------------------------------------- open tanyao switch

OPEN_TANYAO = ("456p678s34s88p", "5s", ["chi:234m"])  # chi 234m | 456p 678s 34s+5s 88p: all simples, open


def test_open_tanyao_is_no_yaku_under_ema2012():
    with pytest.raises(NoYakuError):
        score(*OPEN_TANYAO, rules="ema2012")


@pytest.mark.parametrize("rules", ["ema2016", "ema2025", "tenhou"])
def test_open_tanyao_is_one_han_elsewhere(rules):
    # tanyao 1 (open); open pinfu-shape ron = 30 fu; 240
    check(score(*OPEN_TANYAO, rules=rules), {"tanyao": 1}, 1, 30, 240, Limit.NONE)


# --------------------------------------------------------------------------- dora


def test_dora():
    # indicator 2m -> dora 3m, held once (123m): riichi 1 + dora 1 = 2 han, 40 fu = 40*16 = 640
    check(score(*PLAIN, riichi=True, dora="2m"), {"riichi": 1, "dora": 1}, 2, 40, 640, Limit.NONE)


def test_dora_counts_every_copy():
    # indicator 4p -> dora 5p, held three times (456p + 55p): riichi 1 + dora 3 = 4 han 40 fu = 2560 -> mangan
    check(score(*PLAIN, riichi=True, dora="4p"), {"riichi": 1, "dora": 3}, 4, 40, 2000, Limit.MANGAN)


def test_kan_dora_indicators_add_up():
    # indicators 2m (-> 3m x1) and 8s (-> 9s x1, from 789s): dora 2; riichi 1 + 2 = 3 han 40 fu = 40*32 = 1280
    check(score(*PLAIN, riichi=True, dora="2m8s"), {"riichi": 1, "dora": 2}, 3, 40, 1280, Limit.NONE)


def test_ura_dora_with_riichi():
    # ura indicator 2m -> 3m x1: riichi 1 + ura 1 = 2 han 40 fu = 640
    check(score(*PLAIN, riichi=True, ura="2m"), {"riichi": 1, "ura_dora": 1}, 2, 40, 640, Limit.NONE)


def test_ura_dora_only_counts_with_riichi():
    # no riichi: the ura indicator (4p -> 5p x3) is ignored; menzen tsumo 1, fu 20 + 2 + 2 = 24 -> 30; 240
    check(score(*PLAIN, tsumo=True, ura="4p"), {"tsumo": 1}, 1, 30, 240, Limit.NONE)


def test_dora_alone_is_not_a_yaku():
    # open hand with no yaku (chi 123m | 456p 1_3s 789s 55m) holding two dora 5m: still no win
    with pytest.raises(NoYakuError):
        score("456p13789s55m", "2s", ["chi:123m"], dora="4m")


@pytest.mark.parametrize("rules", ["ema2012", "tenhou"])
def test_red_five_is_aka_dora(rules):
    # 123m 4(0)6p 1_3s 789s 55p with a red 5p: riichi 1 + aka 1 = 2 han, 40 fu = 640
    check(score("123m406p13789s55p", "2s", rules=rules, riichi=True), {"riichi": 1, "aka_dora": 1}, 2, 40, 640,
          Limit.NONE)


@pytest.mark.parametrize("rules", ["ema2012", "tenhou"])
def test_red_five_in_a_meld_is_aka_dora(rules):
    # chi 4(0)6m | 456p 1_3s 789s 99m, haitei tsumo: haitei 1 + aka 1 = 2 han;
    # fu 20 + 2 kanchan + 2 tsumo = 24 -> 30; 30*16 = 480
    value = score("456p13789s99m", "2s", ["chi:406m"], rules, tsumo=True, haitei=True)
    check(value, {"haitei": 1, "aka_dora": 1}, 2, 30, 480, Limit.NONE)


@pytest.mark.parametrize("rules", ["ema2012", "tenhou"])
def test_red_five_as_winning_tile_is_aka_dora(rules):
    # 123m 4_6p + red 5p (kanchan) 99p 123s 789s: riichi 1 + aka 1 = 2 han; fu 30 + 2 = 32 -> 40; 640
    value = score("123m4699p123789s", "0p", rules=rules, riichi=True)
    check(value, {"riichi": 1, "aka_dora": 1}, 2, 40, 640, Limit.NONE)


@pytest.mark.parametrize("rules", ["ema2016", "ema2025"])
def test_red_five_is_invalid_without_red_fives(rules):
    with pytest.raises(InvalidHandError):
        score("123m406p13789s55p", "2s", rules=rules, riichi=True)


# --------------------------------------------------------------------------- two-han minimum (3.4.11)


def test_two_han_minimum_with_five_counters():
    # riichi alone is 1 han from yaku: not enough with 5 counters under ema2012
    with pytest.raises(NoYakuError):
        score(*PLAIN, riichi=True, honba=5)


def test_two_han_minimum_with_more_counters():
    with pytest.raises(NoYakuError):
        score(*PLAIN, riichi=True, honba=7)


def test_two_han_minimum_dora_do_not_count():
    # riichi 1 + dora 3 (4p -> 5p x3) = 4 han, but only 1 from yaku
    with pytest.raises(NoYakuError):
        score(*PLAIN, riichi=True, honba=5, dora="4p")


def test_two_han_minimum_red_fives_do_not_count():
    with pytest.raises(NoYakuError):
        score("123m406p13789s55p", "2s", riichi=True, honba=5)


def test_two_han_minimum_four_counters_is_fine():
    check(score(*PLAIN, riichi=True, honba=4), {"riichi": 1}, 1, 40, 320, Limit.NONE)


def test_two_han_minimum_met_by_two_han_of_yaku():
    # riichi 1 + menzen tsumo 1 = 2 han from yaku; fu 20 + 2 + 2 = 24 -> 30; 30*16 = 480
    check(score(*PLAIN, riichi=True, tsumo=True, honba=5), {"riichi": 1, "tsumo": 1}, 2, 30, 480, Limit.NONE)


@pytest.mark.parametrize("rules", ["ema2016", "ema2025", "tenhou"])
def test_two_han_minimum_not_applied_elsewhere(rules):
    check(score(*PLAIN, rules=rules, riichi=True, honba=5), {"riichi": 1}, 1, 40, 320, Limit.NONE)


# --------------------------------------------------------------------------- kazoe and kiriage

# 123m 123m 789m 789m 55m, ryanmen 1m (from 23m): chinitsu 6 + ryanpeikou 3 + pinfu 1 + riichi 1 + tsumo 1 = 12,
# pinfu tsumo 20 fu (the seven-pairs reading is chinitsu 6 + chiitoitsu 2 + ... = 2 less).
BIG = ("1223355778899m", "1m")
BIG_YAKU = {"chinitsu": 6, "ryanpeiko": 3, "pinfu": 1, "riichi": 1, "tsumo": 1}


@pytest.mark.parametrize("rules", PRESETS)
def test_twelve_han_is_sanbaiman(rules):
    value = score(*BIG, rules=rules, riichi=True, tsumo=True)
    check(value, BIG_YAKU, 12, 20, 6000, Limit.SANBAIMAN)
    assert not value.kazoe


@pytest.mark.parametrize("rules", ["ema2012", "tenhou"])
def test_kazoe_yakuman(rules):
    # + ippatsu = 13 han: a counted yakuman, 8000
    value = score(*BIG, rules=rules, riichi=True, tsumo=True, ippatsu=True)
    check(value, {**BIG_YAKU, "ippatsu": 1}, 13, 20, 8000, Limit.YAKUMAN)
    assert value.kazoe
    assert value.yakuman == 1


@pytest.mark.parametrize("rules", ["ema2016", "ema2025"])
def test_kazoe_is_sanbaiman_from_ema2016(rules):
    value = score(*BIG, rules=rules, riichi=True, tsumo=True, ippatsu=True)
    check(value, {**BIG_YAKU, "ippatsu": 1}, 13, 20, 6000, Limit.SANBAIMAN)
    assert value.kazoe
    assert value.yakuman == 0


# 234m 456p 678s 34s+2s 88p: riichi 1 + pinfu 1 + tanyao 1 + dora 1 (indicator 7s -> 8s) = 4 han, 30 fu = 1920
FOUR_30 = {"hand": "234m456p678s34s88p", "win": "2s", "riichi": True, "dora": "7s"}
FOUR_30_YAKU = {"riichi": 1, "pinfu": 1, "tanyao": 1, "dora": 1}
# ankan 2222m | CCC 1_3p 456s 99s: fu 30 + 16 (closed simple kan) + 8 (closed honour pon) + 2 (kanchan) = 56 -> 60;
# riichi 1 + chun 1 + dora 1 (indicator 1p -> 2p) = 3 han, 60 fu = 1920
THREE_60 = {"hand": "777z13p456s99s", "win": "2p", "melds": ["ankan:2222m"], "riichi": True, "dora": "1p"}
THREE_60_YAKU = {"riichi": 1, "chun": 1, "dora": 1}


@pytest.mark.parametrize("rules", ["ema2012", "ema2016", "tenhou"])
def test_no_kiriage(rules):
    four = score(**FOUR_30, rules=rules)
    check(four, FOUR_30_YAKU, 4, 30, 1920, Limit.NONE)
    three = score(**THREE_60, rules=rules)
    check(three, THREE_60_YAKU, 3, 60, 1920, Limit.NONE)
    assert not four.kiriage
    assert not three.kiriage


def test_kiriage_mangan_under_ema2025():
    four = score(**FOUR_30, rules="ema2025")
    check(four, FOUR_30_YAKU, 4, 30, 2000, Limit.MANGAN)
    three = score(**THREE_60, rules="ema2025")
    check(three, THREE_60_YAKU, 3, 60, 2000, Limit.MANGAN)
    assert four.kiriage
    assert three.kiriage


# --------------------------------------------------------------------------- nagashi


@pytest.mark.parametrize("rules", ["ema2012", "tenhou"])
def test_nagashi_mangan(rules):
    value = score_hand(None, WinConditions(nagashi=True), get_ruleset(rules))
    assert yaku_of(value) == {"nagashi_mangan": 5}
    assert value.base_points == 2000
    assert value.limit is Limit.MANGAN


@pytest.mark.parametrize("rules", ["ema2016", "ema2025"])
def test_nagashi_absent_from_ema2016(rules):
    with pytest.raises(NoYakuError):
        score_hand(None, WinConditions(nagashi=True), get_ruleset(rules))


# --------------------------------------------------------------------------- yakuman

YAKUMAN = {"han": 13, "fu": None, "base": 8000, "limit": Limit.YAKUMAN}

YAKUMAN_CASES = [
    # 1m 9m 1p 9p 1s 9s E S W N P F + 1m, waiting on C only
    case("kokushi", "119m19p19s123456z", "7z", yaku={"kokushi": 13}, **YAKUMAN),
    # 222m 444p 666s 88s 99p, tsumo on 8s: four concealed pons
    case("suuankou", "222m444p666s88s99p", "8s", tsumo=True, yaku={"suuankou": 13}, **YAKUMAN),
    # pon PPP FFF | CCC(closed) 12_m+3m 99p
    case(
        "daisangen", "777z12m99p", "3m", melds=["pon:PPP", "pon:FFF"], yaku={"daisangen": 13}, **YAKUMAN,
    ),
    # pon EEE SSS WWW | NN 12_m+3m
    case(
        "shousuushii", "44z12m", "3m", melds=["pon:EEE", "pon:SSS", "pon:WWW"], yaku={"shosuushi": 13}, **YAKUMAN,
    ),
    # pon EEE SSS PPP | FF CC shanpon, ron on F (shousangen inside, not a yakuman)
    case(
        "tsuuiisou", "66z77z", "6z", melds=["pon:EEE", "pon:SSS", "pon:PPP"], yaku={"tsuisou": 13}, **YAKUMAN,
    ),
    # seven pairs of honours: EE SS WW NN PP FF CC
    case("tsuuiisou_chiitoitsu", "1122334455667z", "7z", yaku={"tsuisou": 13}, **YAKUMAN),
    # pon 111m 999m 111p | 99p 11s, ron on 9p
    case(
        "chinroutou", "99p11s", "9p", melds=["pon:111m", "pon:999m", "pon:111p"], yaku={"chinroto": 13}, **YAKUMAN,
    ),
    # 234s 234s 666s 888s FF, tanki on F: only green tiles
    case("ryuuiisou", "223344666888s6z", "6z", yaku={"ryuisou": 13}, **YAKUMAN),
    # 1112345678999m + 5m, won on 3m (not the nine-sided wait)
    case("chuuren", "1112455678999m", "3m", yaku={"chuuren_poutou": 13}, **YAKUMAN),
    # kan 2222m, ankan 4444p, kan 6666s, kakan 8888s | tanki 9p
    case(
        "suukantsu", "9p", "9p", melds=["kan:2222m", "ankan:4444p", "kan:6666s", "kakan:8888s"],
        yaku={"suukantsu": 13}, **YAKUMAN,
    ),
    # dealer's first draw: tenhou
    case("tenhou", *PLAIN, seat="E", tsumo=True, tenhou=True, yaku={"tenhou": 13}, **YAKUMAN),
    # non-dealer's first draw: chiihou
    case("chiihou", *PLAIN, seat="S", tsumo=True, chiihou=True, yaku={"chiihou": 13}, **YAKUMAN),
    # non-dealer's ron before the first draw: renhou, a yakuman under ema2012
    case("renhou_ema2012", *PLAIN, seat="S", renhou=True, yaku={"renhou": 13}, **YAKUMAN),
]


@pytest.mark.parametrize(("hand", "win", "melds", "rules", "cond", "expected"), YAKUMAN_CASES)
def test_yakuman(hand, win, melds, rules, cond, expected):
    yaku, han, fu, base, limit = expected
    value = score(hand, win, melds, rules, **cond)
    check(value, yaku, han, fu, base, limit)
    assert value.yakuman == 1
    assert not value.kazoe
    # only Big Three Dragons (and Big Four Winds) make a pao player liable
    assert value.pao_yakuman == (1 if "daisangen" in yaku else 0)


def test_suuankou_won_by_ron_on_a_shanpon_is_not_yakuman():
    # 222m 444p 666s 88s 99p, ron on 8s: 888s counts open -> sanankou 2 + toitoi 2 = 4 han;
    # fu 30 + 4*3 (closed simple pons) + 2 (888s, open) = 44 -> 50; 4 han 50 fu -> mangan
    check(score("222m444p666s88s99p", "8s"), {"toitoi": 2, "sanankou": 2}, 4, 50, 2000, Limit.MANGAN)


@pytest.mark.parametrize("rules", ["ema2016", "ema2025"])
def test_renhou_is_a_mangan_from_ema2016(rules):
    # renhou as a 5-han yaku on a hand with no other yaku: 5 han (40 fu) = mangan
    check(score(*PLAIN, rules=rules, seat="S", renhou=True), {"renhou": 5}, 5, 40, 2000, Limit.MANGAN)


def test_renhou_is_not_a_yaku_under_tenhou():
    with pytest.raises(NoYakuError, match="not a yaku"):
        score(*PLAIN, rules="tenhou", seat="S", renhou=True)


# --------------------------------------------------------------------------- double yakuman and stacking

DAISUUSHI = ("44z99m", "4z", ["pon:EEE", "pon:SSS", "pon:WWW"])  # EEE SSS WWW | NN 99m, ron on N


def test_daisuushi_is_double_under_ema2012():
    value = score(*DAISUUSHI, rules="ema2012")
    check(value, {"daisuushi": 26}, 26, None, 16000, Limit.YAKUMAN)
    assert value.yakuman == 2
    assert value.pao_yakuman == 2


@pytest.mark.parametrize("rules", ["ema2016", "ema2025", "tenhou"])
def test_daisuushi_is_single_elsewhere(rules):
    value = score(*DAISUUSHI, rules=rules)
    check(value, {"daisuushi": 13}, 13, None, 8000, Limit.YAKUMAN)
    assert value.yakuman == 1
    assert value.pao_yakuman == 1


SINGLE_EVERYWHERE = [
    # 13-sided kokushi: 1m 9m 1p 9p 1s 9s E S W N P F C, won on 1m
    pytest.param("19m19p19s1234567z", "1m", {}, {"kokushi": 13}, id="kokushi_13_sided"),
    # suuankou tanki: 222m 444p 666s 888s, ron on the pair 9p
    pytest.param("222m444p666s888s9p", "9p", {}, {"suuankou": 13}, id="suuankou_tanki"),
    # pure nine gates: 1112345678999m waiting on all nine, won on 5m
    pytest.param("1112345678999m", "5m", {}, {"chuuren_poutou": 13}, id="pure_nine_gates"),
    pytest.param("1112345678999m", "1m", {"tsumo": True}, {"chuuren_poutou": 13}, id="pure_nine_gates_tsumo"),
]


@pytest.mark.parametrize("rules", PRESETS)
@pytest.mark.parametrize(("hand", "win", "cond", "yaku"), SINGLE_EVERYWHERE)
def test_wide_wait_yakuman_is_single(rules, hand, win, cond, yaku):
    value = score(hand, win, (), rules, **cond)
    check(value, yaku, 13, None, 8000, Limit.YAKUMAN)
    assert value.yakuman == 1


# pon PPP FFF CCC | EE SS shanpon, ron on E: daisangen + tsuuiisou
DAISANGEN_TSUUIISOU = ("11z22z", "1z", ["pon:PPP", "pon:FFF", "pon:CCC"])
# pon EEE SSS WWW | NN PP shanpon, ron on N: daisuushii + tsuuiisou
DAISUUSHI_TSUUIISOU = ("44z55z", "4z", ["pon:EEE", "pon:SSS", "pon:WWW"])


def test_yakuman_stack_under_tenhou():
    value = score(*DAISANGEN_TSUUIISOU, rules="tenhou")
    check(value, {"daisangen": 13, "tsuisou": 13}, 26, None, 16000, Limit.YAKUMAN)
    assert value.yakuman == 2
    assert value.pao_yakuman == 1  # the pao player is liable for the daisangen only


@pytest.mark.parametrize("rules", ["ema2012", "ema2016", "ema2025"])
def test_yakuman_do_not_stack_under_ema(rules):
    value = score(*DAISANGEN_TSUUIISOU, rules=rules)
    # worth one yakuman; the daisangen stays the one shown so that pao (3.3.6) covers the whole hand
    check(value, {"daisangen": 13}, 13, None, 8000, Limit.YAKUMAN)
    assert value.yakuman == 1
    assert value.pao_yakuman == 1


def test_daisuushi_tsuuiisou_under_tenhou():
    # 1 + 1 (no double yakuman, but they add up)
    value = score(*DAISUUSHI_TSUUIISOU, rules="tenhou")
    check(value, {"daisuushi": 13, "tsuisou": 13}, 26, None, 16000, Limit.YAKUMAN)
    assert value.yakuman == 2
    assert value.pao_yakuman == 1


def test_daisuushi_tsuuiisou_under_ema2012():
    # the largest only: the double daisuushi (2), not 2 + 1
    value = score(*DAISUUSHI_TSUUIISOU, rules="ema2012")
    check(value, {"daisuushi": 26}, 26, None, 16000, Limit.YAKUMAN)
    assert value.yakuman == 2
    assert value.pao_yakuman == 2


@pytest.mark.parametrize("rules", ["ema2016", "ema2025"])
def test_daisuushi_tsuuiisou_under_ema2016(rules):
    # a single yakuman; daisuushi (a pao yakuman) is the one shown
    value = score(*DAISUUSHI_TSUUIISOU, rules=rules)
    check(value, {"daisuushi": 13}, 13, None, 8000, Limit.YAKUMAN)
    assert value.yakuman == 1
    assert value.pao_yakuman == 1


# ankan 2222m 4444p 6666s 8888s | ron on the pair 9p: suukantsu + suuankou (tanki)
FOUR_CONCEALED_KANS = ("9p", "9p", ["ankan:2222m", "ankan:4444p", "ankan:6666s", "ankan:8888s"])


def test_suukantsu_suuankou_stack_under_tenhou():
    value = score(*FOUR_CONCEALED_KANS, rules="tenhou")
    check(value, {"suukantsu": 13, "suuankou": 13}, 26, None, 16000, Limit.YAKUMAN)
    assert value.yakuman == 2


@pytest.mark.parametrize("rules", ["ema2012", "ema2016", "ema2025"])
def test_suukantsu_suuankou_single_under_ema(rules):
    value = score(*FOUR_CONCEALED_KANS, rules=rules)
    assert len(value.yaku) == 1
    assert set(yaku_of(value)) <= {"suukantsu", "suuankou"}
    assert value.han == 13
    assert value.base_points == 8000
    assert value.limit is Limit.YAKUMAN
    assert value.yakuman == 1


# dealer's first draw completing four concealed pons: 222m 444p 666s 88s 99p, tsumo on 8s
TENHOU_SUUANKOU = ("222m444p666s88s99p", "8s")


def test_tenhou_and_suuankou_stack_under_tenhou():
    value = score(*TENHOU_SUUANKOU, rules="tenhou", seat="E", tsumo=True, tenhou=True)
    check(value, {"tenhou": 13, "suuankou": 13}, 26, None, 16000, Limit.YAKUMAN)
    assert value.yakuman == 2
    assert value.pao_yakuman == 0


@pytest.mark.parametrize("rules", ["ema2012", "ema2016", "ema2025"])
def test_tenhou_and_suuankou_single_under_ema(rules):
    value = score(*TENHOU_SUUANKOU, rules=rules, seat="E", tsumo=True, tenhou=True)
    assert len(value.yaku) == 1
    assert set(yaku_of(value)) <= {"tenhou", "suuankou"}
    assert value.han == 13
    assert value.base_points == 8000
    assert value.limit is Limit.YAKUMAN
    assert value.yakuman == 1
