"""A recorded game as importers hand it to the engine, and what the engine made of it.

The events are what the engine plays. The expectations are the record's own
figures (the round each hand starts in, the points each hand moved, the
final scores); ``tablesvc replay --strict`` compares the engine with them.
The :class:`ReplayReport` is the replay's outcome, which the exporters write
from (it lives here, not in ``tablesvc.replay``, so that the formats never
import the replay that imports them).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tablesvc.engine.events import Event, GameStart
from tablesvc.engine.results import GameResult, HandResult, round_name
from tablesvc.engine.state import GameState

__all__ = ["HandRecord", "RecordError", "RecordedGame", "ReplayReport", "take_up_at_first_hand"]


class RecordError(ValueError):
    """A game file that cannot be read; the message says where and why."""


@dataclass
class HandRecord:
    """What the record says about one hand."""

    round: int
    """0..3 East 1-4, 4..7 South 1-4, 8.. West."""
    honba: int
    sticks: int
    dealer: int
    scores: tuple[int, int, int, int]
    """Scores at the start of the hand, before any riichi deposit."""
    deltas: tuple[int, int, int, int] | None = None
    """Points the hand's result moved (None where the record stops before the result)."""
    end_event: int | None = None
    """Index in ``RecordedGame.events`` of the event that ended the hand."""
    dora_at_win: tuple[str, ...] | None = None


@dataclass
class RecordedGame:
    """A whole (or cut) game from a file."""

    source: str
    events: list[Event] = field(default_factory=list)
    hands: list[HandRecord] = field(default_factory=list)
    final_scores: tuple[int, int, int, int] | None = None
    players: tuple[str, str, str, str] = ("East", "South", "West", "North")
    rules: str | None = None
    """The rule preset the record was played under, where the format says."""


def take_up_at_first_hand(game: RecordedGame) -> None:
    """The record's start_game takes the game up where its first hand starts.

    A record need not start at East 1 with everyone on the preset's points: a
    log cut at the front, a single hand shared for review, a game exported
    under other rules. Its first hand says where the game stands (round,
    counters, sticks, dealer, scores), so the engine starts there and the
    replay compares every later hand as usual. A first hand in a round past
    North 4 cannot be taken up (there is no such round).
    """
    if not game.hands:
        return
    first = game.hands[0]
    if not 0 <= first.round <= 15:
        raise RecordError(f"{game.source}: the first hand's round {first.round} is none (0..15: E1 to N4)")
    for i, event in enumerate(game.events):
        if isinstance(event, GameStart):
            game.events[i] = replace(event, round=round_name(first.round), honba=first.honba, sticks=first.sticks,
                                     scores=first.scores, dealer=first.dealer)
            return


@dataclass
class ReplayReport:
    """What the engine made of a record: its hand results, the final result, where and why it stopped."""

    record: RecordedGame
    hands: list[HandResult] = field(default_factory=list)
    final: GameResult | None = None
    mismatches: list[str] = field(default_factory=list)
    stopped: str | None = None
    """Why the replay stopped before the game's end (a record cut short), if it did."""
    state: GameState | None = None
