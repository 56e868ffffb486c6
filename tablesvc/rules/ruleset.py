"""Rule sets as data: every switch that differs between the rules we support.

The engine and the scoring layer never test a preset's *name*; they read
switches. A club with house rules can therefore build its own
``dataclasses.replace(PRESETS["ema2012"], open_tanyao=True)`` without touching
code. ``docs/rules.md`` is the switch-by-switch table of the presets below
(and a test keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from enum import Enum

__all__ = [
    "HOUSE_SWITCHES",
    "PRESETS",
    "ChomboPenalty",
    "Kazoe",
    "Nagashi",
    "PaoLiability",
    "Renhou",
    "RuleSet",
    "UnknownRuleSetError",
    "get_ruleset",
]


class Kazoe(Enum):
    """What 13 or more han from ordinary yaku and dora are worth."""

    YAKUMAN = "yakuman"
    SANBAIMAN = "sanbaiman"


class Renhou(Enum):
    """How a non-dealer's ron before their first draw is valued."""

    NONE = "none"  # not a yaku
    MANGAN = "mangan"  # a 5-han yaku (a mangan on its own, other yaku add to it)
    YAKUMAN = "yakuman"


class Nagashi(Enum):
    """Whether and how nagashi mangan (all discards terminals/honours, none called) pays."""

    NONE = "none"
    WIN = "win"  # a mangan tsumo win: counters and riichi sticks go to the player, hand ends as a win
    DRAW = "draw"  # mangan tsumo payments at the exhaustive draw, instead of noten payments; no counters, no sticks


class PaoLiability(Enum):
    """What the liable (pao) player covers when the hand holds more than the pao yakuman (a stacked hand)."""

    HAND = "hand"  # the full value of the hand: EMA 3.3.6 ("pays the full hand"), and Tenhou's settlement
    YAKUMAN = "yakuman"  # the pao yakuman only; any other yakuman of the hand is paid the ordinary way


class ChomboPenalty(Enum):
    """How a chombo is paid."""

    MANGAN_PAYMENT = "mangan_payment"  # at once, as a reverse mangan tsumo (EMA 2012 3.4.6)
    FINAL_PENALTY = "final_penalty"  # points taken off the final score after uma (EMA 2016)


@dataclass(frozen=True)
class RuleSet:
    """Every rule switch; the presets below are the supported combinations."""

    name: str
    title: str
    # --- tiles and yaku
    red_fives: bool = True
    open_tanyao: bool = False
    renhou: Renhou = Renhou.YAKUMAN
    nagashi: Nagashi = Nagashi.WIN
    # --- limits
    double_yakuman: frozenset[str] = frozenset({"daisuushi"})
    """Yakuman worth two (by our yaku key); all others are worth one."""
    yakuman_stack: bool = False
    """Several yakuman in one hand add up (True) or the hand is worth its largest (False)."""
    kazoe: Kazoe = Kazoe.YAKUMAN
    kiriage: bool = False
    # --- minimums and claims
    two_han_minimum_honba: int | None = 5
    """With this many counters or more a win needs two han from yaku; None = never."""
    kuikae_forbidden: bool = True
    multiple_ron: bool = True
    triple_ron_aborts: bool = False
    multi_ron_honba_to_each: bool = True
    """Multiple ron: every winner gets the counter bonus (True) or only the first in turn order."""
    abortive_draws: bool = True
    pao: bool = True
    pao_liability: PaoLiability = PaoLiability.HAND
    """On a stacked hand, the liable player covers the whole hand or only the pao yakuman."""
    # --- points
    start_points: int = 30000
    return_points: int = 30000
    """Final scores are measured from here; above start_points the difference (oka) goes to first place."""
    uma: tuple[int, int, int, int] = (30000, 10000, -10000, -30000)
    ties_share_uma: bool = True
    """Tied players share the uma of their places (EMA); otherwise the earlier seat ranks higher."""
    chombo: ChomboPenalty = ChomboPenalty.MANGAN_PAYMENT
    chombo_final_points: int = 0
    """With FINAL_PENALTY: points taken off the final score for each chombo."""
    dealer_keeps_deal: bool = True
    """The dealer keeps the deal after a win or tenpai (renchan); no: the deal passes after every hand."""
    busting_ends_game: bool = False
    extension_round: bool = False
    """After South 4, play on into the West round until someone reaches return_points (Tenhou)."""
    dealer_stops_when_top: bool = False
    """In the last hand a dealer who wins or is tenpai ends the game when first with return_points (Tenhou)."""
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __hash__(self) -> int:
        # hashed on every scoring call (cached package options): compute once
        return self._hash  # type: ignore[attr-defined]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(tuple(self.switches().values())))
        if sum(self.uma) != 0:
            raise ValueError(f"rule set {self.name}: uma must sum to zero, not {sum(self.uma)}")
        if self.return_points < self.start_points:
            raise ValueError(f"rule set {self.name}: return_points below start_points")

    @property
    def oka(self) -> int:
        """The first-place bonus made of everyone's difference between return and start points."""
        return 4 * (self.return_points - self.start_points)

    def switches(self) -> dict[str, object]:
        """Every switch by name, for docs and the ``state`` payload."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("name", "title", "notes")}

    def switch_text(self, switch: str) -> str:
        """A switch's value as ``docs/rules.md`` writes it (yes/no, enum values, signed uma)."""
        return _switch_text(self.switches()[switch], docs=True)


