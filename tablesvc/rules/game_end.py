"""When a game ends: the one statement of the rule, read by the engine and by the all-last conditions.

Rounds are counted from 0 (East 1) to 7 (South 4); Tenhou's extension round
goes on into West (8..11). The game ends after South 4 when the dealer does
not keep the deal (3.5); a rule set may also end it when someone busts, when
the dealer in the last hand is top with the return points (agari-yame), or
play into West until someone reaches the return points.

A tournament also ends games on time (:class:`TimeRule`): when the
guaranteed time is over, the hand in play is finished and, by the
organiser's rule, one more hand (EMA's usual rule), none, or N more are
played; :func:`hands_after_time` says how many hands that leaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from tablesvc.rules.ruleset import RuleSet

__all__ = ["LAST_ROUND", "MAX_MORE_HANDS", "WEST_LAST_ROUND", "TimeRule", "game_ends", "hands_after_time",
           "may_be_last_hand"]

LAST_ROUND = 7
"""South 4: the last hand of a game unless the dealer keeps the deal (or the extension round follows)."""
WEST_LAST_ROUND = 11
"""West 4: the extension round never goes further."""


def game_ends(rules: RuleSet, round_played: int, scores: Sequence[int], dealer: int, dealer_continues: bool, *,
              first_dealer: int = 0) -> bool:
    """Whether the game is over after a hand of ``round_played`` that left ``scores`` (riichi sticks still on
    the table not counted). ``dealer`` dealt that hand; ``dealer_continues`` says whether they keep the deal.
    Ties for top are broken by seat order from ``first_dealer``, the seat that dealt East 1."""
    dealer_continues = dealer_continues and rules.dealer_keeps_deal  # some rooms pass the deal after every hand
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


#: The most hands a "N more hands" rule may ask for after time: beyond it a game on time is no game on time.
MAX_MORE_HANDS = 8


class TimeRule(Enum):
    """What happens when a game's guaranteed time is over (the organiser's choice, one for the tournament).

    In every rule the hand in play when time runs out is finished: a hand is never cut off midway. Then
    ``EMA`` plays one more hand (the usual rule of EMA tournaments), ``FINISH_HAND`` none, and ``MORE_HANDS``
    the number the organiser gave. A hand ended by chombo is replayed and so does not count; the game still
    ends earlier if its rules end it (South 4, busting).
    """

    EMA = "ema"
    FINISH_HAND = "finish_hand"
    MORE_HANDS = "more_hands"

    @classmethod
    def named(cls, name: str) -> TimeRule:
        """The rule called ``name``; ValueError lists the names there are."""
        try:
            return cls(name)
        except ValueError:
            raise ValueError(f"unknown time rule {name!r}; known: {', '.join(r.value for r in cls)}") from None


def hands_after_time(rule: TimeRule, hand_in_play: bool, more_hands: int = 0) -> int:
    """How many hands are still to be played (the one in play counted) when time runs out.
    ``more_hands`` is the organiser's N of :attr:`TimeRule.MORE_HANDS`, ignored by the other rules."""
    extra = {TimeRule.EMA: 1, TimeRule.FINISH_HAND: 0, TimeRule.MORE_HANDS: more_hands}[rule]
    if not 0 <= extra <= MAX_MORE_HANDS:
        raise ValueError(f"{extra} more hands after time; a rule asks for 0 to {MAX_MORE_HANDS}")
    return extra + (1 if hand_in_play else 0)
