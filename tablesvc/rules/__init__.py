"""The rules of riichi as pure functions: rule sets, hand valuation, payments.

Nothing here does I/O or keeps time, so the engine and tests can call it freely.
"""

from tablesvc.rules.hand import Hand, InvalidHandError, Meld, MeldKind, WinConditions, Wind
from tablesvc.rules.ruleset import PRESETS, RuleSet, get_ruleset
from tablesvc.rules.scoring import HandValue, Limit, NoYakuError, Yaku, score_hand

__all__ = [
    "PRESETS",
    "Hand",
    "HandValue",
    "InvalidHandError",
    "Limit",
    "Meld",
    "MeldKind",
    "NoYakuError",
    "RuleSet",
    "WinConditions",
    "Wind",
    "Yaku",
    "get_ruleset",
    "score_hand",
]