EMA2012 = RuleSet(
    name="ema2012",
    title="EMA Riichi Competition Rules, 2012 edition (the project's RULES.md)",
    notes=(
        "Multiple ron: each winner is paid in full by the discarder, each gets the counter bonus; "
        "riichi sticks go to the first winner in turn order from the discarder.",
    ),
)

EMA2016 = RuleSet(
    name="ema2016",
    title="EMA Riichi Competition Rules, 2016 edition",
    red_fives=False,
    open_tanyao=True,
    renhou=Renhou.MANGAN,
    nagashi=Nagashi.NONE,
    double_yakuman=frozenset(),
    kazoe=Kazoe.SANBAIMAN,
    two_han_minimum_honba=None,
    abortive_draws=False,
    uma=(15000, 5000, -5000, -15000),
    chombo=ChomboPenalty.FINAL_PENALTY,
    chombo_final_points=20000,
)

EMA2025 = replace(
    EMA2016,
    name="ema2025",
    title="EMA Riichi Competition Rules, 2025 edition (2016 with kiriage mangan)",
    kiriage=True,
)

TENHOU = RuleSet(
    name="tenhou",
    title="Tenhou online server, 4-player ranked hanchan with red fives",
    red_fives=True,
    open_tanyao=True,
    renhou=Renhou.NONE,
    nagashi=Nagashi.DRAW,
    double_yakuman=frozenset(),
    yakuman_stack=True,
    kazoe=Kazoe.YAKUMAN,
    two_han_minimum_honba=None,
    triple_ron_aborts=True,
    multi_ron_honba_to_each=False,
    start_points=25000,
    return_points=30000,
    uma=(20000, 10000, -10000, -20000),
    ties_share_uma=False,
    busting_ends_game=True,
    extension_round=True,
    dealer_stops_when_top=True,
    notes=("Multiple ron: counters and riichi sticks both go to the first winner in turn order.",),
)

PRESETS: dict[str, RuleSet] = {r.name: r for r in (EMA2012, EMA2016, EMA2025, TENHOU)}
DEFAULT = "ema2012"


class UnknownRuleSetError(ValueError):
    """A preset name that does not exist."""


