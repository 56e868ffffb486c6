"""A recorded game as importers hand it to the engine: events plus what the record says happened.

The events are what the engine plays. The expectations are the record's own
figures (the round each hand starts in, the points each hand moved, the
final scores); ``tablesvc replay --strict`` compares the engine with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tablesvc.engine.events import Event

__all__ = ["HandRecord", "RecordError", "RecordedGame"]


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
