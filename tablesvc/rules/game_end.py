"""When a game ends: the one statement of the rule, read by the engine and by the all-last conditions.

Rounds are counted from 0 (East 1) to 7 (South 4); Tenhou's extension round
goes on into West (8..11). The game ends after South 4 when the dealer does
not keep the deal (3.5); a rule set may also end it when someone busts, when
the dealer in the last hand is top with the return points (agari-yame), or
play into West until someone reaches the return points.
"""

from __future__ import annotations

from collections.abc import Sequence

from tablesvc.rules.ruleset import RuleSet

__all__ = ["LAST_ROUND", "WEST_LAST_ROUND", "game_ends", "may_be_last_hand"]

LAST_ROUND = 7
"""South 4: the last hand of a game unless the dealer keeps the deal (or the extension round follows)."""
WEST_LAST_ROUND = 11
"""West 4: the extension round never goes further."""


def game_ends(rules: RuleSet, round_played: int, scores: Sequence[int], dealer: int, dealer_continues: bool, *,
              first_dealer: int = 0) -> bool:
    """Whether the game is over after a hand of ``round_played`` that left ``scores`` (riichi sticks still on
    the table not counted). ``dealer`` dealt that hand; ``dealer_continues`` says whether they keep the deal.
    Ties for top are broken by seat order from ``first_dealer``, the seat that dealt East 1."""
    if rules.busting_ends_game and min(scores) < 0:
        return True
    if round_played < LAST_ROUND:
        return False
    top = min(range(4), key=lambda s: (-scores[s], (s - first_dealer) % 4))
    reached = scores[top] >= rules.return_points
    if dealer_continues:
        return rules.dealer_stops_when_top and top == dealer and reached
    if not rules.extension_round:
        return True
    return reached or round_played >= WEST_LAST_ROUND


def may_be_last_hand(round_index: int) -> bool:
    """A hand of this round can end the game by its result alone (busting aside): South 4, its repeats,
    and every hand of the extension round. (Every preset plays East and South: no rule set ends earlier.)"""
    return round_index >= LAST_ROUND