def get_ruleset(name: str | None = None) -> RuleSet:
    """The preset of this name (default ``ema2012``), or a preset with a club's house rules after it:
    ``"ema2016; kiriage=yes; uma=15000,5000,-5000,-15000"`` (switches as ``docs/rules.md`` names them).

    The rule set's ``name`` is that text put in order (preset lower case, switches sorted), so the name a
    game journals is all it takes to play it again with the same rules.
    """
    preset, *parts = [p.strip() for p in (name or DEFAULT).split(";")]
    base = PRESETS.get(preset.lower())
    if base is None:
        raise UnknownRuleSetError(f"unknown rule set {preset!r}: choose one of {', '.join(PRESETS)}")
    changes: dict[str, object] = {}
    for part in filter(None, parts):
        switch, sep, raw = (x.strip() for x in part.partition("="))
        if not sep or not raw:
            raise UnknownRuleSetError(f"house rule {part!r}: write switch=value, e.g. kiriage=yes")
        if switch not in HOUSE_SWITCHES:
            raise UnknownRuleSetError(f"unknown rule switch {switch!r}: one of {', '.join(HOUSE_SWITCHES)}")
        changes[switch] = _parse_switch(switch, raw, getattr(base, switch))
    if not changes:
        return base
    text = [f"{k}={_switch_text(changes[k])}" for k in sorted(changes)]
    try:
        return replace(base, name="; ".join([base.name, *text]), title=f"{base.title}, house rules: {', '.join(text)}",
                       notes=(), **changes)  # type: ignore[arg-type]  # fmt: skip
    except ValueError as exc:  # e.g. an uma that does not sum to zero
        raise UnknownRuleSetError(f"house rules {'; '.join(text)}: {str(exc).split(': ', 1)[-1]}") from None


HOUSE_SWITCHES: tuple[str, ...] = tuple(EMA2012.switches())  # every switch a club may set

_YES, _NO = {"yes", "true", "on", "1"}, {"no", "false", "off", "0"}


def _parse_switch(switch: str, raw: str, like: object) -> object:
    """A house rule's value, read as the preset's own value of that switch is typed."""
    text = raw.lower()
    try:
        if isinstance(like, bool):
            if text not in _YES | _NO:
                raise ValueError
            return text in _YES
        if isinstance(like, Enum):
            return type(like)(text)
        if isinstance(like, frozenset):
            names = frozenset() if text == "none" else frozenset(x.strip() for x in text.split(",") if x.strip())
            if names - _yakuman_keys():
                raise ValueError
            return names
        if isinstance(like, tuple):
            uma = tuple(int(x) for x in text.split(","))
            if len(uma) != 4:
                raise ValueError
            return uma
        if switch == "two_han_minimum_honba" and text in ("none", "never"):
            return None
        return int(text)
    except ValueError:
        raise UnknownRuleSetError(f"house rule {switch}={raw!r}: expected {_expected(switch, like)}") from None


def _expected(switch: str, like: object) -> str:
    if isinstance(like, bool):
        return "yes or no"
    if isinstance(like, Enum):
        return "one of " + ", ".join(str(m.value) for m in type(like))
    if isinstance(like, frozenset):
        return "yakuman names separated by commas (" + ", ".join(sorted(_yakuman_keys())) + ") or none"
    if isinstance(like, tuple):
        return "four whole numbers that sum to zero, e.g. 15000,5000,-5000,-15000"
    return "a whole number" + (" or never" if switch == "two_han_minimum_honba" else "")


def _switch_text(value: object, *, docs: bool = False) -> str:
    """A switch's value as text: for ``docs/rules.md`` (signed uma with slashes, names with spaces) or
    as a house rule is written, which :func:`_parse_switch` reads back."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, frozenset):
        return (", " if docs else ",").join(sorted(value)) or "none"
    if isinstance(value, tuple):
        return " / ".join(f"{x:+d}" for x in value) if docs else ",".join(str(x) for x in value)
    return "never" if value is None else str(value)


def _yakuman_keys() -> frozenset[str]:
    """The yakuman keys of the scoring package (the keys ``double_yakuman`` takes)."""
    from mahjong.hand_calculating.yaku_config import YakuConfig

    return frozenset(k for k, y in vars(YakuConfig()).items() if getattr(y, "is_yakuman", False))
