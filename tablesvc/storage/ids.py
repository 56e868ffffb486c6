"""The id a game is known by on the feed and in the records (``game.id`` of every payload, a records row)."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["game_id"]


def game_id(first_entry_ts: float) -> str:
    """A game's id on the feed and in the records: when its journal's first entry (the game start) was written,
    ISO 8601 in UTC to the millisecond. One journal per game, so it never changes."""
    return datetime.fromtimestamp(first_entry_ts, UTC).isoformat(timespec="milliseconds")
