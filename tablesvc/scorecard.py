"""A scoring request as a user writes it, and its answer as JSON or a readable card.

One mapping format serves the command line and ``--batch``: the long option
names with ``-`` turned into ``_``, repeated options as lists, flags as
``true``, the hand under ``hand``. Keeping a single path means a batch line
and a command line can never score the same hand differently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tablesvc.rules.hand import Hand, InvalidHandError, WinConditions, Wind
from tablesvc.rules.payments import RonWin, Settlement, settle_nagashi, settle_ron, settle_tsumo
from tablesvc.rules.ruleset import RuleSet, get_ruleset
from tablesvc.rules.scoring import HandValue, score_hand
from tablesvc.tiles import Tile, format_tiles, parse_tiles

__all__ = ["FLAGS", "ScoreAnswer", "ScoreRequest", "score"]

FLAGS = (
    "riichi",
    "double_riichi",
    "ippatsu",
    "haitei",
    "houtei",
    "rinshan",
    "chankan",
    "tenhou",
    "chiihou",
    "renhou",
    "nagashi",
)
_VALUES = ("hand", "win", "seat", "round", "rules", "honba", "sticks", "from", "pao")
_LISTS = ("meld", "dora", "ura")
_KNOWN = frozenset((*FLAGS, *_VALUES, *_LISTS, "ron", "tsumo", "json"))


@dataclass(frozen=True)
class ScoreRequest:
    """A hand to score, checked and parsed."""

    hand: Hand | None
    conditions: WinConditions
    rules: RuleSet
    discarder: Wind | None = None
    pao: Wind | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], default_rules: str | None = None) -> ScoreRequest:
        unknown = [k for k in data if k not in _KNOWN]
        if unknown:
            unknown.sort()
            raise InvalidHandError(f"unknown key(s) {', '.join(map(repr, unknown))}; see 'tablesvc score --help'")
        if data.get("ron") and data.get("tsumo"):
            raise InvalidHandError("a win is either ron or tsumo, not both")
        rules = get_ruleset(data.get("rules") or default_rules)
        flags = {f: _flag(data, f) for f in FLAGS if f in data}
        conditions = WinConditions(
            tsumo=_flag(data, "tsumo"),
            seat=Wind.parse(data.get("seat") or "S"),
            round=Wind.parse(data.get("round") or "E"),
            dora=_tiles(_as_list(data, "dora")),
            ura=_tiles(_as_list(data, "ura")),
            honba=_count(data, "honba"),
            sticks=_count(data, "sticks"),
            **flags,
        )
        hand_text = data.get("hand")
        hand = None
        if hand_text or not conditions.nagashi:
            if not isinstance(hand_text, str) or not hand_text.strip():
                raise InvalidHandError("no hand given: write the concealed tiles, e.g. 234m22406p345678s")
            win = data.get("win")
            if not isinstance(win, str) or not win.strip():
                raise InvalidHandError("no winning tile given: add --win TILE (e.g. --win 8s)")
            hand = Hand.parse(hand_text, win, [str(m) for m in _as_list(data, "meld")])
        discarder = Wind.parse(data["from"]) if data.get("from") else None
        pao = Wind.parse(data["pao"]) if data.get("pao") else None
        if discarder is not None and conditions.tsumo:
            raise InvalidHandError("--from names the discarder of a ron; a tsumo has none")
        if conditions.seat in (discarder, pao):
            raise InvalidHandError("the winner cannot be the discarder or the pao player")
        return cls(hand, conditions, rules, discarder, pao)


def _flag(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise InvalidHandError(f"{key!r} is a flag: give true or false, not {value!r}")
    return value


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key) or 0
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidHandError(f"{key!r} must be a whole number, not {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise InvalidHandError(f"{key!r} must be a whole number, not {value!r}") from None
    if number < 0:
        raise InvalidHandError(f"{key!r} cannot be negative")
    return number


def _as_list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return value
    raise InvalidHandError(f"{key!r} must be a string or a list of strings, not {value!r}")


def _tiles(texts: Sequence[Any]) -> tuple[Tile, ...]:
    out: list[Tile] = []
    for t in texts:
        out.extend(parse_tiles(str(t)))
    return tuple(out)


@dataclass(frozen=True)
class ScoreAnswer:
    """A scored request: the hand's value and who pays what."""

    request: ScoreRequest
    value: HandValue
    settlement: Settlement
    winner: int
    discarder: int | None

    def payer_label(self, seat: int) -> str:
        if not self.request.conditions.tsumo and self.request.discarder is None and seat == self.discarder:
            return "discarder"
        return Wind(seat).name

    @property
    def payments(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for p in self.settlement.payments:
            label = self.payer_label(p.payer)
            totals[label] = totals.get(label, 0) + p.amount
        return totals

    @property
    def honba_bonus(self) -> int:
        return sum(p.amount for p in self.settlement.payments if p.reason == "honba")

    def to_json(self) -> dict[str, Any]:
        v = self.value
        return {
            "han": v.han,
            "fu": v.fu,
            "yaku": [{"name": y.name, "key": y.key, "han": y.han} for y in v.yaku],
            "limit": v.limit_name or None,
            "yakuman": v.yakuman,
            "points": {"total": self.settlement.deltas[self.winner], "payments": self.payments},
            "honba_bonus": self.honba_bonus,
            "sticks_bonus": self.settlement.sticks_points,
            "dealer": self.request.conditions.is_dealer,
            "rules": self.request.rules.name,
        }

    def card(self) -> str:
        """A short card a referee reads aloud."""
        req, v = self.request, self.value
        c = req.conditions
        how = "tsumo" if c.tsumo else "ron"
        lines = []
        if req.hand is not None:
            melds = "".join(f" {m.notation}" for m in req.hand.melds)
            lines.append(f"{format_tiles(req.hand.concealed)}{melds}  win {req.hand.win_tile.mjai} by {how}")
        dealer = "dealer" if c.is_dealer else "non-dealer"
        lines.append(f"{c.seat.title} seat ({dealer}), {c.round.title} round, rules {req.rules.name}")
        width = max(len(y.name) for y in v.yaku)
        for y in v.yaku:
            amount = f"{y.han} han" if not y.yakuman else ("yakuman" if y.yakuman == 1 else f"{y.yakuman}x yakuman")
            lines.append(f"  {y.name:<{width}}  {amount}")
        summary = f"{v.han} han {v.fu} fu" if not v.yakuman or v.kazoe else "yakuman"
        if v.yakuman > 1:
            summary = v.limit_name
        elif v.limit_name and v.limit_name not in summary:
            summary += f", {v.limit_name}"
        lines.append(f"  = {summary}")
        pays = ", ".join(f"{self._seat_title(label)} pays {amount}" for label, amount in self.payments.items())
        lines.append(f"{pays}")
        extras = []
        if self.honba_bonus:
            extras.append(f"{self.honba_bonus} for {c.honba} counter(s)")
        if self.settlement.sticks_points:
            extras.append(f"{self.settlement.sticks_points} in riichi sticks")
        total = f"Total {self.settlement.deltas[self.winner]}"
        lines.append(total + (f" (includes {', '.join(extras)})" if extras else ""))
        return "\n".join(lines)

    @staticmethod
    def _seat_title(label: str) -> str:
        return "the discarder" if label == "discarder" else Wind[label].title


def score(request: ScoreRequest) -> ScoreAnswer:
    """Value the hand and settle its payments as if seat E were the dealer."""
    c = request.conditions
    value = score_hand(request.hand, c, request.rules)
    winner = c.seat.value
    dealer = Wind.E.value
    pao = request.pao.value if request.pao is not None else None
    if c.nagashi:
        settlement = settle_nagashi([winner], dealer, request.rules, honba=c.honba, sticks=c.sticks)
        return ScoreAnswer(request, value, settlement, winner, None)
    if c.tsumo:
        settlement = settle_tsumo(value, winner, dealer, honba=c.honba, sticks=c.sticks, pao=pao,
                                  pao_liability=request.rules.pao_liability)
        return ScoreAnswer(request, value, settlement, winner, None)
    if request.discarder is not None:
        discarder = request.discarder.value
    else:  # unnamed: any seat that is neither winner nor pao; shown as "discarder"
        discarder = next(s for s in ((winner + k) % 4 for k in (3, 2, 1)) if s != pao)
    win = RonWin(winner, value, pao)
    settlement = settle_ron([win], discarder, dealer, request.rules, honba=c.honba, sticks=c.sticks)
    return ScoreAnswer(request, value, settlement, winner, discarder)

