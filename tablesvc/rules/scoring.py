"""Hand valuation: han, fu, yaku and limit of a winning hand under a RuleSet.

The ``mahjong`` package does the hard part (decomposing the hand, finding
yaku and fu, choosing the most valuable reading); it has been checked against
real online hands. This module adds what it does not know:

* the rule switches it lacks: which yakuman count double (EMA 2012: only Big
  Four Winds), whether several yakuman add up, the two-han-from-yaku minimum
  at five counters, nagashi mangan as a preset switch, renhou absent;
* exact base points from han and fu under the preset's kazoe and kiriage
  (the payment layer needs base points, not the package's payment totals);
* one stable key per yaku for JSON consumers, and errors a referee can read.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import Enum
from functools import cache

from mahjong.constants import EAST
from mahjong.hand_calculating.hand import HandCalculator
from mahjong.hand_calculating.hand_config import HandConfig, HandConstants, OptionalRules
from mahjong.hand_calculating.yaku_config import YakuConfig
from mahjong.meld import Meld as PkgMeld

from tablesvc.rules.hand import Hand, InvalidHandError, MeldKind, WinConditions
from tablesvc.rules.ruleset import Kazoe, Nagashi, Renhou, RuleSet
from tablesvc.tiles import Tile, assign_ids

__all__ = ["HandValue", "Limit", "NoYakuError", "Yaku", "base_points", "score_hand", "yaku_key"]


class NoYakuError(InvalidHandError):
    """A complete hand that is not worth a win under the rules (no yaku, or too few han)."""


class Limit(Enum):
    """Limit hands; ``NONE`` below mangan."""

    NONE = ""
    MANGAN = "mangan"
    HANEMAN = "haneman"
    BAIMAN = "baiman"
    SANBAIMAN = "sanbaiman"
    YAKUMAN = "yakuman"


@dataclass(frozen=True)
class Yaku:
    """One scoring element of a hand. ``han`` is 13 per yakuman multiple."""

    key: str
    name: str
    han: int
    yakuman: int = 0

    @property
    def is_dora(self) -> bool:
        return self.key in _DORA_KEYS


@dataclass(frozen=True)
class HandValue:
    """What a winning hand is worth, before payments."""

    han: int
    fu: int
    yaku: tuple[Yaku, ...]
    limit: Limit
    base_points: int
    yakuman: int = 0
    """Yakuman multiples (0 for an ordinary hand; a kazoe yakuman is 1)."""
    kazoe: bool = False
    kiriage: bool = False
    pao_yakuman: int = 0
    """Multiples from Big Three Dragons / Big Four Winds: what a pao player can be liable for."""

    @property
    def yaku_han(self) -> int:
        """Han from yaku alone (dora, red fives and ura dora left out)."""
        return sum(y.han for y in self.yaku if not y.is_dora)

    @property
    def limit_name(self) -> str:
        """'mangan', 'double yakuman', 'kazoe yakuman', 'kiriage mangan' ... or ''."""
        if self.limit is Limit.YAKUMAN and self.yakuman > 1:
            return f"{_MULTIPLE.get(self.yakuman, f'{self.yakuman}x')} yakuman"
        if self.kazoe:
            return f"kazoe {self.limit.value}"
        if self.kiriage:
            return "kiriage mangan"
        return self.limit.value


_MULTIPLE = {2: "double", 3: "triple", 4: "quadruple", 5: "quintuple", 6: "sextuple"}

# Stable keys: the attribute names of the package's YakuConfig (e.g. "riichi", "daisuushi").
_PKG_YAKU = {y.yaku_id: (key, y.name) for key, y in vars(YakuConfig()).items()}
_SINGLE_FORM = {
    "daburu_kokushi": "kokushi",
    "suuankou_tanki": "suuankou",
    "daburu_chuuren_poutou": "chuuren_poutou",
    "renhou_yakuman": "renhou",
}
_NAME_BY_KEY = dict(_PKG_YAKU.values())
_KEY_BY_NAME = {name: key for key, name in _NAME_BY_KEY.items()}
_DORA_KEYS = frozenset({"dora", "aka_dora", "ura_dora"})
_PAO_KEYS = frozenset({"daisangen", "daisuushi"})

_PKG_ERRORS = {
    HandCalculator.ERR_HAND_NOT_WINNING: "the hand is not complete: it is not four sets and a pair, seven pairs "
    "or thirteen orphans",
    HandCalculator.ERR_OPEN_HAND_RIICHI: "riichi needs a concealed hand, but this hand has open melds",
    HandCalculator.ERR_OPEN_HAND_DABURI: "double riichi needs a concealed hand, but this hand has open melds",
    HandCalculator.ERR_IPPATSU_WITHOUT_RIICHI: "ippatsu needs riichi or double riichi",
    HandCalculator.ERR_CHANKAN_WITH_TSUMO: "chankan (robbing a kan) is a ron, not a tsumo",
    HandCalculator.ERR_RINSHAN_WITHOUT_TSUMO: "rinshan (win on the kan replacement tile) is a tsumo",
    HandCalculator.ERR_HAITEI_WITHOUT_TSUMO: "haitei (win on the last wall tile) is a tsumo; "
    "on the last discard it is houtei",
    HandCalculator.ERR_HOUTEI_WITH_TSUMO: "houtei (win on the last discard) is a ron; "
    "on the last wall tile it is haitei",
    HandCalculator.ERR_HAITEI_WITH_RINSHAN: "haitei and rinshan cannot both apply",
    HandCalculator.ERR_HOUTEI_WITH_CHANKAN: "houtei and chankan cannot both apply",
    HandCalculator.ERR_TENHOU_NOT_AS_DEALER: "tenhou (heavenly hand) is the dealer's; a non-dealer's is chiihou",
    HandCalculator.ERR_TENHOU_WITHOUT_TSUMO: "tenhou (heavenly hand) is a tsumo",
    HandCalculator.ERR_TENHOU_WITH_MELD: "tenhou (heavenly hand) cannot have melds",
    HandCalculator.ERR_CHIIHOU_AS_DEALER: "chiihou (earthly hand) is a non-dealer's; the dealer's is tenhou",
    HandCalculator.ERR_CHIIHOU_WITHOUT_TSUMO: "chiihou (earthly hand) is a tsumo",
    HandCalculator.ERR_CHIIHOU_WITH_MELD: "chiihou (earthly hand) cannot have melds",
    HandCalculator.ERR_RENHOU_AS_DEALER: "renhou is a non-dealer's win before their first draw",
    HandCalculator.ERR_RENHOU_WITH_TSUMO: "renhou is a ron on a discard before one's first draw",
    HandCalculator.ERR_RENHOU_WITH_MELD: "renhou cannot have melds",
}

_PKG_MELD = {
    MeldKind.CHI: (PkgMeld.CHI, True),
    MeldKind.PON: (PkgMeld.PON, True),
    MeldKind.KAN: (PkgMeld.KAN, True),
    MeldKind.ANKAN: (PkgMeld.KAN, False),
    MeldKind.KAKAN: (PkgMeld.SHOUMINKAN, True),
}


def yaku_key(name: str) -> str | None:
    """The stable key of a yaku by the name a result shows (``"Double Riichi"`` -> ``"daburu_riichi"``)."""
    return _KEY_BY_NAME.get(name)


def base_points(han: int, fu: int, rules: RuleSet) -> tuple[int, Limit, bool]:
    """Base points, limit and whether kiriage applied, for an ordinary (non-yakuman) hand.

    ``fu * 2**(2 + han)``, capped at mangan (2000); 6-7 han haneman, 8-10
    baiman, 11-12 sanbaiman, 13+ by the preset's kazoe switch. With kiriage,
    4 han 30 fu and 3 han 60 fu (1920 base) become mangan.
    """
    if han >= 13:
        return (8000, Limit.YAKUMAN, False) if rules.kazoe is Kazoe.YAKUMAN else (6000, Limit.SANBAIMAN, False)
    if han >= 11:
        return 6000, Limit.SANBAIMAN, False
    if han >= 8:
        return 4000, Limit.BAIMAN, False
    if han >= 6:
        return 3000, Limit.HANEMAN, False
    if han >= 5:
        return 2000, Limit.MANGAN, False
    base = fu * 2 ** (2 + han)
    if base >= 2000:
        return 2000, Limit.MANGAN, False
    if rules.kiriage and base >= 1920:
        return 2000, Limit.MANGAN, True
    return base, Limit.NONE, False


@cache
def _options(rules: RuleSet) -> OptionalRules:
    return OptionalRules(
        has_open_tanyao=rules.open_tanyao,
        has_aka_dora=rules.red_fives,
        # Every yakuman is asked for at 13 han and our own layer applies the
        # preset's double-yakuman and stacking switches, which the package lacks.
        has_double_yakuman=False,
        kazoe_limit=HandConstants.KAZOE_LIMITED,
        kiriage=rules.kiriage,
        renhou_as_yakuman=rules.renhou is Renhou.YAKUMAN,
        fu_for_open_pinfu=True,
        fu_for_pinfu_tsumo=False,
    )


_CONFIGS = threading.local()


def _config(rules: RuleSet) -> HandConfig:
    """One package HandConfig per rule set and thread, its win conditions set per call.

    Building a HandConfig builds the package's ~60 yaku objects, a sixth of
    the cost of valuing a hand. Every field the package reads is set before
    each call (the rest stay at their defaults: no nagashi here, no open
    riichi, no paarenchan, no counters or sticks, which our payment layer
    handles), so a reused config cannot carry one hand into the next.
    """
    cache = getattr(_CONFIGS, "by_rules", None)
    if cache is None:
        cache = _CONFIGS.by_rules = {}
    config = cache.get(rules)
    if config is None:
        config = cache[rules] = HandConfig(options=_options(rules))
    return config


def _check_rules(cond: WinConditions, rules: RuleSet) -> None:
    if cond.renhou and rules.renhou is Renhou.NONE:
        raise NoYakuError(f"renhou is not a yaku under {rules.name}")
    if cond.nagashi and rules.nagashi is Nagashi.NONE:
        raise NoYakuError(f"nagashi mangan is not played under {rules.name}")
    if cond.ippatsu and not (cond.riichi or cond.double_riichi):
        raise InvalidHandError(_PKG_ERRORS[HandCalculator.ERR_IPPATSU_WITHOUT_RIICHI])


def nagashi_value() -> HandValue:
    """Nagashi mangan: paid as a mangan tsumo, whatever the hand holds."""
    y = Yaku("nagashi_mangan", _NAME_BY_KEY["nagashi_mangan"], 5)
    return HandValue(han=5, fu=30, yaku=(y,), limit=Limit.MANGAN, base_points=2000)


def _check_fives(tiles: list[Tile], rules: RuleSet) -> None:
    """Red fives only where the rules have them, and then as one of each suit's four fives."""
    plain = {4: 0, 13: 0, 22: 0}
    for t in tiles:
        if t.kind in plain:
            if t.red:
                if not rules.red_fives:
                    raise InvalidHandError(f"red fives are not used under {rules.name}: write 5, not 0")
            else:
                plain[t.kind] += 1
    if rules.red_fives:
        for kind, count in plain.items():
            if count > 3:
                letter = "mps"[kind // 9]
                raise InvalidHandError(
                    f"{count} plain 5{letter}: with red fives ({rules.name}) one of the four is red; "
                    f"write it as 0{letter}"
                )


def score_hand(hand: Hand | None, cond: WinConditions, rules: RuleSet) -> HandValue:
    """Value a winning hand, taking the most valuable reading.

    Raises :class:`InvalidHandError` for a hand that cannot exist or cannot
    win as described, and :class:`NoYakuError` (a subclass) for a complete
    hand that is not a legal win under ``rules``.
    """
    _check_rules(cond, rules)
    if cond.nagashi:
        return nagashi_value()
    if hand is None:
        raise InvalidHandError("a hand is needed (only nagashi mangan is scored without one)")
    tiles = hand.all_tiles
    on_table = [*tiles, *cond.dora, *cond.ura]
    _check_fives(on_table, rules)
    # ids for the indicators too, so that a fifth copy anywhere on the table is refused
    ids = assign_ids(on_table)
    win_id = ids[hand.concealed.index(hand.win_tile)]
    pkg_melds = []
    offset = len(hand.concealed)
    for m in hand.melds:
        kind, opened = _PKG_MELD[m.kind]
        meld_ids = ids[offset : offset + len(m.tiles)]
        offset += len(m.tiles)
        pkg_melds.append(PkgMeld(meld_type=kind, tiles=sorted(meld_ids), opened=opened))

    config = _config(rules)
    config.is_tsumo = cond.tsumo
    config.is_riichi = cond.riichi or cond.double_riichi
    config.is_daburu_riichi = cond.double_riichi
    config.is_ippatsu = cond.ippatsu
    config.is_rinshan = cond.rinshan
    config.is_chankan = cond.chankan
    config.is_haitei = cond.haitei
    config.is_houtei = cond.houtei
    config.is_tenhou = cond.tenhou
    config.is_chiihou = cond.chiihou
    config.is_renhou = cond.renhou
    config.player_wind = EAST + int(cond.seat)
    config.round_wind = EAST + int(cond.round)
    config.is_dealer = int(cond.seat) == 0
    resp = HandCalculator.estimate_hand_value(
        ids[: len(tiles)],
        win_id,
        melds=pkg_melds,
        dora_indicators=[t.kind * 4 for t in cond.dora],
        ura_dora_indicators=[t.kind * 4 for t in cond.ura],
        config=config,
    )
    if resp.error:
        if resp.error == HandCalculator.ERR_NO_YAKU:
            open_note = "" if rules.open_tanyao or not hand.is_open else " (open tanyao does not count)"
            raise NoYakuError(f"the hand has no yaku under {rules.name}{open_note}; dora alone do not make a win")
        raise InvalidHandError(_PKG_ERRORS.get(resp.error, resp.error))
    return _value(resp.yaku or [], resp.han or 0, resp.fu or 0, hand.is_open, cond, rules)


def _value(pkg_yaku: list, han: int, fu: int, is_open: bool, cond: WinConditions, rules: RuleSet) -> HandValue:
    yakuman_parts: list[Yaku] = []
    ordinary: list[Yaku] = []
    for y in pkg_yaku:
        key, _ = _PKG_YAKU[y.yaku_id]
        if y.is_yakuman:
            mult = 2 if key in rules.double_yakuman else 1
            shown = key if mult == 2 else _SINGLE_FORM.get(key, key)
            yakuman_parts.append(Yaku(shown, _NAME_BY_KEY[shown], 13 * mult, mult))
        else:
            # the package's own rule: the open value where the hand is open and the yaku has one
            ordinary.append(Yaku(key, y.name, y.han_open if is_open and y.han_open else y.han_closed))
    if yakuman_parts:
        if rules.yakuman_stack:
            mult = sum(y.yakuman for y in yakuman_parts)
        else:
            # the hand is worth its largest yakuman; a pao yakuman wins a tie so liability stays visible
            top = max(yakuman_parts, key=lambda y: (y.yakuman, y.key in _PAO_KEYS))
            mult = top.yakuman
            yakuman_parts = [top]
        pao = sum(y.yakuman for y in yakuman_parts if y.key in _PAO_KEYS)
        return HandValue(
            han=13 * mult,
            fu=fu,
            yaku=tuple(yakuman_parts),
            limit=Limit.YAKUMAN,
            base_points=8000 * mult,
            yakuman=mult,
            pao_yakuman=min(pao, mult),
        )
    value = HandValue(han=han, fu=fu, yaku=tuple(ordinary), limit=Limit.NONE, base_points=0)
    minimum = rules.two_han_minimum_honba
    if minimum is not None and cond.honba >= minimum and value.yaku_han < 2:
        raise NoYakuError(
            f"with {cond.honba} counters a win needs two han from yaku (dora do not count); "
            f"this hand has {value.yaku_han}"
        )
    base, limit, kiriage = base_points(han, fu, rules)
    return HandValue(
        han=han,
        fu=fu,
        yaku=value.yaku,
        limit=limit,
        base_points=base,
        yakuman=1 if han >= 13 and limit is Limit.YAKUMAN else 0,
        kazoe=han >= 13,
        kiriage=kiriage,
    )
