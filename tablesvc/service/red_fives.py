"""A red five at a table whose rule set has none: the organiser hears of it the first time, once a game.

The engine takes a red five under any rule set (a tile read is what the table saw), and valuation treats it
as a plain five. But an export or a replay under a rule set without red fives refuses the game, so a table
that plays one all game long produces a game that cannot be handed in. The alert comes while the game can
still be fixed: the referee amends the tile, or the tiles are swapped for a set without red fives.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tablesvc.engine.events import Event, EventFormatError, from_dict, red_five_in
from tablesvc.rules.ruleset import get_ruleset


def plays_red_fives(rules: str) -> bool:
    """Whether a table's rule set has red fives; an unknown name counts as having them (no alert on a
    guess: the table's start already names what it cannot read)."""
    try:
        return get_ruleset(rules).red_fives
    except Exception:  # an unreadable name is not this check's to report
        return True


class RedFiveWatch:
    """Whether this game has been warned of a red five: one alert a game, not one per tile, and not again
    after a restart (:meth:`resume` reads the game's journal)."""

    def __init__(self) -> None:
        self.warned = False

    def new_game(self) -> None:
        self.warned = False

    def resume(self, entries: Iterable[Any], rules: str) -> None:
        """The game's journal as the service finds it at start: every event and amendment in it was checked
        when it was taken, so a red five anywhere in it (even one undone or amended since) was warned of
        then. ``entries``: the journal's entries (``kind`` and ``body``) of the game in play."""
        if plays_red_fives(rules):
            return
        for entry in entries:
            body = entry.body.get("event") if entry.kind == "amend" else entry.body
            if entry.kind == "undo" or not isinstance(body, dict):
                continue
            try:
                event = from_dict(body)
            except (EventFormatError, KeyError, TypeError, ValueError):  # the table's own fold reports these
                continue
            if red_five_in(event) is not None:
                self.warned = True
                return

    def check(self, event: Event, rules: str) -> tuple[str, dict[str, Any]] | None:
        """The alert's text and detail for the first red five of a game under ``rules``, else None."""
        if self.warned:
            return None
        tile = red_five_in(event)
        if tile is None or plays_red_fives(rules):
            return None
        self.warned = True
        plain = tile.plain.mjai
        return (f"a red five ({tile.mjai}) at a table playing {rules}, which has no red fives: this game will "
                f"not export as it stands: the referee corrects it to {plain}, and the table's red fives are swapped "
                f"for plain ones",
                {"reason": "red_five", "tile": tile.mjai, "rules": rules, "event": event.type})
