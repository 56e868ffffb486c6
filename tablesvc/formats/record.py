"""A recorded game as importers hand it to the engine, and what the engine made of it.

The events are what the engine plays. The expectations are the record's own
figures (the round each hand starts in, the points each hand moved, the
final scores); ``tablesvc replay --strict`` compares the engine with them.
The :class:`ReplayReport` is the replay's outcome, which the exporters write
from (it lives here, not in ``tablesvc.replay``, so that the formats never
import the replay that imports them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tablesvc.engine.events import Event
from tablesvc.engine.results import GameResult, HandResult
from tablesvc.engine.state import GameState

__all__ = ["HandRecord", "RecordError", "RecordedGame", "ReplayReport"]


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
